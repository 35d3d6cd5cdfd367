//! Planning: pure data derived from a [`ResolvedSplit`](crate::ResolvedSplit)
//! (or a [`ResolvedConcat`](crate::ResolvedConcat)), with no GPU types,
//! testable anywhere.
//!
//! - [`RunLayout`] is the split as contiguous runs (the host path's plan);
//! - [`SplitPlan`] is the GPU plan: where outputs live ([`Placement`]),
//!   which outputs move with copy commands, the [`Kernel`] and its
//!   dispatches with their parameter tables;
//! - [`SplitPlan::requirements`] says what it needs of the caller's
//!   buffers and what an encode records, before anything is encoded;
//! - [`ConcatPlan`] is a concat: the split it mirrors, planned the same
//!   way and run backwards ([`ConcatPlan::requirements`]);
//! - [`PlanLimits`] are the device limits a plan depends on;
//! - [`Strategy`], [`CostModel`] (by [`DeviceClass`], with its
//!   [`LaneOrder`]) choose between copies and the kernels, and
//!   [`CostModel::plan_cost`] says what a whole plan costs;
//! - the kernels live in `kernels/`, one module each behind one table, and
//!   [`ShaderKey`] names the WGSL module a plan's dispatches run;
//! - [`coalescing`] counts what a GPU's warps would make of an access trace.
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
mod concat_plan;
mod cost;
#[cfg(feature = "serde")]
mod cost_serde;
mod direction;
mod ends;
pub(crate) mod error;
mod estimate;
mod gather;
mod geometry;
mod kernel_choice;
mod kernels;
mod lanes;
mod limits;
mod modules;
mod options;
mod outputs;
mod pass_table;
mod passes;
mod placement;
mod recording;
mod regions;
mod requirements;
mod runs;
mod shader;
mod split_plan;
mod strategy;
mod table;
mod template;
mod usages;
mod views;
mod wgsl;

pub use concat_plan::{ConcatPlan, ConcatRequirements};
pub use cost::{CostModel, DeviceClass, KernelRates};
pub(crate) use direction::Direction;
pub use error::{EncodeError, PlanError, PlanMismatch};
pub use estimate::PlanCost;
pub use kernels::Kernel;
pub use lanes::LaneOrder;
pub use limits::{MAX_DESTINATIONS_PER_DISPATCH, PlanLimits};
pub use options::PlanOptions;
pub use outputs::PlannedOutput;
pub use placement::Placement;
pub use requirements::{DestinationRequirement, Requirements};
pub use runs::{Run, RunLayout};
pub use shader::ShaderKey;
pub use split_plan::SplitPlan;
pub use strategy::{CopyRuns, Strategy};
pub use usages::{BufferRole, Usages};

/// What tests and tools need of the plan's insides (the table ABI, the
/// passes and their bindings, the generated layouts, the shader keys'
/// variants); not part of the supported API.
#[doc(hidden)]
pub mod internals;
