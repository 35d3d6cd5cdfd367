//! [`SplitterCache`]: what a splitter keeps for reuse (uploaded tables,
//! compiled pipelines of generated kernels), for the caller to inspect,
//! clear and fill ahead of time.

use std::borrow::Cow;

use super::cache::{CacheUsage, lock};
use super::dispatch::upload_table;
use super::moves::{MovePlan, PlanRef, Token};
use super::resources::Resources;
use super::scope::{scoped, submit};
use crate::error::Result;
use crate::kernels::wgsl::Bindings;
use crate::plan::binding::regions::PlainRegion;
use crate::plan::permuted_binding::PermutedBinding;
use crate::plan::{PermutedConcatPlan, PermutedPlan, ShaderKey, SplitPlan, Usages};

/// The cache of a [`crate::gpu::GpuSplitter`]
/// ([`crate::gpu::GpuSplitter::cache`]), bounded by its
/// [`crate::gpu::CachePolicy`].
///
/// # Examples
///
/// ```no_run
/// use wgpu_split::gpu::GpuContext;
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let ctx = GpuContext::new_default()?;
/// let splitter = ctx.splitter()?;
/// let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[64, 96])?;
/// let plan = splitter.plan(&split, ElementType::Float16)?;
/// // At model load: compile, upload and run the kernel once, so the
/// // first step pays none of it.
/// splitter.cache().warm_up(&plan)?;
/// assert!(splitter.cache().usage().tables <= 1);
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SplitterCache<'s> {
    pub(crate) resources: &'s Resources,
    pub(crate) queue: &'s wgpu::Queue,
}

impl SplitterCache<'_> {
    /// What the cache holds now.
    pub fn usage(&self) -> CacheUsage {
        let tables = lock(&self.resources.tables);
        CacheUsage {
            tables: tables.len(),
            table_bytes: tables.cost(),
            generated_pipelines: self.resources.pipelines.generated(),
            scratch_bytes: lock(&self.resources.scratch)
                .as_ref()
                .map_or(0, |b| b.size()),
        }
    }

    /// Drops every kept table, generated pipeline and the scratch arena. wgpu frees their
    /// memory once no submitted work uses them, at the device's next poll
    /// (`Device::poll`; in a browser, as it runs).
    pub fn clear(&self) {
        lock(&self.resources.tables).clear();
        self.resources.pipelines.clear_generated();
        *lock(&self.resources.scratch) = None;
    }

    /// Gets `plan` (of any move) ready ahead of time: compiles its
    /// pipelines (kept within the policy's bound); for a split or concat
    /// also uploads its table (kept within the budget) and submits one
    /// dispatch of each pipeline that does no work, so that the driver's
    /// compile at first execution (about 48 ms for a generated kernel on
    /// lavapipe) happens now rather than at the first encode. Does not
    /// wait; a plan without dispatches needs nothing.
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device is lost or rejects
    /// the kernel.
    pub fn warm_up<P: MovePlan>(&self, plan: &P) -> Result<()> {
        match plan.as_plan(Token(())) {
            PlanRef::Split(plan) => self.warm_up_split(plan),
            PlanRef::Concat(plan) => self.warm_up_split(plan.mirror()),
            PlanRef::PermutedSplit(plan) => self.warm_up_permuted(plan),
            PlanRef::PermutedConcat(plan) => self.warm_up_permuted_concat(plan),
        }
    }

    /// [`SplitterCache::warm_up`] of a permuted split: its pipelines
    /// compiled (its parameters depend on the regions, so they wait for
    /// the encode).
    fn warm_up_permuted(&self, plan: &PermutedPlan) -> Result<()> {
        let (input, outputs) = own_regions(
            plan.input_bytes(),
            (0..plan.outputs().len()).map(|i| plan.output_region_bytes(i)),
        );
        let binding = plan.bind(&input, &outputs)?;
        self.compile_permuted(&binding)
    }

    /// [`SplitterCache::warm_up`] of a permuted concat.
    fn warm_up_permuted_concat(&self, plan: &PermutedConcatPlan) -> Result<()> {
        let count = plan.concat().concat().input_count();
        let (output, inputs) = own_regions(
            plan.output_region_bytes(),
            (0..count).map(|i| plan.input_bytes(i)),
        );
        let binding = plan.bind(&inputs, &output)?;
        self.compile_permuted(&binding)
    }

    /// Compiles the pipelines of `binding`'s dispatches, kept among the
    /// generated pipelines.
    fn compile_permuted(&self, binding: &PermutedBinding) -> Result<()> {
        let (resources, device) = (self.resources, &self.resources.device);
        let kept = resources.policy.generated_pipelines;
        for d in &binding.dispatches {
            scoped(device, "compiling the permuted-move kernel", || {
                resources.pipelines.permute(device, &d.module, kept)
            })?;
        }
        Ok(())
    }

    /// [`SplitterCache::warm_up`] of a split plan (a concat's mirror).
    fn warm_up_split(&self, plan: &SplitPlan) -> Result<()> {
        if let Some((stage, unstage)) = plan.staged_plans() {
            self.warm_up_split(stage)?;
            return self.warm_up_split(unstage);
        }
        let keys = plan.shaders();
        if keys.is_empty() {
            return Ok(());
        }
        let table = plan.table();
        upload_table(self.resources, plan.table_fingerprint(), table, || {
            Cow::Borrowed(table)
        })?;
        let commands = keys
            .iter()
            .map(|key| self.idle_dispatch(plan, key))
            .collect::<Result<Vec<_>>>()?;
        submit(
            &self.resources.device,
            self.queue,
            "warming up the kernels",
            commands,
        )?;
        Ok(())
    }

    /// One dispatch of `key`'s pipeline that reads and writes nothing.
    fn idle_dispatch(&self, plan: &SplitPlan, key: &ShaderKey) -> Result<wgpu::CommandBuffer> {
        let device = &self.resources.device;
        Ok(scoped(device, "warming up the kernel", || {
            let kernel = self.resources.pipeline(key);
            // A zero table (no invocation works) and a source of its own:
            // nothing is read or written, the pipeline only runs.
            let scratch = |label, size, usage| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let table = scratch(
                "wgpu-split warm-up table",
                key.min_table_bytes(),
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE,
            );
            let source = scratch(
                "wgpu-split warm-up source",
                256,
                wgpu::BufferUsages::STORAGE,
            );
            let spare: Vec<_> = (0..key.slots() as usize)
                .map(|slot| plan.spare_binding(slot))
                .collect();
            let mut entries = vec![
                wgpu::BindGroupEntry {
                    binding: Bindings::TABLE,
                    resource: table.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: Bindings::SOURCE,
                    resource: source.as_entire_binding(),
                },
            ];
            for (slot, range) in spare.iter().enumerate() {
                entries.push(wgpu::BindGroupEntry {
                    binding: Bindings::destination(slot as u32),
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &self.resources.spare,
                        offset: range.start,
                        size: wgpu::BufferSize::new(range.end - range.start),
                    }),
                });
            }
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-split warm-up"),
                layout: &kernel.layout,
                entries: &entries,
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&kernel.pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            encoder.finish()
        })?)
    }
}

/// Regions of their own for a permuted move's warm-up: `single` bytes in
/// buffer 0, each of `each` in a buffer of its own, every usage.
fn own_regions(single: u64, each: impl Iterator<Item = u64>) -> (PlainRegion, Vec<PlainRegion>) {
    let region = |buffer: usize, bytes: u64| {
        let size = bytes.next_multiple_of(4).max(4);
        PlainRegion {
            buffer,
            buffer_size: size,
            usages: Usages {
                storage: true,
                copy_src: true,
                copy_dst: true,
            },
            offset: 0,
            size,
        }
    };
    let each = each
        .enumerate()
        .map(|(i, bytes)| region(i + 1, bytes))
        .collect();
    (region(0, single), each)
}
