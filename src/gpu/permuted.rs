//! Permuted splits on the GPU ([`GpuSplitter::encode_permuted`]): each
//! output's words gathered through its strided view of the input by the
//! permuted-move kernel, a dispatch per group of destinations whose
//! bindings do not alias, its parameters uploaded with the encode.

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::cache::lock;
use super::region::{BufferRegion, plain_regions};
use super::scope::{ErrorScope, scoped};
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::{Result, TensorError};
use crate::kernels::permute::{HEADER_WORDS, module, record};
use crate::kernels::table::WORKGROUP_SIZE;
use crate::plan::{PermutedPlan, PlanError, PlanMismatch};
use crate::semantics::PermutedSplit;

impl GpuSplitter {
    /// Plans `split` (outputs reshaped and permuted) for tensors of
    /// `element_type` on this device.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::TooLargeForDevice`].
    pub fn plan_permuted(
        &self,
        split: &PermutedSplit,
        element_type: ElementType,
    ) -> Result<PermutedPlan> {
        Ok(PermutedPlan::new(split, element_type, self.limits())?)
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
        if !plan.limits().fits_within(self.limits()) {
            return Err(PlanError::Mismatch(PlanMismatch::Limits {
                planned: Box::new(*plan.limits()),
                device: Box::new(*self.limits()),
            })
            .into());
        }
        let (plain_input, plain) = plain_regions(&input, destinations);
        plan.check_regions(&plain_input, &plain)?;
        let groups = plan.dispatch_groups(&plain_input, &plain)?;
        let bits = plan
            .element_type()
            .bit_width()
            .ok_or(TensorError::NoPackedBytes {
                element_type: plan.element_type(),
            })?;
        let device = self.device();
        let src = plan.binding(&plain_input, plan.input_bytes().next_multiple_of(4));
        let src_shift = ((plain_input.offset - src.start) / 4) as u32;
        let pipelines = groups
            .iter()
            .map(|g| self.permute_pipeline(g.len()))
            .collect::<Result<Vec<_>>>()?;
        let scope = ErrorScope::open(device);
        let mut bind_groups = Vec::with_capacity(groups.len());
        for (group, pipeline) in groups.iter().zip(&pipelines) {
            let mut params = vec![group.len() as u32, 0, 0, 0];
            debug_assert_eq!(params.len(), HEADER_WORDS);
            let mut first = 0u32;
            let mut entries = vec![wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: input.buffer,
                    offset: src.start,
                    size: wgpu::BufferSize::new(src.end - src.start),
                }),
            }];
            for (slot, &i) in group.iter().enumerate() {
                let o = &plan.outputs()[i];
                let bound = plan.binding(&plain[i], plan.output_region_bytes(i));
                let dst_shift = ((plain[i].offset - bound.start) / 4) as u32;
                params.extend(record(
                    first,
                    o.words,
                    o.elements,
                    o.mode,
                    bits,
                    (&o.dims, &o.strides, o.offset),
                    src_shift,
                    dst_shift,
                ));
                first += o.words;
                entries.push(wgpu::BindGroupEntry {
                    binding: slot as u32 + 2,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: destinations[i].buffer,
                        offset: bound.start,
                        size: wgpu::BufferSize::new(bound.end - bound.start),
                    }),
                });
            }
            let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("wgpu-split permuted move parameters"),
                contents: bytemuck::cast_slice(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            entries.push(wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-split permuted move"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
            bind_groups.push((bind_group, first));
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("wgpu-split permuted move"),
                timestamp_writes: None,
            });
            for ((bind_group, words), pipeline) in bind_groups.iter().zip(&pipelines) {
                let workgroups = words.div_ceil(WORKGROUP_SIZE);
                let x = workgroups.min(self.limits().max_compute_workgroups_per_dimension);
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(x, workgroups.div_ceil(x.max(1)), 1);
            }
        }
        Ok(scope.close("recording the permuted split", ())?)
    }

    /// The permuted-move pipeline for dispatches of `destinations`
    /// destinations, compiled once per splitter.
    fn permute_pipeline(&self, destinations: usize) -> Result<Arc<wgpu::ComputePipeline>> {
        let resources = self.resources();
        if let Some(p) = lock(&resources.permute).get(&destinations) {
            return Ok(p.clone());
        }
        let device = self.device();
        let pipeline = scoped(device, "compiling the permuted-move kernel", || {
            let label = format!("wgpu-split permute x{destinations}");
            let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Wgsl(module(destinations).into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: None,
                module: &shader,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            })
        })?;
        let pipeline = Arc::new(pipeline);
        lock(&resources.permute).insert(destinations, pipeline.clone());
        Ok(pipeline)
    }
}
