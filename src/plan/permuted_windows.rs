//! A permuted move past one storage binding, cut into windows: each
//! output's view of the source becomes sub-views of whole dimensions (the
//! outer indices fixed, a range of rows of one dimension, every dimension
//! inside it whole), each writing a contiguous stretch of the destination
//! and reading a stretch of the source (its footprint) that one binding
//! holds. The encode binds each dispatch's records over a window of the
//! source that covers their footprints ([`crate::plan::permuted_binding`]);
//! the kernel does not change: a sub-view is a view.

/// One side of a cut: a view (over the cut's dimensions) of the units it
/// reads or writes, and the most units of it a sub-view may span.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CutSide<'a> {
    /// Units per step of each dimension.
    pub strides: &'a [u32],
    /// The unit of the view's first.
    pub offset: u64,
    /// The most units a sub-view's footprint on this side may span.
    pub most: u64,
}

/// One sub-view of a cut: what one record moves when the move runs in
/// windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ViewChunk {
    /// Its dimensions (the views', the outermost ones cut).
    pub dims: Vec<u32>,
    /// Each side's unit of its first, counted as the side's offset is.
    pub offsets: Vec<u64>,
    /// Its units (the first's index in the views is `offsets` reached).
    pub units: u64,
}

/// Views cut into sub-views ([`cut_views`]), with the strides of each
/// side over the dimensions cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    /// The sub-views, in the views' order.
    pub chunks: Vec<ViewChunk>,
    /// Each side's strides over the dimensions cut (a sub-view of `k`
    /// dimensions takes the last `k`).
    pub strides: Vec<Vec<u32>>,
}

/// Units a view of `dims` and `strides` spans, from its first unit
/// (strides are never negative) to its last, both in.
pub(crate) fn footprint(dims: &[u32], strides: &[u32]) -> u64 {
    1 + dims
        .iter()
        .zip(strides)
        .map(|(&d, &s)| u64::from(d.saturating_sub(1)) * u64::from(s))
        .sum::<u64>()
}

/// Row-major strides of `dims`: a contiguous destination as a side.
pub(crate) fn contiguous(dims: &[u32]) -> Vec<u32> {
    let mut strides = vec![1u32; dims.len()];
    for j in (0..dims.len().saturating_sub(1)).rev() {
        strides[j] = strides[j + 1].saturating_mul(dims[j + 1]);
    }
    strides
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Sub-views past which a cut is refused (a view that needs more is one
/// whose rows alone overflow a window: its inner dimensions stride the
/// whole tensor).
const MOST_CHUNKS: usize = 1 << 20;

/// Views of `dims` (one per side) cut, in the views' order, into
/// sub-views of whole inner dimensions whose footprint on each side is at
/// most that side's `most` units, each a whole number of `granule` units
/// except the last (elements packed into words: two records never write
/// one word). `None` where no such cut exists.
pub(crate) fn cut_views(
    dims: &[u32],
    sides: &[CutSide<'_>],
    granule: u64,
) -> Option<Vec<ViewChunk>> {
    let mut chunks = Vec::new();
    let offsets: Vec<u64> = sides.iter().map(|s| s.offset).collect();
    let cut = Cutter {
        sides,
        granule: granule.max(1),
    };
    cut.cut(dims, 0, &offsets, &mut chunks)?;
    Some(chunks)
}

struct Cutter<'s, 'a> {
    sides: &'s [CutSide<'a>],
    granule: u64,
}

impl Cutter<'_, '_> {
    /// Cuts the sub-view of `dims` (the views' innermost, from `depth`)
    /// whose first units are `offsets`.
    fn cut(
        &self,
        dims: &[u32],
        depth: usize,
        offsets: &[u64],
        chunks: &mut Vec<ViewChunk>,
    ) -> Option<()> {
        let units: u64 = dims.iter().map(|&d| u64::from(d)).product();
        if units == 0 {
            return Some(());
        }
        if chunks.len() >= MOST_CHUNKS {
            return None;
        }
        let fits = self
            .sides
            .iter()
            .all(|s| footprint(dims, &s.strides[depth..]) <= s.most);
        if fits {
            chunks.push(ViewChunk {
                dims: dims.to_vec(),
                offsets: offsets.to_vec(),
                units,
            });
            return Some(());
        }
        let (&rows, inner_dims) = dims.split_first()?;
        let rows = u64::from(rows);
        let inner = units / rows;
        // Rows per sub-view within every side's bound, a multiple of the
        // rows that make whole granules.
        let take = self.sides.iter().fold(rows, |take, s| {
            let stride = u64::from(s.strides[depth]);
            let inner_span = footprint(inner_dims, &s.strides[depth + 1..]);
            take.min(match s.most.checked_sub(inner_span) {
                Some(left) if stride > 0 => left / stride + 1,
                Some(_) => rows,
                None => 0,
            })
        });
        let step = self.granule / gcd(inner, self.granule);
        let take = take / step * step;
        let at = |row: u64| -> Vec<u64> {
            self.sides
                .iter()
                .zip(offsets)
                .map(|(s, &o)| o + row * u64::from(s.strides[depth]))
                .collect()
        };
        if take > 0 {
            let mut row = 0;
            while row < rows {
                let count = take.min(rows - row);
                let mut sub = dims.to_vec();
                sub[0] = count as u32;
                chunks.push(ViewChunk {
                    dims: sub,
                    offsets: at(row),
                    units: count * inner,
                });
                row += count;
            }
            return Some(());
        }
        // One row is too much: cut each row, whose starts must be whole
        // granules.
        if !inner.is_multiple_of(self.granule) {
            return None;
        }
        for row in 0..rows {
            self.cut(inner_dims, depth + 1, &at(row), chunks)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::{CutSide, ViewChunk, contiguous, cut_views, footprint};

    /// Each side's unit of every unit of the chunks, in order.
    fn units_of(chunks: &[ViewChunk], strides: &[&[u32]]) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        for c in chunks {
            let depth = strides[0].len() - c.dims.len();
            let mut index = vec![0u32; c.dims.len()];
            for _ in 0..c.units {
                out.push(
                    strides
                        .iter()
                        .zip(&c.offsets)
                        .map(|(s, &o)| {
                            o + index
                                .iter()
                                .zip(&s[depth..])
                                .map(|(&i, &s)| u64::from(i) * u64::from(s))
                                .sum::<u64>()
                        })
                        .collect(),
                );
                for j in (0..index.len()).rev() {
                    index[j] += 1;
                    if index[j] < c.dims[j] {
                        break;
                    }
                    index[j] = 0;
                }
            }
        }
        out
    }

    #[test]
    fn cuts_cover_the_views_in_order_within_their_bounds() {
        // Heads [B, H, S, D] of a [B, S, 3·H·D] projection, in words,
        // written contiguously.
        let (b, h, s, d) = (2u32, 4u32, 50u32, 8u32);
        let dims = [b, h, s, d];
        let strides = [s * 3 * h * d, d, 3 * h * d, 1];
        let dest = contiguous(&dims);
        let side = |strides: &'static [u32], offset: u64, most: u64| CutSide {
            strides,
            offset,
            most,
        };
        let strides: &'static [u32] = Box::leak(Box::new(strides));
        let dest: &'static [u32] = Box::leak(dest.into_boxed_slice());
        let whole = units_of(
            &[ViewChunk {
                dims: dims.to_vec(),
                offsets: vec![32, 0],
                units: u64::from(b * h * s * d),
            }],
            &[strides, dest],
        );
        for (source, most, granule) in [(4000, 1 << 20, 1), (700, 500, 1), (97, 24, 8), (8, 8, 4)] {
            let sides = [side(strides, 32, source), side(dest, 0, most)];
            let chunks = cut_views(&dims, &sides, granule).unwrap();
            assert_eq!(units_of(&chunks, &[strides, dest]), whole);
            for (k, c) in chunks.iter().enumerate() {
                let depth = 4 - c.dims.len();
                assert!(footprint(&c.dims, &strides[depth..]) <= source, "{c:?}");
                assert!(c.units <= most, "{c:?}");
                let last = k + 1 == chunks.len();
                assert!(last || c.units % granule == 0, "{c:?}");
            }
        }
    }

    #[test]
    fn a_view_that_fits_is_one_chunk_and_an_impossible_cut_is_none() {
        let side = |strides, most| CutSide {
            strides,
            offset: 0,
            most,
        };
        let chunks = cut_views(&[4, 6], &[side(&[1, 4], 24)], 1).unwrap();
        assert_eq!(chunks.len(), 1);
        // Rows of 3 elements packed 2 to a word, a row per window at most:
        // every cut would split a word.
        assert_eq!(cut_views(&[4, 3], &[side(&[100, 1], 3)], 2), None);
        // Empty views have nothing to cut.
        assert_eq!(cut_views(&[0, 3], &[side(&[3, 1], 1)], 1), Some(vec![]));
        assert_eq!(contiguous(&[2, 3, 4]), vec![12, 4, 1]);
    }
}
