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
    /// A blocking form was called on the web, where nothing may block (the
    /// browser resolves WebGPU's promises only once control returns to its
    /// event loop): await the async form it names instead.
    #[error(
        "{call} blocks, which the web cannot do (the browser resolves WebGPU's promises only once control returns to its event loop): await {instead} instead"
    )]
    BlocksOnTheWeb {
        /// The blocking form called.
        call: &'static str,
        /// Its async twin.
        instead: &'static str,
    },
    /// Calibration needs a timer the build lacks: on the web the crate reads
    /// no clock, so it times with the device's timestamp queries only.
    #[error(
        "calibrating on the web needs timestamp queries: request wgpu::Features::TIMESTAMP_QUERY on the device (the web gives the crate no clock)"
    )]
    NoTimer,
    /// A caller's buffer is mapped, so the GPU cannot use it.
    #[error("the {which} buffer is mapped; unmap it before the split is submitted")]
    BufferMapped {
        /// Which buffer.
        which: BufferRole,
    },
}
