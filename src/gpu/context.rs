//! [`GpuContext`]: an instance, adapter, device and queue for tests,
//! examples and simple users.

use super::GpuSplitter;
use crate::error::{Error, Result};

/// An instance, adapter, device and queue chosen the default way.
#[derive(Debug, Clone)]
pub struct GpuContext {
    /// The instance.
    pub instance: wgpu::Instance,
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device, created with the adapter's own limits (so buffers past
    /// wgpu's 256 MiB default work) and no optional features.
    pub device: wgpu::Device,
    /// The queue.
    pub queue: wgpu::Queue,
}

impl GpuContext {
    /// Blocking form of [`GpuContext::request_default`].
    ///
    /// # Errors
    ///
    /// As [`GpuContext::request_default`].
    pub fn new_default() -> Result<Self> {
        pollster::block_on(Self::request_default())
    }

    /// Picks the default adapter, honouring `WGPU_BACKEND` (e.g. `vulkan`,
    /// `gl`) and `WGPU_POWER_PREF`, and requests a device with the adapter's
    /// limits.
    ///
    /// # Errors
    ///
    /// [`Error::NoAdapter`] (its message names `mesa-vulkan-drivers`), or
    /// [`Error::RequestDevice`].
    pub async fn request_default() -> Result<Self> {
        Self::request_with_features(wgpu::Features::empty()).await
    }

    /// As [`GpuContext::request_default`], also enabling those of `wanted`
    /// that the adapter has (e.g. timestamp queries for benchmarks). The
    /// split itself never needs a feature.
    ///
    /// # Errors
    ///
    /// As [`GpuContext::request_default`].
    pub async fn request_with_features(wanted: wgpu::Features) -> Result<Self> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env().unwrap_or_default(),
            ..Default::default()
        };
        let adapter = instance
            .request_adapter(&options)
            .await
            .map_err(|e| Error::NoAdapter {
                detail: e.to_string(),
            })?;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("wgpu-split"),
                required_features: adapter.features() & wanted,
                required_limits: adapter.limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| Error::RequestDevice {
                detail: e.to_string(),
            })?;
        Ok(GpuContext {
            instance,
            adapter,
            device,
            queue,
        })
    }

    /// One line naming the adapter, its backend and device type.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!(
            "{} ({:?}, {:?}, driver {} {})",
            info.name, info.backend, info.device_type, info.driver, info.driver_info
        )
    }

    /// A splitter for this context's device.
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::new`].
    pub fn splitter(&self) -> Result<GpuSplitter> {
        GpuSplitter::new(&self.device, &self.queue)
    }
}
