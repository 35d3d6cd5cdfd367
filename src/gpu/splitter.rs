//! [`GpuSplitter`]: plans splits for one device and records them into the
//! caller's command encoder or compute pass.

use super::cache::CachePolicy;
use super::checks::probe_buffers;
use super::dispatch::prepare_dispatches;
use super::moves::{AnyPlan, Move, MovePlan, MoveRef, Placed, Token};
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
    ConcatPlan, CostModel, EncodeError, Kernel, Placement, PlanError, PlanLimits, PlanMismatch,
    PlanOptions, ShaderKey, SplitPlan, Strategy,
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
///
/// # The contract
///
/// Every move (split, concat, permuted split, permuted concat) keeps it
/// alike; a permuted move's regions are its plan's
/// (`output_region_bytes`, `input_bytes`).
///
/// - **Regions.** A destination region must hold `plan.outputs()[i].region_bytes`:
///   the output rounded up to the 4-byte word the split writes last (the bytes
///   past the output are written as zero); an empty output's region is ignored
///   (`BufferRegion::binding()` of an empty region is `None`). Nothing outside
///   the regions is written. Offsets must be multiples of
///   `plan.requirements().offset_alignment_bytes` (4, or 16 for vec4 plans), not of
///   `min_storage_buffer_offset_alignment`: bindings start at the offset aligned
///   down, end with the region, and the kernel reads the difference off the
///   binding's length, so one uploaded table serves a plan at every offset.
///   Destinations may not overlap. Packed closer than that alignment in one
///   buffer they would overlap as bindings, which WebGPU forbids in a
///   dispatch: a table-driven plan then deals its entries into dispatches that
///   do not overlap (100,000 outputs 16 bytes apart: the planned 14,286), a
///   generated kernel's pass into a dispatch per group. The input may share a
///   buffer with destinations that dispatches write, if the input's binding
///   (from its offset aligned down) overlaps none of theirs; copies cannot stay
///   in one buffer (WebGPU and wgpu refuse it).
/// - **Concat.** The output's region must hold
///   `requirements().output_region_bytes`: the packed output, rounded up to
///   the 4-byte word a dispatch writes last (the bytes past the output are
///   written as zero); nothing else is written, and no input. Inputs are read
///   only: they may alias each other and share the output's buffer (bound
///   beside it, never overlapping its region). A concat whose runs are not
///   whole 32-bit words (sub-byte types, odd f16 lengths) is assembled a word
///   at a time in one storage binding of the output (`PlanError::
///   ConcatTooLargeForOneWindow` past it: 128 MiB on WebGPU's defaults), in
///   one dispatch for every piece (`PlanError::PerOutputConcatOfSubWords`
///   for `Strategy::GatherPerOutput`).
/// - **Usages.** `plan.requirements()` says what
///   each buffer needs: storage where a kernel runs, copy source or destination
///   where the plan copies (`wgpu::BufferUsages::from` converts them).
/// - **Dispatches.** `plan.dispatch_count()` and `plan.copy_count()` are known
///   before anything is encoded: what an encode records into regions whose
///   bindings do not overlap; into any regions, `splitter.counts(&plan, input,
///   &outputs)` (or `PreparedSplit::counts`) says it (copies, dispatches,
///   table bytes) before recording. One dispatch binds the input and up to
///   `max_storage_buffers_per_shader_stage - 1` destinations: 3, 8, 1,000 and
///   100,000 outputs take 1, 2, 143 and 14,286 dispatches on WebGPU defaults, 1,
///   1, 33 and 3,226 on lavapipe; a concat of as many inputs the same.
///   SplitToSequence into many outputs is one dispatch in an arena, and on
///   axis 0 `plan.input_views()` gives each output as a range of the input to
///   bind, with no dispatch at all. Tensors larger than one storage binding
///   (128 MiB) are cut into windows, permuted moves too (each output's view
///   cut into sub-views of whole rows, `is_windowed()`). Narrow pieces past one dispatch's
///   destinations (columns) would have each dispatch load every row again: on
///   GPUs the model stages them instead where that costs less (`is_staged()`),
///   one pass into a scratch arena the splitter keeps (`requirements().
///   scratch_bytes`, `CachePolicy::scratch_bytes`), then copies or dispatches out.
/// - **Checked before anything is recorded**, as typed errors that leave your
///   encoder untouched: the plan against the device's limits; region count,
///   sizes, offsets, extents, overlaps and the input's buffer shared where it
///   cannot be (`EncodeError`); a buffer that is mapped, destroyed, invalid or
///   of another device, and a lost device (`DeviceError`). A device destroyed
///   or lost meanwhile, on any thread, is a `DeviceError` too: every wgpu call
///   the splitter makes that reports to the device runs inside error scopes,
///   so nothing reaches your uncaptured-error handler (`tests/device_loss.rs`
///   destroys it at every step of a split and after random delays).
/// - **Compiled kernels.** Table-driven forms (words, vec4, funnel) compile
///   once per placement and destination count; per-layout ones (row copies,
///   row words, row blocks, row streams, concat words) per layout, not per row count (2 ms to build, 37 ms at
///   first execution on lavapipe; past one dispatch's destinations, a module per
///   group shape, at most 4 a plan: `plan.shaders()`).
///   `CachePolicy::generated_pipelines` keeps 32 by default; cycling through more
///   rebuilds one at every encode (1.9 ms instead of 0.02 ms). Raise the bound to
///   your model's layouts and call `splitter.cache().warm_up(&plan)` at load.
/// - **Memory.** After `encode` returns the splitter holds none of your buffers:
///   bind groups are made per encode. It keeps one parameter table per plan
///   (and per plan and packing where packed destinations would alias),
///   within `CachePolicy::table_bytes` (16 MiB of real memory by default,
///   `splitter.cache().usage()`, `.clear()`). A `PreparedSplit` holds its bind
///   groups, and through them your buffers, for as long as you keep it.
///   Resident memory stays flat: 10,000 encodes of distinct shapes, 2,500
///   of each move, grew it 3.1 MiB over the last 6,000 on lavapipe
///   (`tests/memory_every_move.rs`).
/// - **Async.** `RoundTrip::split_async` never blocks. On native backends wgpu
///   delivers callbacks only inside `Device::poll`: poll in your loop or keep a
///   `gpu::Poller` alive.
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

    /// Plans `what` (a [`ResolvedSplit`], a [`crate::ResolvedConcat`], a
    /// [`crate::PermutedSplit`] or a [`crate::PermutedConcat`]) for
    /// `element_type` tensors on this device with the splitter's strategy:
    /// the same as [`GpuSplitter::plan_with`] and default options.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::GpuContext;
    /// use wgpu_split::{ElementType, OnnxConcat, OnnxSplit, PermutedSplit};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let split = OnnxSplit::new(18, 3).axis(-1).num_outputs(3).resolve(&[4, 64, 96])?;
    /// let concat = OnnxConcat::new(13).axis(-1).resolve(&[[8, 64, 64]; 8])?;
    /// // GPT-2's fused QKV into Q, K and V as [B, H, S, D].
    /// let qkv = PermutedSplit::split_heads(&[8, 1024, 2304], &[768; 3], 64)?;
    /// let split_plan = splitter.plan(&split, ElementType::Float16)?;
    /// let concat_plan = splitter.plan(&concat, ElementType::Float16)?;
    /// let heads_plan = splitter.plan(&qkv, ElementType::Float16)?;
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The move's [`PlanError`]s: those of [`SplitPlan::new`],
    /// [`crate::plan::ConcatPlan::new`], [`crate::plan::PermutedPlan::new`]
    /// or [`crate::plan::PermutedConcatPlan::new`].
    pub fn plan<M: Move>(
        &self,
        what: &M,
        element_type: ElementType,
    ) -> std::result::Result<M::Plan, PlanError> {
        self.plan_with(what, element_type, &PlanOptions::default())
    }

    /// Plans `what` with options for this device: recording inside the
    /// caller's compute pass ([`PlanOptions::in_compute_pass`]: dispatches
    /// only, for [`GpuSplitter::prepare`]), another placement (an arena,
    /// [`Placement`]), strategy or kernel. (To plan for other limits, such
    /// as WebGPU's defaults, call the plan's own `new`: a plan records on
    /// any device whose limits allow it.)
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::plan`], and [`PlanError::NotForThisMove`] for an
    /// option the move does not take (a permuted move into an arena, or
    /// with one kernel named).
    pub fn plan_with<M: Move>(
        &self,
        what: &M,
        element_type: ElementType,
        options: &PlanOptions,
    ) -> std::result::Result<M::Plan, PlanError> {
        let plan = match what.as_move(Token(())) {
            MoveRef::Split(split) => {
                AnyPlan::Split(self.plan_split(split, element_type, options)?)
            }
            MoveRef::Concat(concat) => AnyPlan::Concat(ConcatPlan::with_model(
                concat,
                element_type,
                &self.limits,
                &self.options(options),
                self.model(),
            )?),
            MoveRef::PermutedSplit(split) => {
                AnyPlan::PermutedSplit(self.plan_permuted(split, element_type, options)?)
            }
            MoveRef::PermutedConcat(concat) => {
                AnyPlan::PermutedConcat(self.plan_permuted_concat(concat, element_type, options)?)
            }
        };
        M::plan_of(Token(()), plan)
    }

    /// Records `plan` into `encoder`: its copy commands, then its dispatches
    /// in one compute pass of its own ([`GpuSplitter::counts`] says how many
    /// first). A split reads `input` (one region) and writes `output` (one
    /// region per output, in order; or the one arena of an arena plan); a
    /// concat reads `input` (one region per input; they may share bytes)
    /// and writes `output` (one region). An empty piece's region is
    /// ignored and may be empty. Nothing outside the written regions is
    /// written, nothing is submitted. The README's contract holds for every
    /// move alike.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
    /// use wgpu_split::{ElementType, OnnxConcat};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let concat = OnnxConcat::new(13).axis(-1).resolve(&[[8, 64, 64]; 8])?;
    /// let plan = splitter.plan(&concat, ElementType::Float16)?;
    /// # let round_trip = RoundTrip::new(&splitter);
    /// # let inputs: Vec<wgpu::Buffer> = (0..8)
    /// #     .map(|_| round_trip.create_input(&[0; 8 * 64 * 64 * 2]))
    /// #     .collect::<Result<_, _>>()?;
    /// # let output = round_trip.create_input(&[0; 8 * 64 * 512 * 2])?;
    /// let regions: Vec<BufferRegion> = inputs.iter().map(BufferRegion::whole).collect();
    /// let mut encoder = ctx.device.create_command_encoder(&Default::default());
    /// splitter.encode(&mut encoder, &plan, &regions, BufferRegion::whole(&output))?;
    /// ctx.queue.submit([encoder.finish()]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Caught before anything is recorded or wgpu sees them:
    /// [`PlanError::Mismatch`] for a plan made for limits this device does
    /// not allow; every [`EncodeError`] (region count, usages, offsets,
    /// sizes, extents, overlaps, a read region sharing bytes with a written
    /// one); [`crate::error::DeviceError`] for a buffer that is mapped,
    /// destroyed or of another device, and a lost device.
    pub fn encode<'a, P: MovePlan>(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &'a P,
        input: P::Input<'a>,
        output: P::Output<'a>,
    ) -> Result<()> {
        match plan.placed(Token(()), input, output) {
            Placed::Split(plan, input, outputs) => self.encode_split(encoder, plan, input, outputs),
            Placed::Concat(plan, inputs, output) => {
                let pieces = plan.destinations(inputs)?;
                self.encode_split(encoder, plan.mirror(), output, &pieces)
            }
            Placed::PermutedSplit(plan, input, outputs) => {
                self.encode_permuted(encoder, plan, input, outputs)
            }
            Placed::PermutedConcat(plan, inputs, output) => {
                self.encode_permuted_concat(encoder, plan, inputs, output)
            }
        }
    }

    /// Prepares `plan` (planned with [`PlanOptions::in_compute_pass`]) for
    /// recording inside the caller's own compute pass
    /// ([`PreparedSplit::record`], between two of its kernels): pipelines,
    /// parameters and bind groups made, checked as [`GpuSplitter::encode`]
    /// checks. The result is bound to these buffers, not to the tensors in
    /// them: prepare per step where a pool recycles buffers.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
    /// use wgpu_split::plan::PlanOptions;
    /// use wgpu_split::{ElementType, OnnxSplit};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let split = OnnxSplit::new(18, 3).axis(-1).num_outputs(3).resolve(&[4, 64, 96])?;
    /// let in_pass = PlanOptions::default().in_compute_pass();
    /// let plan = splitter.plan_with(&split, ElementType::Float16, &in_pass)?;
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
    /// [`EncodeError::CopiesInComputePass`] for a plan with copy commands,
    /// and the errors of [`GpuSplitter::encode`].
    pub fn prepare<'a, P: MovePlan>(
        &self,
        plan: &'a P,
        input: P::Input<'a>,
        output: P::Output<'a>,
    ) -> Result<PreparedSplit> {
        match plan.placed(Token(()), input, output) {
            Placed::Split(plan, input, outputs) => self.prepare_split(plan, input, outputs),
            Placed::Concat(plan, inputs, output) => {
                self.prepare_split(plan.mirror(), output, &plan.destinations(inputs)?)
            }
            Placed::PermutedSplit(plan, input, outputs) => {
                self.prepare_permuted(plan, input, outputs)
            }
            Placed::PermutedConcat(plan, inputs, output) => {
                self.prepare_permuted_concat(plan, inputs, output)
            }
        }
    }

    /// What [`GpuSplitter::encode`] would record into these regions (copies,
    /// dispatches, parameter bytes), checked as it checks them and known
    /// before anything is recorded or created: the plan's own counts unless
    /// regions packed closer than the binding alignment take another
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
    pub fn counts<'a, P: MovePlan>(
        &self,
        plan: &'a P,
        input: P::Input<'a>,
        output: P::Output<'a>,
    ) -> Result<EncodeCounts> {
        match plan.placed(Token(()), input, output) {
            Placed::Split(plan, input, outputs) => self.counts_split(plan, input, outputs),
            Placed::Concat(plan, inputs, output) => {
                self.counts_split(plan.mirror(), output, &plan.destinations(inputs)?)
            }
            Placed::PermutedSplit(plan, input, outputs) => {
                self.counts_permuted(plan, input, outputs)
            }
            Placed::PermutedConcat(plan, inputs, output) => {
                self.counts_permuted_concat(plan, inputs, output)
            }
        }
    }

    /// [`GpuSplitter::plan_with`] of a resolved split: the splitter's
    /// strategy unless `options` names one, ranked by its model.
    pub(super) fn plan_split(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
        options: &PlanOptions,
    ) -> std::result::Result<SplitPlan, PlanError> {
        SplitPlan::with_model(
            split,
            element_type,
            &self.limits,
            &self.options(options),
            self.model(),
        )
    }

    /// `options` with the splitter's strategy where they name none.
    pub(super) fn options(&self, options: &PlanOptions) -> PlanOptions {
        PlanOptions {
            strategy: Some(options.strategy.unwrap_or(self.strategy)),
            ..*options
        }
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

    /// [`GpuSplitter::encode`] of a split plan.
    pub(super) fn encode_split(
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

    /// [`GpuSplitter::prepare`] of a split plan.
    pub(super) fn prepare_split(
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

    /// [`GpuSplitter::counts`] of a split plan.
    pub(super) fn counts_split(
        &self,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<EncodeCounts> {
        if plan.is_staged() {
            // The scratch is the splitter's: only the caller's regions are
            // checked, and both plans bound to a region of its size.
            self.check_limits(plan.limits())?;
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
        self.check_limits(plan.limits())?;
        let (plain_input, plain_destinations) = plain_regions(input, destinations);
        plan.check_regions(&plain_input, &plain_destinations)?;
        Ok(self.resources.scratch(plan.scratch_bytes())?)
    }

    /// A plan made for `limits` this device does not allow is refused.
    pub(super) fn check_limits(&self, limits: &PlanLimits) -> Result<()> {
        if limits.fits_within(&self.limits) {
            return Ok(());
        }
        Err(PlanError::Mismatch(PlanMismatch::Limits {
            planned: Box::new(*limits),
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
        self.check_limits(plan.limits())?;
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
