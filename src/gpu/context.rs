//! [`GpuContext`]: an instance, adapter, device and queue for tests,
//! examples and simple users, built from the caller's own parts or from
//! one shared default instance.
//!
//! **Buffers belong to one `wgpu::Instance`.** wgpu 30 names buffers by ids
//! that are only meaningful inside the instance that created them, and
//! compares them by id. A buffer of another instance can therefore name an
//! unrelated buffer of yours: a split would then read or write that other
//! buffer, and nothing in wgpu 30 lets this crate tell (it reports an error
//! only when the id names no buffer at all). Build the splitter from your
//! runtime's own device; the default contexts of this module all share one
//! process-wide instance, so they never create a second one behind your
//! back.

use std::sync::OnceLock;

use super::GpuSplitter;
use super::blocking::block_on;
use super::error::DeviceError;
use crate::error::Result;

/// An instance, adapter, device and queue.
#[derive(Debug, Clone)]
pub struct GpuContext {
    /// The instance.
    pub instance: wgpu::Instance,
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// The queue.
    pub queue: wgpu::Queue,
}

/// The one instance every default context of the process uses (created on
/// first use, honouring `WGPU_BACKEND`).
fn shared_instance() -> &'static wgpu::Instance {
    static INSTANCE: OnceLock<wgpu::Instance> = OnceLock::new();
    INSTANCE.get_or_init(|| {
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
    })
}

impl GpuContext {
    /// A context from parts the caller already owns (its instance, adapter,
    /// device and queue); nothing is created.
    pub fn from_parts(
        instance: wgpu::Instance,
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> Self {
        GpuContext {
            instance,
            adapter,
            device,
            queue,
        }
    }

    /// Blocking form of [`GpuContext::request_default`].
    ///
    /// # Errors
    ///
    /// As [`GpuContext::request_default`]; on the web
    /// [`DeviceError::BlocksOnTheWeb`] (await
    /// [`GpuContext::request_default`] there).
    pub fn new_default() -> Result<Self> {
        block_on(
            "GpuContext::new_default",
            "GpuContext::request_default",
            Self::request_default(),
        )
    }

    /// Picks the default adapter of the process-wide shared instance,
    /// honouring `WGPU_BACKEND` (e.g. `vulkan`, `gl`) and `WGPU_POWER_PREF`,
    /// and requests a new device with the adapter's limits (so buffers past
    /// wgpu's 256 MiB default work) and no optional features.
    ///
    /// # Errors
    ///
    /// [`DeviceError::NoAdapter`] (its message names `mesa-vulkan-drivers`),
    /// or [`DeviceError::RequestDevice`].
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
        Self::request(shared_instance(), wanted).await
    }

    /// As [`GpuContext::request_with_features`], on the caller's own
    /// `instance`.
    ///
    /// # Errors
    ///
    /// As [`GpuContext::request_default`].
    pub async fn request(instance: &wgpu::Instance, wanted: wgpu::Features) -> Result<Self> {
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env().unwrap_or_default(),
            ..Default::default()
        };
        let adapter =
            instance
                .request_adapter(&options)
                .await
                .map_err(|e| DeviceError::NoAdapter {
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
            .map_err(|e| DeviceError::RequestDevice {
                detail: e.to_string(),
            })?;
        Ok(GpuContext::from_parts(
            instance.clone(),
            adapter,
            device,
            queue,
        ))
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
