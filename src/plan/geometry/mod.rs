//! The split's runs and geometry: the first stage of a plan. A split is
//! contiguous runs of its input ([`runs`]), each output's runs in bits
//! ([`output_geometry`], the kernels' `OutputGeometry`; a sub-byte element
//! makes byte counts fractional, so everything here is in bits), which way
//! the bits move (the kernels' `Direction`),
//! where each output lands ([`outputs`]) and the chunks a tensor larger
//! than one binding is cut into ([`chunks`]).

pub(crate) mod chunks;
pub(crate) mod outputs;
pub(crate) mod runs;

pub(crate) use crate::kernels::work::{Direction, OutputGeometry};
use crate::plan::geometry::runs::RunLayout;

/// `x` rounded up to a multiple of `a` (`a > 0`).
pub(crate) fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `x` rounded down to a multiple of `a` (`a > 0`).
pub(crate) fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

/// Every output's geometry for elements of `element_bits` bits.
///
/// The caller has checked that the packed input fits a buffer (a `u64`
/// byte count), so no product here overflows.
pub(crate) fn output_geometry(layout: &RunLayout, element_bits: u64) -> Vec<OutputGeometry> {
    let outer = layout.outer() as u64;
    let block_bits = layout.block() as u64 * element_bits;
    layout
        .runs()
        .iter()
        .map(|run| OutputGeometry {
            run_bits: run.len as u64 * element_bits,
            offset_bits: run.offset as u64 * element_bits,
            block_bits,
            total_bits: outer * run.len as u64 * element_bits,
        })
        .collect()
}
