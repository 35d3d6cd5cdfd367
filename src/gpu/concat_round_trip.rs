//! The round trip of a concat: host tensors uploaded into one page (at
//! 16-byte steps, as a runtime's pool packs them, or at an arena plan's
//! offsets), concatenated on the GPU into a buffer of its own and read
//! back.

use super::blocking::{Wait, block_on};
use super::region::BufferRegion;
use super::round_trip::{RoundTrip, check_input_count, page_of};
use crate::error::Result;
use std::ops::Range;

use crate::plan::{ConcatPlan, ConcatRequirements, PlanError, PlanMismatch};
use crate::semantics::{ConcatOperator, ResolvedConcat};
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
        let t = plan.element_type();
        check_inputs(plan, inputs)?;
        let needs = plan.requirements();
        if needs.output_bytes == 0 || (needs.dispatches == 0 && needs.copies == 0) {
            let bytes = vec![0; needs.output_bytes as usize];
            return Ok(HostTensor::from_raw(t, plan.output_shape(), bytes)?);
        }
        let pieces = inputs
            .iter()
            .map(|input| input.as_bytes())
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let (starts, len, regions) = input_page(plan, &needs);
        let page = self.upload_page(&pieces, &starts, len)?;
        let regions: Vec<BufferRegion> = regions
            .iter()
            .map(|r| BufferRegion::new(&page, r.start, r.end - r.start))
            .collect();
        let splitter = self.splitter();
        let packed = needs.output_bytes as usize;
        let output_bytes = needs.output_region_bytes;
        let bytes = self
            .read_output("concat", output_bytes, packed, wait, |encoder, output| {
                splitter.encode(encoder, plan, &regions, output)
            })
            .await?;
        Ok(HostTensor::from_raw(t, plan.output_shape(), bytes)?)
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
fn input_page(plan: &ConcatPlan, needs: &ConcatRequirements) -> (Vec<u64>, u64, Vec<Range<u64>>) {
    let sizes = needs.inputs.iter().map(|n| n.bytes);
    if plan.placement().is_shared() {
        let starts = plan
            .arena_offsets()
            .iter()
            .map(|o| o.unwrap_or(0))
            .collect();
        let arena = needs.inputs[0].bytes;
        return (starts, arena, std::iter::once(0..arena).collect());
    }
    let (ranges, len) = page_of(sizes);
    (ranges.iter().map(|r| r.start).collect(), len, ranges)
}
