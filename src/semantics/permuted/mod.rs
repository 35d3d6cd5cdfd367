//! Permuted splits and concats: a split whose outputs are each reshaped by
//! factoring dimensions and then permuted (a fused QKV projection into
//! attention heads), and the mirror, a concat whose inputs are each
//! permuted and reshaped by merging dimensions before joining (the heads
//! merged back). In torch,
//! `[p.reshape(s).permute(perm).contiguous() for p in x.split(sizes, dim)]`
//! and `torch.cat([p.permute(perm).reshape(s) for p in xs], dim)`.
//!
//! Each output's elements are those of its piece in a new order, so each
//! resolves to a [`StridedView`] of the input: its dimensions in the
//! output's order, each with the input stride it walks (dimensions that
//! stay adjacent merged, dimensions of 1 dropped). The host path and the
//! planner read that view; the rules are in [`crate::docs::semantics`].

mod concat;
pub(crate) mod error;

pub use concat::{InputMove, PermutedConcat};
pub use error::PermuteError;

use crate::semantics::resolved::ResolvedSplit;

/// How one piece of a split becomes its output: reshaped to `shape` (a
/// factoring of the piece's dimensions, so no element moves), then its
/// dimensions permuted: output dimension `j` is dimension `perm[j]` of
/// `shape`. For a concat's input, the same move read backwards: the input
/// is the piece of the output reshaped and permuted so.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PieceMove {
    shape: Vec<usize>,
    perm: Vec<usize>,
}

impl PieceMove {
    /// Reshape to `shape`, then permute by `perm`.
    ///
    /// ```
    /// use wgpu_split::PieceMove;
    ///
    /// // [B, S, H * D] -> [B, S, H, D] -> [B, H, S, D]
    /// let heads = PieceMove::new(vec![2, 5, 3, 4], vec![0, 2, 1, 3]);
    /// assert_eq!(heads.output_shape(), Some(vec![2, 3, 5, 4]));
    /// ```
    pub fn new(shape: Vec<usize>, perm: Vec<usize>) -> Self {
        PieceMove { shape, perm }
    }

    /// The piece unchanged: its own shape, the identity permutation (an
    /// output of a permuted split that is not permuted).
    pub fn keep(piece_shape: &[usize]) -> Self {
        PieceMove {
            shape: piece_shape.to_vec(),
            perm: (0..piece_shape.len()).collect(),
        }
    }

    /// The shape the piece is reshaped to.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The permutation applied after the reshape.
    pub fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// The moved piece's shape, `shape` permuted (`None` when `perm` is not
    /// a permutation of the shape's dimensions).
    pub fn output_shape(&self) -> Option<Vec<usize>> {
        is_permutation(&self.perm, self.shape.len())
            .then(|| self.perm.iter().map(|&p| self.shape[p]).collect())
    }
}

/// True when `perm` holds each of `0..rank` exactly once.
pub(crate) fn is_permutation(perm: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    perm.len() == rank
        && perm
            .iter()
            .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true))
}

/// The inverse of a permutation: `inverse[perm[j]] == j`.
pub(crate) fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inverse = vec![0; perm.len()];
    for (j, &p) in perm.iter().enumerate() {
        inverse[p] = j;
    }
    inverse
}

/// For each dimension of `coarse`, the range of dimensions of `fine` whose
/// product it is, consecutive and in order (dimensions of 1 of `fine` may
/// fall in any group, a dimension of 1 of `coarse` may take none); `None`
/// when there is no such grouping. Both without zero dimensions.
fn groups(coarse: &[usize], fine: &[usize]) -> Option<Vec<std::ops::Range<usize>>> {
    let mut groups = Vec::with_capacity(coarse.len());
    let mut j = 0;
    for &c in coarse {
        let start = j;
        let mut product = 1usize;
        while product < c {
            product = product.checked_mul(*fine.get(j)?)?;
            j += 1;
        }
        if product != c {
            return None;
        }
        groups.push(start..j);
    }
    fine[j..].iter().all(|&d| d == 1).then_some(groups)
}

/// One output's elements as a strided walk of the input: `dims[j]` indices
/// on dimension `j` (outermost first, in the output's element order), each
/// step `strides[j]` input elements, from element `offset`. Output element
/// `(i_0, .., i_k)` (row-major in `dims`) is input element
/// `offset + sum(i_j * strides[j])`. Dimensions of 1 are dropped and
/// adjacent ones a single stride walks are merged, so a piece that keeps
/// its order is at most two dimensions: rows and a run of stride 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StridedView {
    dims: Vec<usize>,
    strides: Vec<usize>,
    offset: usize,
}

impl StridedView {
    /// The view of `dims` walked with `strides` from `offset`, merged and
    /// with dimensions of 1 dropped (an empty view, with a dimension of 0,
    /// is one dimension of 0).
    pub(crate) fn new(dims: &[usize], strides: &[usize], offset: usize) -> Self {
        if dims.contains(&0) {
            return StridedView {
                dims: vec![0],
                strides: vec![1],
                offset,
            };
        }
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(dims.len());
        for (&d, &s) in dims.iter().zip(strides) {
            if d == 1 {
                continue;
            }
            match merged.last_mut() {
                Some((outer, outer_stride)) if *outer_stride == d * s => {
                    *outer *= d;
                    *outer_stride = s;
                }
                _ => merged.push((d, s)),
            }
        }
        StridedView {
            dims: merged.iter().map(|m| m.0).collect(),
            strides: merged.iter().map(|m| m.1).collect(),
            offset,
        }
    }

    /// Indices per dimension, outermost first (none: one element).
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Input elements per step of each dimension.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// The input element of the output's first.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Elements the view holds.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// True when the view holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements the innermost dimension walks with stride 1 (1 when it
    /// strides: every element its own run): the length of the runs a copy
    /// of the view moves.
    pub fn run_len(&self) -> usize {
        match (self.dims.last(), self.strides.last()) {
            (Some(&d), Some(1)) => d,
            _ => 1,
        }
    }

    /// Calls `f(input element, count)` for every run of the view in output
    /// order: `count` consecutive input elements (of [`StridedView::run_len`]).
    pub fn for_each_run(&self, mut f: impl FnMut(usize, usize)) {
        if self.is_empty() {
            return;
        }
        let run = self.run_len();
        let outer = if run > 1 {
            &self.dims[..self.dims.len() - 1]
        } else {
            &self.dims[..]
        };
        let mut index = vec![0usize; outer.len()];
        let mut at = self.offset;
        loop {
            f(at, run);
            // Odometer over the outer dimensions, innermost fastest.
            let mut j = outer.len();
            loop {
                if j == 0 {
                    return;
                }
                j -= 1;
                index[j] += 1;
                at += self.strides[j];
                if index[j] < outer[j] {
                    break;
                }
                at -= self.strides[j] * outer[j];
                index[j] = 0;
            }
        }
    }
}

/// A split whose outputs are each reshaped by factoring and permuted
/// ([`PieceMove`]): `[p.reshape(s).permute(perm).contiguous() for p in
/// x.split(sizes, dim)]`.
///
/// # Examples
///
/// ```
/// use wgpu_split::{PermutedSplit, PieceMove, ResolvedSplit};
///
/// // A fused QKV projection [B = 2, S = 5, 3 * H * D] with H = 3, D = 4,
/// // into Q, K and V as [B, H, S, D].
/// let qkv = PermutedSplit::split_heads(&[2, 5, 36], &[12, 12, 12], 4).unwrap();
/// assert_eq!(qkv.output_shapes(), vec![vec![2, 3, 5, 4]; 3]);
///
/// // The same, spelled out.
/// let split = ResolvedSplit::new(&[2, 5, 36], 2, vec![12; 3], true).unwrap();
/// let heads = PieceMove::new(vec![2, 5, 3, 4], vec![0, 2, 1, 3]);
/// assert_eq!(PermutedSplit::new(split, vec![heads; 3]).unwrap(), qkv);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PermutedSplit {
    split: ResolvedSplit,
    moves: Vec<PieceMove>,
    views: Vec<StridedView>,
}

impl PermutedSplit {
    /// Strided dimensions a move may need (after merging and dropping 1s):
    /// what the kernels carry.
    pub const MAX_RANK: usize = 6;

    /// `split`, each output `i` then moved as `moves[i]` says.
    ///
    /// # Errors
    ///
    /// [`PermuteError::MoveCount`] unless there is one move per output;
    /// [`PermuteError::NotAFactoring`] for a shape that does not factor its
    /// piece; [`PermuteError::NotAPermutation`];
    /// [`PermuteError::RankTooHigh`] for a move past
    /// [`PermutedSplit::MAX_RANK`] strided dimensions.
    pub fn new(split: ResolvedSplit, moves: Vec<PieceMove>) -> Result<Self, PermuteError> {
        if moves.len() != split.output_count() {
            return Err(PermuteError::MoveCount {
                what: "permuted split",
                expected: split.output_count(),
                given: moves.len(),
            });
        }
        let views = moves
            .iter()
            .enumerate()
            .map(|(i, m)| view_of(&split, i, m))
            .collect::<Result<_, _>>()?;
        Ok(PermutedSplit {
            split,
            moves,
            views,
        })
    }

    /// Attention heads from a fused projection: `shape` is `[.., S, E]`,
    /// split on its last axis into `widths` (each a whole number of heads
    /// of `head_dim`); output `i` is `[.., widths[i] / head_dim, S,
    /// head_dim]` (torch: `p.view(.., S, h, D).transpose(-3, -2)`). Grouped-query
    /// projections give Q, K and V different widths.
    ///
    /// # Errors
    ///
    /// [`PermuteError::HeadRank`] below rank 2; [`PermuteError::HeadWidth`]
    /// for a width that is not a whole number of heads (or a `head_dim` of
    /// 0); the split's own errors ([`PermuteError::Split`]: widths past
    /// `E`; widths short of it leave the tail out, as
    /// [`ResolvedSplit::new`] does).
    pub fn split_heads(
        shape: &[usize],
        widths: &[usize],
        head_dim: usize,
    ) -> Result<Self, PermuteError> {
        const CALL: &str = "split_heads";
        let rank = shape.len();
        if rank < 2 {
            return Err(PermuteError::HeadRank { call: CALL, rank });
        }
        for &width in widths {
            if head_dim == 0 || width % head_dim != 0 {
                return Err(PermuteError::HeadWidth {
                    call: CALL,
                    width,
                    head_dim,
                });
            }
        }
        let split = ResolvedSplit::new(shape, rank - 1, widths.to_vec(), true)?;
        let moves = widths
            .iter()
            .map(|&width| heads_move(shape, width / head_dim, head_dim))
            .collect();
        Self::new(split, moves)
    }

    /// The plain split underneath (its outputs are the pieces).
    pub fn split(&self) -> &ResolvedSplit {
        &self.split
    }

    /// Each output's move.
    pub fn moves(&self) -> &[PieceMove] {
        &self.moves
    }

    /// Outputs.
    pub fn output_count(&self) -> usize {
        self.moves.len()
    }

    /// Output `index`'s shape: its move's shape permuted.
    ///
    /// # Panics
    ///
    /// When `index` is not an output.
    pub fn output_shape(&self, index: usize) -> Vec<usize> {
        let m = &self.moves[index];
        m.perm.iter().map(|&p| m.shape[p]).collect()
    }

    /// Every output's shape.
    pub fn output_shapes(&self) -> Vec<Vec<usize>> {
        (0..self.output_count())
            .map(|i| self.output_shape(i))
            .collect()
    }

    /// Output `index`'s elements as a strided walk of the input, in
    /// element units.
    ///
    /// # Panics
    ///
    /// When `index` is not an output.
    pub fn view(&self, index: usize) -> &StridedView {
        &self.views[index]
    }

    /// True when no output reorders its piece (every view walks the piece
    /// in its own order: the plain split moves it).
    pub fn keeps_order(&self) -> bool {
        (0..self.output_count()).all(|i| {
            let v = &self.views[i];
            v.dims.len() <= 2 && v.strides.last().is_none_or(|&s| s == 1)
        })
    }
}

/// The heads move of a `[.., S, heads * head_dim]` piece: reshaped to
/// `[.., S, heads, head_dim]`, the sequence and heads axes swapped.
pub(crate) fn heads_move(shape: &[usize], heads: usize, head_dim: usize) -> PieceMove {
    let rank = shape.len();
    let mut factored = shape[..rank - 1].to_vec();
    factored.extend([heads, head_dim]);
    let mut perm: Vec<usize> = (0..rank + 1).collect();
    perm.swap(rank - 2, rank - 1);
    PieceMove::new(factored, perm)
}

/// Output `i` of `split` as the input lays it out: the piece's elements in
/// its own order, its dimensions with their input strides (the axis
/// dropped where the split drops it), merged where one stride walks two,
/// 1s dropped.
pub(crate) fn laid_out(split: &ResolvedSplit, i: usize) -> StridedView {
    let input = split.input_shape();
    let axis = split.axis();
    let strides = row_major_strides(input);
    let offset = split.starts()[i] * strides[axis];
    let mut piece_strides = strides;
    if !split.keep_axis() {
        piece_strides.remove(axis);
    }
    StridedView::new(&split.output_shape(i), &piece_strides, offset)
}

/// The row-major strides of `shape`, in elements.
pub(crate) fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Output `i` of `split` moved by `m`, as a strided view of the input.
fn view_of(split: &ResolvedSplit, i: usize, m: &PieceMove) -> Result<StridedView, PermuteError> {
    let piece = split.output_shape(i);
    let laid_out = laid_out(split, i);
    let offset = laid_out.offset;
    let not_a_factoring = || PermuteError::NotAFactoring {
        output: i,
        piece: piece.clone(),
        strided: laid_out.dims.clone(),
        shape: m.shape.clone(),
    };
    if piece.contains(&0) != m.shape.contains(&0) {
        return Err(not_a_factoring());
    }
    if !is_permutation(&m.perm, m.shape.len()) {
        return Err(PermuteError::NotAPermutation {
            what: "output",
            index: i,
            perm: m.perm.clone(),
            rank: m.shape.len(),
        });
    }
    if piece.contains(&0) {
        return Ok(StridedView::new(&[0], &[1], offset));
    }
    // Each laid-out dimension factored into its group of the shape.
    let groups = groups(&laid_out.dims, &m.shape).ok_or_else(not_a_factoring)?;
    let mut strides = vec![1usize; m.shape.len()];
    for (group, &outer_stride) in groups.iter().zip(&laid_out.strides) {
        let mut stride = outer_stride;
        for d in group.clone().rev() {
            strides[d] = stride;
            stride *= m.shape[d];
        }
    }
    let dims: Vec<usize> = m.perm.iter().map(|&p| m.shape[p]).collect();
    let walked: Vec<usize> = m.perm.iter().map(|&p| strides[p]).collect();
    let view = StridedView::new(&dims, &walked, offset);
    if view.dims.len() > PermutedSplit::MAX_RANK {
        return Err(PermuteError::RankTooHigh {
            what: "output",
            index: i,
            rank: view.dims.len(),
            max: PermutedSplit::MAX_RANK,
        });
    }
    Ok(view)
}
