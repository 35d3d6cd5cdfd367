//! What tests and tools need of the plan's insides: the table ABI, the
//! passes and their bindings, the generated layouts, the shader keys'
//! variants (feature `analysis`). Not part of the supported API: it changes
//! with the kernels.

pub use crate::kernels::permute_records::{
    ConcatRecord, PermuteHeader, PermuteRecord, RECORD_RANK, TileRecord, Words,
};
pub use crate::kernels::permute_tile::{TILE, TileWalk};
pub use crate::kernels::shader::{BindingKind, LayoutEntry, MAX_UNIFORM_ENTRIES};
pub use crate::kernels::table::fingerprint;
pub use crate::kernels::table::{
    FLAG_ALIGNED, FLAG_PAD, FLAG_SKIP, TableEntry, TableHeader, UNITS_PER_INVOCATION,
    WORKGROUP_SIZE,
};
pub use crate::kernels::wgsl::Bindings;
pub use crate::kernels::{
    BitField, COPY_VEC4S, ConcatPiece, ConcatPieces, ConcatStreams, ConcatWords, CopyOutput,
    GeneratedLayout, MAX_COPY_OUTPUTS, MAX_ROW_BLOCK_BITS, MIN_WORKING_PERCENT, RowBlocks,
    RowCopies, RowOutput, RowStreams, STREAM_VEC4S, StreamOutput,
};
pub use crate::kernels::{
    DISCRETE_GPU_BYTES_PER_SECOND, INTEGRATED_GPU_BYTES_PER_SECOND, UNKNOWN_GPU_BYTES_PER_SECOND,
};
pub use crate::plan::binding::regions::PlainRegion;
pub use crate::plan::binding::{BoundDispatch, BoundPlan, SlotBinding};
pub use crate::plan::choice::kernel_choice::MAX_GROUP_MODULES;
pub use crate::plan::passes::{DstWindow, Pass};
pub use crate::plan::recording::{
    RecordedBinding, RecordedBuffer, RecordedCommand, RecordedModule, Recording, SPARE_BUFFER_BYTES,
};

use crate::element::ElementType;
use crate::kernels::{Form, Kernel};
use crate::plan::concat_plan::ConcatPlan;
use crate::plan::error::PlanError;
use crate::plan::geometry::Direction;
use crate::plan::limits::PlanLimits;
use crate::plan::options::PlanOptions;
use crate::plan::split_plan::SplitPlan;
use crate::semantics::{ResolvedConcat, ResolvedSplit};

/// The files of `kernel`'s templates under `shaders/` (one per form).
pub fn template_files(kernel: Kernel) -> Vec<&'static str> {
    kernel.spec().templates.iter().map(|t| t.file()).collect()
}

/// Every kernel in each of its forms, in table order (the forms in the
/// order they are tried): what the suites that force each way of moving
/// bits iterate.
pub fn kernel_forms() -> Vec<(Kernel, Form)> {
    Kernel::ALL
        .into_iter()
        .flat_map(|k| k.forms().iter().map(move |&f| (k, f)))
        .collect()
}

/// The sample splits `kernel`'s spec lists, each with the form it
/// exercises: splits it plans with that form forced, in both placements.
/// Every suite of modules (the naga validation, the Dawn replay, the access
/// trace, the rendered WGSL) iterates them, so every form of every kernel
/// in the table is in every suite.
pub fn samples(kernel: Kernel) -> Vec<(Form, ResolvedSplit, ElementType)> {
    kernel
        .samples()
        .map(|(form, s)| (form, s.resolve(), s.element_type))
        .collect()
}

/// A plan of one of `kernel`'s samples in one of the directions it moves
/// bits: the sample split, or the concat that mirrors it (its mirror
/// split, run backwards).
#[derive(Debug, Clone)]
pub struct SamplePlan {
    /// The sample split (a concat's mirror).
    pub split: ResolvedSplit,
    /// Its element type.
    pub element_type: ElementType,
    /// The kernel's form it was planned with.
    pub form: Form,
    /// True for the concat.
    pub concat: bool,
    /// The plan (a concat's mirror split plan).
    pub plan: SplitPlan,
}

/// Every sample of `kernel` planned with it and the sample's form forced in every direction it
/// moves bits (a concat where the kernel fits it), as `options` say
/// otherwise: the suites of modules take these, so a kernel is in them for
/// splits and concats alike.
///
/// # Errors
///
/// A sample the kernel does not split, or no sample it concatenates:
/// [`PlanError::KernelDoesNotFit`].
pub fn sample_plans(
    kernel: Kernel,
    limits: &PlanLimits,
    options: &PlanOptions,
) -> Result<Vec<SamplePlan>, PlanError> {
    let mut plans = Vec::new();
    for (form, split, element_type) in samples(kernel) {
        let options = options.kernel(kernel).form(form);
        for &direction in kernel.spec().directions {
            let concat = direction == Direction::Concat;
            let plan = if concat {
                let mirror = ResolvedConcat::inverse_of(&split).ok_or(PlanError::Internal {
                    detail: format!("a sample of {kernel} has no concat mirror"),
                })?;
                // A kernel may move fewer concats than splits (the words
                // kernel: whole words only).
                match ConcatPlan::new(&mirror, element_type, limits, &options) {
                    Ok(plan) => plan.mirror().clone(),
                    Err(PlanError::KernelDoesNotFit { .. }) => continue,
                    Err(e) => return Err(e),
                }
            } else {
                // A sample may exercise a path one lane order takes only
                // (row blocks' looped form, striped): each form still needs
                // a plan (below).
                match SplitPlan::new(&split, element_type, limits, &options) {
                    Ok(plan) => plan,
                    Err(PlanError::KernelDoesNotFit { .. }) => continue,
                    Err(e) => return Err(e),
                }
            };
            plans.push(SamplePlan {
                split: split.clone(),
                element_type,
                form,
                concat,
                plan,
            });
        }
    }
    // Every form in some direction (row blocks move concats with striped
    // lanes only: a blocked plan has none).
    for &form in kernel.forms() {
        if !plans.iter().any(|p| p.form == form) {
            return Err(PlanError::KernelDoesNotFit { kernel });
        }
    }
    Ok(plans)
}

/// The tile kernel's walk of each output of `plan` (`None` for outputs the
/// gather moves), whatever the plan's lanes.
pub fn permuted_tile_walks(plan: &crate::plan::PermutedPlan) -> Vec<Option<TileWalk>> {
    plan.outputs().iter().map(|o| o.tile.clone()).collect()
}

/// The tile kernel's walk of each input of `plan` (`None` for inputs the
/// gather moves), whatever the plan's lanes.
pub fn permuted_concat_tile_walks(plan: &crate::plan::PermutedConcatPlan) -> Vec<Option<TileWalk>> {
    plan.pieces().iter().map(|p| p.tile.clone()).collect()
}
