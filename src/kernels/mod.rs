//! The kernels, a layer below the plan: one module each, behind one table.
//! The plan asks them in their own vocabulary ([`work`]: which way the bits
//! move, each output's run geometry, where the outputs go, the gathered
//! outputs) and imports what they generate; this layer imports nothing of
//! the plan. [`Kernel`] names them and
//! [`Kernel::spec`] gives everything one kernel is: whether it can move a
//! plan's outputs and how (per layout, by the parameter table, or both),
//! its unit, the name its bandwidth is stored under in a
//! [`crate::plan::CostModel`], its documented bandwidth per device class,
//! its calibration probe and the sample splits every suite (the naga
//! validation, the Dawn replay, the access trace, the rendered WGSL)
//! iterates. Kernel choice, the cost model, the shader modules and
//! calibration read the table; adding a kernel is a file here, its template
//! under `shaders/`, and a line in the [`kernel_table!`] below. The
//! permuted moves' two kernels (the gather, [`permute`], and the tiles,
//! [`permute_tile`]) are not rows of it: no cost model chooses between
//! them (lanes do), and they take no split plan; their modules are named by
//! `permute_module::PermuteModule`, their parameters are
//! [`permute_records`]' structs.

pub(crate) mod lanes;
pub(crate) mod permute;
pub(crate) mod permute_module;
pub(crate) mod permute_records;
pub(crate) mod permute_tile;
pub(crate) mod shader;
pub(crate) mod table;
pub(crate) mod template;
pub(crate) mod wgsl;
pub(crate) mod work;

// The layouts of two kernels' per-layout forms (the kernels' own modules
// are declared by the table below).
mod concat_streams;
mod row_copies;
mod row_streams;

pub use concat_streams::ConcatStreams;
pub use concat_words::ConcatWords;
pub use row_blocks::RowBlocks;
pub use row_copies::RowCopies;
pub use row_streams::RowStreams;
// The layouts' parts and constants, for `plan::internals`.
#[cfg(feature = "analysis")]
pub use concat_words::{ConcatPiece, ConcatPieces};
#[cfg(feature = "analysis")]
pub use row_blocks::{BitField, MAX_ROW_BLOCK_BITS, RowOutput};
#[cfg(feature = "analysis")]
pub use row_copies::{COPY_VEC4S, CopyOutput, MAX_COPY_OUTPUTS, MIN_WORKING_PERCENT};
#[cfg(feature = "analysis")]
pub use row_streams::{STREAM_VEC4S, StreamOutput};

use crate::element::ElementType;
use crate::kernels::work::Work;
use crate::kernels::work::{Direction, OutputGeometry};
use crate::semantics::ResolvedSplit;
use template::Template;
use wgsl::Variant;

/// The table of kernels: one line per kernel (its documentation, its
/// variant of [`Kernel`] and its module here, which the line declares and
/// whose `SPEC` is everything it is), in the order ties between equally
/// fast kernels are broken.
macro_rules! kernel_table {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident, )*) => {
        $( mod $module; )*

        /// A kernel: one way of moving gathered outputs in a dispatch.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Kernel {
            $( $(#[$doc])* $variant, )*
        }

        /// Kernels in the table.
        const KERNELS: usize = [$(stringify!($variant)),*].len();

        impl Kernel {
            /// Every kernel, in table order (ties between equally fast
            /// kernels keep this order).
            pub const ALL: [Kernel; KERNELS] = [$(Kernel::$variant),*];

            /// Everything this kernel is.
            pub(crate) const fn spec(self) -> &'static KernelSpec {
                match self {
                    $( Kernel::$variant => &$module::SPEC, )*
                }
            }
        }
    };
}

kernel_table! {
    /// One `u32` word per unit, assembled from source bits with shifts when
    /// runs do not fall on word boundaries. Moves anything.
    Words => words,
    /// Whole vec4s (16 bytes) when every run, offset and block is a
    /// multiple of 128 bits: copied row by row with the row geometry
    /// generated per layout (row copies), or, where that form does not
    /// take the outputs, one `vec4<u32>` per unit driven by the parameter
    /// table. Tried first whenever it fits.
    Vec4 => vec4,
    /// Whole 32-bit words copied row by row, as [`Kernel::Vec4`] copies
    /// vec4s: every run, offset and block is a multiple of 32 bits.
    RowWords => row_words,
    /// Blocks of whole short input rows per invocation, read as vec4s, every
    /// output's share written as whole vec4s, with the shifts and masks
    /// generated per layout.
    RowBlocks => row_blocks,
    /// Runs of at least 128 bits at any bit offset, each vec4 shifted out of
    /// two source vec4s: streamed row by row with the row geometry generated
    /// per layout (row streams, which also gather runs of whole words
    /// shorter than a vec4), or, where that form does not take the outputs,
    /// one unit per invocation driven by the parameter table.
    Funnel => funnel,
    /// Concat only: each tensor word assembled from the pieces whose runs
    /// overlap it, at any bit offset.
    ConcatWords => concat_words,
}

impl Kernel {
    /// True when it moves splits (every kernel but
    /// [`Kernel::ConcatWords`]).
    pub fn moves_splits(self) -> bool {
        self.spec().directions.contains(&Direction::Split)
    }

    /// True when it moves concats (some of them: the words kernel moves
    /// whole words only).
    pub fn moves_concats(self) -> bool {
        self.spec().directions.contains(&Direction::Concat)
    }

    /// Its position in [`Kernel::ALL`] (declaration order).
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// Its name: `words`, `vec4`, `row_words`, `row_blocks`, `funnel`,
    /// `concat_words` (the key of its bandwidth in a stored cost model).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The kernel called `name`.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kernel whose form is called `name` (a kernel's name, or its
    /// per-layout form's: `row_copies` is the vec4 kernel's, `row_streams`
    /// the funnel's), as plans and traces name what runs.
    pub fn of_form_name(name: &str) -> Option<Kernel> {
        Kernel::from_name(name).or_else(|| {
            Kernel::ALL
                .into_iter()
                .find(|k| k.spec().per_layout_name == Some(name))
        })
    }

    /// Width of one unit in bits (32 or 128).
    pub fn unit_bits(self) -> u64 {
        self.spec().unit_bits
    }

    /// Its forms, in the order they are tried: [`Form::PerLayout`] (WGSL
    /// generated per layout: a plan with it is one dispatch holding every
    /// output, or, into separate destinations past one dispatch's slots,
    /// one dispatch per group of outputs), then [`Form::Table`] (one module
    /// for every split, driven by the parameter table).
    pub fn forms(self) -> &'static [Form] {
        let moves = &self.spec().moves;
        match (moves.per_layout.is_some(), moves.table.is_some()) {
            (true, true) => &[Form::PerLayout, Form::Table],
            (true, false) => &[Form::PerLayout],
            _ => &[Form::Table],
        }
    }

    /// The name of what runs in `form`: the per-layout form's own name where
    /// the kernel has two forms (`row_copies`, `row_streams`), else the
    /// kernel's.
    pub(crate) fn form_name(self, form: Form) -> &'static str {
        match (form, self.spec().per_layout_name) {
            (Form::PerLayout, Some(name)) => name,
            _ => self.name(),
        }
    }

    /// True when it has a form generated per layout ([`Form::PerLayout`]).
    pub fn is_generated(self) -> bool {
        self.spec().moves.per_layout.is_some()
    }

    /// True when it has a table-driven form ([`Form::Table`]): one module
    /// for every split, which a runtime can compile before any plan.
    pub fn is_table_driven(self) -> bool {
        self.spec().moves.table.is_some()
    }

    /// The sample splits its spec lists, each with the form it exercises:
    /// splits it plans with that form forced, in both placements, which
    /// every suite of modules iterates.
    pub(crate) fn samples(self) -> impl Iterator<Item = (Form, SampleSplit)> {
        self.spec().samples.iter().copied()
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
    /// the last kernels.
    ByRate,
    /// Last: it moves anything its directions allow (the words kernel any
    /// split, the concat-words kernel any concat that fits a window).
    Last,
}

/// A split named by plain numbers: a kernel's calibration probe or one of
/// its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SampleSplit {
    pub shape: &'static [usize],
    pub axis: usize,
    pub lengths: &'static [usize],
    pub element_type: ElementType,
}

impl SampleSplit {
    /// The split it names (the samples are valid splits; a test plans each).
    pub fn resolve(&self) -> ResolvedSplit {
        ResolvedSplit::new(self.shape, self.axis, self.lengths.to_vec(), true)
            .unwrap_or_else(|e| panic!("a kernel's sample split {self:?}: {e}"))
    }
}

/// The probe of the kernels for vec4-aligned runs (row copies, vec4): f32
/// rows of 16 KiB split into four.
pub(crate) const ALIGNED_RUNS: SampleSplit = SampleSplit {
    shape: &[1024, 4096],
    axis: 1,
    lengths: &[1024; 4],
    element_type: ElementType::Float,
};

/// The probe of the kernels for long runs at any bit offset (funnel, row
/// streams): u8 rows of 4,097 bytes split into 2,048 and 2,049 (8 MiB), the
/// shape of split_bench's u8 case (why this shape: `docs/DEVICE.md`,
/// "Lavapipe's speeds").
pub(crate) const LONG_UNALIGNED_RUNS: SampleSplit = SampleSplit {
    shape: &[2048, 4097],
    axis: 1,
    lengths: &[2048, 2049],
    element_type: ElementType::Uint8,
};

/// YOLOv5's head, a sample of the kernels that move it: a one-vec4 box,
/// a one-word objectness column and 80 class words per row.
pub(crate) const YOLOV5_HEAD: SampleSplit = SampleSplit {
    shape: &[96, 85],
    axis: 1,
    lengths: &[4, 1, 80],
    element_type: ElementType::Float,
};

// The published figures the GPU class models rest on
// ([`crate::docs::device`], "Class models"): what a plain vec4 kernel
// copies on each class, of which every kernel's rate there is a share.

/// What a plain vec4 kernel copies on [`crate::plan::CostModel::DISCRETE_GPU`], bytes
/// read + written per second: 0.8 of the 360-384 GB/s peak of an RTX 3060
/// or RX 6700 XT ([`crate::docs::device`], "Class models").
pub const DISCRETE_GPU_BYTES_PER_SECOND: f64 = 300e9;

/// What a plain vec4 kernel copies on [`crate::plan::CostModel::INTEGRATED_GPU`]: 0.8
/// of the 68-100 GB/s of the LPDDR4X and LPDDR5 systems of Apple M1-M3,
/// Intel Iris Xe and Radeon 680M.
pub const INTEGRATED_GPU_BYTES_PER_SECOND: f64 = 60e9;

/// What a plain vec4 kernel is assumed to copy on an adapter nothing is
/// known of ([`crate::plan::CostModel::CONSERVATIVE`]).
pub const UNKNOWN_GPU_BYTES_PER_SECOND: f64 = 20e9;

/// A kernel's documented bandwidth (bytes read + written per second) on
/// each class of adapter, for the class cost models
/// ([`crate::docs::device`], "Class models"): measured on lavapipe; on the
/// GPU classes, the class's vec4-copy bandwidth times the share of it the
/// kernel's striped access pattern allows ([`ClassRates::on_gpus`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClassRates {
    /// Lavapipe, measured.
    pub software: f64,
    /// A discrete GPU.
    pub discrete: f64,
    /// An integrated GPU.
    pub integrated: f64,
    /// An adapter nothing is known of.
    pub unknown: f64,
}

impl ClassRates {
    /// Lavapipe's measured `software` rate, and on every GPU class the
    /// class's vec4-copy bandwidth times `share`: the kernel's efficiency
    /// by its access trace (sectors per request against the ideal over its
    /// samples and the sweep, `tests/coalescing.rs` checks the order) and
    /// its access width (4-byte lanes issue four times the requests).
    pub const fn on_gpus(software: f64, share: f64) -> ClassRates {
        ClassRates {
            software,
            discrete: DISCRETE_GPU_BYTES_PER_SECOND * share,
            integrated: INTEGRATED_GPU_BYTES_PER_SECOND * share,
            unknown: UNKNOWN_GPU_BYTES_PER_SECOND * share,
        }
    }
}

/// A generated kernel's layout of some gathered outputs (non-empty, with
/// their indices) in a dispatch whose input window starts at the given bit.
pub(crate) type LayoutOf =
    fn(&Work<'_>, Vec<(usize, &OutputGeometry)>, u64) -> Option<GeneratedLayout>;

/// One of a kernel's two ways of becoming WGSL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Form {
    /// Generated per layout, one module per dispatch's layout: run lengths,
    /// strides and lanes per row compiled in. Tried first.
    PerLayout,
    /// Driven by the parameter table: one module for every split.
    Table,
}

impl Form {
    /// Its name: `per-layout` or `table`.
    pub fn name(self) -> &'static str {
        match self {
            Form::PerLayout => "per-layout",
            Form::Table => "table",
        }
    }
}

/// A kernel's table-driven form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableForm {
    /// Whether it moves these outputs.
    pub fits: fn(&Work<'_>) -> bool,
    /// Its WGSL after the prelude, for a variant (placement, slots, entry
    /// skipping, lane order).
    pub wgsl: fn(&Variant) -> String,
    /// Moves whole outputs only (an output cut into chunks past the
    /// binding limit takes another kernel).
    pub whole_outputs: bool,
}

/// How a kernel moves a plan's outputs: per layout, by the table, or per
/// layout where that form takes the outputs and by the table elsewhere.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Moves {
    /// Generated per layout, one module per dispatch: its layout of every
    /// gathered output ([`Work::generated_outputs`]) from the input's
    /// start, in one dispatch; or, into separate destinations past one
    /// dispatch's slots, of one group's ([`Work::group_outputs`]) from
    /// the group's window, a dispatch per group. The layout generates the
    /// WGSL ([`KernelLayout`]). Always whole outputs.
    pub per_layout: Option<LayoutOf>,
    /// Driven by the parameter table, one module for every split.
    pub table: Option<TableForm>,
    /// Per layout as well, for groups past [`crate::plan::internals::MAX_GROUP_MODULES`]
    /// modules of `per_layout` (or past one module's pieces): one group's
    /// layout whose module reads the outputs' places from the table, so
    /// that every group of as many outputs shares it.
    pub grouped: Option<Grouped>,
}

/// A generated kernel's layouts for groups whose module reads the outputs'
/// places from the table ([`Moves::grouped`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grouped {
    /// One group's layout.
    pub layout: LayoutOf,
    /// Most outputs one such module moves.
    pub max_outputs: usize,
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
    /// Whether and how it moves a plan's outputs.
    pub moves: Moves,
    /// Its templates under `shaders/` (one per form; a per-layout form
    /// that moves both ways may have one per direction).
    pub templates: &'static [Template],
    /// Whether the cost model prices gathering this one output at this
    /// kernel's rate (it would move the output on its own; the kernels that
    /// need a whole layout to say so, row blocks and concat words, say no).
    pub prices_output: fn(&OutputGeometry) -> bool,
    /// The split calibration times for it.
    pub probe: SampleSplit,
    /// Splits it plans when forced with the form beside each, in both
    /// placements: every suite of modules (naga, Dawn, the access trace,
    /// the rendered WGSL) iterates them, so every form of every kernel in
    /// the table is in every suite.
    pub samples: &'static [(Form, SampleSplit)],
    /// Its documented bandwidth per device class.
    pub rates: ClassRates,
    /// The kernel whose rate a stored cost model that lacks this one's
    /// gives it (a model stored before this kernel existed): the kernel
    /// that moves what it moves at about its rate. `None`: the class
    /// model's documented rate.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub inherits: Option<Kernel>,
    /// The name of its per-layout form where the kernel has two forms (the
    /// name that form had as a kernel of its own before kernels merged, by
    /// which reports and plans still call it, and under which a stored cost
    /// model may hold its rate: what the kernel's probe measures now).
    pub per_layout_name: Option<&'static str>,
    /// The ways it moves bits: splits, concats (a split run backwards), or
    /// both.
    pub directions: &'static [Direction],
}

/// What a generated layout does: the dispatch it needs and the WGSL it
/// generates. Each layout type is one kernel's.
pub(crate) trait KernelLayout {
    /// The kernel it generates.
    fn kernel(&self) -> Kernel;

    /// Invocations of its dispatch (each of a plan's, where groups of
    /// outputs take one each) for `outer` rows.
    fn invocations(&self, outer: u64) -> u64;

    /// Invocations of a dispatch whose input window holds `window_bits`,
    /// for a layout that launches a lane per unit of its window (a group's
    /// window then ends where the group's last run ends); `None` for one
    /// whose lanes follow its outputs, whatever the window.
    fn window_invocations(&self, _outer: u64, _window_bits: u64) -> Option<u64> {
        None
    }

    /// The table's entry count of a layout whose module reads each entry
    /// once, before its first store, one entry per gathered output; `None`
    /// for a module that reads the table as it goes.
    fn output_entries(&self) -> Option<usize>;

    /// The module's code after the prelude, for a variant.
    fn wgsl(&self, variant: &Variant) -> String;

    /// The code path it takes where its kernel's form has more than one
    /// (row blocks' `looped`); `None` for the form's usual one.
    fn path(&self) -> Option<&'static str> {
        None
    }

    /// True when each table entry owns a range of consecutive invocations
    /// (its `first_invocation`, one unit each), in output order; else
    /// every invocation serves every entry, as the layout's constants say.
    fn entry_ranges(&self) -> bool {
        false
    }
}

/// The layout a generated kernel is compiled for. It does not depend on the
/// row count or on where the caller's buffers start, so a runtime compiles
/// one per split node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeneratedLayout {
    /// [`Kernel::RowBlocks`]: blocks of whole short rows.
    RowBlocks(RowBlocks),
    /// [`Kernel::Funnel`]'s per-layout form: stretches of long runs inside
    /// one row.
    RowStreams(RowStreams),
    /// [`Kernel::Vec4`]'s and [`Kernel::RowWords`]' per-layout form:
    /// stretches of aligned runs inside one row.
    RowCopies(RowCopies),
    /// [`Kernel::ConcatWords`]: tensor words from pieces at any offset.
    ConcatWords(ConcatWords),
    /// [`Kernel::Funnel`]'s per-layout form for concats: tensor vec4s from
    /// long runs at any offset.
    ConcatStreams(ConcatStreams),
}

impl GeneratedLayout {
    /// Its behaviour.
    pub(crate) fn generated(&self) -> &dyn KernelLayout {
        match self {
            GeneratedLayout::RowBlocks(layout) => layout,
            GeneratedLayout::RowStreams(layout) => layout,
            GeneratedLayout::RowCopies(layout) => layout,
            GeneratedLayout::ConcatWords(layout) => layout,
            GeneratedLayout::ConcatStreams(layout) => layout,
        }
    }

    /// The kernel this layout generates.
    pub fn kernel(&self) -> Kernel {
        self.generated().kernel()
    }

    /// The table's entry count of a layout whose module reads each entry
    /// once, before its first store, one entry per gathered output (row
    /// copies, row streams); `None` for row blocks, whose table has not
    /// been measured in a uniform buffer.
    pub fn output_entries(&self) -> Option<usize> {
        self.generated().output_entries()
    }

    /// Invocations of its dispatch (each of a plan's, where groups of
    /// outputs take one each) for `outer` rows.
    pub fn invocations(&self, outer: u64) -> u64 {
        self.generated().invocations(outer)
    }

    /// Invocations of its dispatch over an input window of `window_bits`.
    pub(crate) fn invocations_over(&self, outer: u64, window_bits: u64) -> u64 {
        let layout = self.generated();
        layout
            .window_invocations(outer, window_bits)
            .unwrap_or_else(|| layout.invocations(outer))
    }

    /// True when its lanes cover its pass's input window (a lane per unit
    /// of it), so that a group's window is best cut where its runs end.
    pub(crate) fn lanes_cover_window(&self) -> bool {
        self.generated().window_invocations(1, 0).is_some()
    }

    /// The code path it takes where its kernel's form has more than one
    /// (row blocks' `looped`), so that every path is rendered and checked.
    pub fn path(&self) -> Option<&'static str> {
        self.generated().path()
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
            for form in kernel.forms() {
                let samples = kernel.samples().filter(|(f, _)| f == form).count();
                assert!(
                    samples > 0,
                    "{kernel} lists no samples of its {form:?} form"
                );
            }
            assert!(kernel.samples().all(|(f, _)| kernel.forms().contains(&f)));
        }
    }

    #[test]
    fn an_inherited_rate_is_a_table_driven_kernels_of_the_same_unit() {
        for kernel in Kernel::ALL {
            if let Some(from) = kernel.spec().inherits {
                assert_eq!(from.unit_bits(), kernel.unit_bits(), "{kernel}");
                assert!(from.spec().moves.table.is_some(), "{kernel}");
            }
        }
    }
}
