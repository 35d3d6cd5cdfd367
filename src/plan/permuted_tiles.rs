//! Where a permuted move goes through the tile kernel: a move whose reads
//! and writes are contiguous on different axes of one walk (a transpose of
//! the fastest axis), its two views put on common dimensions
//! ([`common_dims`]) and its axes picked ([`tile_walk`]).

use crate::kernels::permute_records::RECORD_RANK;
use crate::kernels::permute_tile::TileWalk;
use crate::plan::limits::PlanLimits;
use crate::semantics::StridedView;

/// Elements along each of a tiled move's two axes at least: on a shorter
/// axis most of a tile's lanes would idle, and the gather's lanes already
/// share most of their sectors.
const MIN_TILE_SIDE: u32 = 16;

/// The tile kernel's walk of a move that reads through `read` and writes
/// through `write` (both in elements of `bits`, walked in the same
/// order): both views on common dimensions, one of them contiguous in the
/// reads and not the writes, another contiguous in the writes and not the
/// reads, each at least [`MIN_TILE_SIDE`] long; for elements under 32
/// bits, every output row whole words at a whole word. `None` otherwise:
/// moves that keep the reads' runs (the gather coalesces them), views that
/// share no dimensions, more than [`RECORD_RANK`] dimensions, or more tiles
/// than one dispatch's grid.
pub(crate) fn tile_walk(
    read: &StridedView,
    write: &StridedView,
    bits: u64,
    limits: &PlanLimits,
) -> Option<TileWalk> {
    if !matches!(bits, 2 | 4 | 8 | 16 | 32 | 64 | 128) {
        return None;
    }
    let (dims, read_strides, write_strides) = common_dims(read, write)?;
    let long = |k: usize| dims[k] >= MIN_TILE_SIDE as usize;
    let read_axis =
        (0..dims.len()).find(|&k| read_strides[k] == 1 && write_strides[k] != 1 && long(k))?;
    let write_axis =
        (0..dims.len()).find(|&k| write_strides[k] == 1 && read_strides[k] != 1 && long(k))?;
    // Packed elements are stored a whole word per lane: every output row
    // (along the write axis) whole words at a whole word, so that no word
    // is shared with another tile or another piece.
    if bits < 32 {
        let per_word = (32 / bits) as usize;
        let whole = |x: usize| x.is_multiple_of(per_word);
        let rows_whole = (0..dims.len()).all(|k| k == write_axis || whole(write_strides[k]));
        if !(rows_whole && whole(dims[write_axis]) && whole(write.offset())) {
            return None;
        }
    }
    let small = |v: &[usize]| v.iter().all(|&x| x <= u32::MAX as usize);
    if dims.len() > RECORD_RANK || !small(&dims) || !small(&read_strides) || !small(&write_strides)
    {
        return None;
    }
    let to_u32 = |v: &[usize]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
    let walk = TileWalk {
        dims: to_u32(&dims),
        read_strides: to_u32(&read_strides),
        write_strides: to_u32(&write_strides),
        read_offset: u32::try_from(read.offset()).ok()?,
        write_offset: u32::try_from(write.offset()).ok()?,
        read_axis,
        write_axis,
    };
    let grid = u64::from(limits.max_compute_workgroups_per_dimension).pow(2);
    (walk.workgroups() <= grid.min(u64::from(u32::MAX))).then_some(walk)
}

/// Two views of one walk (the same elements in the same order, each
/// merged its own way) on common dimensions: every dimension of either
/// split where the other's boundaries fall, with both views' strides.
/// `None` when their boundaries do not nest (one view's dimension is not
/// a multiple of the other's where they meet).
pub(crate) fn common_dims(
    a: &StridedView,
    b: &StridedView,
) -> Option<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    // Innermost first: what is left of each view's current dimension, and
    // the stride of its next step.
    let (mut ia, mut ib) = (a.dims().len(), b.dims().len());
    let (mut left_a, mut step_a, mut left_b, mut step_b) = (1usize, 0usize, 1usize, 0usize);
    let mut common: Vec<(usize, usize, usize)> = Vec::new();
    loop {
        if left_a == 1 && ia > 0 {
            ia -= 1;
            (left_a, step_a) = (a.dims()[ia], a.strides()[ia]);
        }
        if left_b == 1 && ib > 0 {
            ib -= 1;
            (left_b, step_b) = (b.dims()[ib], b.strides()[ib]);
        }
        if left_a == 1 && left_b == 1 {
            break;
        }
        let d = left_a.min(left_b);
        if d == 1 || left_a % d != 0 || left_b % d != 0 {
            return None;
        }
        common.push((d, step_a, step_b));
        (left_a, step_a, left_b, step_b) = (left_a / d, step_a * d, left_b / d, step_b * d);
    }
    common.reverse();
    Some((
        common.iter().map(|c| c.0).collect(),
        common.iter().map(|c| c.1).collect(),
        common.iter().map(|c| c.2).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::{common_dims, tile_walk};
    use crate::plan::PlanLimits;
    use crate::semantics::StridedView;

    #[test]
    fn two_views_of_one_walk_share_the_dimensions_either_splits() {
        // Reads [6, 4] and writes [2, 12] (rows 13 apart): common [2, 3, 4].
        let read = StridedView::new(&[6, 4], &[1, 6], 0);
        let write = StridedView::new(&[2, 12], &[13, 1], 0);
        assert_eq!(
            common_dims(&read, &write),
            Some((vec![2, 3, 4], vec![3, 1, 6], vec![13, 4, 1]))
        );
        // A row-major write merged into one dimension is split where the
        // reads' boundaries fall.
        let whole = StridedView::new(&[24], &[1], 0);
        assert_eq!(
            common_dims(&read, &whole),
            Some((vec![6, 4], vec![1, 6], vec![4, 1]))
        );
        // Boundaries that do not nest: [2, 3] against [3, 2].
        let a = StridedView::new(&[2, 3], &[1, 2], 0);
        let b = StridedView::new(&[3, 2], &[1, 3], 0);
        assert_eq!(common_dims(&a, &b), None);
    }

    #[test]
    fn only_transposes_of_the_fastest_axis_of_wide_elements_are_tiled() {
        let limits = PlanLimits::WEBGPU_DEFAULT;
        // layout_cdla's f32 [1, 32, 7600] as (0, 2, 1).
        let read = StridedView::new(&[7600, 32], &[1, 7600], 0);
        let write = StridedView::new(&[7600 * 32], &[1], 0);
        let walk = tile_walk(&read, &write, 32, &limits).unwrap();
        assert_eq!((walk.read_axis, walk.write_axis), (0, 1));
        assert_eq!(walk.write_strides, vec![32, 1]);
        assert!(tile_walk(&read, &write, 64, &limits).is_some());
        // Packed elements where every output row is whole words; not an
        // odd row of f16 (a word would straddle two rows). Moves that keep
        // the reads' runs (attention heads) and short axes stay with the
        // gather.
        assert!(tile_walk(&read, &write, 16, &limits).is_some());
        assert!(tile_walk(&read, &write, 4, &limits).is_some());
        let odd = StridedView::new(&[7600, 33], &[1, 7600], 0);
        let odd_out = StridedView::new(&[7600 * 33], &[1], 0);
        assert!(tile_walk(&odd, &odd_out, 32, &limits).is_some());
        assert!(tile_walk(&odd, &odd_out, 16, &limits).is_none());
        let heads = StridedView::new(&[12, 1024, 64], &[64, 2304, 1], 0);
        let heads_out = StridedView::new(&[12 * 1024 * 64], &[1], 0);
        assert!(tile_walk(&heads, &heads_out, 32, &limits).is_none());
        let narrow = StridedView::new(&[7600, 4], &[1, 7600], 0);
        let narrow_out = StridedView::new(&[7600 * 4], &[1], 0);
        assert!(tile_walk(&narrow, &narrow_out, 32, &limits).is_none());
    }
}
