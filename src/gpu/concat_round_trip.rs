//! The round trips of the concat direction (a concat, a permuted concat):
//! host tensors uploaded into one page (at 16-byte steps, as a runtime's
//! pool packs them, or at an arena plan's offsets), concatenated on the GPU
//! into a buffer of its own and read back.

use std::ops::Range;

use super::blocking::{Wait, block_on};
use super::readback::InFlight;
use super::region::BufferRegion;
use super::round_trip::{RoundTrip, check_input, check_input_count, on_gpu, packed_bytes, page_of};
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{ConcatPlan, ConcatRequirements, PermutedConcatPlan, PlanError, PlanMismatch};
use crate::semantics::{ConcatOperator, PermutedConcat, ResolvedConcat};
use crate::tensor::HostTensor;

impl RoundTrip<'_> {
    /// Resolves `op` for `inputs`' shapes and concatenates them on the GPU,
    /// blocking until the output is back on the host (this polls the
    /// device). Strings have no GPU layout ([`PlanError::NotOnGpu`]):
    /// concatenate them with [`crate::HostTensor::concat`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{GpuContext, RoundTrip};
    /// use wgpu_split::{HostTensor, OnnxConcat};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let a = HostTensor::from_slice(&[2, 1], &[1i32, 2])?;
    /// let b = HostTensor::from_slice(&[2, 2], &[3i32, 4, 5, 6])?;
    /// let op = OnnxConcat::new(13).axis(1).into();
    /// let y = RoundTrip::new(&splitter).concat(&op, &[&a, &b])?;
    /// assert_eq!(y.to_vec::<i32>()?, vec![1, 3, 4, 2, 5, 6]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The operator's [`crate::ConcatError`], planning errors, and
    /// [`crate::error::DeviceError::Gpu`] when the device fails, is lost or
    /// does not finish within [`crate::gpu::RoundTrip::READBACK_TIMEOUT`];
    /// on the web [`crate::error::DeviceError::BlocksOnTheWeb`] (await
    /// [`RoundTrip::concat_async`] there).
    pub fn concat(self, op: &ConcatOperator, inputs: &[&HostTensor]) -> Result<HostTensor> {
        let step = self.concat_with(op, inputs, Wait::Poll);
        block_on("RoundTrip::concat", "RoundTrip::concat_async", step)
    }

    /// Async form of [`RoundTrip::concat`]: never blocks (see
    /// [`RoundTrip::split_async`] for who drives it).
    ///
    /// # Errors
    ///
    /// As [`RoundTrip::concat`] (without the timeout).
    pub async fn concat_async(
        self,
        op: &ConcatOperator,
        inputs: &[&HostTensor],
    ) -> Result<HostTensor> {
        self.concat_with(op, inputs, Wait::Await).await
    }

    async fn concat_with(
        self,
        op: &ConcatOperator,
        inputs: &[&HostTensor],
        wait: Wait,
    ) -> Result<HostTensor> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|t| t.shape()).collect();
        let concat = op.resolve(&shapes)?;
        self.concat_resolved_with(&concat, inputs, wait).await
    }

    /// A resolved concat on `inputs`, planned and run.
    pub(super) async fn concat_resolved_with(
        self,
        concat: &ResolvedConcat,
        inputs: &[&HostTensor],
        wait: Wait,
    ) -> Result<HostTensor> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|t| t.shape()).collect();
        concat.check_input_shapes(&shapes)?;
        let types: Vec<_> = inputs.iter().map(|t| t.element_type()).collect();
        let element_type = concat.check_element_types(&types)?;
        if element_type.bit_width().is_none() {
            return Err(PlanError::NotOnGpu { element_type }.into());
        }
        let plan = self.splitter().plan(concat, element_type)?;
        self.run_concat_plan_with(&plan, inputs, wait).await
    }

    /// A concat plan run on `inputs`, read back: the inputs checked against
    /// the plan, laid in one page, concatenated into a buffer of their own.
    pub(super) async fn run_concat_plan_with(
        self,
        plan: &ConcatPlan,
        inputs: &[&HostTensor],
        wait: Wait,
    ) -> Result<HostTensor> {
        check_inputs(plan, inputs)?;
        let paged = input_page(plan, &plan.requirements());
        let splitter = self.splitter();
        let (t, shape) = (plan.element_type(), plan.output_shape());
        let packed = packed_bytes(t, shape);
        let bytes = self
            .run_from_page("concat", inputs, paged, packed, wait, |e, i, o| {
                splitter.encode(e, plan, i, o)
            })
            .await?;
        Ok(HostTensor::from_raw(t, shape, bytes)?)
    }

    /// A permuted concat of `inputs`, planned and run.
    pub(super) async fn permuted_concat_with(
        self,
        concat: &PermutedConcat,
        inputs: &[&HostTensor],
        wait: Wait,
    ) -> Result<HostTensor> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|t| t.shape()).collect();
        concat.check_input_shapes(&shapes)?;
        let types: Vec<ElementType> = inputs.iter().map(|t| t.element_type()).collect();
        let t = on_gpu(concat.concat().check_element_types(&types)?)?;
        let plan = self.splitter().plan(concat, t)?;
        self.permuted_concat_plan_with(&plan, inputs, wait).await
    }

    /// A permuted concat plan run on `inputs` (in one page), read back.
    pub(super) async fn permuted_concat_plan_with(
        self,
        plan: &PermutedConcatPlan,
        inputs: &[&HostTensor],
        wait: Wait,
    ) -> Result<HostTensor> {
        let t = plan.element_type();
        let shapes = plan.concat().input_shapes();
        check_input_count(shapes.len(), inputs.len())?;
        for (k, input) in inputs.iter().enumerate() {
            check_input(t, &shapes[k], input)?;
        }
        let sizes = (0..inputs.len()).map(|k| plan.input_bytes(k));
        let paged = PagedInputs::packed(sizes, plan.output_region_bytes());
        let splitter = self.splitter();
        let shape = plan.concat().output_shape();
        let packed = packed_bytes(t, shape);
        let bytes = self
            .run_from_page("permuted concat", inputs, paged, packed, wait, |e, i, o| {
                splitter.encode(e, plan, i, o)
            })
            .await?;
        Ok(HostTensor::from_raw(t, shape, bytes)?)
    }

    /// A concat-direction move run on `inputs` laid in one page into an
    /// output buffer of its own, read back: the output's first `packed`
    /// bytes. Nothing is recorded where the output is empty.
    async fn run_from_page(
        self,
        what: &str,
        inputs: &[&HostTensor],
        paged: PagedInputs,
        packed: usize,
        wait: Wait,
        encode: impl FnOnce(
            &mut wgpu::CommandEncoder,
            &[BufferRegion<'_>],
            BufferRegion<'_>,
        ) -> Result<()>,
    ) -> Result<Vec<u8>> {
        if packed == 0 {
            return Ok(Vec::new());
        }
        let pieces = inputs
            .iter()
            .map(|input| input.as_bytes())
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let page = self.upload_page(&pieces, &paged.starts, paged.len)?;
        let regions: Vec<BufferRegion<'_>> = paged
            .regions
            .iter()
            .map(|r| BufferRegion::new(&page, r.start, r.end - r.start))
            .collect();
        let output_bytes = paged.output_bytes;
        let output = self.create_buffer("wgpu-split concat output", output_bytes)?;
        let splitter = self.splitter();
        let in_flight = InFlight::submit(
            splitter.device(),
            splitter.queue(),
            &output,
            &format!("running the {what}"),
            |encoder| {
                encode(
                    encoder,
                    &regions,
                    BufferRegion::new(&output, 0, output_bytes),
                )
            },
        )
        .await?;
        let mut bytes = in_flight.read(what, wait).await?;
        bytes.truncate(packed);
        Ok(bytes)
    }
}

/// A concat-direction move's inputs in one page: where each starts, the
/// page's bytes, the regions its encode is given, and the bytes of the
/// output region it writes.
struct PagedInputs {
    starts: Vec<u64>,
    len: u64,
    regions: Vec<Range<u64>>,
    output_bytes: u64,
}

impl PagedInputs {
    /// Inputs of `sizes` bytes, each at the next 16-byte step.
    fn packed(sizes: impl IntoIterator<Item = u64>, output_bytes: u64) -> Self {
        let (regions, len) = page_of(sizes);
        PagedInputs {
            starts: regions.iter().map(|r| r.start).collect(),
            len,
            regions,
            output_bytes,
        }
    }
}

/// `inputs` are as many as `plan`'s, each of its shape (and, where the
/// arena takes it in place, of its type).
fn check_inputs(plan: &ConcatPlan, inputs: &[&HostTensor]) -> Result<()> {
    let t = plan.element_type();
    let shapes = plan.input_shapes();
    check_input_count(shapes.len(), inputs.len())?;
    let taking = plan.arena_offsets();
    for (k, input) in inputs.iter().enumerate() {
        let differs = input.shape() != shapes[k].as_slice();
        if differs || (taking[k].is_some() && input.element_type() != t) {
            return Err(PlanError::Mismatch(PlanMismatch::Input {
                planned_type: t,
                planned_shape: shapes[k].clone(),
                given_type: input.element_type(),
                given_shape: input.shape().to_vec(),
            })
            .into());
        }
    }
    Ok(())
}

/// Where each input starts in one page (at the arena's offsets, or each at
/// the next 16-byte step), the page's bytes, and the regions the encode is
/// given: each input's as long as the plan reads, or the whole arena.
fn input_page(plan: &ConcatPlan, needs: &ConcatRequirements) -> PagedInputs {
    let output_bytes = needs.output_region_bytes;
    if plan.placement().is_shared() {
        let arena = needs.inputs[0].bytes;
        return PagedInputs {
            starts: plan
                .arena_offsets()
                .iter()
                .map(|o| o.unwrap_or(0))
                .collect(),
            len: arena,
            regions: std::iter::once(0..arena).collect(),
            output_bytes,
        };
    }
    PagedInputs::packed(needs.inputs.iter().map(|n| n.bytes), output_bytes)
}
