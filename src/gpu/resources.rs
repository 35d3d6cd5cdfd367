//! The splitter's own resources on its device: compiled pipelines, cached
//! parameter tables and a spare buffer. What recording needs besides the
//! caller's buffers; no caller buffer is ever kept here.

use std::sync::{Arc, Mutex};

use super::cache::{BoundedCache, CachePolicy, lock};
use super::error::DeviceError;
use super::pipelines::{CompiledKernel, Pipelines};
use super::scope::scoped;
use crate::plan::ShaderKey;
use crate::plan::recording::SPARE_BUFFER_BYTES;

/// An uploaded table and what determines its bytes (to confirm a hit):
/// the plan's table, or the plan's and the packing's grouping
/// ([`crate::plan::binding::BoundPlan::table_identity`]).
#[derive(Debug)]
pub(crate) struct CachedTable {
    pub identity: Vec<u8>,
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
    /// The scratch arena of staged plans, kept as the policy allows.
    pub scratch: Mutex<Option<Arc<wgpu::Buffer>>>,
    /// What the caches keep at most.
    pub policy: CachePolicy,
}

impl Resources {
    /// The resources of `device`, with the spare buffer made inside error
    /// scopes after the pipelines of `keys` are compiled.
    pub fn new(device: &wgpu::Device, keys: &[ShaderKey]) -> Result<Resources, DeviceError> {
        let pipelines = Pipelines::default();
        let policy = CachePolicy::default();
        let spare = scoped(device, "compiling the kernels", || {
            for key in keys {
                pipelines.get(device, key, policy.generated_pipelines);
            }
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
            scratch: Mutex::new(None),
            policy,
        })
    }

    /// Bounds the caches by `policy`, dropping what exceeds it now.
    pub fn set_policy(&mut self, policy: CachePolicy) {
        self.policy = policy;
        lock(&self.tables).shrink_to(policy.table_bytes);
        self.pipelines.shrink_generated(policy.generated_pipelines);
        let mut scratch = lock(&self.scratch);
        if scratch
            .as_ref()
            .is_some_and(|b| b.size() > policy.scratch_bytes)
        {
            *scratch = None;
        }
    }

    /// A scratch arena of at least `bytes` for a staged plan: the kept one
    /// when it is large enough, else a new one, kept (in place of the old)
    /// when the policy allows. Buffers in use by recorded work stay alive
    /// in wgpu until that work is done.
    pub fn scratch(&self, bytes: u64) -> Result<Arc<wgpu::Buffer>, DeviceError> {
        let mut kept = lock(&self.scratch);
        if let Some(buffer) = kept.as_ref()
            && buffer.size() >= bytes
        {
            return Ok(buffer.clone());
        }
        let buffer = Arc::new(scoped(&self.device, "creating the scratch arena", || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split scratch arena"),
                size: bytes.next_multiple_of(4).max(4),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?);
        if bytes <= self.policy.scratch_bytes {
            *kept = Some(buffer.clone());
        }
        Ok(buffer)
    }

    /// The pipeline of `key`, kept as the policy says. Callers run this
    /// inside an error scope.
    pub fn pipeline(&self, key: &ShaderKey) -> Arc<CompiledKernel> {
        self.pipelines
            .get(&self.device, key, self.policy.generated_pipelines)
    }
}
