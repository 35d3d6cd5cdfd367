//! [`SplitPlan`]: everything the GPU path records for one split, derived
//! from a resolved split, an element type, device limits and a strategy by
//! a pipeline of plain functions: geometry -> output layout -> copies ->
//! kernel -> chunks -> passes and tables.

use std::ops::Range;

use crate::element::ElementType;
use crate::kernels::shader::ShaderKey;
use crate::kernels::table::fingerprint;
use crate::kernels::work::Placement;
use crate::kernels::work::Work;
use crate::kernels::{Form, GeneratedLayout, Kernel};
use crate::plan::choice::KernelWork;
use crate::plan::choice::cost::CostModel;
use crate::plan::choice::kernel_choice::{Dispatches, gather_dispatches};
use crate::plan::choice::strategy::{CopyRuns, Strategy, choose_copies, copy_runs};
use crate::plan::error::PlanError;
use crate::plan::geometry::Direction;
use crate::plan::geometry::outputs::views;
use crate::plan::geometry::outputs::{PlannedOutput, plan_outputs};
use crate::plan::geometry::runs::RunLayout;
use crate::plan::geometry::{OutputGeometry, output_geometry};
use crate::plan::limits::PlanLimits;
use crate::plan::options::PlanOptions;
use crate::plan::passes::Pass;
use crate::semantics::ResolvedSplit;

/// The two plans of a staged plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Staging {
    /// The split into the scratch arena (arena placement).
    pub stage: SplitPlan,
    /// The scratch, a one-row tensor, into the destinations: output `i` is
    /// its bytes at stage's `outputs()[i].arena_offset_bytes`.
    pub unstage: SplitPlan,
}

/// A split as geometry, what [`SplitPlan::assemble`] plans from: the
/// input, every output's runs and where each output lands.
#[derive(Debug, Clone)]
pub(crate) struct PlanParts {
    pub element_type: ElementType,
    pub input_shape: Vec<usize>,
    pub input_bytes: u64,
    /// Outer blocks (rows) of the input.
    pub outer: u64,
    pub geometry: Vec<OutputGeometry>,
    pub outputs: Vec<PlannedOutput>,
    pub arena_bytes: u64,
}

/// A complete GPU plan for one split: where every output goes, which
/// outputs are copied, and the dispatches (passes) with their parameter
/// tables. Pure data: no GPU types, testable anywhere.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{Kernel, PlanLimits, PlanOptions, SplitPlan, Strategy};
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[4, 10]).unwrap();
/// let options = PlanOptions::default().strategy(Strategy::Gather);
/// let plan = SplitPlan::new(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
/// // Three destinations fit one dispatch on every WebGPU adapter.
/// assert_eq!(plan.dispatch_count(), 1);
/// // Runs of 4, 4 and 2 floats: two rows make whole vec4s of every output.
/// assert_eq!(plan.kernel(), Kernel::RowBlocks);
/// assert_eq!(plan.outputs()[2].len_bytes, 4 * 2 * 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SplitPlan {
    element_type: ElementType,
    input_shape: Vec<usize>,
    limits: PlanLimits,
    placement: Placement,
    kernel: Kernel,
    input_bytes: u64,
    outputs: Vec<PlannedOutput>,
    /// Per output: moved by the gather (passes) rather than copied.
    gathered: Vec<bool>,
    arena_bytes: u64,
    passes: Vec<Pass>,
    table: Vec<u8>,
    copies: Vec<CopyRuns>,
    /// Byte ranges of the outputs in the input when every output is one
    /// contiguous, bindable range (view mode).
    views: Option<Vec<Range<u64>>>,
    /// The distinct modules of the passes, in the order they first run.
    modules: Vec<ShaderKey>,
    /// Per pass, the index of its module in `modules`.
    pass_module: Vec<usize>,
    fingerprint: u64,
    /// A plan whose gathered outputs pass through the splitter's scratch
    /// arena: its two plans (the plan's own passes and table are then
    /// empty).
    pub(crate) staging: Option<Box<Staging>>,
    /// Which way bits move, and for a concat the concat input each
    /// destination is.
    pub(super) direction: (Direction, Vec<usize>),
}

impl SplitPlan {
    /// Plans `split` of a tensor of `element_type` for a device with
    /// `limits`.
    ///
    /// Planning cost grows with the number of outputs (and, past the binding
    /// limit, with the number of windows), never with the number of elements.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::TooLargeForDevice`]
    /// when the input or the arena exceeds `max_buffer_size`;
    /// [`PlanError::NotCopyable`] for [`Strategy::Copy`] when a run is not
    /// 4-byte aligned; [`PlanError::CopiesInComputePass`] for
    /// [`Strategy::Copy`] in a plan for a compute pass;
    /// [`PlanError::KernelDoesNotFit`] for a forced kernel that cannot move
    /// the outputs.
    pub fn new(
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        options: &PlanOptions,
    ) -> Result<Self, PlanError> {
        Self::with_model(split, element_type, limits, options, CostModel::default())
    }

    /// [`SplitPlan::new`], with `model` ranking the kernels of a strategy
    /// that carries no model of its own ([`Strategy::Gather`],
    /// [`Strategy::GatherPerOutput`], [`Strategy::Copy`]): a splitter
    /// passes its own.
    pub(crate) fn with_model(
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        options: &PlanOptions,
        model: CostModel,
    ) -> Result<Self, PlanError> {
        Self::for_direction(
            split,
            element_type,
            limits,
            options,
            model,
            Direction::Split,
        )
    }

    /// [`SplitPlan::with_model`], moving the bits `direction`'s way: a
    /// concat plans its mirror split and runs it backwards.
    pub(crate) fn for_direction(
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        options: &PlanOptions,
        model: CostModel,
        direction: Direction,
    ) -> Result<Self, PlanError> {
        let element_bits = u64::from(
            element_type
                .bit_width()
                .ok_or(PlanError::NotOnGpu { element_type })?,
        );
        let input_bytes = input_bytes(split, element_bits, limits, direction.tensor())?;
        let layout = RunLayout::new(split);
        let geometry = output_geometry(&layout, element_bits);
        let (outputs, arena_bytes) = plan_outputs(split, &geometry, options.placement, limits)?;
        let parts = PlanParts {
            element_type,
            input_shape: split.input_shape().to_vec(),
            input_bytes,
            outer: layout.outer() as u64,
            geometry,
            outputs,
            arena_bytes,
        };
        let plan = Self::assemble(&parts, limits, options, model, direction)?;
        plan.staged_if_cheaper(&parts, split, limits, options, model)
    }

    /// The plan of `parts` (the split as geometry): copies, kernel,
    /// passes and tables.
    pub(crate) fn assemble(
        parts: &PlanParts,
        limits: &PlanLimits,
        options: &PlanOptions,
        model: CostModel,
        direction: Direction,
    ) -> Result<Self, PlanError> {
        let PlanParts {
            element_type,
            input_bytes,
            outer,
            ref geometry,
            ..
        } = *parts;
        let strategy = options.strategy.unwrap_or_default();
        let outputs = &parts.outputs;
        let dst_offsets: Vec<u64> = outputs.iter().map(|o| o.arena_offset_bytes).collect();
        let model = match strategy {
            Strategy::Auto(model) => model,
            _ => model,
        };
        let (copied, dispatches) =
            copies_and_gather(parts, limits, options, model, direction, &dst_offsets)?;
        let Dispatches {
            kernel,
            passes,
            table,
        } = dispatches;
        let copies = copy_runs(geometry, &copied, &dst_offsets, outer);
        let fingerprint = fingerprint(&table);
        let (modules, pass_module) = crate::plan::passes::modules::pass_modules(
            kernel,
            options.placement,
            model.lanes,
            direction,
            &passes,
        );
        Ok(SplitPlan {
            element_type,
            input_shape: parts.input_shape.clone(),
            limits: *limits,
            placement: options.placement,
            kernel,
            input_bytes,
            views: views(geometry, outputs, outer, limits),
            gathered: geometry
                .iter()
                .zip(&copied)
                .map(|(g, &c)| !g.is_empty() && !c)
                .collect(),
            outputs: outputs.clone(),
            arena_bytes: parts.arena_bytes,
            passes,
            table,
            copies,
            modules,
            pass_module,
            fingerprint,
            staging: None,
            direction: (direction, Vec::new()),
        })
    }

    /// The same plan staged through `staging`'s two plans: its own
    /// passes, table and copies empty, its kernel the stage's.
    pub(crate) fn into_staged(self, staging: Staging) -> Self {
        SplitPlan {
            kernel: staging.stage.kernel(),
            passes: Vec::new(),
            table: Vec::new(),
            copies: Vec::new(),
            modules: Vec::new(),
            pass_module: Vec::new(),
            fingerprint: fingerprint(&[]),
            staging: Some(Box::new(staging)),
            ..self
        }
    }

    /// Which way the plan moves bits (a concat plans its mirror split and
    /// runs it backwards).
    pub(crate) fn direction(&self) -> Direction {
        self.direction.0
    }

    /// The element type planned for.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The input shape planned for.
    pub fn input_shape(&self) -> &[usize] {
        &self.input_shape
    }

    /// The limits planned for.
    pub fn limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// Where the outputs go.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// The kernel of this plan's dispatches.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The form of its kernel the dispatches run: generated per layout, or
    /// driven by the table (a plan without dispatches: the table).
    pub fn form(&self) -> Form {
        if let Some((stage, _)) = self.staged_plans() {
            return stage.form();
        }
        if self.passes.iter().any(|p| p.layout.is_some()) {
            Form::PerLayout
        } else {
            Form::Table
        }
    }

    /// What its dispatches run, by name: the kernel's, or for the
    /// per-layout form of a kernel with two forms the form's (`row_copies`:
    /// the vec4 kernel's, `row_streams`: the funnel's), as reports and
    /// benchmarks name them.
    pub fn runs(&self) -> &'static str {
        self.kernel.form_name(self.form())
    }

    analysis_pub! {
        /// The layouts of the plan's generated modules, distinct, in the order
        /// the dispatches first run them: one for a plan whose outputs all fit
        /// one dispatch, up to [`crate::plan::internals::MAX_GROUP_MODULES`]
        /// when separate destinations take several; none for a table-driven
        /// kernel.
        pub fn generated_layouts(&self) -> Vec<&GeneratedLayout> {
            let mut layouts: Vec<&GeneratedLayout> = Vec::new();
            for layout in self.passes.iter().filter_map(|p| p.layout.as_ref()) {
                if !layouts.contains(&layout) {
                    layouts.push(layout);
                }
            }
            layouts
        }
    }

    analysis_pub! {
        /// The compiled kernel pass `index` runs: its WGSL is
        /// [`ShaderKey::source`].
        ///
        /// # Panics
        ///
        /// When the plan has no pass `index`.
        pub fn pass_shader(&self, index: usize) -> ShaderKey {
            self.modules[self.pass_module[index]].clone()
        }
    }

    /// Destination bindings of pass `index`'s module.
    pub(crate) fn pass_slots(&self, index: usize) -> u32 {
        self.modules[self.pass_module[index]].slots()
    }

    analysis_pub! {
        /// The compiled kernels the dispatches run, distinct, in the order they
        /// first run (none without dispatches; one for a table-driven kernel).
        pub fn shaders(&self) -> Vec<ShaderKey> {
            self.modules.clone()
        }
    }

    /// The plan's distinct modules ([`SplitPlan::shaders`]) and, per pass,
    /// the index of its module there, as planned.
    pub(crate) fn pass_modules(&self) -> (&[ShaderKey], &[usize]) {
        (&self.modules, &self.pass_module)
    }

    /// Packed size of the input in bytes.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    analysis_pub! {
        /// Bytes of the input's buffer the plan may bind from the input's offset
        /// (the input size rounded up to a word). The input region itself need
        /// only hold [`SplitPlan::input_bytes`]; the rest is read, never used.
        pub fn input_binding_bytes(&self) -> u64 {
            self.input_bytes.div_ceil(4) * 4
        }
    }

    /// Every output as planned: shape, length, the bytes its region must
    /// hold and, in arena plans, its offset in the arena.
    pub fn outputs(&self) -> &[PlannedOutput] {
        &self.outputs
    }

    /// Arena size in bytes (a multiple of 4) for an arena plan; 0 for
    /// separate destinations.
    pub fn arena_bytes(&self) -> u64 {
        self.arena_bytes
    }

    analysis_pub! {
        /// The passes, in recording order.
        pub fn passes(&self) -> &[Pass] {
            &self.passes
        }
    }

    /// Number of dispatches an encode records, known before anything is
    /// encoded.
    pub fn dispatch_count(&self) -> usize {
        self.passes.len()
            + self
                .staged_plans()
                .map_or(0, |(s, u)| s.dispatch_count() + u.dispatch_count())
    }

    analysis_pub! {
        /// Destination bindings the shader needs (the most any pass binds; 0
        /// without dispatches).
        pub fn destination_slots(&self) -> u32 {
            if let Some((_, unstage)) = self.staged_plans() {
                return unstage.destination_slots();
            }
            self.passes
                .iter()
                .map(|p| p.dst_windows.len() as u32)
                .max()
                .unwrap_or(0)
        }
    }

    analysis_pub! {
        /// Copy commands, per copied output.
        pub fn copies(&self) -> &[CopyRuns] {
            &self.copies
        }
    }

    /// Number of `copy_buffer_to_buffer` commands an encode records.
    pub fn copy_count(&self) -> u64 {
        self.copies.iter().map(|c| c.count).sum::<u64>()
            + self
                .staged_plans()
                .map_or(0, |(s, u)| s.copy_count() + u.copy_count())
    }

    /// True when output `index` is written by the gather dispatches (false
    /// when it is copied or empty): a runtime that stages outputs decides
    /// per output with it.
    pub fn is_gathered(&self, index: usize) -> bool {
        self.gathered.get(index).copied().unwrap_or(false)
    }

    /// View mode: when every output is one contiguous byte range of the input
    /// starting at a bindable offset (axis-0 splits, SplitToSequence on axis
    /// 0), those ranges (relative to the input's offset), so a runtime can
    /// bind them instead of copying. `None` otherwise.
    ///
    /// A storage binding's size must be a multiple of 4: bind
    /// `range.start..range.end.next_multiple_of(4)`; bytes past `range.end`
    /// belong to the next output.
    pub fn input_views(&self) -> Option<Vec<Range<u64>>> {
        self.views.clone()
    }

    analysis_pub! {
        /// A 64-bit FNV-1a hash of the parameter table, computed once when
        /// planning; the GPU path keys its cache of uploaded tables on it.
        pub fn table_fingerprint(&self) -> u64 {
            self.fingerprint
        }
    }

    analysis_pub! {
        /// The parameter tables of all passes, each at its pass's
        /// `table_bytes` range.
        pub fn table(&self) -> &[u8] {
            &self.table
        }
    }
}

/// The packed input size in bytes.
///
/// # Errors
///
/// [`PlanError::TooLargeForDevice`] when the input, rounded up to a word,
/// does not fit `max_buffer_size`.
fn input_bytes(
    split: &ResolvedSplit,
    element_bits: u64,
    limits: &PlanLimits,
    what: &'static str,
) -> Result<u64, PlanError> {
    let count: u128 = split.input_shape().iter().map(|&d| d as u128).product();
    let bytes = (count * u128::from(element_bits)).div_ceil(8);
    let max = limits.max_buffer_size;
    if bytes.div_ceil(4) * 4 > u128::from(max) {
        return Err(PlanError::TooLargeForDevice { what, bytes, max });
    }
    Ok(bytes as u64)
}

/// Per output, whether copy commands move it: none for a plan recorded in
/// the caller's compute pass (which a copy-only strategy cannot be), else
/// the strategy's choice.
fn copied_outputs(
    options: &PlanOptions,
    strategy: &Strategy,
    geometry: &[OutputGeometry],
    outer: u64,
) -> Result<Vec<bool>, PlanError> {
    match (options.compute_pass, strategy) {
        (true, Strategy::Copy) => Err(PlanError::CopiesInComputePass),
        (true, _) => Ok(vec![false; geometry.len()]),
        (false, _) => choose_copies(strategy, geometry, outer),
    }
}

/// Which outputs copy commands move and the gather's dispatches of the
/// rest: the copies `options` choose, or, where the model chose copies
/// beside a gather no kernel moves (a concat's word-aligned pieces copied,
/// its sub-word pieces left to a kernel that takes the whole layout),
/// every output gathered.
fn copies_and_gather(
    parts: &PlanParts,
    limits: &PlanLimits,
    options: &PlanOptions,
    model: CostModel,
    direction: Direction,
    dst_offsets: &[u64],
) -> Result<(Vec<bool>, Dispatches), PlanError> {
    let strategy = options.strategy.unwrap_or_default();
    let (geometry, outer) = (&parts.geometry, parts.outer);
    let dispatches = |copied: &[bool]| {
        let gather = KernelWork {
            work: Work {
                geometry,
                copied,
                outer,
                input_bytes: parts.input_bytes,
                binding_alignment_bytes: limits.alignment_bytes(),
                placement: options.placement,
                lanes: model.lanes,
                direction,
                per_output: strategy == Strategy::GatherPerOutput,
            },
            dst_offsets_bytes: dst_offsets,
            limits,
        };
        gather_dispatches(&gather, &model, options.kernel, options.form)
    };
    let chosen = copied_outputs(options, &strategy, geometry, outer)?;
    match dispatches(&chosen) {
        Err(_) if matches!(strategy, Strategy::Auto(_)) && chosen.contains(&true) => {
            let none = vec![false; geometry.len()];
            dispatches(&none).map(|d| (none, d))
        }
        planned => planned.map(|d| (chosen, d)),
    }
}
