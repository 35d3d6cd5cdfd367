//! Permuted splits and concats on the GPU ([`GpuSplitter::encode_permuted`],
//! [`GpuSplitter::encode_permuted_concat`]): each
//! output's words gathered through its strided view of the input by the
//! permuted-move kernel, a dispatch per group of destinations whose
//! bindings do not alias, its parameters uploaded with the encode.

use std::ops::Range;
use std::sync::Arc;

use std::borrow::Cow;

use super::checks::{CopyEnds, probe};
use super::dispatch::upload_table;
use super::pipelines::CompiledKernel;
use super::prepared::PreparedSplit;
use super::region::{BufferRegion, plain_regions};
use super::scope::{ErrorScope, scoped};
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::kernels::permute_module::PermuteModule;
use crate::kernels::table::fingerprint;
use crate::plan::permuted_binding::{Bound, PermutedBinding, dispatch_grid};
use crate::plan::{
    BufferRole, CostModel, DeviceClass, LaneOrder, PermutedConcatPlan, PermutedPlan, PlanError,
    PlanLimits, PlanMismatch, Strategy,
};
use crate::semantics::{PermutedConcat, PermutedSplit};

impl GpuSplitter {
    /// Plans `split` (outputs reshaped and permuted) for tensors of
    /// `element_type` on this device.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::PermutedTooLarge`].
    pub fn plan_permuted(
        &self,
        split: &PermutedSplit,
        element_type: ElementType,
    ) -> Result<PermutedPlan> {
        Ok(PermutedPlan::new(split, element_type, self.limits())?.lanes(self.lanes()))
    }

    /// Records `plan` into `encoder`: each output, reshaped and permuted,
    /// into its region of `destinations` (one per output, at least
    /// [`PermutedPlan::output_region_bytes`]; the bytes past the output up
    /// to its last word are written zero, nothing else), read from `input`
    /// in one compute pass of a dispatch per group of destinations (at
    /// most [`PermutedPlan::destinations_per_dispatch`], whose bindings do
    /// not alias). Every buffer needs `STORAGE`; offsets are multiples of 4.
    ///
    /// # Errors
    ///
    /// [`PlanError::Mismatch`] for a plan made for limits this device does
    /// not allow; the [`crate::error::EncodeError`]s of the regions
    /// (count, usage, offset, size, extent, overlaps), before anything is
    /// recorded; [`crate::error::DeviceError`] when wgpu reports one.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{BufferRegion, GpuContext};
    /// use wgpu_split::{ElementType, PermutedSplit};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// // GPT-2's fused QKV into Q, K and V as [B, H, S, D].
    /// let qkv = PermutedSplit::split_heads(&[8, 1024, 2304], &[768; 3], 64)?;
    /// let plan = splitter.plan_permuted(&qkv, ElementType::Float16)?;
    /// # let (input, q, k, v): (wgpu::Buffer, wgpu::Buffer, wgpu::Buffer, wgpu::Buffer) = todo!();
    /// let mut encoder = splitter.device().create_command_encoder(&Default::default());
    /// let outputs = [&q, &k, &v].map(|b| BufferRegion::whole(b));
    /// splitter.encode_permuted(&mut encoder, &plan, BufferRegion::whole(&input), &outputs)?;
    /// splitter.queue().submit([encoder.finish()]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    pub fn encode_permuted(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<()> {
        let binding = self.bind_permuted_split(plan, &input, destinations, true)?;
        let scope = ErrorScope::open(self.device());
        for &(i, from, bytes) in &binding.copies {
            let to = &destinations[i];
            encoder.copy_buffer_to_buffer(input.buffer, from, to.buffer, to.offset, bytes);
        }
        if !binding.dispatches.is_empty() {
            let prepared = self.prepare_dispatches(&binding, input.buffer, destinations)?;
            self.record_own_pass(encoder, &prepared);
        }
        Ok(scope.close("recording the permuted split", ())?)
    }

    /// Prepares `plan` for recording inside the caller's own compute pass
    /// ([`PreparedSplit::record`], between two of its kernels): checked as
    /// [`GpuSplitter::encode_permuted`] checks, its parameters uploaded, its
    /// bind groups made. Bound to these buffers: prepare per step where
    /// buffers recycle.
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::encode_permuted`].
    pub fn prepare_permuted(
        &self,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        let binding = self.bind_permuted_split(plan, &input, destinations, false)?;
        let scope = ErrorScope::open(self.device());
        let prepared = self.prepare_dispatches(&binding, input.buffer, destinations)?;
        Ok(scope.close("preparing the permuted split", prepared)?)
    }

    /// `plan`'s commands into these regions, checked.
    fn bind_permuted_split(
        &self,
        plan: &PermutedPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
        copies: bool,
    ) -> Result<PermutedBinding> {
        self.check_plan_limits(plan.limits())?;
        let (plain_input, plain) = plain_regions(input, destinations);
        let binding = plan.bind(&plain_input, &plain, copies)?;
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

    /// Plans `concat` (inputs permuted and reshaped, then joined) for
    /// tensors of `element_type` on this device.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::PermutedTooLarge`].
    pub fn plan_permuted_concat(
        &self,
        concat: &PermutedConcat,
        element_type: ElementType,
    ) -> Result<PermutedConcatPlan> {
        Ok(PermutedConcatPlan::new(concat, element_type, self.limits())?.lanes(self.lanes()))
    }

    /// Records `plan` into `encoder`: `inputs` (one region per input of
    /// the concat, read only; they may share buffers) permuted, reshaped and
    /// joined into `output` (at least
    /// [`PermutedConcatPlan::output_region_bytes`]; the bytes past the
    /// output up to its last word are written zero, nothing else), in one
    /// compute pass: where inputs of sub-word runs share output words
    /// ([`PermutedConcatPlan::zeroes_output`]) a dispatch zeroes the output
    /// first; then a dispatch per group of at most
    /// [`PermutedConcatPlan::inputs_per_dispatch`] inputs. Every buffer
    /// needs `STORAGE`; offsets are multiples of 4.
    ///
    /// # Errors
    ///
    /// [`PlanError::Mismatch`] for a plan made for limits this device does
    /// not allow; the [`crate::error::EncodeError`]s of the regions (count,
    /// usage, offset, size, extent, an input bound over the output), before
    /// anything is recorded; [`crate::error::DeviceError`] when wgpu
    /// reports one.
    pub fn encode_permuted_concat(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<()> {
        let binding = self.bind_permuted_concat(plan, inputs, &output)?;
        let scope = ErrorScope::open(self.device());
        let prepared = self.prepare_dispatches(&binding, output.buffer, inputs)?;
        self.record_own_pass(encoder, &prepared);
        Ok(scope.close("recording the permuted concat", ())?)
    }

    /// Prepares `plan` for recording inside the caller's own compute pass,
    /// as [`GpuSplitter::prepare_permuted`] does for a split (the zeroing
    /// dispatch, where there is one, comes first).
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::encode_permuted_concat`].
    pub fn prepare_permuted_concat(
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

    /// `plan`'s commands from these regions, checked.
    fn bind_permuted_concat(
        &self,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: &BufferRegion<'_>,
    ) -> Result<PermutedBinding> {
        self.check_plan_limits(plan.limits())?;
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

    /// How the splitter's model lays invocations over units: blocked on a
    /// software adapter, striped on GPUs.
    fn lanes(&self) -> LaneOrder {
        match self.strategy() {
            Strategy::Auto(model) => model.lanes,
            _ => CostModel::for_class(DeviceClass::of_adapter(&self.device().adapter_info())).lanes,
        }
    }

    /// A plan made for limits this device does not allow is refused.
    fn check_plan_limits(&self, limits: &PlanLimits) -> Result<()> {
        if limits.fits_within(self.limits()) {
            return Ok(());
        }
        Err(PlanError::Mismatch(PlanMismatch::Limits {
            planned: Box::new(*limits),
            device: Box::new(*self.limits()),
        })
        .into())
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
        let mut params = Vec::new();
        let mut starts = Vec::with_capacity(binding.dispatches.len());
        for d in &binding.dispatches {
            let start = params.len().next_multiple_of(PARAMS_ALIGNMENT);
            params.resize(start, 0);
            params.extend(d.params.iter().flat_map(|w| w.to_le_bytes()));
            starts.push(start as u64);
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
                    Bound::Single => single,
                    Bound::Each(i) => each[i].buffer,
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

/// Where each dispatch's parameters start in their buffer: a multiple of
/// WebGPU's largest `minUniformBufferOffsetAlignment` (as the recordings
/// lay them).
const PARAMS_ALIGNMENT: usize = 256;

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
