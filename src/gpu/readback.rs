//! The convenience path for tests and simple users: split a host tensor on
//! the GPU and read the outputs back.

use std::time::Duration;

use super::GpuSplitter;
use super::region::BufferRegion;
use super::scope::scoped;
use crate::error::{Error, Result};
use crate::plan::{Outputs, SplitPlan};
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
        // Every destination in one page, so that one readback serves all.
        let (destinations, page_bytes) = page_layout(plan);
        let bytes = if plan.dispatch_count() == 0 && plan.copy_count() == 0 {
            vec![0; page_bytes as usize] // every output is empty
        } else {
            let input_buffer = self.create_input(input.as_bytes()?)?;
            let page = self.create_page(page_bytes)?;
            self.run_and_read(plan, &input_buffer, &page, &destinations)
                .await?
        };
        plan.outputs()
            .iter()
            .enumerate()
            .map(|(i, output)| {
                let start = match plan.placement() {
                    Outputs::Separate => destinations[i].start,
                    Outputs::Arena => output.arena_offset_bytes,
                } as usize;
                let range = start..start + output.len_bytes as usize;
                HostTensor::from_raw(input.element_type(), &output.shape, bytes[range].to_vec())
            })
            .collect()
    }

    fn create_page(&self, bytes: u64) -> Result<wgpu::Buffer> {
        scoped(self.device(), "creating the output page", || {
            self.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split output page"),
                size: bytes.max(4),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// Encodes the plan into regions of `page`, copies the page to a staging
    /// buffer, submits and maps it; returns the page's bytes.
    async fn run_and_read(
        &self,
        plan: &SplitPlan,
        input: &wgpu::Buffer,
        page: &wgpu::Buffer,
        destinations: &[std::ops::Range<u64>],
    ) -> Result<Vec<u8>> {
        let device = self.device();
        let size = page.size();
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
            let regions: Vec<BufferRegion<'_>> = destinations
                .iter()
                .map(|r| BufferRegion::new(page, r.start, r.end - r.start))
                .collect();
            let input = BufferRegion::whole(input);
            match plan.placement() {
                Outputs::Separate => self.encode(&mut encoder, plan, input, &regions)?,
                Outputs::Arena => self.encode_arena(&mut encoder, plan, input, regions[0])?,
            }
            encoder.copy_buffer_to_buffer(page, 0, &staging, 0, size);
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

/// Where each destination of `plan` goes in one page buffer (each at a
/// 16-byte boundary, as a runtime's pool would pack them), and the page size.
fn page_layout(plan: &SplitPlan) -> (Vec<std::ops::Range<u64>>, u64) {
    let mut end: u64 = 0;
    let ranges = (0..plan.destination_count())
        .map(|i| {
            let start = end.div_ceil(16) * 16;
            end = start + plan.destination_bytes(i);
            start..end
        })
        .collect();
    (ranges, end.div_ceil(4) * 4)
}
