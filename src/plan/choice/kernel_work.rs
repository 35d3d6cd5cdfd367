//! [`KernelWork`]: what the dispatches of a plan move, and everything kernel
//! choice and pass building need to know about it, in one value.

use crate::plan::choice::placement::Placement;
use crate::plan::geometry::Direction;
use crate::plan::geometry::OutputGeometry;
use crate::plan::kernels::lanes::LaneOrder;
use crate::plan::limits::PlanLimits;

/// The gathered outputs (those the dispatches move rather than copy
/// commands) and the plan's facts kernel choice and pass building need.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelWork<'a> {
    /// Every output's geometry.
    pub geometry: &'a [OutputGeometry],
    /// Per output: moved by copy commands instead.
    pub copied: &'a [bool],
    /// Outer blocks (rows) of the input.
    pub outer: u64,
    /// Packed input size in bytes.
    pub input_bytes: u64,
    /// Where each output starts in its destination, in bytes.
    pub dst_offsets_bytes: &'a [u64],
    pub limits: &'a PlanLimits,
    pub placement: Placement,
    /// How the kernels lay invocations over units (the model's).
    pub lanes: LaneOrder,
    /// Which way the bits move (a split, or a concat).
    pub direction: Direction,
    /// Each output in dispatches of its own (a benchmark baseline), which
    /// the generated kernels, one dispatch for all, cannot do.
    pub per_output: bool,
}

impl<'a> KernelWork<'a> {
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
        self.limits.alignment_bytes().is_multiple_of(16)
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
