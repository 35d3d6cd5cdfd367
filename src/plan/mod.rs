//! Planning: pure data derived from a [`ResolvedSplit`](crate::ResolvedSplit)
//! (or a [`ResolvedConcat`](crate::ResolvedConcat)), with no GPU types,
//! testable anywhere.
//!
//! - the split as contiguous runs (`geometry`) is where it starts, and the
//!   host path's whole plan;
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
//! - with the feature `analysis`, `ShaderKey` names the WGSL module a
//!   plan's dispatches run and `coalescing` counts what a GPU's warps would make
//!   of an access trace.
//!
//! A plan is made in stages, one folder each, in the order
//! [`SplitPlan::new`] runs them: `geometry` (the split's runs, each
//! output's bits, where it lands, the chunks of a tensor larger than a
//! binding), `choice` (copies or a kernel, the placement, the cost model),
//! `passes` (chunks grouped into passes, their tables and shader modules),
//! `binding` (the caller's regions bound to each dispatch, the buffers'
//! usages and roles, what each region must hold) and `recording.rs` (what
//! an encode records, as data). The kernels are a layer below the plan
//! (`src/kernels`), one file each behind one table, with the WGSL they
//! generate, the table ABI and the vocabulary the plan asks them in.
//!
//! The kernels see each output as a contiguous bit string (`outer` runs of
//! `run_bits`, packed); output bit `p` comes from source bit
//! `(p / run) * block + offset + p % run`. A plan under the device limits is
//! one pass; a tensor or arena larger than one storage binding is cut into
//! chunks whose source and destination fit in windows, grouped greedily into
//! passes.

pub(crate) mod binding;
mod choice;
#[cfg(feature = "analysis")]
pub mod coalescing;
mod concat_plan;
pub(crate) mod error;
pub(crate) mod geometry;
#[cfg(feature = "analysis")]
pub mod gpu_model;
mod limits;
mod options;
mod passes;
pub(crate) mod permuted_binding;
mod permuted_concat_plan;
mod permuted_plan;
mod permuted_tiles;
mod permuted_windows;
pub(crate) mod recording;
mod split_plan;
mod staging;

pub use crate::kernels::lanes::LaneOrder;
#[cfg(feature = "analysis")]
pub use crate::kernels::shader::ShaderKey;
#[cfg(not(feature = "analysis"))]
pub(crate) use crate::kernels::shader::ShaderKey;
pub use crate::kernels::work::Placement;
pub use crate::kernels::{Form, Kernel};
pub use binding::requirements::{DestinationRequirement, Requirements};
pub use binding::usages::{BufferRole, Usages};
pub use choice::cost::{CostModel, DeviceClass, KernelRates};
pub use choice::estimate::PlanCost;
#[cfg(feature = "analysis")]
pub use choice::strategy::CopyRuns;
pub use choice::strategy::Strategy;
pub use concat_plan::{ConcatPlan, ConcatRequirements};
pub(crate) use error::{EncodeError, PlanError, PlanMismatch};
pub(crate) use geometry::Direction;
pub use geometry::outputs::PlannedOutput;
pub(crate) use geometry::runs::{Run, RunLayout};
pub use limits::PlanLimits;
pub use options::PlanOptions;
pub use permuted_concat_plan::PermutedConcatPlan;
pub use permuted_plan::{BLOCKED_WORDS, PermutedPlan};
pub use split_plan::SplitPlan;

#[cfg(feature = "analysis")]
pub mod internals;
