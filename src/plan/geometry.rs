//! Each output's runs in bits: the planner's working units. A sub-byte
//! element makes byte counts fractional, so everything here is in bits.

use super::runs::RunLayout;

/// One output's run geometry in the packed input, in bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutputGeometry {
    /// Bits per run (one run per outer block).
    pub run_bits: u64,
    /// Bit offset of the run inside its block.
    pub offset_bits: u64,
    /// Bits per outer block of the input.
    pub block_bits: u64,
    /// Bits of the whole output (`outer * run_bits`).
    pub total_bits: u64,
}

impl OutputGeometry {
    /// Every output's geometry for elements of `element_bits` bits.
    ///
    /// The caller has checked that the packed input fits a buffer (a `u64`
    /// byte count), so no product here overflows.
    pub fn of_layout(layout: &RunLayout, element_bits: u64) -> Vec<OutputGeometry> {
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

    /// The non-empty outputs of `geometry` with their indices (what a
    /// generated kernel lays out).
    pub fn non_empty(geometry: &[OutputGeometry]) -> Vec<(usize, &OutputGeometry)> {
        geometry
            .iter()
            .enumerate()
            .filter(|(_, g)| !g.is_empty())
            .collect()
    }

    /// The input bit that output bit `p` comes from.
    pub fn src_bit(&self, p: u64) -> u64 {
        (p / self.run_bits) * self.block_bits + self.offset_bits + p % self.run_bits
    }

    /// True when the output is empty (nothing to move).
    pub fn is_empty(&self) -> bool {
        self.total_bits == 0
    }

    /// True when every run, its offset and the block stride are multiples of
    /// `unit_bits`, so the output moves in whole units. With a single outer
    /// block (`outer <= 1`) the block stride is never applied (every bit lies
    /// in block 0), so it need not be aligned.
    pub fn is_aligned_to(&self, unit_bits: u64, outer: u64) -> bool {
        self.run_bits.is_multiple_of(unit_bits)
            && self.offset_bits.is_multiple_of(unit_bits)
            && (outer <= 1 || self.block_bits.is_multiple_of(unit_bits))
    }

    /// True when every run is at least 128 bits (a vec4 of the output
    /// crosses one run end at most) and the output is whole vec4s.
    pub fn long_in_vec4s(&self) -> bool {
        self.run_bits >= 128 && self.total_bits.is_multiple_of(128)
    }

    /// The span of input bits the bits `[start, end)` of the output touch.
    pub fn src_span_bits(&self, start: u64, end: u64) -> std::ops::Range<u64> {
        self.src_bit(start)..self.src_bit(end - 1) + 1
    }
}
