//! [`RoundTrip`]: the convenience path for tests and simple users: split a
//! host tensor (or concatenate host tensors, `concat_round_trip.rs`) on the
//! GPU and read the results back, in buffers it creates.
//!
//! The async forms never block: they submit, ask wgpu to map the readback
//! buffer and await its callback. Who drives that callback is wgpu's rule:
//! on native backends `Device::poll` (the caller's loop, or a
//! [`crate::gpu::Poller`]), on the web the browser. The blocking forms poll
//! the device themselves, bounded by [`crate::gpu::RoundTrip::READBACK_TIMEOUT`];
//! on the web they return [`crate::error::DeviceError::BlocksOnTheWeb`].

use std::ops::Range;

use super::GpuSplitter;
use super::blocking::{Wait, block_on};
use super::moves::{HostOutput, HostRun, Move, MovePlan, MoveRun, Token};
use super::readback::InFlight;
use super::region::BufferRegion;
use super::scope::{buffer_with_contents, scoped};
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::geometry::align_up;
use crate::plan::{PermutedPlan, PlanError, PlanMismatch, SplitPlan};
use crate::semantics::{Operator, PermutedSplit, ResolvedSplit};
use crate::tensor::HostTensor;

/// A host tensor split on the GPU and read back: uploads the input into a
/// buffer of its own, records the splitter's plan into regions of one page
/// (at 16-byte steps, as a runtime's pool packs them), reads the page back
/// and cuts it into host tensors.
///
/// # Examples
///
/// ```no_run
/// use wgpu_split::gpu::{GpuContext, RoundTrip};
/// use wgpu_split::{HostTensor, OnnxSplit};
///
/// let ctx = GpuContext::new_default()?;
/// let splitter = ctx.splitter()?;
/// let input = HostTensor::from_slice(&[2, 4], &[0f32, 1., 2., 3., 4., 5., 6., 7.])?;
/// let op = OnnxSplit::new(13, 2).axis(1).into();
/// let outputs = RoundTrip::new(&splitter).split(&op, &input)?;
/// assert_eq!(outputs[1].to_vec::<f32>()?, vec![2., 3., 6., 7.]);
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RoundTrip<'s> {
    splitter: &'s GpuSplitter,
}

impl<'s> RoundTrip<'s> {
    /// How long a blocking readback waits for the GPU before it fails with
    /// [`crate::error::DeviceError::Gpu`] instead of blocking forever.
    pub const READBACK_TIMEOUT: std::time::Duration = super::readback::READBACK_TIMEOUT;

    /// The round trip through `splitter`.
    pub fn new(splitter: &'s GpuSplitter) -> Self {
        RoundTrip { splitter }
    }

    /// The splitter it runs through.
    pub(super) fn splitter(self) -> &'s GpuSplitter {
        self.splitter
    }

    /// Resolves `op` for `input` and splits it on the GPU, blocking until the
    /// outputs are back on the host (this polls the device). Strings have no
    /// GPU layout ([`PlanError::NotOnGpu`]): split them with
    /// [`crate::HostTensor::split`].
    ///
    /// # Errors
    ///
    /// Resolution and planning errors, and [`crate::error::DeviceError::Gpu`] when the
    /// device fails, is lost or does not finish within [`crate::gpu::RoundTrip::READBACK_TIMEOUT`];
    /// on the web [`crate::error::DeviceError::BlocksOnTheWeb`] (await
    /// [`RoundTrip::split_async`] there).
    pub fn split(self, op: &Operator, input: &HostTensor) -> Result<Vec<HostTensor>> {
        let step = self.split_with(op, input, Wait::Poll);
        block_on("RoundTrip::split", "RoundTrip::split_async", step)
    }

    /// Async form of [`RoundTrip::split`]. It never blocks: it submits the
    /// work and awaits wgpu's map callback. On native backends that callback
    /// comes from `Device::poll`, so someone must poll while this is
    /// awaited: the caller's own loop, or a [`crate::gpu::Poller`]; on the
    /// web the browser calls back. A lost device ends it with
    /// [`crate::error::DeviceError::Gpu`] once polled.
    ///
    /// # Errors
    ///
    /// As [`RoundTrip::split`] (without the timeout): on every backend the
    /// error scopes of its submission are awaited, so on the web too a
    /// destroyed buffer or device is a typed error.
    pub async fn split_async(self, op: &Operator, input: &HostTensor) -> Result<Vec<HostTensor>> {
        self.split_with(op, input, Wait::Await).await
    }

    async fn split_with(
        self,
        op: &Operator,
        input: &HostTensor,
        wait: Wait,
    ) -> Result<Vec<HostTensor>> {
        let split = op.resolve(input.shape())?;
        self.split_resolved_with(&split, input, wait).await
    }

    /// A resolved split on `input`, planned and run.
    async fn split_resolved_with(
        self,
        split: &ResolvedSplit,
        input: &HostTensor,
        wait: Wait,
    ) -> Result<Vec<HostTensor>> {
        let t = on_gpu(input.element_type())?;
        split.check_input_shape(input.shape())?;
        let plan = self.splitter.plan(split, t)?;
        self.run_plan_with(&plan, input, wait).await
    }

    /// Plans `what` (a resolved split or concat, a permuted split or
    /// concat) for `input`'s element type and runs it on the GPU, blocking
    /// until the output is back on the host (this polls the device).
    /// `input` is a split's one tensor, or a concat's tensors in order.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{GpuContext, RoundTrip};
    /// use wgpu_split::{HostTensor, PermutedSplit};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let x = HostTensor::from_slice(&[2, 6], &[0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])?;
    /// let qk = PermutedSplit::split_heads(&[2, 6], &[4, 2], 2)?;
    /// let out = RoundTrip::new(&splitter).run(&qk, &x)?;
    /// assert_eq!(out[0].to_vec::<u8>()?, vec![0, 1, 6, 7, 2, 3, 8, 9]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The move's shape errors for tensors it was not resolved for
    /// ([`crate::ResolveError::ShapeMismatch`], [`crate::ConcatError`]),
    /// planning errors ([`PlanError::NotOnGpu`] for strings), and the errors
    /// of [`RoundTrip::split`].
    pub fn run<'a, M: Move>(
        self,
        what: &'a M,
        input: HostInput<'a, M>,
    ) -> Result<<M::Plan as MovePlan>::HostOutput>
    where
        's: 'a,
    {
        let step = self.run_with(what.with_host(Token(()), input), Wait::Poll);
        let output = block_on("RoundTrip::run", "RoundTrip::run_async", step)?;
        M::Plan::host_output(Token(()), output)
    }

    /// Async form of [`RoundTrip::run`]; never blocks (see
    /// [`RoundTrip::split_async`] for who drives it).
    ///
    /// # Errors
    ///
    /// As [`RoundTrip::run`] (without the timeout).
    pub async fn run_async<'a, M: Move>(
        self,
        what: &'a M,
        input: HostInput<'a, M>,
    ) -> Result<<M::Plan as MovePlan>::HostOutput>
    where
        's: 'a,
    {
        let step = self.run_with(what.with_host(Token(()), input), Wait::Await);
        M::Plan::host_output(Token(()), step.await?)
    }

    /// Executes a ready plan (of any move) on `input` (a split's tensor,
    /// or a concat's tensors) and reads the output back, blocking (this
    /// polls the device, at most [`crate::gpu::RoundTrip::READBACK_TIMEOUT`]).
    ///
    /// # Errors
    ///
    /// [`PlanMismatch::Input`] when an input's type or shape is not the
    /// plan's, and the errors of [`RoundTrip::split`].
    pub fn run_plan<'a, P: MovePlan>(
        self,
        plan: &'a P,
        input: P::HostInput<'a>,
    ) -> Result<P::HostOutput>
    where
        's: 'a,
    {
        let step = self.run_plan_of(plan.with_host(Token(()), input), Wait::Poll);
        let output = block_on("RoundTrip::run_plan", "RoundTrip::run_plan_async", step)?;
        P::host_output(Token(()), output)
    }

    /// Async form of [`RoundTrip::run_plan`]; never blocks (see
    /// [`RoundTrip::split_async`] for who drives it).
    ///
    /// # Errors
    ///
    /// As [`RoundTrip::run_plan`].
    pub async fn run_plan_async<'a, P: MovePlan>(
        self,
        plan: &'a P,
        input: P::HostInput<'a>,
    ) -> Result<P::HostOutput>
    where
        's: 'a,
    {
        let step = self.run_plan_of(plan.with_host(Token(()), input), Wait::Await);
        P::host_output(Token(()), step.await?)
    }

    /// A move planned and run on its host tensors, read back.
    async fn run_with(self, run: MoveRun<'_>, wait: Wait) -> Result<HostOutput> {
        Ok(match run {
            MoveRun::Split(split, input) => {
                HostOutput::Many(self.split_resolved_with(split, input, wait).await?)
            }
            MoveRun::Concat(concat, inputs) => {
                HostOutput::One(self.concat_resolved_with(concat, inputs, wait).await?)
            }
            MoveRun::PermutedSplit(split, input) => {
                HostOutput::Many(self.permuted_split_with(split, input, wait).await?)
            }
            MoveRun::PermutedConcat(concat, inputs) => {
                HostOutput::One(self.permuted_concat_with(concat, inputs, wait).await?)
            }
        })
    }

    /// A plan run on its host tensors, read back.
    async fn run_plan_of(self, run: HostRun<'_>, wait: Wait) -> Result<HostOutput> {
        Ok(match run {
            HostRun::Split(plan, input) => {
                HostOutput::Many(self.run_plan_with(plan, input, wait).await?)
            }
            HostRun::Concat(plan, inputs) => {
                HostOutput::One(self.run_concat_plan_with(plan, inputs, wait).await?)
            }
            HostRun::PermutedSplit(plan, input) => {
                HostOutput::Many(self.permuted_plan_with(plan, input, wait).await?)
            }
            HostRun::PermutedConcat(plan, inputs) => {
                HostOutput::One(self.permuted_concat_plan_with(plan, inputs, wait).await?)
            }
        })
    }

    /// A split plan run on `input`, read back.
    async fn run_plan_with(
        self,
        plan: &SplitPlan,
        input: &HostTensor,
        wait: Wait,
    ) -> Result<Vec<HostTensor>> {
        let t = plan.element_type();
        check_input(t, plan.input_shape(), input)?;
        let placement = plan.placement();
        let outputs = plan.outputs().iter().enumerate();
        let paged = Paged {
            regions: (0..plan.destination_count())
                .map(|i| plan.destination_bytes(i))
                .collect(),
            outputs: outputs
                .map(|(i, o)| PagedOutput {
                    region: placement.destination_of(i),
                    offset: o.arena_offset_bytes,
                    bytes: o.len_bytes,
                    shape: o.shape.clone(),
                })
                .collect(),
        };
        let splitter = self.splitter;
        self.run_into_page("split", t, input, paged, wait, |encoder, input, regions| {
            splitter.encode(encoder, plan, input, regions)
        })
        .await
    }

    /// A permuted split of `input`, planned and run.
    pub(super) async fn permuted_split_with(
        self,
        split: &PermutedSplit,
        input: &HostTensor,
        wait: Wait,
    ) -> Result<Vec<HostTensor>> {
        split.split().check_input_shape(input.shape())?;
        let plan = self.splitter.plan(split, on_gpu(input.element_type())?)?;
        self.permuted_plan_with(&plan, input, wait).await
    }

    /// A permuted split plan run on `input`, read back.
    pub(super) async fn permuted_plan_with(
        self,
        plan: &PermutedPlan,
        input: &HostTensor,
        wait: Wait,
    ) -> Result<Vec<HostTensor>> {
        let t = plan.element_type();
        let split = plan.split();
        check_input(t, split.split().input_shape(), input)?;
        let count = split.output_count();
        let paged = Paged {
            regions: (0..count).map(|i| plan.output_region_bytes(i)).collect(),
            outputs: (0..count)
                .map(|i| {
                    let shape = split.output_shape(i);
                    PagedOutput {
                        region: i,
                        offset: 0,
                        bytes: packed_bytes(t, &shape) as u64,
                        shape,
                    }
                })
                .collect(),
        };
        let splitter = self.splitter;
        let what = "permuted split";
        self.run_into_page(what, t, input, paged, wait, |encoder, input, regions| {
            splitter.encode(encoder, plan, input, regions)
        })
        .await
    }

    /// A split-direction move run on `input` (uploaded into a buffer of its
    /// own) into regions of one page, read back and cut into its outputs.
    /// Nothing is recorded where every output is empty.
    async fn run_into_page(
        self,
        what: &str,
        t: ElementType,
        input: &HostTensor,
        paged: Paged,
        wait: Wait,
        encode: impl FnOnce(
            &mut wgpu::CommandEncoder,
            BufferRegion<'_>,
            &[BufferRegion<'_>],
        ) -> Result<()>,
    ) -> Result<Vec<HostTensor>> {
        let (ranges, page_bytes) = page_of(paged.regions.iter().copied());
        let mut bytes = Vec::new();
        if paged.outputs.iter().any(|o| o.bytes > 0) {
            let input_buffer = self.create_input(input.as_bytes()?)?;
            let page = self.create_buffer("wgpu-split output page", page_bytes)?;
            let regions: Vec<BufferRegion<'_>> = ranges
                .iter()
                .map(|r| BufferRegion::new(&page, r.start, r.end - r.start))
                .collect();
            let in_flight = InFlight::submit(
                self.splitter.device(),
                self.splitter.queue(),
                &page,
                &format!("running the {what}"),
                |encoder| encode(encoder, BufferRegion::whole(&input_buffer), &regions),
            )
            .await?;
            bytes = in_flight.read(what, wait).await?;
        }
        paged
            .outputs
            .into_iter()
            .map(|o| {
                let start = (ranges[o.region].start + o.offset) as usize;
                let piece = bytes.get(start..start + o.bytes as usize).unwrap_or(&[]);
                Ok(HostTensor::from_raw(t, &o.shape, piece.to_vec())?)
            })
            .collect()
    }

    /// One buffer per destination of `plan` (one per output, or the arena),
    /// each of the bytes of [`SplitPlan::requirements`] (at least 4) with
    /// `STORAGE | COPY_SRC | COPY_DST`, the usages a split and a readback
    /// need.
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device is lost or out of memory.
    pub fn create_destinations(self, plan: &SplitPlan) -> Result<Vec<wgpu::Buffer>> {
        (0..plan.destination_count())
            .map(|i| self.create_buffer("wgpu-split destination", plan.destination_bytes(i)))
            .collect()
    }

    /// A storage buffer holding `bytes`, padded with zeros to a multiple of 4
    /// (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device is lost or out of memory.
    pub fn create_input(self, bytes: &[u8]) -> Result<wgpu::Buffer> {
        Ok(buffer_with_contents(
            self.splitter.device(),
            "wgpu-split input",
            bytes,
            align_up(bytes.len() as u64, 4).max(4),
            usages(),
        )?)
    }

    /// One buffer of at least `len` bytes holding `pieces`, piece `k` at
    /// `starts[k]` (a concat's inputs in one page, as a runtime's pool
    /// holds them), zeros elsewhere.
    pub(super) fn upload_page(
        self,
        pieces: &[&[u8]],
        starts: &[u64],
        len: u64,
    ) -> Result<wgpu::Buffer> {
        let ends = pieces.iter().zip(starts).map(|(p, &s)| s + p.len() as u64);
        let mut page = vec![0u8; ends.fold(len, u64::max) as usize];
        for (piece, &start) in pieces.iter().zip(starts) {
            let start = start as usize;
            page[start..start + piece.len()].copy_from_slice(piece);
        }
        let device = self.splitter.device();
        let size = align_up(page.len() as u64, 4).max(4);
        Ok(buffer_with_contents(
            device,
            "wgpu-split input page",
            &page,
            size,
            usages(),
        )?)
    }

    pub(super) fn create_buffer(self, label: &str, size: u64) -> Result<wgpu::Buffer> {
        let device = self.splitter.device();
        Ok(scoped(device, label, || {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: align_up(size.max(4), 4),
                usage: usages(),
                mapped_at_creation: false,
            })
        })?)
    }
}

/// What [`RoundTrip::run`] of a move takes: a split's tensor, or a
/// concat's tensors.
pub type HostInput<'a, M> = <<M as Move>::Plan as MovePlan>::HostInput<'a>;

/// The usages of the buffers a round trip creates.
pub(super) fn usages() -> wgpu::BufferUsages {
    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
}

/// Regions of `sizes` bytes in one page, each at the next 16-byte step (as
/// a runtime's pool packs them), and the page's bytes (a multiple of 4).
pub(super) fn page_of(sizes: impl IntoIterator<Item = u64>) -> (Vec<Range<u64>>, u64) {
    let mut end: u64 = 0;
    let ranges = sizes
        .into_iter()
        .map(|size| {
            let start = align_up(end, 16);
            end = start + size;
            start..end
        })
        .collect();
    (ranges, align_up(end, 4))
}

/// A move's inputs are as many as its plan's.
pub(super) fn check_input_count(expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        return Ok(());
    }
    Err(crate::plan::EncodeError::RegionCount { expected, actual }.into())
}

/// Where a split-direction move's outputs lie in one page: the bytes of
/// each region its encode is given (a destination: an output, or the
/// arena), and each output's place in them.
struct Paged {
    regions: Vec<u64>,
    outputs: Vec<PagedOutput>,
}

/// One output in a [`Paged`] page: its region, its offset there, its packed
/// bytes and its shape.
struct PagedOutput {
    region: usize,
    offset: u64,
    bytes: u64,
    shape: Vec<usize>,
}

/// `input` is of the plan's type and shape.
pub(super) fn check_input(t: ElementType, shape: &[usize], input: &HostTensor) -> Result<()> {
    if input.element_type() == t && input.shape() == shape {
        return Ok(());
    }
    Err(PlanError::Mismatch(PlanMismatch::Input {
        planned_type: t,
        planned_shape: shape.to_vec(),
        given_type: input.element_type(),
        given_shape: input.shape().to_vec(),
    })
    .into())
}

/// `t`, refused where it has no GPU layout (strings).
pub(super) fn on_gpu(t: ElementType) -> std::result::Result<ElementType, PlanError> {
    match t.bit_width() {
        Some(_) => Ok(t),
        None => Err(PlanError::NotOnGpu { element_type: t }),
    }
}

/// The packed bytes of a tensor of `shape`.
pub(super) fn packed_bytes(t: ElementType, shape: &[usize]) -> usize {
    let elements: usize = shape.iter().product();
    (elements * t.bit_width().unwrap_or(8) as usize).div_ceil(8)
}
