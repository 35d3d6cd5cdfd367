//! The device limits the planner needs, as plain numbers, and the binding
//! window they allow.

use super::abi::{UNITS_PER_INVOCATION, WORKGROUP_SIZE};

/// Largest window bound in one pass: bit offsets inside a window stay below
/// 2^31, so the shader's u32 bit arithmetic cannot wrap.
const MAX_WINDOW_BYTES: u64 = 1 << 28;

/// The device limits the planner needs, as plain numbers.
///
/// Plans depend on limits (binding size, alignment, grid size), so tests that
/// must mean the same on every GPU plan with explicit limits such as
/// [`PlanLimits::WEBGPU_DEFAULT`] rather than the adapter's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanLimits {
    /// `min_storage_buffer_offset_alignment`, in bytes.
    pub min_storage_buffer_offset_alignment: u32,
    /// `max_storage_buffer_binding_size`, in bytes.
    pub max_storage_buffer_binding_size: u64,
    /// `max_buffer_size`, in bytes.
    pub max_buffer_size: u64,
    /// `max_compute_workgroups_per_dimension`.
    pub max_compute_workgroups_per_dimension: u32,
}

impl PlanLimits {
    /// wgpu's default limits (the WebGPU baseline).
    pub const WEBGPU_DEFAULT: PlanLimits = PlanLimits {
        min_storage_buffer_offset_alignment: 256,
        max_storage_buffer_binding_size: 128 << 20,
        max_buffer_size: 256 << 20,
        max_compute_workgroups_per_dimension: 65535,
    };

    /// Lavapipe's limits (Mesa 22.3, [`crate::docs::device`]), handy for tests.
    pub const LAVAPIPE: PlanLimits = PlanLimits {
        min_storage_buffer_offset_alignment: 32,
        max_storage_buffer_binding_size: 128 << 20,
        max_buffer_size: (2 << 30) - 1,
        max_compute_workgroups_per_dimension: 65535,
    };

    /// True when a plan made for `self` is valid on a device with `device`
    /// limits: alignment a multiple of the device's, and no limit above it.
    /// (Tests plan with tiny windows to exercise multi-pass plans cheaply.)
    pub fn fits_within(&self, device: &PlanLimits) -> bool {
        let a = self.min_storage_buffer_offset_alignment;
        let d = device.min_storage_buffer_offset_alignment.max(1);
        a >= d
            && a.is_multiple_of(d)
            && self.max_storage_buffer_binding_size <= device.max_storage_buffer_binding_size
            && self.max_buffer_size <= device.max_buffer_size
            && self.max_compute_workgroups_per_dimension
                <= device.max_compute_workgroups_per_dimension
    }

    /// The offset alignment of bindings, in bytes (at least 4).
    pub(crate) fn alignment_bytes(&self) -> u64 {
        u64::from(self.min_storage_buffer_offset_alignment.max(4))
    }

    /// Most invocations one pass may have: a 2-D grid of
    /// `max_compute_workgroups_per_dimension`² workgroups.
    pub(crate) fn max_invocations(&self) -> u64 {
        u64::from(self.max_compute_workgroups_per_dimension).pow(2) * u64::from(WORKGROUP_SIZE)
    }

    /// The largest window one binding covers, in bytes: the binding limit,
    /// capped so bit offsets fit in u32 and so the words of a window fit one
    /// grid, rounded down to the offset alignment.
    pub(crate) fn window_bytes(&self) -> u64 {
        let grid_bytes = (self.max_invocations() - 1) * 4 * UNITS_PER_INVOCATION;
        let limit = self
            .max_storage_buffer_binding_size
            .min(MAX_WINDOW_BYTES)
            .min(grid_bytes);
        limit / self.alignment_bytes() * self.alignment_bytes()
    }
}
