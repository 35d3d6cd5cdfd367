//! [`ConcatPlan`]: a concat planned as the split it mirrors, run backwards.
//! The same planner chooses the same runs, copies, kernels and tables; the
//! tensor (the concat's output) is written where the split reads it, and
//! the pieces (its inputs) are read where the split writes them.

use std::ops::Range;

use crate::element::ElementType;
use crate::kernels::shader::ShaderKey;
use crate::kernels::work::Placement;
use crate::kernels::{Form, Kernel};
use crate::plan::binding::regions::PlainRegion;
use crate::plan::binding::requirements::DestinationRequirement;
use crate::plan::binding::usages::{BufferRole, Usages};
use crate::plan::choice::cost::CostModel;
use crate::plan::error::{EncodeError, PlanError};
use crate::plan::geometry::Direction;
use crate::plan::limits::PlanLimits;
use crate::plan::options::PlanOptions;
use crate::plan::recording::Recording;
use crate::plan::split_plan::SplitPlan;
use crate::semantics::ResolvedConcat;

/// A complete GPU plan for one concat: its mirror split
/// ([`ResolvedConcat::mirror`]) planned by the same planner and run
/// backwards. Pure data, like [`SplitPlan`].
///
/// An encode takes one region per concat input, in order (an input that
/// takes no part, or an empty one, is ignored and its region may be
/// empty), or for an arena plan ([`Placement::Arena`]) one region holding
/// every input at [`ConcatPlan::arena_offsets`]; and the output's region.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{ConcatPlan, PlanLimits, PlanOptions};
/// use wgpu_split::{ElementType, OnnxConcat};
///
/// // Three [1, 64, 80, 80] maps into [1, 192, 80, 80] (YOLOv8's C2f).
/// let shapes = [[1, 64, 80, 80]; 3];
/// let concat = OnnxConcat::new(13).axis(1).resolve(&shapes).unwrap();
/// let plan = ConcatPlan::new(&concat, ElementType::Float16, &PlanLimits::WEBGPU_DEFAULT,
///     &PlanOptions::default()).unwrap();
/// let needs = plan.requirements();
/// assert_eq!(needs.output_bytes, 192 * 80 * 80 * 2);
/// assert_eq!(needs.inputs.len(), 3);
/// // Each input is one contiguous range of the output: a runtime that
/// // allocates the inputs there needs no concat at all.
/// assert_eq!(plan.output_views().unwrap()[1], 64 * 6400 * 2..128 * 6400 * 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ConcatPlan {
    /// The mirror split, run as a concat.
    split: SplitPlan,
    /// Per concat input, the mirror output it is (`None`: it takes no
    /// part); the mirror's outputs are the inputs that take part, in order.
    parts: Vec<Option<usize>>,
    input_shapes: Vec<Vec<usize>>,
    output_shape: Vec<usize>,
}

impl ConcatPlan {
    /// Plans `concat` of `element_type` inputs for a device with `limits`.
    /// Every option means what it means for a split: [`Placement::Arena`]
    /// reads every input from one region, at [`ConcatPlan::arena_offsets`].
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`SplitPlan::new`] for the mirror split.
    pub fn new(
        concat: &ResolvedConcat,
        element_type: ElementType,
        limits: &PlanLimits,
        options: &PlanOptions,
    ) -> Result<Self, PlanError> {
        Self::with_model(concat, element_type, limits, options, CostModel::default())
    }

    /// [`ConcatPlan::new`] with `model` ranking the kernels (a splitter
    /// passes its own).
    pub(crate) fn with_model(
        concat: &ResolvedConcat,
        element_type: ElementType,
        limits: &PlanLimits,
        options: &PlanOptions,
        model: CostModel,
    ) -> Result<Self, PlanError> {
        let split = SplitPlan::for_direction(
            concat.mirror(),
            element_type,
            limits,
            options,
            model,
            Direction::Concat,
        )?;
        let parts = concat.mirror_outputs().to_vec();
        // Errors name destination j as the concat input it is.
        let inputs = match options.placement.is_shared() {
            true => Vec::new(),
            false => (0..parts.len()).filter(|&k| parts[k].is_some()).collect(),
        };
        Ok(ConcatPlan {
            split: split.into_concat(inputs),
            parts,
            input_shapes: concat.input_shapes().to_vec(),
            output_shape: concat.output_shape().to_vec(),
        })
    }

    /// The element type planned for.
    pub fn element_type(&self) -> ElementType {
        self.split.element_type()
    }

    /// The inputs' shapes planned for.
    pub fn input_shapes(&self) -> &[Vec<usize>] {
        &self.input_shapes
    }

    /// The output's shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.output_shape
    }

    /// Number of concat inputs (one region each, or one arena).
    pub fn input_count(&self) -> usize {
        self.parts.len()
    }

    /// Where the plan reads its inputs: one region each, or one arena.
    pub fn placement(&self) -> Placement {
        self.split.placement()
    }

    /// The kernel its dispatches run (meaningful when it dispatches).
    pub fn kernel(&self) -> Kernel {
        self.split.kernel()
    }

    /// The form of its kernel the dispatches run (see [`SplitPlan::form`]).
    pub fn form(&self) -> Form {
        self.split.form()
    }

    /// What its dispatches run, by name (see [`SplitPlan::runs`]).
    pub fn runs(&self) -> &'static str {
        self.split.runs()
    }

    analysis_pub! {
        /// The shader modules its dispatches run, in order of first use.
        pub fn shaders(&self) -> Vec<ShaderKey> {
            self.split.shaders()
        }
    }

    /// What the plan needs of the caller's buffers and what an encode of it
    /// records, in one value.
    pub fn requirements(&self) -> ConcatRequirements {
        let split = &self.split;
        let inputs = if self.placement().is_shared() {
            vec![DestinationRequirement {
                role: BufferRole::Arena,
                bytes: split.destination_bytes(0),
                usages: split.destination_usages(0),
            }]
        } else {
            let requirement = |input: usize, part: Option<usize>| DestinationRequirement {
                role: BufferRole::ConcatInput(input),
                bytes: part.map_or(0, |d| split.destination_bytes(d)),
                usages: part.map_or(Usages::NONE, |d| split.destination_usages(d)),
            };
            self.parts
                .iter()
                .enumerate()
                .map(|(input, &part)| requirement(input, part))
                .collect()
        };
        let dispatching = split.dispatch_count() > 0;
        ConcatRequirements {
            output_bytes: split.input_bytes(),
            output_region_bytes: if dispatching {
                split.input_binding_bytes()
            } else {
                split.input_bytes()
            },
            output_usages: split.input_usages(),
            inputs,
            offset_alignment_bytes: split.offset_alignment_bytes(),
            dispatches: split.dispatch_count(),
            copies: split.copy_count(),
            scratch_bytes: split.scratch_bytes(),
        }
    }

    /// True when the concat stages its inputs through the splitter's
    /// scratch arena (as a split does, [`SplitPlan::is_staged`]): the
    /// inputs into the arena, then one pass into the output.
    pub fn is_staged(&self) -> bool {
        self.split.is_staged()
    }

    /// Dispatches an encode records.
    pub fn dispatch_count(&self) -> usize {
        self.split.dispatch_count()
    }

    /// Copy commands an encode records.
    pub fn copy_count(&self) -> u64 {
        self.split.copy_count()
    }

    /// Where each input starts in the arena of an arena plan (0 with
    /// separate regions); `None` for an input that takes no part.
    pub fn arena_offsets(&self) -> Vec<Option<u64>> {
        let outputs = self.split.outputs();
        self.parts
            .iter()
            .map(|part| part.map(|j| outputs[j].arena_offset_bytes))
            .collect()
    }

    /// When every input is one contiguous byte range of the output at a
    /// bindable offset (a concat on axis 0, or of one outer block), those
    /// ranges: a runtime that lets each producer write its input there
    /// needs no concat at all. `None` otherwise; an input that takes no
    /// part has an empty range.
    pub fn output_views(&self) -> Option<Vec<Range<u64>>> {
        let views = self.split.input_views()?;
        Some(
            (0..self.input_count())
                .map(|input| match self.parts[input] {
                    Some(j) => views[j].clone(),
                    None => 0..0,
                })
                .collect(),
        )
    }

    /// The mirror split this plan runs backwards (its outputs are the
    /// inputs that take part, in order): for its cost, layouts and tables.
    pub fn mirror(&self) -> &SplitPlan {
        &self.split
    }

    /// The mirror's destinations from the concat's input regions: one
    /// per input (or the one arena), in the mirror's order.
    ///
    /// # Errors
    ///
    /// [`EncodeError::RegionCount`] when `inputs` is not one region per
    /// input (or the one arena).
    pub(crate) fn destinations<T: Copy>(&self, inputs: &[T]) -> Result<Vec<T>, EncodeError> {
        let shared = self.placement().is_shared();
        let expected = if shared { 1 } else { self.input_count() };
        if inputs.len() != expected {
            return Err(EncodeError::RegionCount {
                expected,
                actual: inputs.len(),
            });
        }
        if shared {
            return Ok(inputs.to_vec());
        }
        Ok(self
            .parts
            .iter()
            .zip(inputs)
            .filter(|(part, _)| part.is_some())
            .map(|(_, &region)| region)
            .collect())
    }

    analysis_pub! {
        /// What an encode of this plan records, as plain data (see
        /// [`SplitPlan::recording`]).
        ///
        /// # Errors
        ///
        /// The [`EncodeError`]s of the regions.
        pub fn recording(&self, inputs: &[PlainRegion], output: &PlainRegion) -> Result<Recording, EncodeError> {
            self.split.recording(output, &self.destinations(inputs)?)
        }
    }
}

/// What a concat plan needs of the caller's buffers and what it records
/// ([`ConcatPlan::requirements`]), known before anything is encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcatRequirements {
    /// Bytes of the packed output.
    pub output_bytes: u64,
    /// Bytes the output's region must hold: the packed output, rounded up
    /// to a word when dispatches write it (the bits past the output in its
    /// last word are written zero).
    pub output_region_bytes: u64,
    /// The usages the output's buffer needs.
    pub output_usages: Usages,
    /// One per concat input (none for one that takes no part or is empty),
    /// or the one arena.
    pub inputs: Vec<DestinationRequirement>,
    /// The multiple every offset (output and inputs) must be.
    pub offset_alignment_bytes: u64,
    /// Dispatches an encode records.
    pub dispatches: usize,
    /// Copy commands an encode records.
    pub copies: u64,
    /// Bytes of scratch the splitter provides for a staged concat
    /// ([`ConcatPlan::is_staged`]); 0 for any other.
    pub scratch_bytes: u64,
}
