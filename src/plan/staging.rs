//! Staging through the splitter's scratch arena: a plan of two plans.
//!
//! With separate destinations a dispatch binds at most
//! [`PlanLimits::destinations_per_dispatch`] of them, so many outputs take
//! several dispatches, and where the outputs are narrow pieces of every row
//! (columns, rotary sections) each of those dispatches loads every row
//! again: 31 one-element columns under WebGPU's limits read the input five
//! times. A staged plan runs instead
//!
//! 1. **stage**: the split into a scratch arena the splitter owns, one
//!    binding for every output (the arena placement), so the input is read
//!    once, by whichever kernel moves it best (row blocks for narrow rows);
//! 2. **unstage**: each output's contiguous range of the arena into its
//!    destination: a copy command where the range is whole words (and the
//!    model prices the copy lower), else a table-driven kernel whose
//!    dispatches read disjoint ranges of the arena.
//!
//! A concat runs the two plans backwards: its pieces into the arena, then
//! one pass from the arena into the tensor (where pieces narrower than a
//! word would have several dispatches each assemble every tensor word).
//!
//! Twice the ideal traffic, all of it coalesced, against k times the input's
//! loads. The planner weighs the two by the traffic of every pass (the
//! bytes it loads, not only those it writes) under the cost model
//! ([`SplitPlan::staged_if_cheaper`]), and plans for the caller's compute pass stage through
//! dispatches only.
//!
//! A staged plan announces the scratch's bytes
//! ([`crate::plan::Requirements::scratch_bytes`]); its own passes, table
//! and copies are empty, and everything it records is its two plans'.

use crate::kernels::Form;
use crate::kernels::lanes::LaneOrder;
use crate::kernels::work::{Direction, OutputGeometry, Placement};
use crate::plan::binding::regions::PlainRegion;
use crate::plan::binding::usages::Usages;
use crate::plan::choice::cost::CostModel;
use crate::plan::choice::strategy::Strategy;
use crate::plan::error::PlanError;
use crate::plan::geometry::outputs::plan_outputs;
use crate::plan::limits::PlanLimits;
use crate::plan::options::PlanOptions;
use crate::plan::split_plan::{PlanParts, SplitPlan, Staging};
use crate::semantics::ResolvedSplit;

/// A split into separate destinations whose gathered outputs are more than
/// one dispatch binds, none of them copied, planned by the model (or
/// `forced`, whatever kernel was asked), whose passes load the input more
/// than once in all (unless `forced`): staging saves only re-reads.
fn qualifies(plan: &SplitPlan, options: &PlanOptions, forced: bool) -> bool {
    let gathered = (0..plan.outputs().len())
        .filter(|&i| plan.is_gathered(i))
        .count();
    let rereads = || CostModel::loaded_bytes(plan) as f64 > 1.25 * plan.input_bytes() as f64;
    !plan.placement().is_shared()
        && plan.copies().is_empty()
        && options.strategy != Some(Strategy::GatherPerOutput)
        && gathered > plan.limits().slots_per_pass(Placement::Separate)
        && (forced || options.kernel.is_none() && options.form.is_none() && rereads())
}

/// The staged form of `plan`: the split into an arena, then the arena into
/// the destinations.
fn staged(
    plan: &SplitPlan,
    parts: &PlanParts,
    split: &ResolvedSplit,
    limits: &PlanLimits,
    options: &PlanOptions,
    model: CostModel,
) -> Result<SplitPlan, PlanError> {
    let (arena_outputs, arena_bytes) =
        plan_outputs(split, &parts.geometry, Placement::Arena, limits)?;
    let stage_parts = PlanParts {
        outputs: arena_outputs,
        arena_bytes,
        ..parts.clone()
    };
    let stage_options = PlanOptions {
        strategy: Some(Strategy::Gather),
        placement: Placement::Arena,
        staging: Some(false),
        ..*options
    };
    let direction = plan.direction();
    let stage = SplitPlan::assemble(&stage_parts, limits, &stage_options, model, direction)?;
    // Output i is one run of the arena: its bytes from its arena offset.
    let geometry = parts
        .geometry
        .iter()
        .zip(&stage_parts.outputs)
        .map(|(g, o)| OutputGeometry {
            run_bits: g.total_bits,
            offset_bits: o.arena_offset_bytes * 8,
            block_bits: arena_bytes * 8,
            total_bits: g.total_bits,
        })
        .collect();
    let unstage_parts = PlanParts {
        input_bytes: arena_bytes,
        outer: 1,
        geometry,
        outputs: plan.outputs().to_vec(),
        arena_bytes: 0,
        ..parts.clone()
    };
    let unstage_options = PlanOptions {
        strategy: Some(match options.strategy {
            Some(Strategy::Gather) => Strategy::Gather,
            Some(Strategy::Auto(m)) => Strategy::Auto(m),
            _ => Strategy::Auto(model),
        }),
        placement: Placement::Separate,
        kernel: None,
        // Table-driven for a split; a concat of sub-word pieces into the
        // scratch takes the concat-words kernel's layouts.
        form: (direction == Direction::Split).then_some(Form::Table),
        compute_pass: options.compute_pass,
        staging: Some(false),
    };
    let unstage = SplitPlan::assemble(&unstage_parts, limits, &unstage_options, model, direction)?;
    Ok(plan.clone().into_staged(Staging { stage, unstage }))
}

impl SplitPlan {
    /// The last step of planning, on the plan assembled from `parts`:
    /// this plan, or where it qualifies (separate destinations that take several
    /// dispatches because of their count, no output copied; a split, or a
    /// concat's mirror) and the options or the model prefer it, the same plan
    /// staged.
    ///
    /// # Errors
    ///
    /// With [`PlanOptions::staging`] `Some(true)`, the errors of planning the
    /// two plans (an arena past `max_buffer_size`); otherwise none beyond
    /// this plan's own.
    pub(super) fn staged_if_cheaper(
        self,
        parts: &PlanParts,
        split: &ResolvedSplit,
        limits: &PlanLimits,
        options: &PlanOptions,
        model: CostModel,
    ) -> Result<SplitPlan, PlanError> {
        let forced = options.staging;
        let model = match options.strategy {
            Some(Strategy::Auto(m)) => m,
            _ => model,
        };
        // A software adapter's lanes walk long stretches through the host's
        // caches, where rows loaded again cost little and a second pass costs
        // a whole one: on lavapipe, f16 [262144, 31] into 31 columns under
        // WebGPU's limits took 21 ms re-read by five dispatches, 70 ms staged
        // through words and copies, 250 ms through row blocks. Only GPUs
        // (striped lanes) stage unless asked.
        let software = model.lanes == LaneOrder::Blocked;
        if forced == Some(false)
            || forced.is_none() && software
            || !qualifies(&self, options, forced == Some(true))
        {
            return Ok(self);
        }
        let staged = match staged(&self, parts, split, limits, options, model) {
            Ok(staged) => staged,
            Err(e) if forced == Some(true) => return Err(e),
            Err(_) => return Ok(self),
        };
        let keep =
            forced == Some(true) || model.traffic_seconds(&staged) < model.traffic_seconds(&self);
        Ok(if keep { staged } else { self })
    }

    /// The region an encode binds the scratch arena as: buffer number
    /// `buffer` (one the caller's regions do not use), of the plan's scratch
    /// bytes, with every usage the two plans need.
    pub(crate) fn scratch_region(&self, buffer: usize) -> PlainRegion {
        PlainRegion {
            buffer,
            buffer_size: self.scratch_bytes().max(4),
            usages: Usages {
                storage: true,
                copy_src: true,
                copy_dst: true,
            },
            offset: 0,
            size: self.scratch_bytes(),
        }
    }

    /// True when the plan stages its outputs through the splitter's scratch
    /// arena ([`SplitPlan::scratch_bytes`]): one pass into the arena, then
    /// the arena into the destinations. The planner stages where separate
    /// destinations take several dispatches that would each load the
    /// input's rows again ([`PlanOptions::staging`] forces either way).
    pub fn is_staged(&self) -> bool {
        self.staging.is_some()
    }

    /// Bytes of scratch the splitter provides for a staged plan (0 for any
    /// other): an arena holding every gathered output.
    pub fn scratch_bytes(&self) -> u64 {
        self.staging.as_ref().map_or(0, |s| s.stage.arena_bytes())
    }

    analysis_pub! {
        /// A staged plan's two plans: the split into the scratch arena, then
        /// the scratch (a one-row tensor of [`SplitPlan::scratch_bytes`]) into
        /// the destinations. `None` for a plan that is not staged.
        pub fn staged_plans(&self) -> Option<(&SplitPlan, &SplitPlan)> {
            self.staging.as_ref().map(|s| (&s.stage, &s.unstage))
        }
    }
}
