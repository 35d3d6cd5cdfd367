//! View mode: a split whose every output is one contiguous, bindable byte
//! range of the input needs no work at all; the runtime binds the ranges
//! ([`crate::plan::SplitPlan::input_views`]).

use std::ops::Range;

use super::geometry::OutputGeometry;
use super::limits::PlanLimits;
use super::outputs::PlannedOutput;

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
