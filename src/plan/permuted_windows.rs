//! A permuted move past one storage binding, cut into windows: each
//! output's view of the source becomes sub-views of whole dimensions (the
//! outer indices fixed, a range of rows of one dimension, every dimension
//! inside it whole), each writing a contiguous stretch of the destination
//! and reading a stretch of the source (its footprint) that one binding
//! holds. The encode binds each dispatch's records over a window of the
//! source that covers their footprints ([`crate::plan::permuted_binding`]);
//! the kernel does not change: a sub-view is a view.

/// One sub-view of a view: what one record moves when the move is cut
/// into windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ViewChunk {
    /// Its dimensions (the view's, the outermost ones cut).
    pub dims: Vec<u32>,
    /// Source units per step of each (the view's).
    pub strides: Vec<u32>,
    /// The source unit of its first, counted as the view's offset is.
    pub offset: u64,
    /// Its first unit in the destination (the view's unit index).
    pub dest: u64,
    /// Its units.
    pub units: u64,
}

impl ViewChunk {
    /// Units of the source from its first to its last, both in.
    pub(crate) fn footprint(&self) -> u64 {
        footprint(&self.dims, &self.strides)
    }
}

/// Units of the source a view of `dims` and `strides` spans, from its
/// first unit (strides are never negative) to its last.
fn footprint(dims: &[u32], strides: &[u32]) -> u64 {
    1 + dims
        .iter()
        .zip(strides)
        .map(|(&d, &s)| u64::from(d.saturating_sub(1)) * u64::from(s))
        .sum::<u64>()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Sub-views past which a cut is refused (a view that needs more is one
/// whose rows alone overflow a window: its inner dimensions stride the
/// whole source).
const MOST_CHUNKS: usize = 1 << 20;

/// The view of `dims`, `strides` and `offset` cut, in destination order,
/// into sub-views whose source footprint is at most `source` units and
/// whose destination is at most `dest` units, each a whole number of
/// `granule` units except the view's last (elements packed into words:
/// two records never write one word). `None` where no such cut exists.
pub(crate) fn cut_view(
    dims: &[u32],
    strides: &[u32],
    offset: u64,
    source: u64,
    dest: u64,
    granule: u64,
) -> Option<Vec<ViewChunk>> {
    let mut chunks = Vec::new();
    let bounds = Bounds {
        source,
        dest,
        granule: granule.max(1),
    };
    bounds.cut(dims, strides, offset, 0, &mut chunks)?;
    Some(chunks)
}

struct Bounds {
    source: u64,
    dest: u64,
    granule: u64,
}

impl Bounds {
    fn cut(
        &self,
        dims: &[u32],
        strides: &[u32],
        offset: u64,
        base: u64,
        chunks: &mut Vec<ViewChunk>,
    ) -> Option<()> {
        let units: u64 = dims.iter().map(|&d| u64::from(d)).product();
        if units == 0 {
            return Some(());
        }
        if chunks.len() >= MOST_CHUNKS {
            return None;
        }
        if footprint(dims, strides) <= self.source && units <= self.dest {
            chunks.push(ViewChunk {
                dims: dims.to_vec(),
                strides: strides.to_vec(),
                offset,
                dest: base,
                units,
            });
            return Some(());
        }
        let (&rows, inner_dims) = dims.split_first()?;
        let (stride, inner_strides) = (u64::from(strides[0]), &strides[1..]);
        let rows = u64::from(rows);
        let inner = units / rows;
        let inner_footprint = footprint(inner_dims, inner_strides);
        // Rows per sub-view within both bounds, a multiple of the rows
        // that make whole granules.
        let by_source = match self.source.checked_sub(inner_footprint) {
            Some(left) if stride > 0 => left / stride + 1,
            Some(_) => rows,
            None => 0,
        };
        let step = self.granule / gcd(inner, self.granule);
        let take = by_source.min(self.dest / inner).min(rows) / step * step;
        if take > 0 {
            let mut row = 0;
            while row < rows {
                let count = take.min(rows - row);
                let mut sub = dims.to_vec();
                sub[0] = count as u32;
                chunks.push(ViewChunk {
                    dims: sub,
                    strides: strides.to_vec(),
                    offset: offset + row * stride,
                    dest: base + row * inner,
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
            self.cut(
                inner_dims,
                inner_strides,
                offset + row * stride,
                base + row * inner,
                chunks,
            )?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::{ViewChunk, cut_view};

    /// Every unit of the view, once, in destination order, at its source
    /// unit: the chunks enumerated against the view itself.
    fn units_of(chunks: &[ViewChunk]) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for c in chunks {
            let mut index = vec![0u32; c.dims.len()];
            for k in 0..c.units {
                let at: u64 = c.offset
                    + index
                        .iter()
                        .zip(&c.strides)
                        .map(|(&i, &s)| u64::from(i) * u64::from(s))
                        .sum::<u64>();
                out.push((c.dest + k, at));
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

    fn whole(dims: &[u32], strides: &[u32], offset: u64) -> Vec<(u64, u64)> {
        let view = ViewChunk {
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            offset,
            dest: 0,
            units: dims.iter().map(|&d| u64::from(d)).product(),
        };
        units_of(&[view])
    }

    #[test]
    fn cuts_cover_the_view_in_order_within_their_bounds() {
        // Heads [B, H, S, D] of a [B, S, 3·H·D] projection, in words.
        let (b, h, s, d) = (2u32, 4u32, 50u32, 8u32);
        let dims = [b, h, s, d];
        let strides = [s * 3 * h * d, d, 3 * h * d, 1];
        for (source, dest, granule) in [(4000, 1 << 20, 1), (700, 500, 1), (97, 24, 8), (8, 8, 4)] {
            let chunks = cut_view(&dims, &strides, 32, source, dest, granule).unwrap();
            assert_eq!(units_of(&chunks), whole(&dims, &strides, 32));
            for (k, c) in chunks.iter().enumerate() {
                assert!(c.footprint() <= source && c.units <= dest, "{c:?}");
                let last = k + 1 == chunks.len();
                assert!(last || c.units % granule == 0, "{c:?}");
            }
        }
    }

    #[test]
    fn a_view_that_fits_is_one_chunk_and_an_impossible_cut_is_none() {
        let chunks = cut_view(&[4, 6], &[1, 4], 0, 24, 24, 1).unwrap();
        assert_eq!(chunks.len(), 1);
        // Rows of 3 elements packed 2 to a word, a row per window at most:
        // every cut would split a word.
        assert_eq!(cut_view(&[4, 3], &[100, 1], 0, 3, 3, 2), None);
        // Empty views have nothing to cut.
        assert_eq!(cut_view(&[0, 3], &[3, 1], 0, 1, 1, 1), Some(vec![]));
    }
}
