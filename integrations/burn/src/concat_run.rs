//! A concat recorded on burn's device: the inputs read where burn keeps
//! them, the output allocated by burn's allocator, one encoder submitted
//! on burn's queue, burn's memory held until the device is done.

use burn::tensor::{DType, Shape};
use burn_cubecl::tensor::CubeTensor;
use wgpu_split::gpu::BufferRegion;
use wgpu_split::plan::{ConcatPlan, ConcatRequirements, PlanOptions, Strategy};
use wgpu_split::{ConcatError, ResolvedConcat};

use crate::allocation::{ConcatOutput, Guard, resource, runtime};
use crate::error::{BurnSplitError, Result};
use crate::splitter::BurnSplitter;
use crate::staging;

/// The input regions an encode of a plan with `needs` reads: each
/// input's bytes where burn keeps them, as many as the plan reads (a
/// dispatch reads whole words; burn's pages hold them).
fn input_regions<'g>(
    guards: &'g [Guard],
    needs: &ConcatRequirements,
) -> Result<Vec<BufferRegion<'g>>> {
    guards
        .iter()
        .zip(&needs.inputs)
        .enumerate()
        .map(|(index, (g, need))| {
            if g.offset + need.bytes > g.buffer.size() {
                return Err(BurnSplitError::Runtime {
                    detail: format!(
                        "concat input {index}: the plan reads {} bytes from offset {}, past the end of burn's page of {} bytes",
                        need.bytes,
                        g.offset,
                        g.buffer.size()
                    ),
                });
            }
            Ok(BufferRegion::new(&g.buffer, g.offset, need.bytes))
        })
        .collect()
}

impl BurnSplitter {
    /// Plans the concat, allocates the output with burn's allocator,
    /// flushes burn's work, records and submits the concat, and keeps
    /// burn's resources alive until the device has finished it.
    pub(crate) fn run_concat(
        &self,
        inputs: Vec<CubeTensor>,
        concat: &ResolvedConcat,
        element: wgpu_split::ElementType,
        dtype: DType,
    ) -> Result<CubeTensor> {
        let first = inputs
            .first()
            .ok_or(ConcatError::NoInputs { op: concat.op() })?;
        let (client, device) = (first.client.clone(), first.device.clone());
        let plan = self.splitter().plan(concat, element)?;
        let needs = plan.requirements();
        // burn's queued work on the inputs' streams is submitted first.
        let guards = inputs
            .iter()
            .map(|t| resource(&client, &t.handle))
            .collect::<Result<Vec<_>>>()?;
        let output = ConcatOutput::new(&client, &needs)?;
        let tensor = |handle| {
            CubeTensor::new_contiguous(
                client.clone(),
                device.clone(),
                Shape::from(concat.output_shape().to_vec()),
                handle,
                dtype,
            )
        };
        if needs.output_bytes == 0 {
            return Ok(tensor(output.handle));
        }
        client.flush().map_err(runtime)?;
        let out_buffer = &output.guard.buffer;
        let shares_output = (guards.iter().zip(&needs.inputs))
            .any(|(g, need)| need.bytes > 0 && g.buffer == *out_buffer);
        let (plan, staged) = if plan.copy_count() > 0 && shares_output {
            self.plan_around_shared_output(concat, element, plan)?
        } else {
            (plan, None)
        };
        let needs = plan.requirements();
        let regions = input_regions(&guards, &needs)?;
        let wgpu_device = self.splitter().device();
        let mut encoder = wgpu_device.create_command_encoder(&Default::default());
        match staged {
            Some(words) => {
                let scratch = self.staging().buffer(wgpu_device, words);
                let region = BufferRegion::new(&scratch, 0, needs.output_region_bytes);
                self.splitter()
                    .encode(&mut encoder, &plan, &regions, region)?;
                let at = output.guard.offset;
                encoder.copy_buffer_to_buffer(&scratch, 0, out_buffer, at, words);
            }
            None => {
                self.splitter()
                    .encode(&mut encoder, &plan, &regions, output.region(&needs))?;
            }
        }
        drop(regions);
        let queue = self.splitter().queue();
        queue.submit([encoder.finish()]);
        let ConcatOutput { handle, guard } = output;
        let held = (guards, guard);
        queue.on_submitted_work_done(move || drop(held));
        Ok(tensor(handle))
    }

    /// burn sub-allocates pages, so the output often shares an input's
    /// buffer, where copy commands cannot go. Either the kernel the cost
    /// model picks does the whole concat, or, where the model says one
    /// more copy pays, `copying` writes the output into the staging buffer
    /// and one copy moves it into burn's allocation: the bytes of that copy
    /// are returned.
    fn plan_around_shared_output(
        &self,
        concat: &ResolvedConcat,
        element: wgpu_split::ElementType,
        copying: ConcatPlan,
    ) -> Result<(ConcatPlan, Option<u64>)> {
        let options = PlanOptions::default()
            .strategy(self.dispatching_strategy())
            .in_compute_pass();
        let dispatched = self.splitter().plan_with(concat, element, &options)?;
        // The staged output is copied back in whole words; its allocation
        // is rounded up to hold them.
        let words = copying
            .requirements()
            .output_region_bytes
            .next_multiple_of(4);
        Ok(match self.splitter().strategy() {
            Strategy::Auto(model)
                if staging::pays(model, copying.mirror(), dispatched.mirror(), words) =>
            {
                (copying, Some(words))
            }
            _ => (dispatched, None),
        })
    }
}
