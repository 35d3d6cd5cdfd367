//! The arena layout: where each output lives when all of them share one
//! buffer, each at an offset a consumer kernel can bind directly.

use std::ops::Range;

use super::geometry::OutputGeometry;
use super::limits::PlanLimits;
use crate::error::{Error, Result};
use crate::semantics::ResolvedSplit;

/// Where one output lives in the arena.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OutputSlot {
    /// The output's shape.
    pub shape: Vec<usize>,
    /// Byte offset from the arena's start (a multiple of the storage offset
    /// alignment, so the slot can be bound directly).
    pub offset_bytes: u64,
    /// Packed length in bytes.
    pub len_bytes: u64,
}

impl OutputSlot {
    /// The byte range inside the arena.
    pub fn range(&self) -> Range<u64> {
        self.offset_bytes..self.offset_bytes + self.len_bytes
    }
}

/// The arena: every output's slot, and the arena size in bytes (a multiple
/// of 4).
///
/// # Errors
///
/// [`Error::TooLargeForDevice`] when the arena exceeds `max_buffer_size`.
pub(crate) fn arena_layout(
    split: &ResolvedSplit,
    geometry: &[OutputGeometry],
    limits: &PlanLimits,
) -> Result<(Vec<OutputSlot>, u64)> {
    let align = u128::from(limits.alignment_bytes());
    let mut end: u128 = 0;
    let mut ranges = Vec::with_capacity(geometry.len());
    for g in geometry {
        // u128: 2^24 outputs each padded to the alignment may pass u64 on
        // absurd limits before the size check below rejects them.
        let offset = end.div_ceil(align) * align;
        end = offset + u128::from(g.total_bits.div_ceil(8));
        ranges.push(offset..end);
    }
    let arena_bytes = end.div_ceil(4) * 4;
    let max = limits.max_buffer_size;
    if arena_bytes > u128::from(max) {
        return Err(Error::TooLargeForDevice {
            what: "arena",
            bytes: arena_bytes,
            max,
        });
    }
    // Below max_buffer_size, so every value fits u64.
    let slots = ranges
        .into_iter()
        .enumerate()
        .map(|(i, r)| OutputSlot {
            shape: split.output_shape(i),
            offset_bytes: r.start as u64,
            len_bytes: (r.end - r.start) as u64,
        })
        .collect();
    Ok((slots, arena_bytes as u64))
}
