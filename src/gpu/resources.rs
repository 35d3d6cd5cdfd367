//! Buffers the splitter creates for simple users: an arena, one buffer per
//! output, an input holding host bytes.

use super::scope::{buffer_with_contents, scoped};
use super::splitter::GpuSplitter;
use crate::error::Result;
use crate::plan::SplitPlan;

impl GpuSplitter {
    /// A buffer of [`SplitPlan::arena_bytes`] bytes (at least 4) for an arena
    /// plan, with the usages the split and a readback need
    /// (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Gpu`] when the device is lost or out of memory.
    pub fn create_arena(&self, plan: &SplitPlan) -> Result<wgpu::Buffer> {
        self.create_buffer("wgpu-split arena", plan.arena_bytes())
    }

    /// One buffer per output of a plan for separate destinations, each of
    /// [`crate::plan::PlannedOutput::region_bytes`] (at least 4) with
    /// `STORAGE | COPY_SRC | COPY_DST`.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Gpu`] when the device is lost or out of memory.
    pub fn create_output_buffers(&self, plan: &SplitPlan) -> Result<Vec<wgpu::Buffer>> {
        plan.outputs()
            .iter()
            .map(|o| self.create_buffer("wgpu-split output", o.region_bytes))
            .collect()
    }

    fn create_buffer(&self, label: &str, size: u64) -> Result<wgpu::Buffer> {
        scoped(&self.device, label, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(4).div_ceil(4) * 4,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// A storage buffer holding `bytes`, padded with zeros to a multiple of 4
    /// (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Gpu`] when the device is lost or out of memory.
    pub fn create_input(&self, bytes: &[u8]) -> Result<wgpu::Buffer> {
        buffer_with_contents(
            &self.device,
            "wgpu-split input",
            bytes,
            (bytes.len() as u64).div_ceil(4).max(1) * 4,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        )
    }
}
