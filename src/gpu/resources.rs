//! The splitter's own resources on its device: compiled pipelines, cached
//! parameter tables and a spare buffer. What recording needs besides the
//! caller's buffers; no caller buffer is ever kept here.

use std::sync::{Arc, Mutex};

use super::cache::BoundedCache;
use super::error::DeviceError;
use super::pipelines::Pipelines;
use super::scope::scoped;
use crate::plan::internals::SPARE_BUFFER_BYTES;

/// An uploaded table and the bytes it holds (to confirm a hit).
#[derive(Debug)]
pub(crate) struct CachedTable {
    pub content: Vec<u8>,
    pub buffer: Arc<wgpu::Buffer>,
}

/// The device and what the splitter keeps on it.
#[derive(Debug)]
pub(crate) struct Resources {
    pub device: wgpu::Device,
    pub pipelines: Pipelines,
    pub tables: Mutex<BoundedCache<u64, CachedTable>>,
    /// Bound to destination slots a pass does not use, and the scratch end
    /// of the copy probes (`gpu::checks`).
    pub spare: wgpu::Buffer,
    /// Bytes of tables kept at most; `None` keeps none.
    pub table_budget: Option<u64>,
}

impl Resources {
    /// The resources of `device`, with the spare buffer made inside error
    /// scopes after `warm_up` (which compiles what must compile now).
    pub fn new(
        device: &wgpu::Device,
        warm_up: impl FnOnce(&Pipelines),
    ) -> Result<Resources, DeviceError> {
        let pipelines = Pipelines::default();
        let spare = scoped(device, "compiling the kernels", || {
            warm_up(&pipelines);
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split spare destination"),
                size: SPARE_BUFFER_BYTES,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Resources {
            device: device.clone(),
            pipelines,
            tables: Mutex::new(BoundedCache::default()),
            spare,
            table_budget: None,
        })
    }
}
