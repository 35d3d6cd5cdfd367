//! Planning: pure data derived from a [`ResolvedSplit`](crate::ResolvedSplit),
//! with no GPU types, testable anywhere.
//!
//! - [`RunLayout`] is the split as contiguous runs (the host path's plan);
//! - [`SplitPlan`] is the GPU plan: where outputs live, which outputs move
//!   with copy commands, and the dispatches with their parameter tables;
//! - [`PlanLimits`] are the device limits a plan depends on;
//! - [`Strategy`] and [`CostModel`] choose between copies and the gather;
//! - the shader contract (the parameter table's layout and the constants
//!   Rust and WGSL share) lives in [`abi`]; [`Kernel`] names the entry
//!   points.
//!
//! The shader sees each output as a contiguous bit string (`outer` runs of
//! `run_bits`, packed); output bit `p` comes from source bit
//! `(p / run) * block + offset + p % run`. A plan under the device limits is
//! one pass; a tensor or arena larger than one storage binding is cut into
//! chunks whose source and destination fit in windows, grouped greedily into
//! passes.

pub mod abi;
mod binding;
mod chunks;
mod cost;
mod generated;
mod geometry;
mod kernel_choice;
mod limits;
mod needs;
mod outputs;
mod passes;
mod placement;
mod row_block;
mod row_streams;
mod runs;
mod split_plan;
mod strategy;

pub use abi::Kernel;
pub use binding::{BoundPlan, PassBindings};
pub use cost::{CostModel, DeviceClass};
pub use generated::GeneratedLayout;
pub use limits::{MAX_DESTINATIONS_PER_DISPATCH, PlanLimits};
pub use outputs::PlannedOutput;
pub use passes::{DstWindow, Pass};
pub use placement::Outputs;
pub use row_block::{MAX_ROW_BLOCK_BITS, Piece, RowBlock, RowOutput};
pub use row_streams::{RowStreams, STREAM_VEC4S, StreamOutput};
pub use runs::{Run, RunLayout};
pub use split_plan::{PlanOptions, SplitPlan, fingerprint};
pub use strategy::{CopyRuns, Strategy};
