//! The kernels, one module each, behind one table: [`Kernel`] names them and
//! [`Kernel::spec`] gives everything one kernel is: whether it can move a
//! plan's outputs and with which layout, its unit, its WGSL, the name its
//! bandwidth is stored under in a [`crate::plan::CostModel`], its documented
//! bandwidth per device class and its calibration probe. Kernel choice, the
//! cost model, the shader modules and calibration iterate the table; adding
//! a kernel is a file here, its template under `shaders/`, and a line in
//! [`Kernel`] and [`Kernel::spec`].

mod funnel;
mod row_blocks;
mod row_copies;
mod row_streams;
mod vec4;
mod words;

pub use row_blocks::{MAX_ROW_BLOCK_BITS, Piece, RowBlock, RowOutput};
pub use row_copies::{COPY_VEC4S, CopyOutput, MAX_COPY_OUTPUTS, MIN_WORKING_PERCENT, RowCopies};
pub use row_streams::{RowStreams, STREAM_VEC4S, StreamOutput};

use super::geometry::OutputGeometry;
use super::limits::PlanLimits;
use super::wgsl::Variant;
use crate::element::ElementType;

/// A kernel: one way of moving gathered outputs in a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kernel {
    /// One `u32` word per unit, assembled from source bits with shifts when
    /// runs do not fall on word boundaries. Moves anything.
    Words,
    /// Whole vec4s copied row by row, each invocation a stretch of every
    /// output's run in one input row, with the row geometry generated per
    /// layout ([`RowCopies`]): every run, offset and block is a multiple of
    /// 128 bits. Tried before [`Kernel::Vec4`].
    RowCopies,
    /// One `vec4<u32>` (16 bytes) per unit: every run, offset and block is a
    /// multiple of 128 bits.
    Vec4,
    /// Blocks of whole short input rows per invocation, read as vec4s, every
    /// output's share written as whole vec4s, with the shifts and masks
    /// generated per layout ([`RowBlock`]).
    RowBlocks,
    /// One `vec4<u32>` per unit, shifted out of two source vec4s, for runs of
    /// at least 128 bits at any bit offset in outputs of whole vec4s.
    Funnel,
    /// Like the funnel, but each invocation streams a stretch of every output
    /// that lies inside one input row, with the row geometry generated per
    /// layout ([`RowStreams`]): no lane switches runs inside its loop.
    RowStreams,
}

impl Kernel {
    /// Every kernel, in table order (ties between equally fast kernels keep
    /// this order).
    pub const ALL: [Kernel; 6] = [
        Kernel::Words,
        Kernel::RowCopies,
        Kernel::Vec4,
        Kernel::RowBlocks,
        Kernel::Funnel,
        Kernel::RowStreams,
    ];

    /// Everything this kernel is.
    pub(crate) const fn spec(self) -> &'static KernelSpec {
        match self {
            Kernel::Words => &words::SPEC,
            Kernel::RowCopies => &row_copies::SPEC,
            Kernel::Vec4 => &vec4::SPEC,
            Kernel::RowBlocks => &row_blocks::SPEC,
            Kernel::Funnel => &funnel::SPEC,
            Kernel::RowStreams => &row_streams::SPEC,
        }
    }

    /// Its position in [`Kernel::ALL`] (declaration order).
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// Its name: `words`, `row_copies`, `vec4`, `row_blocks`, `funnel`,
    /// `row_streams`
    /// (the key of its bandwidth in a stored cost model).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The kernel called `name`.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Width of one unit in bits (32 or 128).
    pub fn unit_bits(self) -> u64 {
        self.spec().unit_bits
    }

    /// True when its WGSL is generated per layout (a plan with it is one
    /// dispatch holding every output, or, into separate destinations past
    /// one dispatch's slots, one dispatch per group of outputs).
    pub fn is_generated(self) -> bool {
        matches!(self.spec().fits, Fits::Generated(_))
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a kernel stands in the order kernels are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Whenever it fits, before any other (a plain copy of aligned units).
    First,
    /// By the cost model's bandwidth, fastest first, if at least as fast as
    /// the last kernel.
    ByRate,
    /// Last: it moves anything.
    Last,
}

/// How a kernel that fits moves the outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Driven by the parameter table alone.
    Table,
    /// With WGSL generated for this layout.
    Generated(GeneratedLayout),
}

/// What a kernel is asked to move: the plan's outputs and how they move.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gathered<'a> {
    pub geometry: &'a [OutputGeometry],
    /// Per output: moved by copy commands instead.
    pub copied: &'a [bool],
    pub outer: u64,
    pub input_bytes: u64,
    pub limits: &'a PlanLimits,
    /// Each output in dispatches of its own (a benchmark baseline), which
    /// the generated kernels, one dispatch for all, cannot do.
    pub per_output: bool,
}

impl<'a> Gathered<'a> {
    /// The non-empty outputs the dispatches move.
    pub fn outputs(&self) -> impl Iterator<Item = &OutputGeometry> {
        self.geometry
            .iter()
            .zip(self.copied)
            .filter(|(g, c)| !**c && !g.is_empty())
            .map(|(g, _)| g)
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
}

/// A split a calibration times to measure one kernel's bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    pub shape: &'static [usize],
    pub axis: usize,
    pub lengths: &'static [usize],
    pub element_type: ElementType,
}

/// The probe of the kernels for vec4-aligned runs (row copies, vec4): f32
/// rows of 16 KiB split into four.
pub(crate) const ALIGNED_RUNS: Probe = Probe {
    shape: &[1024, 4096],
    axis: 1,
    lengths: &[1024; 4],
    element_type: ElementType::Float,
};

/// The probe of the kernels for long runs at any bit offset (funnel, row
/// streams): u8 rows of 4,097 bytes split into 2,048 and 2,049 (8 MiB), the
/// shape of split_bench's u8 case. (Rows of 16,388 bytes split 8,193 and
/// 8,195 ranked the funnel first in some calibrations, 6.1 against 4.9
/// GB/s, where split_bench's case ran row streams 1.25x faster; this probe
/// ranked row streams first in 7 of 7.)
pub(crate) const LONG_UNALIGNED_RUNS: Probe = Probe {
    shape: &[2048, 4097],
    axis: 1,
    lengths: &[2048, 2049],
    element_type: ElementType::Uint8,
};

/// A kernel's documented bandwidth (bytes read + written per second) on
/// each class of adapter, for the class cost models.
///
/// On the GPU classes nothing has been measured; what the figures encode is
/// an order: a kernel generated per layout (constants, straight-line code,
/// no lane crossing a run end inside its stretch) ranks above the
/// table-driven kernel that moves the same outputs, because divergent lanes
/// cost a SIMT GPU as they cost lavapipe (both sides execute), and the
/// plain vec4 kernel above both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClassRates {
    /// Lavapipe, measured ([`crate::docs::device`]).
    pub software: f64,
    /// A discrete GPU.
    pub discrete: f64,
    /// An integrated GPU.
    pub integrated: f64,
    /// An adapter nothing is known of.
    pub unknown: f64,
}

/// A generated kernel's layout of some gathered outputs (non-empty, with
/// their indices) in a dispatch whose input window starts at the given bit.
pub(crate) type LayoutOf =
    fn(&Gathered<'_>, Vec<(usize, &OutputGeometry)>, u64) -> Option<GeneratedLayout>;

/// How a kernel tells whether it moves a plan's outputs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fits {
    /// Driven by the parameter table: whether it moves these outputs.
    Table(fn(&Gathered<'_>) -> bool),
    /// Generated per layout, one module per dispatch: its layout of every
    /// gathered output ([`Gathered::generated_outputs`]) from the input's
    /// start, in one dispatch; or, into separate destinations past one
    /// dispatch's slots, of one group's ([`Gathered::group_outputs`]) from
    /// the group's window, a dispatch per group.
    Generated(LayoutOf),
}

impl KernelSpec {
    /// Whether it moves `g`, and how: the table, or the layout of every
    /// gathered output in one dispatch.
    pub fn fit(&self, g: &Gathered<'_>) -> Option<Fit> {
        match self.fits {
            Fits::Table(moves) => moves(g).then_some(Fit::Table),
            Fits::Generated(layout) => layout(g, g.generated_outputs()?, 0).map(Fit::Generated),
        }
    }

    /// The layout of a generated kernel's groups (`None`: table-driven).
    pub fn group_layout(&self) -> Option<LayoutOf> {
        match self.fits {
            Fits::Table(_) => None,
            Fits::Generated(layout) => Some(layout),
        }
    }
}

/// Everything one kernel is.
#[derive(Debug)]
pub(crate) struct KernelSpec {
    /// Its name (see [`Kernel::name`]).
    pub name: &'static str,
    /// Bits per unit.
    pub unit_bits: u64,
    /// Where it stands when kernels are tried.
    pub order: Order,
    /// Moves whole outputs only (an output cut into chunks past the binding
    /// limit takes another kernel).
    pub whole_outputs: bool,
    /// Whether it can move these outputs, and how.
    pub fits: Fits,
    /// Whether it would move this one output on its own (the cost model's
    /// estimate of gathering an output; generated kernels need the whole
    /// layout and say no).
    pub moves_alone: fn(&OutputGeometry) -> bool,
    /// Its WGSL after the prelude, for a variant (placement, slots, entry
    /// skipping) and the layout of a generated kernel.
    pub wgsl: fn(&Variant, Option<&GeneratedLayout>) -> String,
    /// The split calibration times for it.
    pub probe: Probe,
    /// Its documented bandwidth per device class.
    pub rates: ClassRates,
}

/// The layout a generated kernel is compiled for. It does not depend on the
/// row count or on where the caller's buffers start, so a runtime compiles
/// one per split node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeneratedLayout {
    /// [`Kernel::RowBlocks`]: blocks of whole short rows.
    RowBlock(RowBlock),
    /// [`Kernel::RowStreams`]: stretches of long runs inside one row.
    RowStreams(RowStreams),
    /// [`Kernel::RowCopies`]: stretches of vec4-aligned runs inside one row.
    RowCopies(RowCopies),
}

impl GeneratedLayout {
    /// The kernel this layout generates.
    pub fn kernel(&self) -> Kernel {
        match self {
            GeneratedLayout::RowBlock(_) => Kernel::RowBlocks,
            GeneratedLayout::RowStreams(_) => Kernel::RowStreams,
            GeneratedLayout::RowCopies(_) => Kernel::RowCopies,
        }
    }

    /// The table's entry count of a layout whose module reads each entry
    /// once, before its first store, one entry per gathered output (row
    /// copies, row streams); `None` for row blocks, whose table has not
    /// been measured in a uniform buffer.
    pub fn output_entries(&self) -> Option<usize> {
        match self {
            GeneratedLayout::RowBlock(_) => None,
            GeneratedLayout::RowStreams(rs) => Some(rs.outputs.len()),
            GeneratedLayout::RowCopies(rc) => Some(rc.outputs.len()),
        }
    }

    /// Invocations of its dispatch (each of a plan's, where groups of
    /// outputs take one each) for `outer` rows.
    pub fn invocations(&self, outer: u64) -> u64 {
        match self {
            GeneratedLayout::RowBlock(rb) => rb.blocks(outer),
            GeneratedLayout::RowStreams(rs) => rs.invocations(outer),
            GeneratedLayout::RowCopies(rc) => rc.invocations(outer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Kernel;

    #[test]
    fn every_kernel_has_its_own_spec_in_table_order() {
        for (i, kernel) in Kernel::ALL.into_iter().enumerate() {
            assert_eq!(kernel.index(), i);
            assert_eq!(Kernel::from_name(kernel.name()), Some(kernel));
        }
    }
}
