//! [`DeviceError`]: what the device or wgpu reported.

use crate::plan::BufferRole;

/// What went wrong on the device or in wgpu.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// No GPU adapter could be found.
    #[error(
        "no GPU adapter found ({detail}); on Debian/Ubuntu install Mesa's software Vulkan driver: apt-get install -y mesa-vulkan-drivers"
    )]
    NoAdapter {
        /// What wgpu said.
        detail: String,
    },
    /// The adapter refused the device request.
    #[error("cannot create a device: {detail}")]
    RequestDevice {
        /// What wgpu said.
        detail: String,
    },
    /// A GPU operation failed (validation, mapping, polling, device loss).
    #[error("GPU operation failed: {detail}")]
    Gpu {
        /// What wgpu said.
        detail: String,
    },
    /// A caller's buffer is mapped, so the GPU cannot use it.
    #[error("the {which} buffer is mapped; unmap it before the split is submitted")]
    BufferMapped {
        /// Which buffer.
        which: BufferRole,
    },
}
