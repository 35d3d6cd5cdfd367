//! [`LaneOrder`]: how a kernel lays its invocations over the units it
//! moves, chosen per class of adapter.

use crate::kernels::table::UNITS_PER_INVOCATION;

/// How consecutive invocations (the lanes of a SIMD group) are laid over
/// the units a kernel moves.
///
/// A GPU runs 32 or 64 consecutive invocations as one warp and serves a
/// memory instruction of the warp by the 32-byte sectors its lanes touch:
/// lanes on consecutive 16-byte units touch the fewest. A software
/// rasteriser runs 4 to 16 lanes per SIMD register and rewards each lane
/// walking a long stretch of its own, which on a GPU puts lanes 32 to 128
/// bytes apart and touches twice the sectors a request needs
/// (`docs/DEVICE.md`, "Access patterns"). Each kernel compiles both; the
/// cost model of the adapter's class says which.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{CostModel, LaneOrder};
///
/// assert_eq!(CostModel::LAVAPIPE.lanes, LaneOrder::Blocked);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum LaneOrder {
    /// Each invocation moves a stretch of consecutive units (up to eight
    /// vec4s) of its own: what software rasterisers (lavapipe) run fastest.
    #[default]
    Blocked,
    /// Consecutive invocations on consecutive units, one or two units each,
    /// so that every memory request of a warp touches the sectors its bytes
    /// need and a split launches about as many invocations as a copy of
    /// its bytes: what GPUs run fastest.
    Striped,
}

impl LaneOrder {
    /// Units an invocation of a table-driven kernel moves: a stretch of
    /// [`crate::plan::internals::UNITS_PER_INVOCATION`] (blocked), or one.
    pub(crate) fn units_per_invocation(self) -> u64 {
        match self {
            LaneOrder::Blocked => UNITS_PER_INVOCATION,
            LaneOrder::Striped => 1,
        }
    }

    /// A short name, for labels and generated code.
    pub fn name(self) -> &'static str {
        match self {
            LaneOrder::Blocked => "blocked",
            LaneOrder::Striped => "striped",
        }
    }
}
