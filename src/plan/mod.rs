//! Planning: pure data derived from a [`ResolvedSplit`](crate::ResolvedSplit),
//! with no GPU types, testable anywhere.
//!
//! - [`RunLayout`] is the split as contiguous runs (the host path's plan);
//! - [`SplitPlan`] is the GPU plan: where outputs live ([`Placement`]),
//!   which outputs move with copy commands, the [`Kernel`] and its
//!   dispatches with their parameter tables;
//! - [`SplitPlan::bind`] checks the caller's regions (as plain numbers) and
//!   binds the plan to them;
//! - [`PlanLimits`] are the device limits a plan depends on;
//! - [`Strategy`] and [`CostModel`] choose between copies and the kernels;
//! - the kernels live in `kernels/`, one module each behind one table, and
//!   [`ShaderKey`] renders the WGSL module a plan's dispatches run.
//!
//! The kernels see each output as a contiguous bit string (`outer` runs of
//! `run_bits`, packed); output bit `p` comes from source bit
//! `(p / run) * block + offset + p % run`. A plan under the device limits is
//! one pass; a tensor or arena larger than one storage binding is cut into
//! chunks whose source and destination fit in windows, grouped greedily into
//! passes.

pub(crate) mod align;
mod binding;
mod chunks;
mod classes;
pub mod coalescing;
mod cost;
#[cfg(feature = "serde")]
mod cost_serde;
pub(crate) mod error;
mod estimate;
mod gather;
mod geometry;
mod kernel_choice;
mod kernels;
mod lanes;
mod limits;
mod needs;
mod options;
mod outputs;
mod passes;
mod placement;
mod recording;
mod regions;
mod runs;
mod shader;
mod split_plan;
mod strategy;
mod table;
mod template;
mod usages;
mod wgsl;

pub use classes::{
    DISCRETE_GPU_BYTES_PER_SECOND, INTEGRATED_GPU_BYTES_PER_SECOND, UNKNOWN_GPU_BYTES_PER_SECOND,
};
pub use cost::{CostModel, DeviceClass, KernelRates};
pub use error::{EncodeError, PlanError, PlanMismatch};
pub use estimate::PlanCost;
pub use kernels::{GeneratedLayout, Kernel, RowBlock, RowCopies, RowStreams};
pub use lanes::LaneOrder;
pub use limits::{MAX_DESTINATIONS_PER_DISPATCH, PlanLimits};
pub use options::PlanOptions;
pub use outputs::PlannedOutput;
pub use placement::Placement;
pub use runs::{Run, RunLayout};
pub use shader::ShaderKey;
pub use split_plan::SplitPlan;
pub use strategy::{CopyRuns, Strategy};
pub use usages::{BufferRole, Usages};
pub use wgsl::Bindings;

/// What tests and tools need of the plan's insides (the table ABI, the
/// passes and their bindings, the generated layouts' parts); not part of
/// the supported API.
#[doc(hidden)]
pub mod internals {
    pub use super::binding::{BoundDispatch, BoundPlan, SlotBinding};
    pub use super::kernel_choice::MAX_GROUP_MODULES;
    pub use super::kernels::{
        COPY_VEC4S, CopyOutput, MAX_COPY_OUTPUTS, MAX_ROW_BLOCK_BITS, MIN_WORKING_PERCENT, Piece,
        RowOutput, STREAM_VEC4S, StreamOutput,
    };
    pub use super::passes::{DstWindow, Pass};
    pub use super::recording::{
        RecordedBinding, RecordedBuffer, RecordedCommand, RecordedModule, Recording,
        SPARE_BUFFER_BYTES,
    };
    pub use super::regions::Region;
    pub use super::shader::{BindingKind, LayoutEntry, MAX_UNIFORM_ENTRIES};
    pub use super::split_plan::fingerprint;
    pub use super::table::{
        FLAG_ALIGNED, FLAG_PAD, FLAG_SKIP, TableEntry, TableHeader, UNITS_PER_INVOCATION,
        WORKGROUP_SIZE,
    };

    use super::kernels::Kernel;
    use crate::element::ElementType;
    use crate::semantics::ResolvedSplit;

    /// The file of `kernel`'s template under `shaders/`.
    pub fn template_file(kernel: Kernel) -> &'static str {
        kernel.spec().template.file()
    }

    /// The sample splits `kernel`'s spec lists: splits it plans when
    /// forced, in both placements. Every suite of modules (the naga
    /// validation, the Dawn replay, the access trace, the rendered WGSL)
    /// iterates them, so a kernel in the table is in every suite.
    pub fn samples(kernel: Kernel) -> Vec<(ResolvedSplit, ElementType)> {
        kernel
            .samples()
            .map(|s| (s.resolve(), s.element_type))
            .collect()
    }
}
