//! Where the permuted moves' recordings put their regions, and the concat
//! that undoes a permuted split: shared by `webgpu_recordings` (the browser
//! suite and the Dawn replay) and the tests (`tests/common`, the CPU
//! emulator's `tests/permuted_emulated.rs`), so that both lay out the same.

use wgpu_split::plan::Usages;
use wgpu_split::plan::internals::PlainRegion;
use wgpu_split::{InputMove, PermutedConcat, PermutedSplit};

/// The permuted concat that undoes `split` (its windows tile the axis):
/// each output permuted back by the inverse and merged into its piece.
pub fn concat_undoing(split: &PermutedSplit) -> PermutedConcat {
    let moves = split
        .moves()
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut inverse = vec![0; m.perm().len()];
            for (j, &p) in m.perm().iter().enumerate() {
                inverse[p] = j;
            }
            InputMove::new(split.split().output_shape(i), inverse)
        })
        .collect();
    PermutedConcat::new(&split.output_shapes(), moves, split.split().axis()).unwrap()
}

/// Every usage a region may have.
pub const ALL: Usages = Usages {
    storage: true,
    copy_src: true,
    copy_dst: true,
};

/// A region of `size` bytes at `offset` of buffer `buffer` (of
/// `buffer_size` bytes).
pub fn region(buffer: usize, buffer_size: u64, offset: u64, size: u64) -> PlainRegion {
    PlainRegion {
        buffer,
        buffer_size,
        usages: ALL,
        offset,
        size,
    }
}

/// Regions of `sizes` laid out as `layout` says beside the single
/// region's `single` bytes: each in a buffer of its own (at 16), packed
/// in one page (4-byte steps, past 256), or after the single region in its
/// buffer (256-byte steps). The single region first.
pub fn layout(layout: &str, single: u64, sizes: &[u64]) -> (PlainRegion, Vec<PlainRegion>) {
    match layout {
        "own buffers" => {
            let one = region(0, single + 32, 16, single);
            let each = sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| region(i + 1, s + 32, 16, s))
                .collect();
            (one, each)
        }
        "one page" => {
            let mut at = 260;
            let offsets: Vec<u64> = sizes
                .iter()
                .map(|&s| {
                    let o = at;
                    at += s.next_multiple_of(4) + 4;
                    o
                })
                .collect();
            let page = at + 8;
            let each = sizes
                .iter()
                .zip(offsets)
                .map(|(&s, o)| region(1, page, o, s))
                .collect();
            (region(0, single + 16, 8, single), each)
        }
        _ => {
            // The single region's page: everything 256-byte aligned.
            let mut at = (single + 8).next_multiple_of(256);
            let offsets: Vec<u64> = sizes
                .iter()
                .map(|&s| {
                    let o = at;
                    at = (at + s).next_multiple_of(256);
                    o
                })
                .collect();
            let page = at + 16;
            let each = sizes
                .iter()
                .zip(offsets)
                .map(|(&s, o)| region(0, page, o, s))
                .collect();
            (region(0, page, 8, single), each)
        }
    }
}

/// The layouts [`layout`] knows.
pub const LAYOUTS: [&str; 3] = ["own buffers", "one page", "the single region's page"];
