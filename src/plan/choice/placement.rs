//! Where the outputs go ([`Placement`], the kernels' vocabulary): what the
//! plan decides with it beside the kernels, how errors name each
//! destination and how many slots a pass binds under the device's limits.
//! With the kernels' own methods, every decision that depends on it is a
//! method, so the rest of the crate never matches on it (these read
//! [`Placement::is_shared`]).

pub use crate::kernels::work::Placement;
use crate::plan::binding::usages::BufferRole;
use crate::plan::limits::PlanLimits;

impl Placement {
    /// How errors name destination `index`.
    pub fn role(self, index: usize) -> BufferRole {
        if self.is_shared() {
            BufferRole::Arena
        } else {
            BufferRole::Output(index)
        }
    }

    /// Most destination slots one pass binds.
    pub(crate) fn max_slots(self, limits: &PlanLimits) -> usize {
        if self.is_shared() {
            1
        } else {
            limits.destinations_per_dispatch() as usize
        }
    }
}
