//! [`BurnSplitter`]: the core crate's [`GpuSplitter`] on burn's own wgpu
//! device and queue, reading and writing burn's own buffers.

use burn::tensor::{DType, Device, Shape};
use burn_cubecl::cubecl::wgpu::WgpuSetup;
use burn_cubecl::tensor::CubeTensor;
use wgpu_split::ResolvedSplit;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::{Placement, PlanOptions, SplitPlan, Strategy};

use crate::allocation::{Outputs, SHARED_ALLOCATION_ABOVE, resource, runtime};
use crate::error::{BurnSplitError, Result};
use crate::staging::{self, Staging};

/// Splits burn tensors on burn's device: the input read where burn keeps
/// it, each output allocated by burn's allocator, written by one recorded
/// split and handed back as a burn tensor.
///
/// Build it once per device from the handles burn runs on
/// ([`BurnSplitter::new`]); every call flushes burn's pending work,
/// records one encoder, submits it on burn's queue and returns without
/// waiting.
pub struct BurnSplitter {
    splitter: GpuSplitter,
    device: Device,
    staging: Staging,
}

impl BurnSplitter {
    /// A splitter for burn's `device`, whose wgpu handles are `setup` (what
    /// `Device::wgpu_options().init_with_setup()` returns, or the setup
    /// registered with `Device::wgpu_options().setup(setup).init()`).
    ///
    /// # Errors
    ///
    /// [`wgpu_split::error::DeviceError`] when the device rejects the kernels.
    pub fn new(device: &Device, setup: &WgpuSetup) -> Result<Self> {
        Ok(BurnSplitter {
            splitter: GpuSplitter::new(&setup.device, &setup.queue)?,
            device: device.clone(),
            staging: Staging::default(),
        })
    }

    /// The core splitter (its plans, cache and strategy).
    pub fn splitter(&self) -> &GpuSplitter {
        &self.splitter
    }

    /// The same splitter with another default [`Strategy`] (for example a
    /// model from [`wgpu_split::gpu::Calibration::measure`] on burn's device).
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.splitter = self.splitter.with_strategy(strategy);
        self
    }

    /// Bytes of the splitter's staging buffer (0 until a split stages its
    /// input: on devices where copies beat kernels, when burn put the
    /// outputs in the input's page; see the README).
    pub fn staging_bytes(&self) -> u64 {
        self.staging.bytes()
    }

    /// Frees the staging buffer (the next split that stages makes a new
    /// one).
    pub fn release_staging(&self) {
        self.staging.release();
    }

    /// The staging buffer (see [`crate::staging`]).
    pub(crate) fn staging(&self) -> &Staging {
        &self.staging
    }

    /// The strategy of a plan with dispatches only, for buffers copies
    /// cannot go between: the splitter's, or the kernels alone where it
    /// forces copies.
    pub(crate) fn dispatching_strategy(&self) -> Strategy {
        match self.splitter.strategy() {
            Strategy::Copy => Strategy::Gather,
            other => *other,
        }
    }

    /// burn's device the splitter works on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A tensor on `device` is one the splitter can move.
    pub(crate) fn check_device(&self, device: &Device) -> Result<()> {
        if *device != self.device {
            return Err(BurnSplitError::OtherDevice {
                tensor: format!("{device:?}"),
                splitter: format!("{:?}", self.device),
            });
        }
        Ok(())
    }

    /// Allocates the outputs with burn's allocator, flushes burn's work,
    /// records and submits the split, and keeps burn's resources alive
    /// until the device has finished it.
    pub(crate) fn run(
        &self,
        input: CubeTensor,
        split: &ResolvedSplit,
        element: wgpu_split::ElementType,
        dtype: DType,
    ) -> Result<Vec<CubeTensor>> {
        let client = input.client.clone();
        let byte_len = |shape: &[usize]| {
            element
                .byte_len(shape.iter().product())
                .expect("burn tensors are addressable, so their bytes count") as u64
        };
        let input_guard = resource(&client, &input.handle)?;
        let input_region = BufferRegion::new(
            &input_guard.buffer,
            input_guard.offset,
            byte_len(split.input_shape()),
        );
        let many = split.output_count() > SHARED_ALLOCATION_ABOVE;
        let placement = if many {
            Placement::Arena
        } else {
            Placement::Separate
        };
        let options = PlanOptions::default().placement(placement);
        let plan = self.splitter.plan_with(split, element, &options)?;
        let outputs = if many {
            Outputs::arena(&client, &plan)?
        } else {
            Outputs::separate(&client, &plan)?
        };
        client.flush().map_err(runtime)?;
        let regions = outputs.regions(&plan);
        let shares_input = regions.iter().any(|r| r.buffer == input_region.buffer);
        let (plan, staged) = if plan.copy_count() > 0 && shares_input {
            self.plan_around_shared_page(split, element, &options, plan, &input_region)?
        } else {
            (plan, None)
        };
        let mut encoder = self
            .splitter
            .device()
            .create_command_encoder(&Default::default());
        let scratch;
        let input_region = match staged {
            Some(words) => {
                scratch = self.staging.buffer(self.splitter.device(), words);
                encoder.copy_buffer_to_buffer(
                    input_region.buffer,
                    input_region.offset,
                    &scratch,
                    0,
                    words,
                );
                BufferRegion::new(&scratch, 0, input_region.size)
            }
            None => input_region,
        };
        self.splitter
            .encode(&mut encoder, &plan, input_region, &regions)?;
        let queue = self.splitter.queue();
        queue.submit([encoder.finish()]);
        let Outputs {
            handles, guards, ..
        } = outputs;
        let guards = (input_guard, guards);
        let shapes = split.output_shapes();
        queue.on_submitted_work_done(move || drop(guards));

        let device = input.device.clone();
        Ok(handles
            .into_iter()
            .zip(shapes)
            .map(|(handle, shape)| {
                CubeTensor::new_contiguous(
                    client.clone(),
                    device.clone(),
                    Shape::from(shape),
                    handle,
                    dtype,
                )
            })
            .collect())
    }

    /// burn sub-allocates pages, so outputs often share the input's buffer,
    /// where copy commands cannot go (a copy cannot stay within one
    /// buffer). Either the kernel the cost model picks does the whole split
    /// (the same output layout: it depends on the outputs only), or, where
    /// the model says one more copy of the input into the staging buffer
    /// pays, `copying` runs from there: the bytes to stage are returned.
    fn plan_around_shared_page(
        &self,
        split: &ResolvedSplit,
        element: wgpu_split::ElementType,
        options: &PlanOptions,
        copying: SplitPlan,
        input: &BufferRegion<'_>,
    ) -> Result<(SplitPlan, Option<u64>)> {
        let options = options.strategy(self.dispatching_strategy());
        let dispatched = self
            .splitter
            .plan_with(split, element, &options.in_compute_pass())?;
        let layout = |p: &SplitPlan| {
            let offsets = p.outputs().iter().map(|o| o.arena_offset_bytes);
            (p.arena_bytes(), offsets.collect::<Vec<_>>())
        };
        if layout(&dispatched) != layout(&copying) {
            return Err(BurnSplitError::Runtime {
                detail: "the dispatch-only plan laid the arena out differently".into(),
            });
        }
        // The copy of the input reads whole words: the page must hold the
        // last one.
        let words = input.size.next_multiple_of(4);
        let readable = input.offset + words <= input.buffer.size();
        Ok(match self.splitter.strategy() {
            Strategy::Auto(model)
                if readable && staging::pays(model, &copying, &dispatched, words) =>
            {
                (copying, Some(words))
            }
            _ => (dispatched, None),
        })
    }
}
