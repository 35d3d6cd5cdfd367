//! The convenience path for tests and simple users: split a host tensor on
//! the GPU and read the outputs back.

use std::time::Duration;

use super::GpuSplitter;
use super::region::BufferRegion;
use super::scope::scoped;
use crate::error::{Error, Result};
use crate::plan::SplitPlan;
use crate::semantics::{Operator, ResolvedSplit};
use crate::tensor::HostTensor;

/// How long a readback waits for the GPU before it fails with [`Error::Gpu`]
/// instead of blocking forever.
pub const READBACK_TIMEOUT: Duration = Duration::from_secs(120);

impl GpuSplitter {
    /// Resolves `op` for `input` and splits it on the GPU, blocking until the
    /// outputs are back on the host. Strings have no GPU layout
    /// ([`Error::NotOnGpu`]): split them with [`crate::host::split`].
    ///
    /// # Errors
    ///
    /// Resolution and planning errors, and [`Error::Gpu`] when the device
    /// fails, is lost or does not finish within [`READBACK_TIMEOUT`].
    pub fn split(&self, op: &Operator, input: &HostTensor) -> Result<Vec<HostTensor>> {
        pollster::block_on(self.split_async(op, input))
    }

    /// Async form of [`GpuSplitter::split`].
    ///
    /// On native backends the readback is driven by a blocking
    /// `Device::poll` inside this future (wgpu delivers `map_async` results
    /// only from `poll`), bounded by [`READBACK_TIMEOUT`].
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::split`].
    pub async fn split_async(&self, op: &Operator, input: &HostTensor) -> Result<Vec<HostTensor>> {
        let split = op.resolve(input.shape())?;
        self.split_resolved_async(&split, input).await
    }

    /// Blocking split of a resolved split (see [`GpuSplitter::split`]).
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::split`], and [`Error::ShapeMismatch`].
    pub fn split_resolved(
        &self,
        split: &ResolvedSplit,
        input: &HostTensor,
    ) -> Result<Vec<HostTensor>> {
        pollster::block_on(self.split_resolved_async(split, input))
    }

    /// Async split of a resolved split (see [`GpuSplitter::split_async`]).
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::split_resolved`].
    pub async fn split_resolved_async(
        &self,
        split: &ResolvedSplit,
        input: &HostTensor,
    ) -> Result<Vec<HostTensor>> {
        if input.element_type().bit_width().is_none() {
            return Err(Error::NotOnGpu {
                element_type: input.element_type(),
            });
        }
        split.check_input_shape(input.shape())?;
        let plan = self.plan(split, input.element_type())?;
        self.run_plan_async(&plan, input).await
    }

    /// Executes a ready plan on `input` and reads the outputs back, blocking.
    ///
    /// # Errors
    ///
    /// [`Error::PlanMismatch`] when `input`'s type or shape is not the plan's,
    /// and the errors of [`GpuSplitter::split`].
    pub fn run_plan(&self, plan: &SplitPlan, input: &HostTensor) -> Result<Vec<HostTensor>> {
        pollster::block_on(self.run_plan_async(plan, input))
    }

    /// Async form of [`GpuSplitter::run_plan`].
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::run_plan`].
    pub async fn run_plan_async(
        &self,
        plan: &SplitPlan,
        input: &HostTensor,
    ) -> Result<Vec<HostTensor>> {
        if input.element_type() != plan.element_type() || input.shape() != plan.input_shape() {
            return Err(Error::PlanMismatch {
                detail: format!(
                    "planned for {} {:?}, given {} {:?}",
                    plan.element_type(),
                    plan.input_shape(),
                    input.element_type(),
                    input.shape()
                ),
            });
        }
        let bytes = if plan.passes().is_empty() && plan.copies().is_empty() {
            // Nothing to move (every output is empty).
            vec![0; plan.arena_bytes() as usize]
        } else {
            let input_buffer = self.create_input(input.as_bytes()?)?;
            let arena = self.create_arena(plan)?;
            self.run_and_read(plan, &input_buffer, &arena).await?
        };
        plan.outputs()
            .iter()
            .map(|slot| {
                let range =
                    slot.offset_bytes as usize..(slot.offset_bytes + slot.len_bytes) as usize;
                HostTensor::from_raw(input.element_type(), &slot.shape, bytes[range].to_vec())
            })
            .collect()
    }

    /// Encodes the plan, copies the arena to a staging buffer, submits and
    /// maps it; returns the arena's bytes.
    async fn run_and_read(
        &self,
        plan: &SplitPlan,
        input: &wgpu::Buffer,
        arena: &wgpu::Buffer,
    ) -> Result<Vec<u8>> {
        let device = self.device();
        let size = plan.arena_bytes();
        // Everything up to the submission runs inside error scopes, so a lost
        // device is a typed error here (the scope guards are !Send and must
        // not live across an await; this part is synchronous).
        let (staging, index) = scoped(device, "running the split", || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split readback"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("wgpu-split convenience"),
            });
            // One-off buffers: do not keep their bind groups in the cache.
            self.encode_with(
                &mut encoder,
                plan,
                BufferRegion::whole(input),
                BufferRegion::whole(arena),
                false,
            )?;
            encoder.copy_buffer_to_buffer(arena, 0, &staging, 0, size);
            let index = self.queue().submit([encoder.finish()]);
            Ok::<_, Error>((staging, index))
        })??;
        let (sender, receiver) = futures_intrusive::channel::shared::oneshot_channel();
        let slice = staging.slice(..);
        slice.map_async(wgpu::MapMode::Read, move |result| {
            // The receiver only goes away if this future was dropped.
            let _ = sender.send(result);
        });
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(READBACK_TIMEOUT),
            })
            .map_err(|e| Error::Gpu {
                detail: format!("waiting for the split: {e}"),
            })?;
        let mapped = receiver.receive().await.ok_or_else(|| Error::Gpu {
            detail: "the map callback was dropped".to_string(),
        })?;
        mapped.map_err(|e| Error::Gpu {
            detail: format!("mapping the readback buffer: {e}"),
        })?;
        let bytes = slice
            .get_mapped_range()
            .map_err(|e| Error::Gpu {
                detail: format!("reading the readback buffer: {e}"),
            })?
            .to_vec();
        staging.unmap();
        Ok(bytes)
    }
}
