//! Where the outputs go: one destination region per output (the runtime's
//! own tensors), or one arena buffer holding every output at an offset a
//! consumer kernel can bind directly.

/// Where a plan writes its outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Outputs {
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
