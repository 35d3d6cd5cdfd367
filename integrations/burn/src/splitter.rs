//! [`BurnSplitter`]: the core crate's [`GpuSplitter`] on burn's own wgpu
//! device and queue, reading and writing burn's own buffers.

use burn::tensor::{DType, Device, Shape, Tensor};
use burn_cubecl::cubecl::wgpu::{AutoCompiler, WgpuResource, WgpuServer, WgpuSetup};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use wgpu_split::ResolvedSplit;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::Strategy;

use crate::element::element_type;
use crate::error::{BurnSplitError, Result};
use crate::primitive::SplitKind;

/// The first `bytes` of what burn handed out.
fn region(resource: &WgpuResource, bytes: usize) -> BufferRegion<'_> {
    BufferRegion::new(&resource.buffer, resource.offset, bytes as u64)
}

/// burn's wgpu server: the storage `get_resource` reads from.
type Server = WgpuServer<AutoCompiler>;

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
}

impl BurnSplitter {
    /// A splitter for burn's `device`, whose wgpu handles are `setup` (what
    /// `Device::wgpu_options().init_with_setup()` returns, or the setup
    /// registered with `Device::wgpu_options().setup(setup).init()`).
    ///
    /// # Errors
    ///
    /// [`wgpu_split::gpu::DeviceError`] when the device rejects the kernels.
    pub fn new(device: &Device, setup: &WgpuSetup) -> Result<Self> {
        Ok(BurnSplitter {
            splitter: GpuSplitter::new(&setup.device, &setup.queue)?,
            device: device.clone(),
        })
    }

    /// The core splitter (its plans, cache and strategy).
    pub fn splitter(&self) -> &GpuSplitter {
        &self.splitter
    }

    /// The same splitter with another default [`Strategy`] (for example a
    /// model from [`wgpu_split::gpu::calibrate`] on burn's device).
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.splitter = self.splitter.with_strategy(strategy);
        self
    }

    /// burn's device the splitter works on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Splits `tensor` as `split` says (resolved for `tensor`'s shape by an
    /// operator or a framework call of [`wgpu_split`]). `D2` is the
    /// outputs' rank: `D`, or `D - 1` when the split drops its axis
    /// (`unbind`, `SplitToSequence` with `keepdims = 0`).
    ///
    /// # Errors
    ///
    /// [`BurnSplitError::OtherDevice`], [`BurnSplitError::NotWgpu`],
    /// [`BurnSplitError::UnsupportedDType`], [`BurnSplitError::OutputRank`],
    /// a shape `split` was not resolved for, and the core crate's plan and
    /// encode errors.
    pub fn split_resolved<const D: usize, const D2: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        split: &ResolvedSplit,
    ) -> Result<Vec<Tensor<D2, K>>> {
        let device = tensor.device();
        if device != self.device {
            return Err(BurnSplitError::OtherDevice {
                tensor: format!("{device:?}"),
                splitter: format!("{:?}", self.device),
            });
        }
        split.check_input_shape(&tensor.shape())?;
        let rank = D - usize::from(!split.keep_axis());
        if rank != D2 {
            return Err(BurnSplitError::OutputRank {
                asked: D2,
                actual: rank,
            });
        }
        // The dtype burn's tensor reports (the cubecl tensor under a
        // `Flex32` one says `F32`): the outputs report the same.
        let dtype = tensor.dtype();
        let element = element_type(dtype)?;
        // A view (transposed, strided, tiled) is first made contiguous by
        // burn's own kernel: the split reads a dense buffer.
        let input = into_contiguous(K::into_cube(tensor)?);
        let outputs = self.run(input, split, element, dtype)?;
        Ok(outputs.into_iter().map(K::from_cube).collect())
    }

    /// Allocates the outputs with burn's allocator, flushes burn's work,
    /// records and submits the split, and keeps burn's resources alive
    /// until the device has finished it.
    fn run(
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
                .expect("burn tensors are addressable, so their bytes count")
        };
        let shapes = split.output_shapes();
        // The split writes whole 32-bit words: an output of 16- or 8-bit
        // elements gets its bytes rounded up to a word (burn's pools round
        // allocations further anyway).
        let allocated = |shape: &[usize]| byte_len(shape).next_multiple_of(4);
        let outputs: Vec<_> = shapes
            .iter()
            .map(|shape| client.empty(allocated(shape)))
            .collect();
        let runtime = |e: burn_cubecl::cubecl::server::ServerError| BurnSplitError::Runtime {
            detail: e.to_string(),
        };
        let resource = |handle: &burn_cubecl::cubecl::server::Handle| {
            client
                .get_resource::<Server>(handle.clone())
                .map_err(runtime)
        };
        // `get_resource` runs burn's queued work on the streams that own the
        // buffers (submitting it), so what is recorded below comes after it
        // on the queue; the guards keep the allocations where they are.
        let input_resource = resource(&input.handle)?;
        let output_resources = outputs.iter().map(resource).collect::<Result<Vec<_>>>()?;
        // burn sub-allocates pages: outputs often share the input's buffer,
        // where copy commands cannot go (a copy cannot stay within one
        // buffer); then the kernel the cost model picks does the whole split.
        let mut plan = self.splitter.plan(split, element)?;
        let input_buffer = &input_resource.resource().buffer;
        let shares_input = output_resources
            .iter()
            .any(|r| &r.resource().buffer == input_buffer);
        if plan.copy_count() > 0 && shares_input {
            plan = self.splitter.plan_for_pass(split, element)?;
        }
        client.flush().map_err(runtime)?;

        let input_region = region(input_resource.resource(), byte_len(split.input_shape()));
        let regions: Vec<_> = output_resources
            .iter()
            .zip(&shapes)
            .map(|(r, shape)| region(r.resource(), allocated(shape)))
            .collect();
        let mut encoder = self
            .splitter
            .device()
            .create_command_encoder(&Default::default());
        self.splitter
            .encode(&mut encoder, &plan, input_region, &regions)?;
        let queue = self.splitter.queue();
        queue.submit([encoder.finish()]);
        let guards = (input_resource, output_resources);
        queue.on_submitted_work_done(move || drop(guards));

        let device = input.device.clone();
        Ok(outputs
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
}
