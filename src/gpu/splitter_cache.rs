//! [`SplitterCache`]: what a splitter keeps for reuse (uploaded tables,
//! compiled pipelines of generated kernels), for the caller to inspect,
//! clear and fill ahead of time.

use std::borrow::Cow;

use super::cache::{CacheUsage, lock};
use super::dispatch::upload_table;
use super::resources::Resources;
use super::scope::{scoped, submit};
use crate::error::Result;
use crate::kernels::wgsl::Bindings;
use crate::plan::{ShaderKey, SplitPlan};

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

    /// Gets `plan` ready ahead of time: compiles its pipelines (kept within
    /// the policy's bound), uploads its table (kept within the budget) and
    /// submits one dispatch of each pipeline that does no work, so that the
    /// driver's compile at first execution (about 48 ms for a generated
    /// kernel on lavapipe) happens now rather than at the first encode.
    /// Does not wait; a plan without dispatches needs nothing.
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device is lost or rejects
    /// the kernel.
    pub fn warm_up(&self, plan: &SplitPlan) -> Result<()> {
        if let Some((stage, unstage)) = plan.staged_plans() {
            self.warm_up(stage)?;
            return self.warm_up(unstage);
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
