//! [`PermutedConcat`]: the mirror of a permuted split, a concat whose
//! inputs are each permuted and reshaped by merging before joining:
//! `torch.cat([x.permute(perm).reshape(shape) for x in xs], dim)`.

use super::{
    PermuteError, PermutedSplit, PieceMove, StridedView, heads_move, inverse, is_permutation,
    laid_out, row_major_strides,
};
use crate::semantics::concat::ResolvedConcat;

/// How one input of a permuted concat becomes its piece of the output:
/// permuted by `perm` (dimension `j` of the permuted input is dimension
/// `perm[j]` of the input), then reshaped to `shape` by merging
/// consecutive dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InputMove {
    perm: Vec<usize>,
    shape: Vec<usize>,
}

impl InputMove {
    /// Permute by `perm`, then reshape to `shape` (the piece's shape
    /// first, as in [`crate::PieceMove::new`]).
    ///
    /// ```
    /// use wgpu_split::InputMove;
    ///
    /// // A head [B, H, S, D] back to [B, S, H * D].
    /// let merge = InputMove::new(vec![2, 5, 12], vec![0, 2, 1, 3]);
    /// assert_eq!(merge.perm(), &[0, 2, 1, 3]);
    /// ```
    pub fn new(shape: Vec<usize>, perm: Vec<usize>) -> Self {
        InputMove { perm, shape }
    }

    /// The input unchanged (an input of a permuted concat that is not
    /// permuted).
    pub fn keep(input_shape: &[usize]) -> Self {
        InputMove {
            perm: (0..input_shape.len()).collect(),
            shape: input_shape.to_vec(),
        }
    }

    /// The permutation applied first.
    pub fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// The shape the permuted input is reshaped to (its piece's).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
}

/// A concat whose inputs are each permuted and reshaped by merging
/// ([`InputMove`]) before joining on an axis. It runs as the
/// [`PermutedSplit`] of the output it mirrors, backwards: the output's
/// piece `i`, reshaped to input `i`'s permuted shape and permuted back, is
/// input `i`.
///
/// # Examples
///
/// ```
/// use wgpu_split::PermutedConcat;
///
/// // Attention heads [B = 2, H, S = 5, D = 4] merged back into
/// // [B, S, 12 + 4 + 4]: the mirror of a grouped-query split_heads.
/// let shapes = [vec![2, 3, 5, 4], vec![2, 1, 5, 4], vec![2, 1, 5, 4]];
/// let merge = PermutedConcat::merge_heads(&shapes).unwrap();
/// assert_eq!(merge.output_shape(), &[2, 5, 20]);
/// assert_eq!(merge.mirror().output_shapes(), shapes);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PermutedConcat {
    input_shapes: Vec<Vec<usize>>,
    moves: Vec<InputMove>,
    concat: ResolvedConcat,
    mirror: PermutedSplit,
    /// Per input, its elements in its piece's order (a gather from it).
    gathers: Vec<StridedView>,
}

impl PermutedConcat {
    /// Inputs of `input_shapes`, each moved as `moves[i]` says, then
    /// concatenated on `axis` (of the moved shapes).
    ///
    /// # Errors
    ///
    /// [`PermuteError::MoveCount`] unless there is one move per input;
    /// [`PermuteError::NotAPermutation`]; [`PermuteError::NotAMerge`] for
    /// a shape that does not merge the permuted input; the concat's own
    /// errors ([`PermuteError::Concat`]: moved shapes that do not agree off
    /// the axis); [`PermuteError::RankTooHigh`].
    pub fn new<S: AsRef<[usize]>>(
        input_shapes: &[S],
        moves: Vec<InputMove>,
        axis: usize,
    ) -> Result<Self, PermuteError> {
        if moves.len() != input_shapes.len() {
            return Err(PermuteError::MoveCount {
                what: "permuted concat",
                expected: input_shapes.len(),
                given: moves.len(),
            });
        }
        let pieces = piece_moves(input_shapes, &moves)?;
        let shapes: Vec<&[usize]> = moves.iter().map(|m| m.shape.as_slice()).collect();
        let concat = ResolvedConcat::new(&shapes, axis)?;
        let mirror = PermutedSplit::new(concat.mirror().clone(), pieces).map_err(named_by_input)?;
        let gathers = gathers(input_shapes, &moves)?;
        Ok(PermutedConcat {
            input_shapes: input_shapes.iter().map(|s| s.as_ref().to_vec()).collect(),
            moves,
            concat,
            mirror,
            gathers,
        })
    }

    /// Attention heads merged back: inputs `[.., h_i, S, D_i]`, each with its
    /// heads and sequence axes swapped and its heads merged (`[.., S, h_i *
    /// D_i]`), concatenated on the last axis (the mirror of
    /// [`PermutedSplit::split_heads`]). Each input keeps its own head size,
    /// as torch's `cat` of each `x.transpose(-3, -2).reshape(.., S, -1)`
    /// does (value heads narrower than query heads merge so).
    ///
    /// # Errors
    ///
    /// [`PermuteError::HeadRank`] for an input below rank 3; the concat's
    /// [`crate::ConcatError::DimMismatch`] where the inputs disagree on a
    /// batch dimension or the sequence.
    pub fn merge_heads<S: AsRef<[usize]>>(input_shapes: &[S]) -> Result<Self, PermuteError> {
        let mut moves = Vec::with_capacity(input_shapes.len());
        for shape in input_shapes {
            let shape = shape.as_ref();
            let rank = shape.len();
            if rank < 3 {
                return Err(PermuteError::HeadRank {
                    call: "merge_heads",
                    rank,
                });
            }
            let (heads, seq, head_dim) = (shape[rank - 3], shape[rank - 2], shape[rank - 1]);
            let mut merged = shape[..rank - 3].to_vec();
            merged.extend([seq, heads * head_dim]);
            // The split_heads move of the merged piece, read backwards.
            let piece = heads_move(&merged, heads, head_dim);
            moves.push(InputMove::new(merged, inverse(piece.perm())));
        }
        let axis = input_shapes
            .first()
            .map_or(0, |s| s.as_ref().len().saturating_sub(2));
        Self::new(input_shapes, moves, axis)
    }

    /// The inputs' shapes as given.
    pub fn input_shapes(&self) -> &[Vec<usize>] {
        &self.input_shapes
    }

    /// Checks tensors of `shapes` against the inputs the concat was made
    /// for (a runtime's tensors at the step it runs).
    ///
    /// # Errors
    ///
    /// [`crate::ConcatError::InputCountMismatch`];
    /// [`crate::ConcatError::InputShapeMismatch`] naming the first input
    /// whose shape differs.
    pub fn check_input_shapes<S: AsRef<[usize]>>(
        &self,
        shapes: &[S],
    ) -> Result<(), crate::ConcatError> {
        crate::semantics::concat::check_shapes(&self.input_shapes, shapes)
    }

    /// Each input's move.
    pub fn moves(&self) -> &[InputMove] {
        &self.moves
    }

    /// The output's shape.
    pub fn output_shape(&self) -> &[usize] {
        self.concat.output_shape()
    }

    /// The plain concat of the moved inputs (the pieces).
    pub fn concat(&self) -> &ResolvedConcat {
        &self.concat
    }

    /// The permuted split of the output whose outputs are the inputs: what
    /// runs, backwards.
    pub fn mirror(&self) -> &PermutedSplit {
        &self.mirror
    }

    /// Input `index`'s elements in the order of its piece of the output (a
    /// gather from the input, where [`PermutedConcat::mirror`]'s view is a
    /// scatter into the output).
    ///
    /// # Panics
    ///
    /// When `index` is not an input.
    pub fn gather(&self, index: usize) -> &StridedView {
        &self.gathers[index]
    }

    /// Input `index`'s piece of the output as the output lays it out: the
    /// output elements it covers, in the piece's order.
    ///
    /// # Panics
    ///
    /// When `index` is not an input.
    pub fn piece(&self, index: usize) -> StridedView {
        laid_out(self.concat.mirror(), index)
    }
}

/// The mirror's move of each input's piece of the output: reshaped to the
/// permuted input's shape, permuted back by the inverse.
fn piece_moves<S: AsRef<[usize]>>(
    input_shapes: &[S],
    moves: &[InputMove],
) -> Result<Vec<PieceMove>, PermuteError> {
    input_shapes
        .iter()
        .zip(moves)
        .enumerate()
        .map(|(i, (shape, m))| {
            let shape = shape.as_ref();
            if !is_permutation(&m.perm, shape.len()) {
                return Err(PermuteError::NotAPermutation {
                    what: "input",
                    index: i,
                    perm: m.perm.clone(),
                    rank: shape.len(),
                });
            }
            let permuted: Vec<usize> = m.perm.iter().map(|&p| shape[p]).collect();
            Ok(PieceMove::new(permuted, inverse(&m.perm)))
        })
        .collect()
}

/// A mirror split's error as the concat names it: by input, a piece that
/// the permuted input does not factor being a reshape that does not merge.
fn named_by_input(e: PermuteError) -> PermuteError {
    match e {
        PermuteError::RankTooHigh {
            index, rank, max, ..
        } => PermuteError::RankTooHigh {
            what: "input",
            index,
            rank,
            max,
        },
        PermuteError::NotAFactoring {
            output,
            shape,
            piece,
            ..
        } => PermuteError::NotAMerge {
            input: output,
            permuted: shape,
            shape: piece,
        },
        other => other,
    }
}

/// Each input read in its piece's order: the input's strides permuted, a
/// strided view of the input (at most [`PermutedSplit::MAX_RANK`]
/// dimensions).
fn gathers<S: AsRef<[usize]>>(
    input_shapes: &[S],
    moves: &[InputMove],
) -> Result<Vec<StridedView>, PermuteError> {
    input_shapes
        .iter()
        .zip(moves)
        .enumerate()
        .map(|(index, (shape, m))| {
            let shape = shape.as_ref();
            let strides = row_major_strides(shape);
            let dims: Vec<usize> = m.perm.iter().map(|&p| shape[p]).collect();
            let walked: Vec<usize> = m.perm.iter().map(|&p| strides[p]).collect();
            let view = StridedView::new(&dims, &walked, 0);
            if view.dims().len() > PermutedSplit::MAX_RANK {
                return Err(PermuteError::RankTooHigh {
                    what: "input",
                    index,
                    rank: view.dims().len(),
                    max: PermutedSplit::MAX_RANK,
                });
            }
            Ok(view)
        })
        .collect()
}
