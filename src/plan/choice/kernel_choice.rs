//! Which kernel moves the gathered outputs, and its dispatches: the kernels
//! of the table that fit, tried in the cost model's order, each planned into
//! passes until one fits the device.

use std::ops::Range;

use crate::kernels::{Form, GeneratedLayout, Kernel, LayoutOf};
use crate::plan::choice::KernelWork;
use crate::plan::choice::cost::CostModel;
use crate::plan::error::PlanError;
use crate::plan::geometry::Direction;
use crate::plan::geometry::chunks::{Chunk, chunks};
use crate::plan::geometry::{align_down, align_up};
use crate::plan::passes::pass_table::build_passes;
use crate::plan::passes::{Pass, PassContext};

/// The gather's kernel, passes and tables (no passes when nothing is
/// gathered); a generated kernel's passes carry their layouts.
pub(crate) struct Dispatches {
    pub kernel: Kernel,
    pub passes: Vec<Pass>,
    pub table: Vec<u8>,
}

/// Most distinct modules one plan compiles when its outputs take several
/// dispatches of a generated kernel (one module per group layout). Each is
/// a pipeline compile (about 48 ms on lavapipe, `docs/DEVICE.md`) and a
/// place in the splitter's pipeline cache; past it the table-driven kernel,
/// one module for every split, moves the outputs.
pub const MAX_GROUP_MODULES: usize = 4;

/// The dispatches of the first kernel, in the cost model's order, that
/// moves the outputs on the device (`forced`: that kernel only, and
/// `form`: that form only), each kernel's per-layout form before its
/// table-driven one: a kernel
/// that moves whole outputs only cannot take an output cut into chunks
/// (past the binding limit), and a generated kernel needs every gathered
/// output in one dispatch, or, with separate destinations past one
/// dispatch's slots, each group of outputs in one dispatch of its own, in
/// at most [`MAX_GROUP_MODULES`] modules. Words move anything.
///
/// # Errors
///
/// [`PlanError::KernelDoesNotFit`] when a forced kernel cannot move the
/// outputs; [`PlanError::PerOutputConcatOfSubWords`] for a concat of
/// sub-word runs asked one dispatch per piece;
/// [`PlanError::ConcatTooLargeForOneWindow`] for another concat no kernel
/// moves; [`PlanError::Internal`] when no kernel planned a split.
pub(crate) fn gather_dispatches(
    g: &KernelWork<'_>,
    model: &CostModel,
    forced: Option<Kernel>,
    form: Option<Form>,
) -> Result<Dispatches, PlanError> {
    let candidates = Kernel::ALL
        .into_iter()
        .filter(|&k| forced.is_none_or(|f| f == k))
        .filter(|k| k.spec().directions.contains(&g.direction));
    for kernel in model.order(candidates) {
        for &f in kernel
            .forms()
            .iter()
            .filter(|&&f| form.is_none_or(|x| x == f))
        {
            if let Some(dispatches) = dispatches_of(g, kernel, f)? {
                return Ok(dispatches);
            }
        }
    }
    match forced {
        Some(kernel) => Err(PlanError::KernelDoesNotFit { kernel }),
        None if g.direction == Direction::Concat && g.per_output => {
            Err(PlanError::PerOutputConcatOfSubWords)
        }
        None if g.direction == Direction::Concat => Err(PlanError::ConcatTooLargeForOneWindow {
            output_bytes: g.input_bytes,
            window_bytes: g.limits.window_bytes(),
        }),
        None => Err(PlanError::Internal {
            detail: format!("no kernel planned the {}", g.direction.name()),
        }),
    }
}

/// `kernel`'s dispatches of the gathered outputs in `form`, `None` where
/// that form cannot move them.
fn dispatches_of(
    g: &KernelWork<'_>,
    kernel: Kernel,
    form: Form,
) -> Result<Option<Dispatches>, PlanError> {
    let moves = kernel.spec().moves;
    match (form, moves.per_layout, moves.table) {
        (Form::Table, _, Some(table)) if (table.fits)(g) => table_driven(g, kernel),
        (Form::PerLayout, Some(layout_of), _) => {
            let one = g.generated_outputs().and_then(|live| layout_of(g, live, 0));
            let planned = match one {
                Some(layout) => one_generated_pass(g, kernel, &layout)?,
                None => None,
            };
            if planned.is_some() {
                return Ok(planned);
            }
            // Past one dispatch: groups of the slots one binds, each its
            // own module; past MAX_GROUP_MODULES of them (or past one
            // module's outputs in an arena), groups whose module reads
            // the outputs' places from the table.
            let slots = g.limits.slots_per_pass(g.placement);
            let fixed = if g.placement.chunks_share_a_slot() {
                None
            } else {
                grouped_passes(g, kernel, layout_of, slots)?
            };
            match (fixed, moves.grouped) {
                (None, Some(grouped)) => {
                    let per_group = if g.placement.chunks_share_a_slot() {
                        grouped.max_outputs
                    } else {
                        slots.min(grouped.max_outputs)
                    };
                    grouped_passes(g, kernel, grouped.layout, per_group)
                }
                (fixed, _) => Ok(fixed),
            }
        }
        _ => Ok(None),
    }
}

/// Room for one chunk in bits: its windows, widened to alignments at both
/// ends, plus the alignment kept free for the caller's offsets, fit one
/// window.
fn room_bits(g: &KernelWork<'_>) -> u64 {
    (g.limits.window_bytes() - 3 * g.limits.alignment_bytes()) * 8
}

/// The chunks of the gathered outputs, cut for `kernel`'s unit, in output
/// order.
fn chunks_of(g: &KernelWork<'_>, kernel: Kernel) -> Vec<Chunk> {
    chunks(g.geometry, room_bits(g), kernel.unit_bits())
        .into_iter()
        .filter(|c| !g.copied[c.output])
        .collect()
}

/// A table-driven kernel's passes, as many as the windows and slots need
/// (`None` when it moves whole outputs only and an output was cut).
fn table_driven(g: &KernelWork<'_>, kernel: Kernel) -> Result<Option<Dispatches>, PlanError> {
    let chunks = chunks_of(g, kernel);
    let whole_only = kernel.spec().moves.table.is_some_and(|t| t.whole_outputs);
    if whole_only && !whole_outputs(g, &chunks) {
        return Ok(None);
    }
    let cx = PassContext::new(g, kernel, None, None);
    let (passes, table) = build_passes(&cx, &chunks)?;
    Ok(Some(Dispatches {
        kernel,
        passes,
        table,
    }))
}

/// True when no output was cut into chunks.
fn whole_outputs(g: &KernelWork<'_>, chunks: &[Chunk]) -> bool {
    chunks
        .iter()
        .all(|c| c.len_bits() == g.geometry[c.output].total_bits)
}

/// A generated kernel's one pass over every gathered output, binding the
/// whole input; `None` when they need more than one pass or grid.
fn one_generated_pass(
    g: &KernelWork<'_>,
    kernel: Kernel,
    layout: &GeneratedLayout,
) -> Result<Option<Dispatches>, PlanError> {
    let chunks = chunks_of(g, kernel);
    let Some(pass) = generated_pass(g, kernel, layout, 0..g.input_bytes, &chunks)? else {
        return Ok(None);
    };
    Ok(Some(Dispatches {
        kernel,
        table: pass.1,
        passes: vec![pass.0],
    }))
}

/// The one pass of `layout` over `chunks`, its input window `window`
/// (bytes: from 0 or a group's first run to the input's end, or to where
/// the group's runs end), and its table; `None` when the chunks need more
/// than one pass or grid, or the window does not fit one binding.
fn generated_pass(
    g: &KernelWork<'_>,
    kernel: Kernel,
    layout: &GeneratedLayout,
    window: Range<u64>,
    chunks: &[Chunk],
) -> Result<Option<(Pass, Vec<u8>)>, PlanError> {
    let whole = whole_outputs(g, chunks);
    let window_bits = (window.end - window.start) * 8;
    let input_fits = window_bits <= room_bits(g);
    let invocations = layout.invocations_over(g.outer, window_bits);
    let one_grid = invocations <= g.limits.max_invocations();
    if !whole || !input_fits || !one_grid {
        return Ok(None);
    }
    let cx = PassContext::new(g, kernel, Some(layout), Some(window));
    let (mut passes, table) = build_passes(&cx, chunks)?;
    if passes.len() != 1 {
        return Ok(None);
    }
    let mut pass = passes.remove(0);
    if u64::from(pass.invocations) != invocations {
        return Err(PlanError::Internal {
            detail: format!(
                "a {kernel} layout of {invocations} invocations has a pass of {}",
                pass.invocations
            ),
        });
    }
    pass.layout = Some(layout.clone());
    Ok(Some((pass, table)))
}

/// A generated kernel's passes over groups of the gathered outputs,
/// `per_group` each, each with its layout (`group_layout`) and an input
/// window from its first run (aligned down) to the input's end, so that
/// groups of equal shape share one module; `None` when the outputs make
/// one group, a group does not fit or the groups need more than
/// [`MAX_GROUP_MODULES`] modules.
fn grouped_passes(
    g: &KernelWork<'_>,
    kernel: Kernel,
    group_layout: LayoutOf,
    per_group: usize,
) -> Result<Option<Dispatches>, PlanError> {
    let live = g.output_indices();
    if live.len() <= per_group {
        return Ok(None);
    }
    let all = chunks_of(g, kernel);
    let mut passes = Vec::new();
    let mut table = Vec::new();
    let mut modules: Vec<GeneratedLayout> = Vec::new();
    for members in live.chunks(per_group) {
        let first_bit = members
            .iter()
            .map(|&i| g.geometry[i].offset_bits)
            .min()
            .unwrap_or(0);
        // From the group's first run, aligned down; a kernel that reads
        // whole rows from the input's start (row blocks) binds from 0.
        let starts = [align_down(first_bit / 8, g.limits.alignment_bytes()), 0];
        let Some((window_start, layout)) = starts.into_iter().find_map(|start| {
            let live = g.group_outputs(members)?;
            Some((start, group_layout(g, live, start * 8)?))
        }) else {
            return Ok(None);
        };
        if !modules.contains(&layout) {
            modules.push(layout.clone());
            if modules.len() > MAX_GROUP_MODULES {
                return Ok(None);
            }
        }
        // Chunks are in output order: the group's are one slice.
        let (first, last) = (members[0], members[members.len() - 1]);
        let from = all.partition_point(|c| c.output < first);
        let to = all.partition_point(|c| c.output <= last);
        // A layout whose lanes cover the window ends it where the group's
        // runs end: a group's dispatch launches lanes over its own span
        // (all of a concat's along axis 0), not the rest of the tensor.
        let window_end = if layout.lanes_cover_window() {
            runs_end(g, members)
        } else {
            g.input_bytes
        };
        let window = window_start..window_end;
        let Some((mut pass, pass_table)) =
            generated_pass(g, kernel, &layout, window, &all[from..to])?
        else {
            return Ok(None);
        };
        let start = align_up(table.len() as u64, g.limits.table_alignment_bytes());
        table.resize(start as usize, 0);
        table.extend_from_slice(&pass_table);
        pass.table_bytes = start + pass.table_bytes.start..start + pass.table_bytes.end;
        passes.push(pass);
    }
    // Groups write disjoint outputs, so their order is free: the passes of
    // one module run back to back, one pipeline switch per module.
    passes.sort_by_key(|p| modules.iter().position(|m| p.layout.as_ref() == Some(m)));
    Ok(Some(Dispatches {
        kernel,
        passes,
        table,
    }))
}

/// Where the runs of `members` end in the input's last row, in bytes
/// (rounded up; at most the input's end).
fn runs_end(g: &KernelWork<'_>, members: &[usize]) -> u64 {
    let last_row = g.outer.saturating_sub(1);
    members
        .iter()
        .map(|&i| {
            let o = &g.geometry[i];
            last_row * o.block_bits + o.offset_bits + o.run_bits
        })
        .max()
        .unwrap_or(0)
        .div_ceil(8)
        .min(g.input_bytes)
}
