//! Where the outputs go: one destination region per output (the runtime's
//! own tensors), or one arena buffer holding every output at an offset a
//! consumer kernel can bind directly. Every decision that depends on it is
//! a method here, so the rest of the crate never matches on it.

use crate::plan::binding::usages::BufferRole;
use crate::plan::limits::PlanLimits;

/// Where a plan writes its outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Placement {
    /// Each output into a destination region of its own: its own buffer, or
    /// a part of any buffer. A dispatch writes up to
    /// [`crate::plan::PlanLimits::destinations_per_dispatch`] of them.
    #[default]
    Separate,
    /// Every output into one arena buffer, at offsets aligned to
    /// `min_storage_buffer_offset_alignment` (one dispatch for any number of
    /// outputs under the limits).
    Arena,
}

impl Placement {
    /// Destinations an encode takes for `outputs` outputs: one per output,
    /// or one arena.
    pub fn destination_count(self, outputs: usize) -> usize {
        match self {
            Placement::Separate => outputs,
            Placement::Arena => 1,
        }
    }

    /// The destination output `output` is written into.
    pub fn destination_of(self, output: usize) -> usize {
        match self {
            Placement::Separate => output,
            Placement::Arena => 0,
        }
    }

    /// How errors name destination `index`.
    pub fn role(self, index: usize) -> BufferRole {
        match self {
            Placement::Separate => BufferRole::Output(index),
            Placement::Arena => BufferRole::Arena,
        }
    }

    /// True when every output shares one destination (so an output's bytes
    /// start at its offset inside it).
    pub fn is_shared(self) -> bool {
        self == Placement::Arena
    }

    /// Most destination slots one pass binds.
    pub(crate) fn max_slots(self, limits: &PlanLimits) -> usize {
        match self {
            Placement::Separate => limits.destinations_per_dispatch() as usize,
            Placement::Arena => 1,
        }
    }

    /// The slot the `j`th entry of a one-dispatch pass writes (generated
    /// kernels: entry `j` is gathered output `j`).
    pub(crate) fn slot_of_entry(self, j: usize) -> usize {
        match self {
            Placement::Separate => j,
            Placement::Arena => 0,
        }
    }

    /// True when a pass may hold several chunks of one destination (the
    /// arena: chunks of every output). With separate destinations a pass
    /// holds one chunk per output, and every invocation serves every slot.
    pub(crate) fn chunks_share_a_slot(self) -> bool {
        self == Placement::Arena
    }

    /// The table binding of the table-driven kernels: a read-only storage
    /// buffer of any length (arena), or a uniform buffer of exactly one
    /// entry per slot (separate destinations), which frees a storage
    /// binding for one more destination. (A row-copy or row-stream module
    /// reads a uniform table in an arena too: `ShaderKey::uniform_entries`.)
    pub(crate) fn uniform_table(self) -> bool {
        self == Placement::Separate
    }

    /// A short name, for labels and generated code.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Separate => "separate",
            Placement::Arena => "arena",
        }
    }
}
