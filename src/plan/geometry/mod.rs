//! The split's runs and geometry: the first stage of a plan. A split is
//! contiguous runs of its input ([`runs`]), each output's runs in bits
//! ([`OutputGeometry`]; a sub-byte element makes byte counts fractional,
//! so everything here is in bits), which way the bits move ([`Direction`]),
//! where each output lands ([`outputs`]) and the chunks a tensor larger
//! than one binding is cut into ([`chunks`]).

pub(crate) mod chunks;
pub(crate) mod outputs;
pub(crate) mod runs;

use crate::plan::geometry::runs::RunLayout;

/// Which way a plan moves bits between the tensor and its pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub(crate) enum Direction {
    /// The tensor is read and its pieces written (a split).
    #[default]
    Split,
    /// The pieces are read and the tensor written (a concat).
    Concat,
}

impl Direction {
    /// A short name, for labels and generated code.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Split => "split",
            Direction::Concat => "concat",
        }
    }

    /// What the operator calls the tensor: a split's input, a concat's
    /// output.
    pub fn tensor(self) -> &'static str {
        match self {
            Direction::Split => "input",
            Direction::Concat => "output",
        }
    }
}

/// `x` rounded up to a multiple of `a` (`a > 0`).
pub(crate) fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `x` rounded down to a multiple of `a` (`a > 0`).
pub(crate) fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

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
