//! What a kernel is asked to move: the kernels' vocabulary, which the plan
//! fills ([`Work`]) and every kernel reads. Which way the bits move
//! ([`Direction`]), each output's run geometry ([`OutputGeometry`]), where
//! the outputs go ([`Placement`]) and the gathered outputs with the facts
//! a kernel's fit and layout depend on.

use crate::kernels::lanes::LaneOrder;

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

/// Where a plan writes its outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Placement {
    /// Each output into a destination region of its own: its own buffer, or
    /// a part of any buffer. A dispatch writes up to
    /// [`crate::plan::PlanLimits::destinations_per_dispatch`] of them.
    #[default]
    Separate,
    /// Every output into one arena buffer, at offsets aligned to
    /// `min_storage_buffer_offset_alignment` (one dispatch for any number of
    /// outputs under the limits).
    Arena,
}

impl Placement {
    /// Destinations an encode takes for `outputs` outputs: one per output,
    /// or one arena.
    pub fn destination_count(self, outputs: usize) -> usize {
        match self {
            Placement::Separate => outputs,
            Placement::Arena => 1,
        }
    }

    /// The destination output `output` is written into.
    pub fn destination_of(self, output: usize) -> usize {
        match self {
            Placement::Separate => output,
            Placement::Arena => 0,
        }
    }

    /// True when every output shares one destination (so an output's bytes
    /// start at its offset inside it).
    pub fn is_shared(self) -> bool {
        self == Placement::Arena
    }

    /// The slot the `j`th entry of a one-dispatch pass writes (generated
    /// kernels: entry `j` is gathered output `j`).
    pub(crate) fn slot_of_entry(self, j: usize) -> usize {
        match self {
            Placement::Separate => j,
            Placement::Arena => 0,
        }
    }

    /// True when a pass may hold several chunks of one destination (the
    /// arena: chunks of every output). With separate destinations a pass
    /// holds one chunk per output, and every invocation serves every slot.
    pub(crate) fn chunks_share_a_slot(self) -> bool {
        self == Placement::Arena
    }

    /// The table binding of the table-driven kernels: a read-only storage
    /// buffer of any length (arena), or a uniform buffer of exactly one
    /// entry per slot (separate destinations), which frees a storage
    /// binding for one more destination. (A row-copy or row-stream module
    /// reads a uniform table in an arena too: `ShaderKey::uniform_entries`.)
    pub(crate) fn uniform_table(self) -> bool {
        self == Placement::Separate
    }

    /// A short name, for labels and generated code.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Separate => "separate",
            Placement::Arena => "arena",
        }
    }
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

/// The gathered outputs (those the dispatches move rather than copy
/// commands) and the facts a kernel's fit and layout depend on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Work<'a> {
    /// Every output's geometry.
    pub geometry: &'a [OutputGeometry],
    /// Per output: moved by copy commands instead.
    pub copied: &'a [bool],
    /// Outer blocks (rows) of the input.
    pub outer: u64,
    /// Packed input size in bytes.
    pub input_bytes: u64,
    /// The alignment every binding's offset must have (the device's
    /// `min_storage_buffer_offset_alignment`, at least 4), in bytes.
    pub binding_alignment_bytes: u64,
    pub placement: Placement,
    /// How the kernels lay invocations over units (the model's).
    pub lanes: LaneOrder,
    /// Which way the bits move (a split, or a concat).
    pub direction: Direction,
    /// Each output in dispatches of its own (a benchmark baseline), which
    /// the generated kernels, one dispatch for all, cannot do.
    pub per_output: bool,
}

impl<'a> Work<'a> {
    /// The non-empty outputs the dispatches move.
    pub fn outputs(&self) -> impl Iterator<Item = &'a OutputGeometry> + '_ {
        self.geometry
            .iter()
            .zip(self.copied)
            .filter(|(g, c)| !**c && !g.is_empty())
            .map(|(g, _)| g)
    }

    /// The indices of the non-empty outputs the dispatches move, in order.
    pub fn output_indices(&self) -> Vec<usize> {
        OutputGeometry::non_empty(self.geometry)
            .into_iter()
            .filter(|(i, _)| !self.copied[*i])
            .map(|(i, _)| i)
            .collect()
    }

    /// True when a generated kernel may move these outputs: not each output
    /// alone (a benchmark baseline) and bindings on the vec4 boundaries its
    /// loads and stores need.
    pub fn generated_may_run(&self) -> bool {
        !self.per_output && self.vec4_bindings()
    }

    /// The outputs a generated module of every gathered output lays out:
    /// the non-empty ones, when none of them is copied and a generated
    /// kernel may run.
    pub fn generated_outputs(&self) -> Option<Vec<(usize, &'a OutputGeometry)>> {
        let live = OutputGeometry::non_empty(self.geometry);
        let all_gathered = live.iter().all(|(i, _)| !self.copied[*i]);
        (self.generated_may_run() && all_gathered).then_some(live)
    }

    /// The outputs `members` (one group's, in a dispatch of its own), when
    /// a generated kernel may run.
    pub fn group_outputs(&self, members: &[usize]) -> Option<Vec<(usize, &'a OutputGeometry)>> {
        self.generated_may_run()
            .then(|| members.iter().map(|&i| (i, &self.geometry[i])).collect())
    }

    /// True when bindings may start on any 16-byte boundary the kernels of
    /// vec4 units need.
    pub fn vec4_bindings(&self) -> bool {
        self.binding_alignment_bytes.is_multiple_of(16)
    }

    /// True when every gathered run is at least 128 bits (a vec4 crosses one
    /// run end at most) and every output and the input are whole vec4s.
    pub fn long_runs_in_vec4s(&self) -> bool {
        self.input_bytes.is_multiple_of(16) && self.outputs().all(OutputGeometry::long_in_vec4s)
    }

    /// True when every gathered run, its offset and the row stride are
    /// whole `unit_bits` units.
    pub fn aligned_to(&self, unit_bits: u64) -> bool {
        self.outputs()
            .all(|o| o.is_aligned_to(unit_bits, self.outer))
    }
}
