//! Cutting outputs into chunks whose source and destination each fit one
//! binding window. Under the limits every output is one chunk.

use crate::plan::geometry::OutputGeometry;
use crate::plan::geometry::align_down;

/// A piece of one output: output bits `[start_bit, end_bit)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The output.
    pub output: usize,
    /// First output bit of the chunk.
    pub start_bit: u64,
    /// One past the last output bit.
    pub end_bit: u64,
    /// True when the chunk lies inside one run (its source is contiguous).
    pub within_run: bool,
}

impl Chunk {
    /// Length in bits.
    pub fn len_bits(&self) -> u64 {
        self.end_bit - self.start_bit
    }
}

/// Cuts every non-empty output into chunks whose source and destination
/// each fit in `room_bits` (one window less the alignment slack at both
/// ends); one chunk per output when the whole output fits. Chunk
/// boundaries fall on `unit_bits` boundaries of the output where possible.
pub(crate) fn chunks(geometry: &[OutputGeometry], room_bits: u64, unit_bits: u64) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for (output, g) in geometry.iter().enumerate() {
        if g.is_empty() {
            continue;
        }
        let span = g.src_span_bits(0, g.total_bits);
        let whole = Chunk {
            output,
            start_bit: 0,
            end_bit: g.total_bits,
            within_run: false,
        };
        if span.end - span.start <= room_bits && g.total_bits <= room_bits {
            chunks.push(whole);
        } else if let Some(rows_bits) = rows_per_chunk(g, room_bits, unit_bits) {
            chunks.extend(cut(whole, rows_bits));
        } else {
            chunks.extend(pieces_of_runs(output, g, room_bits, unit_bits));
        }
    }
    chunks
}

/// Bits per chunk when chunks hold whole rows: a chunk of `rows * run_bits`
/// bits touches at most `rows + 2` blocks of the source, so `rows` is what
/// fits less two. `None` when not even one unit of rows fits (a block is
/// larger than a window).
fn rows_per_chunk(g: &OutputGeometry, room_bits: u64, unit_bits: u64) -> Option<u64> {
    let rows = (room_bits / g.block_bits).saturating_sub(2);
    let len = align_down(rows * g.run_bits, unit_bits);
    (len >= unit_bits).then_some(len)
}

/// `whole` cut into consecutive chunks of `len_bits` (the last shorter).
fn cut(whole: Chunk, len_bits: u64) -> Vec<Chunk> {
    let mut pieces = Vec::new();
    let mut start_bit = whole.start_bit;
    while start_bit < whole.end_bit {
        let end_bit = (start_bit + len_bits).min(whole.end_bit);
        pieces.push(Chunk {
            start_bit,
            end_bit,
            ..whole
        });
        start_bit = end_bit;
    }
    pieces
}

/// A block is larger than a window: chunks stay inside one run, so each has
/// a contiguous source. Pieces are at most half the room, so a piece that
/// starts anywhere in an aligned unit still fits after its start is aligned
/// down; run boundaries may fall mid-word (a later pass completes the word).
fn pieces_of_runs(output: usize, g: &OutputGeometry, room_bits: u64, unit_bits: u64) -> Vec<Chunk> {
    let piece = align_down(room_bits / 2, unit_bits);
    let mut pieces = Vec::new();
    for row in 0..g.total_bits / g.run_bits {
        let (row_start, row_end) = (row * g.run_bits, (row + 1) * g.run_bits);
        let mut start_bit = row_start;
        while start_bit < row_end {
            let end_bit = (align_down(start_bit, unit_bits) + piece).min(row_end);
            pieces.push(Chunk {
                output,
                start_bit,
                end_bit,
                within_run: true,
            });
            start_bit = end_bit;
        }
    }
    pieces
}
