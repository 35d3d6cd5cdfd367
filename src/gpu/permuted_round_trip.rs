//! The round trips of the permuted moves: a permuted split's outputs in one
//! page (at 16-byte steps, as a runtime's pool packs them), a permuted
//! concat's inputs in one page and its output in a buffer of its own,
//! each read back and cut into host tensors.

use super::blocking::Wait;
use super::readback::InFlight;
use super::region::BufferRegion;
use super::round_trip::{RoundTrip, check_input_count, page_of};
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{PermutedConcatPlan, PermutedPlan, PlanError, PlanMismatch};
use crate::semantics::{PermutedConcat, PermutedSplit};
use crate::tensor::HostTensor;

impl RoundTrip<'_> {
    /// A permuted split of `input`, planned and run.
    pub(super) async fn permuted_split_with(
        self,
        split: &PermutedSplit,
        input: &HostTensor,
        wait: Wait,
    ) -> Result<Vec<HostTensor>> {
        split.split().check_input_shape(input.shape())?;
        let plan = self.splitter().plan(split, on_gpu(input.element_type())?)?;
        self.permuted_plan_with(&plan, input, wait).await
    }

    /// A permuted split plan run on `input`: its outputs in one page.
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
        let (ranges, end) = page_of((0..count).map(|i| plan.output_region_bytes(i)));
        let mut bytes = Vec::new();
        if end > 0 {
            let input_buffer = self.create_input(input.as_bytes()?)?;
            let page = self.create_buffer("wgpu-split output page", end)?;
            let regions: Vec<BufferRegion<'_>> = ranges
                .iter()
                .map(|r| BufferRegion::new(&page, r.start, r.end - r.start))
                .collect();
            let splitter = self.splitter();
            let in_flight = InFlight::submit(
                splitter.device(),
                splitter.queue(),
                &page,
                "running the permuted split",
                |encoder| {
                    splitter.encode(encoder, plan, BufferRegion::whole(&input_buffer), &regions)
                },
            )
            .await?;
            bytes = in_flight.read("permuted split", wait).await?;
        }
        (0..count)
            .map(|i| {
                let shape = split.output_shape(i);
                let start = ranges[i].start as usize;
                let piece = bytes
                    .get(start..start + packed_bytes(t, &shape))
                    .unwrap_or(&[]);
                Ok(HostTensor::from_raw(t, &shape, piece.to_vec())?)
            })
            .collect()
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

    /// A permuted concat plan run on `inputs` (in one page).
    pub(super) async fn permuted_concat_plan_with(
        self,
        plan: &PermutedConcatPlan,
        inputs: &[&HostTensor],
        wait: Wait,
    ) -> Result<HostTensor> {
        let t = plan.element_type();
        let shapes = plan.concat().input_shapes();
        check_input_count(shapes.len(), inputs.len())?;
        let mut pieces = Vec::with_capacity(inputs.len());
        for (k, input) in inputs.iter().enumerate() {
            check_input(t, &shapes[k], input)?;
            pieces.push(input.as_bytes()?);
        }
        let shape = plan.concat().output_shape();
        let output_bytes = plan.output_region_bytes();
        if output_bytes == 0 {
            return Ok(HostTensor::from_raw(t, shape, Vec::new())?);
        }
        let (ranges, len) = page_of((0..inputs.len()).map(|k| plan.input_bytes(k)));
        let starts: Vec<u64> = ranges.iter().map(|r| r.start).collect();
        let page = self.upload_page(&pieces, &starts, len)?;
        let regions: Vec<BufferRegion<'_>> = ranges
            .iter()
            .map(|r| BufferRegion::new(&page, r.start, r.end - r.start))
            .collect();
        let splitter = self.splitter();
        let packed = packed_bytes(t, shape);
        let bytes = self
            .read_output(
                "permuted concat",
                output_bytes,
                packed,
                wait,
                |encoder, output| splitter.encode(encoder, plan, &regions, output),
            )
            .await?;
        Ok(HostTensor::from_raw(t, shape, bytes)?)
    }
}

/// `t`, refused where it has no GPU layout (strings).
fn on_gpu(t: ElementType) -> std::result::Result<ElementType, PlanError> {
    match t.bit_width() {
        Some(_) => Ok(t),
        None => Err(PlanError::NotOnGpu { element_type: t }),
    }
}

/// `input` is of the plan's type and shape.
fn check_input(t: ElementType, shape: &[usize], input: &HostTensor) -> Result<()> {
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

/// The packed bytes of a tensor of `shape`.
fn packed_bytes(t: ElementType, shape: &[usize]) -> usize {
    let elements: usize = shape.iter().product();
    (elements * t.bit_width().unwrap_or(8) as usize).div_ceil(8)
}
