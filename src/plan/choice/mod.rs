//! Choosing how a plan moves its outputs: copy commands or a kernel
//! ([`strategy`], [`kernel_choice`]), where the outputs live
//! ([`placement`]), and the cost model both choices weigh ([`cost`],
//! [`estimate`]). [`gather`] is what the chosen dispatches move.

pub(crate) mod cost;
#[cfg(feature = "serde")]
pub(crate) mod cost_serde;
pub(crate) mod estimate;
pub(crate) mod kernel_choice;
pub(crate) mod kernel_work;
pub(crate) mod placement;
pub(crate) mod strategy;
