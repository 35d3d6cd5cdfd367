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
mod arena;
mod chunks;
mod geometry;
mod limits;
mod passes;
mod runs;
mod split_plan;
mod strategy;

pub use abi::Kernel;
pub use arena::OutputSlot;
pub use limits::PlanLimits;
pub use passes::Pass;
pub use runs::{Run, RunLayout};
pub use split_plan::SplitPlan;
pub use strategy::{CopyRuns, CostModel, Strategy};
