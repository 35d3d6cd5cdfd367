//! [`GpuSplitter`]: plans splits for one device and records them into the
//! caller's command encoder.

use std::sync::{Arc, Mutex};

use super::cache::{BindKey, EncodeCache, MAX_CACHED_BIND_GROUPS, MAX_CACHED_TABLES};
use super::kernels::{CompiledKernel, Kernels};
use super::region::{BufferRegion, check_encode};
use super::scope::{buffer_with_contents, scoped};
use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::plan::{Pass, PlanLimits, SplitPlan, Strategy};
use crate::semantics::ResolvedSplit;

/// Splits tensors that live in GPU buffers.
///
/// Built once per device; it caches the shader module, bind group layouts and
/// pipelines, and is `Send + Sync`, so one splitter serves every thread.
///
/// # Examples
///
/// ```no_run
/// use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter};
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let ctx = GpuContext::new_default()?;
/// let splitter = GpuSplitter::new(&ctx.device, &ctx.queue)?;
/// let split = OnnxSplit::new(18, 2).axis(1).num_outputs(2).resolve(&[64, 10])?;
/// let plan = splitter.plan(&split, ElementType::Float16)?;
/// # let input = splitter.create_arena(&plan)?;
/// let arena = splitter.create_arena(&plan)?;
/// let mut encoder = ctx.device.create_command_encoder(&Default::default());
/// splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), BufferRegion::whole(&arena))?;
/// ctx.queue.submit([encoder.finish()]);
/// // Output 1 lives at plan.outputs()[1].range() inside `arena`.
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug)]
pub struct GpuSplitter {
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: PlanLimits,
    strategy: Strategy,
    kernels: Kernels,
    cache: Mutex<EncodeCache>,
}

/// The planner's limits of a wgpu device.
fn plan_limits(limits: &wgpu::Limits) -> PlanLimits {
    PlanLimits {
        min_storage_buffer_offset_alignment: limits.min_storage_buffer_offset_alignment,
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_buffer_size: limits.max_buffer_size,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
    }
}

impl GpuSplitter {
    /// Compiles the gather shader for `device` (handles are cloned; wgpu
    /// devices are reference-counted).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or rejects the shader.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let kernels = scoped(device, "compiling the gather shader", || {
            Kernels::compile(device)
        })?;
        Ok(GpuSplitter {
            device: device.clone(),
            queue: queue.clone(),
            limits: plan_limits(&device.limits()),
            strategy: Strategy::Auto(Default::default()),
            kernels,
            cache: Mutex::new(EncodeCache::default()),
        })
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The device limits plans are made for.
    pub fn plan_limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// The same splitter with another default [`Strategy`] for
    /// [`GpuSplitter::plan`] (the default is [`Strategy::Auto`] with
    /// [`crate::plan::CostModel::LAVAPIPE`]; use a calibrated model for other
    /// adapters, or [`Strategy::Gather`] for buffers without copy usages).
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The strategy [`GpuSplitter::plan`] uses.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// Plans `split` of an `element_type` tensor for this device with the
    /// splitter's strategy.
    ///
    /// # Errors
    ///
    /// The errors of [`SplitPlan::with_strategy`].
    pub fn plan(&self, split: &ResolvedSplit, element_type: ElementType) -> Result<SplitPlan> {
        SplitPlan::with_strategy(split, element_type, &self.limits, &self.strategy)
    }

    /// Plans with an explicit strategy and limits at most the device's (for
    /// instance tiny windows, to exercise multi-pass plans on small tensors).
    ///
    /// # Errors
    ///
    /// [`Error::PlanMismatch`] when `limits` does not fit within the device's,
    /// and the errors of [`SplitPlan::with_strategy`].
    pub fn plan_with(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        strategy: &Strategy,
    ) -> Result<SplitPlan> {
        if !limits.fits_within(&self.limits) {
            return Err(Error::PlanMismatch {
                detail: format!("{limits:?} exceeds the device's {:?}", self.limits),
            });
        }
        SplitPlan::with_strategy(split, element_type, limits, strategy)
    }

    /// A buffer of [`SplitPlan::arena_bytes`] bytes (at least 4) with the
    /// usages the split and a readback need (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or out of memory.
    pub fn create_arena(&self, plan: &SplitPlan) -> Result<wgpu::Buffer> {
        scoped(&self.device, "creating the arena", || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split arena"),
                size: plan.arena_bytes().max(4),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// A storage buffer holding `bytes`, padded with zeros to a multiple of 4
    /// (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or out of memory.
    pub fn create_input(&self, bytes: &[u8]) -> Result<wgpu::Buffer> {
        buffer_with_contents(
            &self.device,
            "wgpu-split input",
            bytes,
            (bytes.len() as u64).div_ceil(4).max(1) * 4,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        )
    }

    /// Drops every cached parameter table and bind group (and with them the
    /// references they hold to caller buffers).
    pub fn clear_cache(&self) {
        self.lock_cache().clear();
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, EncodeCache> {
        // A panic while holding the lock leaves the cache consistent (every
        // insert is one statement), so a poisoned lock is still usable.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the split into `encoder`: reads `input` (the packed tensor,
    /// [`SplitPlan::input_binding_bytes`] bytes from its offset) and writes every
    /// output into `arena` at its [`SplitPlan::outputs`] offset. Records
    /// [`SplitPlan::copy_count`] copy commands and [`SplitPlan::dispatch_count`]
    /// dispatches, each in its own compute pass; submits nothing.
    ///
    /// # Errors
    ///
    /// Caught before wgpu sees them: [`Error::PlanMismatch`] for a plan made
    /// for other limits, [`Error::InputIsArena`], [`Error::MissingUsage`]
    /// (`STORAGE` when the plan dispatches, `COPY_SRC` on the input and
    /// `COPY_DST` on the arena when it copies), [`Error::MisalignedOffset`]
    /// (offsets must be multiples of `min_storage_buffer_offset_alignment`),
    /// [`Error::BufferTooSmall`].
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
    ) -> Result<()> {
        self.encode_with(encoder, plan, input, arena, true)
    }

    /// [`GpuSplitter::encode`], optionally without remembering the bind
    /// groups (for one-off buffers, which the cache would otherwise keep alive).
    pub(crate) fn encode_with(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
        remember: bool,
    ) -> Result<()> {
        check_encode(&self.limits, plan, input, arena)?;
        for c in plan.copies() {
            for k in 0..c.count {
                encoder.copy_buffer_to_buffer(
                    input.buffer,
                    input.offset + c.src_offset_bytes + k * c.src_stride_bytes,
                    arena.buffer,
                    arena.offset + c.dst_offset_bytes + k * c.size_bytes,
                    c.size_bytes,
                );
            }
        }
        if plan.passes().is_empty() {
            return Ok(());
        }
        let kernel = self.kernels.get(plan.kernel());
        // One cache lock and one table lookup per encode, not per pass.
        let mut cache = self.lock_cache();
        let table = self.table_buffer(&mut cache, plan)?;
        let bind_groups = (0..plan.passes().len())
            .map(|index| {
                let binding = PassBinding {
                    plan,
                    index,
                    table: &table,
                    input,
                    arena,
                };
                self.bind_group(&mut cache, kernel, &binding, remember)
            })
            .collect::<Result<Vec<_>>>()?;
        drop(cache);
        for (pass, bind_group) in plan.passes().iter().zip(bind_groups) {
            // One compute pass per dispatch: a later pass may complete words an
            // earlier one started, and pass boundaries order the storage writes.
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("wgpu-split"),
                timestamp_writes: None,
            });
            cpass.set_pipeline(&kernel.pipeline);
            cpass.set_bind_group(0, bind_group.as_ref(), &[]);
            cpass.dispatch_workgroups(pass.workgroups[0], pass.workgroups[1], 1);
        }
        Ok(())
    }

    /// The table buffer for `plan`, uploaded once per distinct table.
    fn table_buffer(&self, cache: &mut EncodeCache, plan: &SplitPlan) -> Result<Arc<wgpu::Buffer>> {
        let key = plan.table_fingerprint();
        if let Some((bytes, buffer)) = cache.tables.get(&key)
            && bytes.as_slice() == plan.table()
        {
            return Ok(buffer.clone());
        }
        if cache.tables.len() >= MAX_CACHED_TABLES {
            cache.clear();
        }
        let buffer = Arc::new(buffer_with_contents(
            &self.device,
            "wgpu-split table",
            plan.table(),
            plan.table().len() as u64,
            wgpu::BufferUsages::STORAGE,
        )?);
        cache
            .tables
            .insert(key, (plan.table().to_vec(), buffer.clone()));
        Ok(buffer)
    }

    /// The bind group of one pass: from the cache, or created (and
    /// remembered when `remember` is set).
    fn bind_group(
        &self,
        cache: &mut EncodeCache,
        kernel: &CompiledKernel,
        b: &PassBinding<'_>,
        remember: bool,
    ) -> Result<Arc<wgpu::BindGroup>> {
        let key = BindKey {
            table: b.plan.table_fingerprint(),
            pass: b.index,
            kernel: b.plan.kernel(),
            input: b.input.buffer.clone(),
            input_offset: b.input.offset,
            arena: b.arena.buffer.clone(),
            arena_offset: b.arena.offset,
        };
        if let Some(group) = cache.bind_groups.get(&key) {
            return Ok(group.clone());
        }
        if cache.bind_groups.len() >= MAX_CACHED_BIND_GROUPS {
            cache.bind_groups.clear();
        }
        // A buffer from another device, or a lost device, fails here.
        let group = Arc::new(scoped(&self.device, "binding the split's buffers", || {
            b.create(&self.device, kernel)
        })?);
        if remember {
            cache.bind_groups.insert(key, group.clone());
        }
        Ok(group)
    }
}

/// What one pass binds: the table slice and the two windows.
struct PassBinding<'a> {
    plan: &'a SplitPlan,
    index: usize,
    table: &'a wgpu::Buffer,
    input: BufferRegion<'a>,
    arena: BufferRegion<'a>,
}

impl PassBinding<'_> {
    fn create(&self, device: &wgpu::Device, kernel: &CompiledKernel) -> wgpu::BindGroup {
        let pass: &Pass = &self.plan.passes()[self.index];
        let binding = |buffer, offset, range: &std::ops::Range<u64>| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: offset + range.start,
                size: wgpu::BufferSize::new(range.end - range.start),
            })
        };
        let (src, dst) = self.plan.kernel().bindings();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-split pass"),
            layout: &kernel.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: binding(self.table, 0, &pass.table_bytes),
                },
                wgpu::BindGroupEntry {
                    binding: src,
                    resource: binding(self.input.buffer, self.input.offset, &pass.src_window_bytes),
                },
                wgpu::BindGroupEntry {
                    binding: dst,
                    resource: binding(self.arena.buffer, self.arena.offset, &pass.dst_window_bytes),
                },
            ],
        })
    }
}
