//! Choosing how a plan moves its outputs: copy commands or a kernel
//! ([`strategy`], [`kernel_choice`]) and the cost model both choices weigh
//! ([`cost`], [`estimate`]). [`KernelWork`] is what the chosen dispatches
//! move (the kernels' `Work`) with what pass building needs beside it (the
//! device's limits, where each output starts in its destination).

pub(crate) mod cost;
#[cfg(feature = "serde")]
pub(crate) mod cost_serde;
pub(crate) mod estimate;
pub(crate) mod kernel_choice;
pub(crate) mod strategy;

use std::ops::Deref;

use crate::kernels::work::Work;
use crate::plan::limits::PlanLimits;

/// The kernels' [`Work`] with the plan's facts pass building needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelWork<'a> {
    /// What the kernels move.
    pub work: Work<'a>,
    /// Where each output starts in its destination, in bytes.
    pub dst_offsets_bytes: &'a [u64],
    /// The device's limits.
    pub limits: &'a PlanLimits,
}

impl<'a> Deref for KernelWork<'a> {
    type Target = Work<'a>;

    fn deref(&self) -> &Work<'a> {
        &self.work
    }
}
