//! The host path: executes a resolved split or concat on
//! [`HostTensor`](crate::HostTensor)s on the CPU, as the tensor's methods
//! (`HostTensor::split`, `split_into`, `concat`, `concat_into`) and the
//! operators' (`Operator::split_on_host`, `ConcatOperator::concat_on_host`).
//! It is the test oracle for the GPU path and its fallback (strings). Split
//! and concat copy the same runs, in opposite directions, through one core.

mod concat;
mod permuted;
mod runs;
mod split;

use crate::element::ElementType;

/// The packed byte length of a tensor of `shape` (shapes here come from a
/// resolved split or concat, whose element counts are checked).
fn output_bytes(element_type: ElementType, shape: &[usize]) -> usize {
    element_type
        .byte_len(shape.iter().product())
        .unwrap_or_default()
}
