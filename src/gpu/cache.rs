//! What [`crate::gpu::GpuSplitter::encode`] reuses across calls with the same
//! plan and buffers: the uploaded parameter tables and the bind groups.

use std::collections::HashMap;
use std::sync::Arc;

/// Uploaded tables and bind groups. Bounded: past its caps it is cleared, so
/// it cannot grow without limit (and it holds the buffers it binds alive only
/// until then).
#[derive(Debug, Default)]
pub(crate) struct EncodeCache {
    pub tables: HashMap<u64, (Vec<u8>, Arc<wgpu::Buffer>)>,
    pub bind_groups: HashMap<BindKey, Arc<wgpu::BindGroup>>,
}

/// What a cached bind group binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct BindKey {
    pub table: u64,
    pub pass: usize,
    pub kernel: crate::plan::Kernel,
    pub input: wgpu::Buffer,
    pub input_offset: u64,
    pub arena: wgpu::Buffer,
    pub arena_offset: u64,
}

pub(crate) const MAX_CACHED_TABLES: usize = 64;
pub(crate) const MAX_CACHED_BIND_GROUPS: usize = 1024;

impl EncodeCache {
    /// Drops everything (and the references to caller buffers it holds).
    pub fn clear(&mut self) {
        self.tables.clear();
        self.bind_groups.clear();
    }
}
