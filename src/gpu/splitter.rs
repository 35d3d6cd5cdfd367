//! [`GpuSplitter`]: plans splits for one device and records them into the
//! caller's command encoder or compute pass.

use std::sync::Mutex;

use super::cache::{CachePolicy, TableCache};
use super::device_class::device_class;
use super::kernels::Kernels;
use super::prepared::PreparedSplit;
use super::region::{BufferRegion, check_encode};
use super::scope::scoped;
use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::plan::{CostModel, Outputs, PlanLimits, PlanOptions, SplitPlan, Strategy};
use crate::semantics::ResolvedSplit;

/// Splits tensors that live in GPU buffers.
///
/// Built once per device from the caller's own device and queue; it
/// compiles the gather shader's pipelines on first use and keeps them, and
/// is `Send + Sync`, so one splitter serves every thread.
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
/// # let input = splitter.create_input(&[0; 64 * 10 * 2])?;
/// let outputs = splitter.create_output_buffers(&plan)?;
/// let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
/// let mut encoder = ctx.device.create_command_encoder(&Default::default());
/// splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)?;
/// ctx.queue.submit([encoder.finish()]);
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug)]
pub struct GpuSplitter {
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    pub(super) limits: PlanLimits,
    pub(super) strategy: Strategy,
    pub(super) kernels: Kernels,
    pub(super) policy: CachePolicy,
    pub(super) tables: Mutex<TableCache>,
    /// Bound to destination slots a pass does not use.
    pub(super) spare: wgpu::Buffer,
}

/// The planner's limits of a wgpu device.
pub(crate) fn plan_limits(limits: &wgpu::Limits) -> PlanLimits {
    PlanLimits {
        min_storage_buffer_offset_alignment: limits.min_storage_buffer_offset_alignment,
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_buffer_size: limits.max_buffer_size,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
        max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
        min_uniform_buffer_offset_alignment: limits.min_uniform_buffer_offset_alignment,
        max_uniform_buffer_binding_size: limits.max_uniform_buffer_binding_size,
    }
}

impl GpuSplitter {
    /// A splitter for `device` (handles are cloned; wgpu devices are
    /// reference-counted). Pipelines are compiled on first use.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or rejects the shader.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let kernels = Kernels::default();
        let spare = scoped(device, "compiling the gather shader", || {
            // Compile the arena pipelines now: a device that rejects the
            // shader fails here, not in the middle of a runtime's step.
            for kernel in crate::plan::Kernel::GENERIC {
                kernels.get(device, kernel, Outputs::Arena, 1, None);
            }
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split spare destination"),
                size: 16,
                // Also the scratch end of the probes' copies (gpu::probe).
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(GpuSplitter {
            device: device.clone(),
            queue: queue.clone(),
            limits: plan_limits(&device.limits()),
            strategy: Strategy::Auto(CostModel::for_class(device_class(&device.adapter_info()))),
            kernels,
            policy: CachePolicy::default(),
            tables: Mutex::new(TableCache::default()),
            spare,
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

    /// Layouts of generated kernels (row blocks, row streams) whose
    /// pipelines are compiled and kept (at most 32; the least recently used
    /// layout is dropped past that).
    pub fn generated_pipelines(&self) -> usize {
        self.kernels.generated_pipelines()
    }

    /// The device limits plans are made for.
    pub fn plan_limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// The same splitter with another default [`Strategy`] for
    /// [`GpuSplitter::plan`]. The default is [`Strategy::Auto`] with the
    /// documented model of the device's class
    /// ([`CostModel::for_class`] of [`crate::gpu::device_class`]); pass a
    /// model from [`GpuSplitter::calibrate`] to plan with measured figures,
    /// or [`Strategy::Gather`] to plan dispatches only.
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The same splitter with another [`CachePolicy`] for uploaded tables.
    pub fn with_cache_policy(mut self, policy: CachePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The strategy [`GpuSplitter::plan`] uses.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// The cache policy for uploaded tables.
    pub fn cache_policy(&self) -> CachePolicy {
        self.policy
    }

    /// Plans `split` of an `element_type` tensor for this device, each
    /// output into a destination region of its own, with the splitter's
    /// strategy.
    ///
    /// # Errors
    ///
    /// The errors of [`SplitPlan::new`].
    pub fn plan(&self, split: &ResolvedSplit, element_type: ElementType) -> Result<SplitPlan> {
        let options = PlanOptions::default().strategy(self.strategy);
        SplitPlan::new(split, element_type, &self.limits, &options)
    }

    /// Plans `split` with every output in one arena buffer
    /// ([`Outputs::Arena`]), with the splitter's strategy.
    ///
    /// # Errors
    ///
    /// The errors of [`SplitPlan::new`].
    pub fn plan_arena(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
    ) -> Result<SplitPlan> {
        let options = PlanOptions::default()
            .strategy(self.strategy)
            .outputs(Outputs::Arena);
        SplitPlan::new(split, element_type, &self.limits, &options)
    }

    /// Plans with explicit options and limits at most the device's (for
    /// instance tiny windows, to exercise multi-pass plans on small tensors,
    /// or WebGPU's default limits, to plan what every adapter runs).
    ///
    /// # Errors
    ///
    /// [`Error::PlanMismatch`] when `limits` does not fit within the device's,
    /// and the errors of [`SplitPlan::new`].
    pub fn plan_with(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        options: &PlanOptions,
    ) -> Result<SplitPlan> {
        if !limits.fits_within(&self.limits) {
            return Err(Error::PlanMismatch {
                detail: format!("{limits:?} exceeds the device's {:?}", self.limits),
            });
        }
        SplitPlan::new(split, element_type, limits, options)
    }

    /// Drops every cached parameter table.
    pub fn clear_cache(&self) {
        self.lock_tables().clear();
    }

    /// Bytes of parameter tables the cache holds (the splitter's own
    /// buffers; no caller buffer is ever held).
    pub fn cached_table_bytes(&self) -> u64 {
        self.lock_tables().bytes()
    }

    pub(super) fn lock_tables(&self) -> std::sync::MutexGuard<'_, TableCache> {
        // A panic while holding the lock leaves the cache consistent (every
        // change is one call), so a poisoned lock is still usable.
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the split into `encoder`, each output straight into its
    /// region of `outputs` (one per output, in order; an empty output's
    /// region is ignored and may be empty). Records
    /// [`SplitPlan::copy_count`] copy commands and, in one compute pass,
    /// [`SplitPlan::dispatch_count`] dispatches; submits nothing. Nothing
    /// outside the regions is written.
    ///
    /// # Errors
    ///
    /// Caught before wgpu sees them: [`Error::PlanMismatch`] (an arena plan,
    /// or a plan for other limits), [`Error::RegionCount`],
    /// [`Error::MissingUsage`] (the plan's [`SplitPlan::input_usages`] and
    /// [`SplitPlan::output_usages`]), [`Error::MisalignedOffset`] (offsets
    /// must be multiples of [`SplitPlan::offset_alignment_bytes`]),
    /// [`Error::BufferTooSmall`] (a region below
    /// [`crate::plan::PlannedOutput::region_bytes`]),
    /// [`Error::RegionOutsideBuffer`], [`Error::InputSharesBuffer`],
    /// [`Error::OverlappingRegions`]; [`Error::Gpu`] when wgpu rejects a
    /// buffer (another device, destroyed) while binding it.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        outputs: &[BufferRegion<'_>],
    ) -> Result<()> {
        expect_placement(plan, Outputs::Separate)?;
        self.record(encoder, plan, &input, outputs)
    }

    /// Records an arena plan ([`Outputs::Arena`]): every output into `arena`
    /// at its [`crate::plan::PlannedOutput::arena_offset_bytes`].
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::encode`], with the arena in place of the outputs.
    pub fn encode_arena(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
    ) -> Result<()> {
        expect_placement(plan, Outputs::Arena)?;
        self.record(encoder, plan, &input, &[arena])
    }

    /// Prepares a plan that needs only dispatches for recording inside the
    /// caller's own compute pass ([`PreparedSplit::record`]): pipeline, bind
    /// groups and workgroup counts, checked like [`GpuSplitter::encode`].
    ///
    /// # Errors
    ///
    /// [`Error::CopiesInComputePass`] for a plan with copy commands (plan
    /// with [`Strategy::Gather`]), and the errors of [`GpuSplitter::encode`].
    pub fn prepare(
        &self,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        outputs: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        expect_placement(plan, Outputs::Separate)?;
        self.prepare_checked(plan, &input, outputs)
    }

    /// [`GpuSplitter::prepare`] for an arena plan.
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::prepare`].
    pub fn prepare_arena(
        &self,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
    ) -> Result<PreparedSplit> {
        expect_placement(plan, Outputs::Arena)?;
        self.prepare_checked(plan, &input, &[arena])
    }

    fn prepare_checked(
        &self,
        plan: &SplitPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        if plan.copy_count() > 0 {
            return Err(Error::CopiesInComputePass {
                copies: plan.copy_count(),
            });
        }
        check_encode(&self.limits, plan, input, destinations)?;
        self.probe_buffers(plan, input, destinations)?;
        self.prepare_dispatches(plan, input, destinations)
    }

    /// Checks, then records the copies and the dispatches.
    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<()> {
        check_encode(&self.limits, plan, input, destinations)?;
        self.probe_buffers(plan, input, destinations)?;
        let prepared = self.prepare_dispatches(plan, input, destinations)?;
        for c in plan.copies() {
            let destination = match plan.placement() {
                Outputs::Separate => &destinations[c.output],
                Outputs::Arena => &destinations[0],
            };
            for k in 0..c.count {
                encoder.copy_buffer_to_buffer(
                    input.buffer,
                    input.offset + c.src_offset_bytes + k * c.src_stride_bytes,
                    destination.buffer,
                    destination.offset + c.dst_offset_bytes + k * c.size_bytes,
                    c.size_bytes,
                );
            }
        }
        if prepared.dispatch_count() > 0 {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("wgpu-split"),
                timestamp_writes: None,
            });
            prepared.record(&mut pass);
        }
        Ok(())
    }
}

/// The plan was made for the placement this call records.
fn expect_placement(plan: &SplitPlan, wanted: Outputs) -> Result<()> {
    if plan.placement() == wanted {
        return Ok(());
    }
    Err(Error::PlanMismatch {
        detail: match wanted {
            Outputs::Separate => {
                "an arena plan: record it with encode_arena / prepare_arena".to_string()
            }
            Outputs::Arena => {
                "a plan for separate destinations: record it with encode / prepare".to_string()
            }
        },
    })
}
