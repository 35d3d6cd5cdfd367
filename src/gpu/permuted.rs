//! Permuted splits and concats on the GPU: each
//! output's words gathered through its strided view of the input by the
//! permuted-move kernel, a dispatch per group of destinations whose
//! bindings do not alias, its parameters uploaded with the encode.

use std::ops::Range;
use std::sync::Arc;

use std::borrow::Cow;

use super::checks::{CopyEnds, probe};
use super::dispatch::upload_table;
use super::pipelines::CompiledKernel;
use super::prepared::EncodeCounts;
use super::prepared::PreparedSplit;
use super::region::{BufferRegion, plain_regions};
use super::scope::{ErrorScope, scoped};
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::kernels::permute_module::PermuteModule;
use crate::kernels::table::fingerprint;
use crate::plan::permuted_binding::{PermutedBinding, Side, dispatch_grid};
use crate::plan::{
    BufferRole, EncodeError, LaneOrder, PermutedConcatPlan, PermutedPlan, PlanError, PlanOptions,
    Strategy,
};
use crate::semantics::{PermutedConcat, PermutedSplit};

impl GpuSplitter {
    /// [`GpuSplitter::plan_with`] of a permuted split: lanes from the
    /// splitter's model (or the strategy `options` name), no copy command
    /// in a plan for the caller's compute pass.
    pub(super) fn plan_permuted(
        &self,
        split: &PermutedSplit,
        element_type: ElementType,
        options: &PlanOptions,
    ) -> std::result::Result<PermutedPlan, PlanError> {
        check_permuted_options(options)?;
        let plan = PermutedPlan::new(split, element_type, self.limits())?;
        let plan = plan.lanes(self.lanes(options));
        Ok(match options.compute_pass {
            true => plan.in_compute_pass(),
            false => plan,
        })
    }

    /// [`GpuSplitter::plan_with`] of a permuted concat.
    pub(super) fn plan_permuted_concat(
        &self,
        concat: &PermutedConcat,
        element_type: ElementType,
        options: &PlanOptions,
    ) -> std::result::Result<PermutedConcatPlan, PlanError> {
        check_permuted_options(options)?;
        let plan = PermutedConcatPlan::new(concat, element_type, self.limits())?;
        Ok(plan.lanes(self.lanes(options)))
    }

    /// [`GpuSplitter::encode`] of a permuted split: kept pieces by copy
    /// commands, then the dispatches in a pass of their own.
    pub(super) fn encode_permuted(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<()> {
        let binding = self.bind_permuted_split(plan, &input, destinations)?;
        // The bind groups made and checked (a foreign buffer's among them)
        // before anything goes into the caller's encoder.
        let prepared = match binding.dispatches.is_empty() {
            true => None,
            false => Some(scoped(
                self.device(),
                "binding the permuted split",
                || self.prepare_dispatches(&binding, input.buffer, destinations),
            )??),
        };
        let scope = ErrorScope::open(self.device());
        for &(i, from, bytes) in &binding.copies {
            let to = &destinations[i];
            encoder.copy_buffer_to_buffer(input.buffer, from, to.buffer, to.offset, bytes);
        }
        if let Some(prepared) = &prepared {
            self.record_own_pass(encoder, prepared);
        }
        Ok(scope.close("recording the permuted split", ())?)
    }

    /// [`GpuSplitter::prepare`] of a permuted split.
    pub(super) fn prepare_permuted(
        &self,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        let binding = self.bind_permuted_split(plan, &input, destinations)?;
        if !binding.copies.is_empty() {
            return Err(EncodeError::CopiesInComputePass {
                copies: binding.copies.len() as u64,
            }
            .into());
        }
        let scope = ErrorScope::open(self.device());
        let prepared = self.prepare_dispatches(&binding, input.buffer, destinations)?;
        Ok(scope.close("preparing the permuted split", prepared)?)
    }

    /// [`GpuSplitter::counts`] of a permuted split.
    pub(super) fn counts_permuted(
        &self,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<EncodeCounts> {
        self.check_limits(plan.limits())?;
        let (plain_input, plain) = plain_regions(&input, destinations);
        Ok(counts_of(&plan.bind(&plain_input, &plain)?))
    }

    /// `plan`'s commands into these regions, checked.
    fn bind_permuted_split(
        &self,
        plan: &PermutedPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PermutedBinding> {
        self.check_limits(plan.limits())?;
        let (plain_input, plain) = plain_regions(input, destinations);
        let binding = plan.bind(&plain_input, &plain)?;
        // Mapped, destroyed or foreign buffers: typed, before recording,
        // as for a split (a kept piece's copy command included).
        let mut used = vec![(BufferRole::Input, input.buffer)];
        for (i, d) in destinations.iter().enumerate() {
            if plan.output_region_bytes(i) > 0 {
                used.push((BufferRole::Output(i), d.buffer));
            }
        }
        let copies: Vec<CopyEnds> = binding
            .copies
            .iter()
            .map(|&(i, from, _)| {
                [
                    (input.buffer, from),
                    (destinations[i].buffer, destinations[i].offset),
                ]
            })
            .collect();
        probe(self.resources(), used, &copies)?;
        Ok(binding)
    }

    /// [`GpuSplitter::encode`] of a permuted concat: where inputs of
    /// sub-word runs share output words a dispatch zeroes the output
    /// first, then a dispatch per group of inputs, in one pass.
    pub(super) fn encode_permuted_concat(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<()> {
        let binding = self.bind_permuted_concat(plan, inputs, &output)?;
        let prepared = scoped(self.device(), "binding the permuted concat", || {
            self.prepare_dispatches(&binding, output.buffer, inputs)
        })??;
        let scope = ErrorScope::open(self.device());
        self.record_own_pass(encoder, &prepared);
        Ok(scope.close("recording the permuted concat", ())?)
    }

    /// [`GpuSplitter::prepare`] of a permuted concat.
    pub(super) fn prepare_permuted_concat(
        &self,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<PreparedSplit> {
        let binding = self.bind_permuted_concat(plan, inputs, &output)?;
        let scope = ErrorScope::open(self.device());
        let prepared = self.prepare_dispatches(&binding, output.buffer, inputs)?;
        Ok(scope.close("preparing the permuted concat", prepared)?)
    }

    /// [`GpuSplitter::counts`] of a permuted concat.
    pub(super) fn counts_permuted_concat(
        &self,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<EncodeCounts> {
        self.check_limits(plan.limits())?;
        let (plain_output, plain) = plain_regions(&output, inputs);
        Ok(counts_of(&plan.bind(&plain, &plain_output)?))
    }

    /// `plan`'s commands from these regions, checked.
    fn bind_permuted_concat(
        &self,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: &BufferRegion<'_>,
    ) -> Result<PermutedBinding> {
        self.check_limits(plan.limits())?;
        let (plain_output, plain) = plain_regions(output, inputs);
        let binding = plan.bind(&plain, &plain_output)?;
        let mut used = vec![(BufferRole::ConcatOutput, output.buffer)];
        for (i, r) in inputs.iter().enumerate() {
            if plan.input_bytes(i) > 0 {
                used.push((BufferRole::ConcatInput(i), r.buffer));
            }
        }
        probe(self.resources(), used, &[])?;
        Ok(binding)
    }

    /// How the model of `options`' strategy (or the splitter's) lays
    /// invocations over units: blocked on a software adapter, striped on
    /// GPUs.
    fn lanes(&self, options: &PlanOptions) -> LaneOrder {
        match options.strategy.unwrap_or(*self.strategy()) {
            Strategy::Auto(model) => model.lanes,
            _ => self.model().lanes,
        }
    }

    /// Binds `binding`'s dispatches: their parameters (binding 0) in one
    /// buffer, each dispatch's at the next multiple of 256 bytes, uploaded
    /// once per plan and regions and kept in the splitter's table cache (an
    /// encode of a plan into the regions of an earlier one creates no
    /// buffer); each dispatch's bind group made over `single` (a split's
    /// input, a concat's output) and `each` (a split's outputs, a concat's
    /// inputs), its workgroups laid out. Runs inside the caller's error
    /// scope.
    fn prepare_dispatches(
        &self,
        binding: &PermutedBinding,
        single: &wgpu::Buffer,
        each: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        let device = self.device();
        let (starts, bytes) = params_layout(binding);
        let mut params = vec![0u8; bytes as usize];
        for (d, &start) in binding.dispatches.iter().zip(&starts) {
            let words = params[start as usize..].chunks_exact_mut(4);
            for (word, value) in words.zip(&d.params) {
                word.copy_from_slice(&value.to_le_bytes());
            }
        }
        let params_buffer = upload_table(self.resources(), fingerprint(&params), &params, || {
            Cow::Borrowed(&params)
        })?;
        let mut pipelines: Vec<wgpu::ComputePipeline> = Vec::new();
        let mut bound = Vec::with_capacity(binding.dispatches.len());
        for (d, &start) in binding.dispatches.iter().zip(&starts) {
            let kernel = self.permute_pipeline(&d.module)?;
            let mut entries = vec![entry(
                0,
                &params_buffer,
                start..start + 4 * d.params.len() as u64,
            )];
            entries.extend(d.bindings.iter().map(|(number, b, range)| {
                let buffer = match *b {
                    Side::Single => single,
                    Side::Each(i) => each[i].buffer,
                };
                entry(*number, buffer, range.clone())
            }));
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-split permuted move"),
                layout: &kernel.layout,
                entries: &entries,
            });
            let index = match pipelines.iter().position(|p| *p == kernel.pipeline) {
                Some(index) => index,
                None => {
                    pipelines.push(kernel.pipeline.clone());
                    pipelines.len() - 1
                }
            };
            let [x, y, _] = dispatch_grid(d.workgroups, self.limits());
            bound.push((index, bind_group, [x, y]));
        }
        Ok(PreparedSplit::new(pipelines, bound, params.len() as u64))
    }

    /// Records `prepared` in a compute pass of its own.
    fn record_own_pass(&self, encoder: &mut wgpu::CommandEncoder, prepared: &PreparedSplit) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("wgpu-split permuted move"),
            timestamp_writes: None,
        });
        prepared.record(&mut pass);
    }

    /// The pipeline of `module`, compiled on first use and kept among the
    /// generated pipelines ([`crate::gpu::CachePolicy::generated_pipelines`]).
    fn permute_pipeline(&self, module: &PermuteModule) -> Result<Arc<CompiledKernel>> {
        let resources = self.resources();
        let kept = resources.policy.generated_pipelines;
        Ok(scoped(
            self.device(),
            "compiling the permuted-move kernel",
            || resources.pipelines.permute(self.device(), module, kept),
        )?)
    }
}

/// What an encode of `binding` records.
fn counts_of(binding: &PermutedBinding) -> EncodeCounts {
    EncodeCounts {
        copies: binding.copies.len() as u64,
        dispatches: binding.dispatches.len(),
        table_bytes: params_layout(binding).1,
    }
}

/// Where each dispatch's parameters start in their one buffer (the next
/// multiple of [`PARAMS_ALIGNMENT`] after the previous dispatch's), and
/// the buffer's bytes: what `prepare_dispatches` uploads and `counts`
/// announces.
fn params_layout(binding: &PermutedBinding) -> (Vec<u64>, u64) {
    let mut end = 0u64;
    let starts = binding
        .dispatches
        .iter()
        .map(|d| {
            let start = end.next_multiple_of(PARAMS_ALIGNMENT);
            end = start + 4 * d.params.len() as u64;
            start
        })
        .collect();
    (starts, end)
}

/// The options a permuted move takes: a strategy (its lanes) and the
/// compute pass; no arena, kernel, form or staging.
fn check_permuted_options(options: &PlanOptions) -> std::result::Result<(), PlanError> {
    let refused = if options.placement.is_shared() {
        Some("placement")
    } else if options.kernel.is_some() {
        Some("kernel")
    } else if options.form.is_some() {
        Some("form")
    } else if options.staging == Some(true) {
        Some("staging")
    } else {
        None
    };
    match refused {
        Some(option) => Err(PlanError::NotForThisMove {
            option,
            what: "a permuted move",
        }),
        None => Ok(()),
    }
}

/// Where each dispatch's parameters start in their buffer: a multiple of
/// WebGPU's largest `minUniformBufferOffsetAlignment` (as the recordings
/// lay them).
const PARAMS_ALIGNMENT: u64 = 256;

/// Binding `binding` of a bind group: `range` of `buffer`.
fn entry(binding: u32, buffer: &wgpu::Buffer, range: Range<u64>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: range.start,
            size: wgpu::BufferSize::new(range.end - range.start),
        }),
    }
}
