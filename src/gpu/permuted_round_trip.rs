//! The round trips of the permuted moves: a permuted split's outputs in one
//! page (at 16-byte steps, as a runtime's pool packs them), a permuted
//! concat's inputs in one page and its output in a buffer of its own,
//! each read back and cut into host tensors.

use super::blocking::Wait;
use super::readback::InFlight;
use super::region::BufferRegion;
use super::round_trip::{RoundTrip, usages};
use super::scope::buffer_with_contents;
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::geometry::align_up;
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
        let mut end = 0;
        let ranges: Vec<(u64, u64)> = (0..count)
            .map(|i| {
                let start = align_up(end, 16);
                end = start + plan.output_region_bytes(i);
                (start, plan.output_region_bytes(i))
            })
            .collect();
        let mut bytes = Vec::new();
        if end > 0 {
            let input_buffer = self.create_input(input.as_bytes()?)?;
            let page = self.create_buffer("wgpu-split output page", end)?;
            let regions: Vec<BufferRegion<'_>> = ranges
                .iter()
                .map(|&(start, size)| BufferRegion::new(&page, start, size))
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
                let start = ranges[i].0 as usize;
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
        if inputs.len() != shapes.len() {
            return Err(crate::plan::EncodeError::RegionCount {
                expected: shapes.len(),
                actual: inputs.len(),
            }
            .into());
        }
        let mut page = Vec::new();
        let mut ranges = Vec::with_capacity(inputs.len());
        for (k, input) in inputs.iter().enumerate() {
            check_input(t, &shapes[k], input)?;
            let start = align_up(page.len() as u64, 16) as usize;
            let size = plan.input_bytes(k).next_multiple_of(4) as usize;
            page.resize(start + size, 0);
            let bytes = input.as_bytes()?;
            page[start..start + bytes.len()].copy_from_slice(bytes);
            ranges.push((start as u64, plan.input_bytes(k)));
        }
        let shape = plan.concat().output_shape();
        let output_bytes = plan.output_region_bytes();
        if output_bytes == 0 {
            return Ok(HostTensor::from_raw(t, shape, Vec::new())?);
        }
        let splitter = self.splitter();
        let device = splitter.device();
        let size = align_up(page.len() as u64, 4).max(4);
        let page = buffer_with_contents(device, "wgpu-split input page", &page, size, usages())?;
        let output = self.create_buffer("wgpu-split concat output", output_bytes)?;
        let regions: Vec<BufferRegion<'_>> = ranges
            .iter()
            .map(|&(start, size)| BufferRegion::new(&page, start, size))
            .collect();
        let in_flight = InFlight::submit(
            device,
            splitter.queue(),
            &output,
            "running the permuted concat",
            |encoder| {
                let output = BufferRegion::new(&output, 0, output_bytes);
                splitter.encode(encoder, plan, &regions, output)
            },
        )
        .await?;
        let mut bytes = in_flight.read("permuted concat", wait).await?;
        bytes.truncate(packed_bytes(t, shape));
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
