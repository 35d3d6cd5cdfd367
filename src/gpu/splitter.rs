//! [`GpuSplitter`]: plans splits for one device and records them into the
//! caller's command encoder or compute pass.

use super::cache::CachePolicy;
use super::checks::probe_buffers;
use super::dispatch::prepare_dispatches;
use super::prepared::{EncodeCounts, PreparedSplit};
use super::region::{BufferRegion, plain_regions};
use super::resources::Resources;
use super::scope::ErrorScope;
use super::splitter_cache::SplitterCache;
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::binding::BoundPlan;
use crate::plan::geometry::Direction;
use crate::plan::{
    CostModel, EncodeError, Kernel, Placement, PlanError, PlanLimits, PlanMismatch, PlanOptions,
    ShaderKey, SplitPlan, Strategy,
};
use crate::semantics::ResolvedSplit;

/// Splits tensors that live in GPU buffers.
///
/// Built once per device from the caller's own device and queue; it
/// compiles the kernels' pipelines on first use and keeps them, and is
/// `Send + Sync`, so one splitter serves every thread.
///
/// # Examples
///
/// ```no_run
/// use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter, RoundTrip};
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let ctx = GpuContext::new_default()?;
/// let splitter = GpuSplitter::new(&ctx.device, &ctx.queue)?;
/// let split = OnnxSplit::new(18, 2).axis(1).num_outputs(2).resolve(&[64, 10])?;
/// let plan = splitter.plan(&split, ElementType::Float16)?;
/// # let input = RoundTrip::new(&splitter).create_input(&[0; 64 * 10 * 2])?;
/// # let outputs = RoundTrip::new(&splitter).create_destinations(&plan)?;
/// let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
/// let mut encoder = ctx.device.create_command_encoder(&Default::default());
/// splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)?;
/// ctx.queue.submit([encoder.finish()]);
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug)]
pub struct GpuSplitter {
    queue: wgpu::Queue,
    limits: PlanLimits,
    strategy: Strategy,
    /// The model of the device: its class's documented one, or on a
    /// software adapter the one measured when the splitter was made.
    class_model: CostModel,
    origin: ModelOrigin,
    resources: Resources,
}

/// Where the cost model a [`GpuSplitter`] plans with came from
/// ([`GpuSplitter::model_origin`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum ModelOrigin {
    /// The documented model of the adapter's class
    /// ([`CostModel::for_class`] of [`DeviceClass::of_adapter`](crate::plan::DeviceClass::of_adapter)): every
    /// GPU adapter.
    Class,
    /// Measured on this adapter by a short calibration when the process
    /// made its first splitter on it, in `seconds`: a software adapter
    /// (lavapipe, llvmpipe, SwiftShader, WARP), whose kernels run on the
    /// host's cores at a speed against its copies that follows the machine.
    MeasuredAtStart {
        /// How long the calibration took.
        seconds: f64,
    },
    /// Given by [`GpuSplitter::with_strategy`].
    Given,
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
    /// A splitter for `device` planning with its adapter's class model
    /// (what [`GpuSplitter::new`] starts from). The table-driven kernels
    /// are compiled now for one destination.
    pub(super) fn with_class_model(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let model =
            CostModel::for_class(crate::plan::DeviceClass::of_adapter(&device.adapter_info()));
        let keys: Vec<ShaderKey> = Kernel::ALL
            .into_iter()
            .filter_map(|k| ShaderKey::table_driven(k, Placement::default(), 1, model.lanes))
            .collect();
        Ok(GpuSplitter {
            queue: queue.clone(),
            limits: plan_limits(&device.limits()),
            strategy: Strategy::Auto(model),
            class_model: model,
            origin: ModelOrigin::Class,
            resources: Resources::new(device, &keys)?,
        })
    }

    /// The same splitter planning with `model`, measured on its adapter
    /// when it started (in `seconds`).
    pub(super) fn measured_at_start(self, model: CostModel, seconds: f64) -> Self {
        GpuSplitter {
            strategy: Strategy::Auto(model),
            class_model: model,
            origin: ModelOrigin::MeasuredAtStart { seconds },
            ..self
        }
    }

    /// Where the model of [`GpuSplitter::strategy`] came from.
    pub fn model_origin(&self) -> ModelOrigin {
        self.origin
    }

    /// The splitter's own resources (pipelines, tables, spare buffer).
    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.resources.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The device limits plans are made for.
    pub fn limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// The strategy plans use unless their options name one.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// The same splitter with another default [`Strategy`]. The default is
    /// [`Strategy::Auto`] with the documented model of the device's class
    /// ([`CostModel::for_class`] of [`DeviceClass::of_adapter`](crate::plan::DeviceClass::of_adapter)), or on a
    /// software adapter the one measured at its start
    /// ([`GpuSplitter::new`]); pass a model from [`crate::gpu::Calibration::measure`]
    /// to plan with measured figures, or [`Strategy::Gather`] to plan
    /// dispatches only.
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self.origin = ModelOrigin::Given;
        self
    }

    /// What the splitter's cache keeps at most.
    pub fn cache_policy(&self) -> CachePolicy {
        self.resources.policy
    }

    /// The same splitter with another [`CachePolicy`]; what it keeps past
    /// the new bounds is dropped now.
    pub fn with_cache_policy(mut self, policy: CachePolicy) -> Self {
        self.resources.set_policy(policy);
        self
    }

    /// The splitter's cache of uploaded tables and compiled pipelines: its
    /// usage, clearing it, warming plans up ahead of time.
    pub fn cache(&self) -> SplitterCache<'_> {
        SplitterCache {
            resources: &self.resources,
            queue: &self.queue,
        }
    }

    /// Plans `split` of an `element_type` tensor for this device, each
    /// output into a destination region of its own, with the splitter's
    /// strategy.
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`SplitPlan::new`].
    pub fn plan(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
    ) -> std::result::Result<SplitPlan, PlanError> {
        self.plan_with(split, element_type, &PlanOptions::default())
    }

    /// Plans `split` for recording inside the caller's compute pass
    /// ([`GpuSplitter::prepare`]): dispatches only, never a copy command,
    /// the kernel chosen by the splitter's cost model as [`GpuSplitter::plan`]
    /// chooses it. The same as [`GpuSplitter::plan_with`] and
    /// [`PlanOptions::in_compute_pass`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
    /// use wgpu_split::{ElementType, OnnxSplit};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let split = OnnxSplit::new(18, 3).axis(-1).num_outputs(3).resolve(&[4, 64, 96])?;
    /// let plan = splitter.plan_for_pass(&split, ElementType::Float16)?;
    /// assert_eq!(plan.copy_count(), 0);
    /// # let input = RoundTrip::new(&splitter).create_input(&[0; 4 * 64 * 96 * 2])?;
    /// # let outputs = RoundTrip::new(&splitter).create_destinations(&plan)?;
    /// let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    /// // Bind groups and pipeline made (and every check done) before the pass.
    /// let prepared = splitter.prepare(&plan, BufferRegion::whole(&input), &regions)?;
    /// let mut encoder = ctx.device.create_command_encoder(&Default::default());
    /// {
    ///     let mut pass = encoder.begin_compute_pass(&Default::default());
    ///     // ... the runtime's own dispatches ...
    ///     prepared.record(&mut pass);
    ///     // ... more of them ...
    /// }
    /// ctx.queue.submit([encoder.finish()]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`SplitPlan::new`].
    pub fn plan_for_pass(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
    ) -> std::result::Result<SplitPlan, PlanError> {
        self.plan_with(
            split,
            element_type,
            &PlanOptions::default().in_compute_pass(),
        )
    }

    /// Plans with options for this device: another placement
    /// (an arena, [`Placement`]), strategy or kernel. (To plan for other
    /// limits, such as WebGPU's defaults, call [`SplitPlan::new`]: a plan
    /// records on any device whose limits allow it.)
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`SplitPlan::new`].
    pub fn plan_with(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
        options: &PlanOptions,
    ) -> std::result::Result<SplitPlan, PlanError> {
        let options = PlanOptions {
            strategy: Some(options.strategy.unwrap_or(self.strategy)),
            ..*options
        };
        SplitPlan::with_model(split, element_type, &self.limits, &options, self.model())
    }

    /// The cost model of the splitter's strategy, or the one of its
    /// device's class for a strategy that carries none: it ranks the
    /// kernels of every plan the splitter makes.
    pub(super) fn model(&self) -> CostModel {
        match self.strategy {
            Strategy::Auto(model) => model,
            _ => self.class_model,
        }
    }

    /// Records the split into `encoder`: [`SplitPlan::copy_count`] copy
    /// commands, then [`SplitPlan::dispatch_count`] dispatches in one compute
    /// pass (another count where packed destinations would alias:
    /// [`GpuSplitter::counts`] says it first). `destinations` holds one region per output, in order (an empty
    /// output's region is ignored and may be empty), or for an arena plan
    /// the one arena region. Nothing outside the regions is written; nothing
    /// is submitted.
    ///
    /// # Errors
    ///
    /// Caught before wgpu sees them: [`PlanError::Mismatch`] for a plan made
    /// for limits this device does not allow; every [`EncodeError`] (region
    /// count, usages, offsets, sizes, extents, overlaps, the input's buffer
    /// shared with a destination); [`crate::error::DeviceError`] for a buffer
    /// that is mapped, destroyed or of another device, and a lost device.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<()> {
        if plan.is_staged() {
            let scratch = self.staged_scratch(plan, &input, destinations)?;
            let scratch = BufferRegion::new(&scratch, 0, plan.scratch_bytes());
            let [stage, unstage] = self.staged_parts(plan)?;
            let (bound_stage, first) = self.checked(stage, &input, &[scratch])?;
            let (bound_unstage, second) = self.checked(unstage, &scratch, destinations)?;
            let scope = ErrorScope::open(self.device());
            if plan.direction() == Direction::Split {
                // The input into the scratch, then the scratch out.
                record_copies(encoder, &bound_stage, &input, &[scratch]);
                record_pass(encoder, &first.then(second));
                record_copies(encoder, &bound_unstage, &scratch, destinations);
            } else {
                // A concat: the pieces into the scratch, then the scratch
                // into the tensor.
                record_copies(encoder, &bound_unstage, &scratch, destinations);
                record_copies(encoder, &bound_stage, &input, &[scratch]);
                record_pass(encoder, &second.then(first));
            }
            return Ok(scope.close("recording the split", ())?);
        }
        let (bound, prepared) = self.checked(plan, &input, destinations)?;
        // Recording checks little at once (the rest when the encoder
        // finishes), but what it reports goes to the device: a lost one
        // is a typed error here too.
        let scope = ErrorScope::open(self.device());
        record_copies(encoder, &bound, &input, destinations);
        record_pass(encoder, &prepared);
        Ok(scope.close("recording the split", ())?)
    }

    /// Prepares a plan that needs only dispatches for recording inside the
    /// caller's own compute pass ([`PreparedSplit::record`]): pipeline, bind
    /// groups and workgroup counts, checked like [`GpuSplitter::encode`].
    /// The result is bound to these buffers, not to the tensors in them:
    /// prepare per step where a pool recycles buffers ([`PreparedSplit`]).
    ///
    /// # Errors
    ///
    /// [`EncodeError::CopiesInComputePass`] for a plan with copy commands
    /// (plan with [`GpuSplitter::plan_for_pass`]), and the errors of
    /// [`GpuSplitter::encode`].
    pub fn prepare(
        &self,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        if plan.copy_count() > 0 {
            return Err(EncodeError::CopiesInComputePass {
                copies: plan.copy_count(),
            }
            .into());
        }
        if plan.is_staged() {
            let scratch = self.staged_scratch(plan, &input, destinations)?;
            let scratch = BufferRegion::new(&scratch, 0, plan.scratch_bytes());
            let [stage, unstage] = self.staged_parts(plan)?;
            let first = self.checked(stage, &input, &[scratch])?.1;
            let second = self.checked(unstage, &scratch, destinations)?.1;
            return Ok(match plan.direction() {
                Direction::Split => first.then(second),
                Direction::Concat => second.then(first),
            });
        }
        Ok(self.checked(plan, &input, destinations)?.1)
    }

    /// What [`GpuSplitter::encode`] would record into these regions (copies,
    /// dispatches, table bytes), checked as it checks them and known before
    /// anything is recorded or created: the plan's own counts unless
    /// destinations packed closer than the binding alignment take another
    /// grouping ([`EncodeCounts`]). The buffers' state (mapped, destroyed)
    /// is not probed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
    /// # use wgpu_split::{ElementType, OnnxSplit};
    /// # let ctx = GpuContext::new_default()?;
    /// # let splitter = ctx.splitter()?;
    /// # let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[8, 9])?;
    /// let plan = splitter.plan(&split, ElementType::Float)?;
    /// # let input = RoundTrip::new(&splitter).create_input(&[0; 8 * 9 * 4])?;
    /// # let outputs = RoundTrip::new(&splitter).create_destinations(&plan)?;
    /// let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    /// let counts = splitter.counts(&plan, BufferRegion::whole(&input), &regions)?;
    /// // Each output in a buffer of its own: the plan's counts.
    /// assert_eq!(counts.dispatches, plan.dispatch_count());
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The errors of [`GpuSplitter::encode`] but those of the buffers'
    /// state.
    pub fn counts(
        &self,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<EncodeCounts> {
        if plan.is_staged() {
            // The scratch is the splitter's: only the caller's regions are
            // checked, and both plans bound to a region of its size.
            self.check_limits(plan)?;
            let (plain_input, plain_destinations) = plain_regions(&input, destinations);
            plan.check_regions(&plain_input, &plain_destinations)?;
            let scratch = plan.scratch_region(plain_destinations.len() + 1);
            let [stage, unstage] = self.staged_parts(plan)?;
            let first = stage.bind(&plain_input, &[scratch])?;
            let second = unstage.bind(&scratch, &plain_destinations)?;
            return Ok(EncodeCounts {
                copies: plan.copy_count(),
                dispatches: first.dispatch_count() + second.dispatch_count(),
                table_bytes: first.table_len() + second.table_len(),
            });
        }
        let bound = self.bound(plan, &input, destinations)?;
        Ok(EncodeCounts {
            copies: plan.copy_count(),
            dispatches: bound.dispatch_count(),
            table_bytes: bound.table_len(),
        })
    }

    /// A staged plan's two plans.
    fn staged_parts<'p>(&self, plan: &'p SplitPlan) -> Result<[&'p SplitPlan; 2]> {
        let (stage, unstage) = plan.staged_plans().ok_or_else(|| PlanError::Internal {
            detail: "a plan that is not staged has no staged parts".to_string(),
        })?;
        Ok([stage, unstage])
    }

    /// A staged plan checked as a whole against the device and the
    /// caller's regions (what they must hold is the plan's, not its parts'),
    /// and the scratch arena it stages through.
    fn staged_scratch(
        &self,
        plan: &SplitPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<std::sync::Arc<wgpu::Buffer>> {
        self.check_limits(plan)?;
        let (plain_input, plain_destinations) = plain_regions(input, destinations);
        plan.check_regions(&plain_input, &plain_destinations)?;
        Ok(self.resources.scratch(plan.scratch_bytes())?)
    }

    /// A plan made for limits this device does not allow is refused.
    fn check_limits(&self, plan: &SplitPlan) -> Result<()> {
        if plan.limits().fits_within(&self.limits) {
            return Ok(());
        }
        Err(PlanError::Mismatch(PlanMismatch::Limits {
            planned: Box::new(*plan.limits()),
            device: Box::new(self.limits),
        })
        .into())
    }

    /// The plan checked against the device and bound to the regions (what
    /// [`GpuSplitter::counts`] and every encode ask of the plan, once).
    fn bound<'p>(
        &self,
        plan: &'p SplitPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<BoundPlan<'p>> {
        self.check_limits(plan)?;
        let (plain_input, plain_destinations) = plain_regions(input, destinations);
        Ok(plan.bind(&plain_input, &plain_destinations)?)
    }

    /// Every check (the plan against the device, the regions, the buffers),
    /// then the dispatches bound to the regions.
    fn checked<'p>(
        &self,
        plan: &'p SplitPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<(BoundPlan<'p>, PreparedSplit)> {
        let bound = self.bound(plan, input, destinations)?;
        probe_buffers(&self.resources, &bound, input, destinations)?;
        let prepared = prepare_dispatches(&self.resources, &bound, input, destinations)?;
        Ok((bound, prepared))
    }
}

/// `bound`'s copy commands between the tensor's region and the pieces'.
fn record_copies(
    encoder: &mut wgpu::CommandEncoder,
    bound: &BoundPlan<'_>,
    tensor: &BufferRegion<'_>,
    pieces: &[BufferRegion<'_>],
) {
    let tensor = (tensor.buffer, tensor.offset);
    let pieces: Vec<_> = pieces.iter().map(|d| (d.buffer, d.offset)).collect();
    for ([(src, src_offset), (dst, dst_offset)], size) in bound.copies(tensor, &pieces) {
        encoder.copy_buffer_to_buffer(src, src_offset, dst, dst_offset, size);
    }
}

/// `prepared`'s dispatches in one compute pass of their own (none without
/// dispatches).
fn record_pass(encoder: &mut wgpu::CommandEncoder, prepared: &PreparedSplit) {
    if prepared.dispatch_count() > 0 {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("wgpu-split"),
            timestamp_writes: None,
        });
        prepared.record(&mut pass);
    }
}
