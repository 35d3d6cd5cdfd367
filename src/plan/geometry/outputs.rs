//! Every output as planned: its length, the bytes its destination region
//! must hold and, in arena plans, its offset in the arena.

use std::ops::Range;

use crate::kernels::work::Placement;
use crate::plan::error::PlanError;
use crate::plan::geometry::OutputGeometry;
use crate::plan::geometry::align_up;
use crate::plan::limits::PlanLimits;
use crate::semantics::ResolvedSplit;

/// One output as planned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlannedOutput {
    /// The output's shape.
    pub shape: Vec<usize>,
    /// Packed length in bytes.
    pub len_bytes: u64,
    /// Bytes its destination region must hold: the packed length rounded up
    /// to the word the split writes last (the bytes past `len_bytes` are
    /// written as zero). 0 for an empty output, which needs no region bytes.
    pub region_bytes: u64,
    /// Offset from the arena's start in arena plans (a multiple of the
    /// storage offset alignment, so the output can be bound directly); 0 in
    /// plans for separate destinations.
    pub arena_offset_bytes: u64,
}

impl PlannedOutput {
    /// The output's bytes inside the arena (arena plans).
    pub fn arena_range(&self) -> Range<u64> {
        self.arena_offset_bytes..self.arena_offset_bytes + self.len_bytes
    }
}

/// Every output's planned form and, for an arena placement, the arena
/// size in bytes (a multiple of 4; 0 for separate destinations).
///
/// # Errors
///
/// [`PlanError::TooLargeForDevice`] when the arena exceeds
/// `max_buffer_size`.
pub(crate) fn plan_outputs(
    split: &ResolvedSplit,
    geometry: &[OutputGeometry],
    placement: Placement,
    limits: &PlanLimits,
) -> Result<(Vec<PlannedOutput>, u64), PlanError> {
    let align = u128::from(limits.alignment_bytes());
    let mut end: u128 = 0;
    let mut planned = Vec::with_capacity(geometry.len());
    for (i, g) in geometry.iter().enumerate() {
        let len_bytes = g.total_bits.div_ceil(8);
        // Every output fits the input, which fits a buffer; the word the
        // split writes last is whole.
        let region_bytes = align_up(len_bytes, 4);
        // u128: 2^24 outputs each padded to the alignment may pass u64 on
        // absurd limits before the size check below rejects them.
        let offset = if placement.is_shared() {
            end.div_ceil(align) * align
        } else {
            0
        };
        end = offset + u128::from(region_bytes);
        planned.push((i, len_bytes, region_bytes, offset));
    }
    let arena_bytes = if placement.is_shared() {
        end.div_ceil(4) * 4
    } else {
        0
    };
    let max = limits.max_buffer_size;
    if arena_bytes > u128::from(max) {
        return Err(PlanError::TooLargeForDevice {
            what: "arena",
            bytes: arena_bytes,
            max,
        });
    }
    // Below max_buffer_size, so every offset fits u64.
    let planned = planned
        .into_iter()
        .map(|(i, len_bytes, region_bytes, offset)| PlannedOutput {
            shape: split.output_shape(i),
            len_bytes,
            region_bytes: if len_bytes == 0 { 0 } else { region_bytes },
            arena_offset_bytes: offset as u64,
        })
        .collect();
    Ok((planned, arena_bytes as u64))
}

/// View mode (see [`crate::plan::SplitPlan::input_views`]): with one outer block every
/// output is one contiguous range of the input; each must start on a byte
/// and at a bindable offset.
pub(crate) fn views(
    geometry: &[OutputGeometry],
    outputs: &[PlannedOutput],
    outer: u64,
    limits: &PlanLimits,
) -> Option<Vec<Range<u64>>> {
    if outer > 1 {
        return None;
    }
    geometry
        .iter()
        .zip(outputs)
        .map(|(g, slot)| {
            let start = g.offset_bits / 8;
            let exact =
                g.offset_bits.is_multiple_of(8) && start.is_multiple_of(limits.alignment_bytes());
            exact.then_some(start..start + slot.len_bytes)
        })
        .collect()
}
