//! The device limits the planner needs, as plain numbers, and the binding
//! window they allow.

use crate::kernels::table::{TableEntry, TableHeader, UNITS_PER_INVOCATION, WORKGROUP_SIZE};
use crate::kernels::work::Placement;

/// Most destinations one dispatch binds, whatever the device allows: each
/// slot's code is instantiated in the kernel and runs in every invocation,
/// and past 32 the dispatch count of a large split hardly falls further.
pub(crate) const MAX_DESTINATIONS_PER_DISPATCH: u32 = 32;

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
    /// `max_storage_buffers_per_shader_stage`: a dispatch of separate
    /// destinations binds the input and up to this many less one
    /// destinations (its table is a uniform buffer).
    pub max_storage_buffers_per_shader_stage: u32,
    /// `min_uniform_buffer_offset_alignment`, in bytes.
    pub min_uniform_buffer_offset_alignment: u32,
    /// `max_uniform_buffer_binding_size`, in bytes.
    pub max_uniform_buffer_binding_size: u64,
}

impl PlanLimits {
    /// wgpu's default limits (the WebGPU baseline).
    pub const WEBGPU_DEFAULT: PlanLimits = PlanLimits {
        min_storage_buffer_offset_alignment: 256,
        max_storage_buffer_binding_size: 128 << 20,
        max_buffer_size: 256 << 20,
        max_compute_workgroups_per_dimension: 65535,
        max_storage_buffers_per_shader_stage: 8,
        min_uniform_buffer_offset_alignment: 256,
        max_uniform_buffer_binding_size: 64 << 10,
    };

    /// Lavapipe's limits (Mesa 22.3, [`crate::docs::device`]), handy for tests.
    pub const LAVAPIPE: PlanLimits = PlanLimits {
        min_storage_buffer_offset_alignment: 32,
        max_storage_buffer_binding_size: 128 << 20,
        max_buffer_size: (2 << 30) - 1,
        max_compute_workgroups_per_dimension: 65535,
        max_storage_buffers_per_shader_stage: 32,
        min_uniform_buffer_offset_alignment: 32,
        max_uniform_buffer_binding_size: 64 << 10,
    };

    /// The grid every dispatch of the crate launches for `workgroups`: as
    /// few rows (y) as `max_compute_workgroups_per_dimension` allows, the
    /// workgroups shared out evenly over them (x), so that `x · y` exceeds
    /// `workgroups` by less than a row count (65,536 workgroups launch
    /// 2 x 32,768, not 2 x 65,535); the shaders skip invocations past their
    /// work. `None` past the limit squared.
    pub(crate) fn grid(&self, workgroups: u64) -> Option<[u32; 2]> {
        let max = u64::from(self.max_compute_workgroups_per_dimension.max(1));
        let rows = workgroups.div_ceil(max).max(1);
        let x = workgroups.div_ceil(rows);
        Some([
            u32::try_from(x).ok()?,
            u32::try_from(rows).ok().filter(|&r| u64::from(r) <= max)?,
        ])
    }

    /// True when a plan made for `self` is valid on a device with `device`
    /// limits: alignment a multiple of the device's, and no limit above it.
    /// (Tests plan with tiny windows to exercise multi-pass plans cheaply.)
    pub fn fits_within(&self, device: &PlanLimits) -> bool {
        let aligned = |a: u32, d: u32| a >= d.max(1) && a.is_multiple_of(d.max(1));
        aligned(
            self.min_storage_buffer_offset_alignment,
            device.min_storage_buffer_offset_alignment,
        ) && aligned(
            self.min_uniform_buffer_offset_alignment,
            device.min_uniform_buffer_offset_alignment,
        ) && self.max_uniform_buffer_binding_size <= device.max_uniform_buffer_binding_size
            && self.max_storage_buffer_binding_size <= device.max_storage_buffer_binding_size
            && self.max_buffer_size <= device.max_buffer_size
            && self.max_compute_workgroups_per_dimension
                <= device.max_compute_workgroups_per_dimension
            && self.max_storage_buffers_per_shader_stage
                <= device.max_storage_buffers_per_shader_stage
    }

    /// Destinations one dispatch writes: the storage buffers a shader stage
    /// may bind less the input (the parameter table of such a dispatch is a
    /// uniform buffer), at most 32 and as
    /// many as a uniform table holds (at least 1: WebGPU's minimum of the
    /// limit is 8, so 7 on every adapter).
    pub fn destinations_per_dispatch(&self) -> u32 {
        let table_entries = self
            .max_uniform_buffer_binding_size
            .saturating_sub(TableHeader::SIZE)
            / TableEntry::SIZE;
        self.max_storage_buffers_per_shader_stage
            .saturating_sub(1)
            .min(u32::try_from(table_entries).unwrap_or(u32::MAX))
            .clamp(1, MAX_DESTINATIONS_PER_DISPATCH)
    }

    /// Most destination slots one pass binds with `placement`: the
    /// destinations per dispatch, or the one arena.
    pub(crate) fn slots_per_pass(&self, placement: Placement) -> usize {
        if placement.is_shared() {
            1
        } else {
            self.destinations_per_dispatch() as usize
        }
    }

    /// The alignment of each pass's table in the table buffer: a binding
    /// offset for a storage (arena) or uniform (separate) table.
    pub(crate) fn table_alignment_bytes(&self) -> u64 {
        self.alignment_bytes()
            .max(u64::from(self.min_uniform_buffer_offset_alignment))
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
    /// grid at [`UNITS_PER_INVOCATION`] each, rounded down to the offset
    /// alignment.
    pub(crate) fn window_bytes(&self) -> u64 {
        let grid_bytes = (self.max_invocations() - 1) * 4 * UNITS_PER_INVOCATION;
        let limit = self
            .max_storage_buffer_binding_size
            .min(MAX_WINDOW_BYTES)
            .min(grid_bytes);
        limit / self.alignment_bytes() * self.alignment_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::PlanLimits;

    #[test]
    fn the_grid_is_tight() {
        let limits = PlanLimits::WEBGPU_DEFAULT;
        assert_eq!(limits.max_compute_workgroups_per_dimension, 65535);
        assert_eq!(limits.grid(0), Some([0, 1]));
        assert_eq!(limits.grid(7), Some([7, 1]));
        assert_eq!(limits.grid(65535), Some([65535, 1]));
        // One more: two rows of half, not 2 x 65,535.
        assert_eq!(limits.grid(65536), Some([32768, 2]));
        assert_eq!(limits.grid(3 * 65535 + 1), Some([49152, 4]));
        for w in [1u64, 100, 65536, 1 << 20, 1 << 31, 65535 * 65535] {
            let [x, y] = limits.grid(w).unwrap();
            let launched = u64::from(x) * u64::from(y);
            assert!(
                launched >= w && launched - w < u64::from(y),
                "{w}: {x} x {y}"
            );
        }
        assert_eq!(limits.grid(65535 * 65535 + 1), None);
    }
}
