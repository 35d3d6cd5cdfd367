//! Which kernel moves the gathered outputs, and its dispatches: the kernels
//! of the table that fit, tried in the cost model's order, each planned into
//! passes until one fits the device.

use super::chunks::{Chunk, chunks};
use super::cost::CostModel;
use super::error::PlanError;
use super::geometry::OutputGeometry;
use super::kernels::{Fit, Gathered, GeneratedLayout, Kernel};
use super::limits::PlanLimits;
use super::passes::{Pass, PassContext, build_passes};
use super::placement::Placement;
use super::strategy::Strategy;

/// What the gather is planned from.
pub(crate) struct GatherInputs<'a> {
    pub geometry: &'a [OutputGeometry],
    /// Per output: moved by copy commands instead.
    pub copied: &'a [bool],
    pub outer: u64,
    pub input_bytes: u64,
    /// Where each output starts in its destination, in bytes.
    pub dst_offsets_bytes: &'a [u64],
    pub limits: &'a PlanLimits,
    pub strategy: Strategy,
    pub placement: Placement,
    /// The one kernel to plan with, if the caller forces one.
    pub kernel: Option<Kernel>,
}

/// The gather's kernel, passes and tables (no passes when nothing is
/// gathered), and the layout of a generated kernel.
pub(crate) struct Dispatches {
    pub kernel: Kernel,
    pub passes: Vec<Pass>,
    pub table: Vec<u8>,
    pub layout: Option<GeneratedLayout>,
}

/// The dispatches of the first kernel, in the cost model's order, that fits
/// the outputs and the device: a kernel that moves whole outputs only
/// cannot take an output cut into chunks (past the binding limit), and a
/// generated kernel needs every gathered output in one dispatch. Words fit
/// anything.
///
/// # Errors
///
/// [`PlanError::KernelDoesNotFit`] when a forced kernel cannot move the
/// outputs; [`PlanError::Internal`] when no kernel planned.
pub(crate) fn gather_dispatches(g: &GatherInputs<'_>) -> Result<Dispatches, PlanError> {
    let limits = g.limits;
    // A chunk's windows, widened to alignments at both ends, plus the
    // alignment kept free for the caller's offsets, fit one window.
    let room_bits = (limits.window_bytes() - 3 * limits.alignment_bytes()) * 8;
    let model = match g.strategy {
        Strategy::Auto(model) => model,
        _ => CostModel::default(),
    };
    let gathered = Gathered {
        geometry: g.geometry,
        copied: g.copied,
        outer: g.outer,
        input_bytes: g.input_bytes,
        limits,
        per_output: g.strategy == Strategy::GatherPerOutput,
    };
    let fitting: Vec<(Kernel, Fit)> = Kernel::ALL
        .into_iter()
        .filter(|&k| g.kernel.is_none_or(|forced| forced == k))
        .filter_map(|k| (k.spec().fits)(&gathered).map(|fit| (k, fit)))
        .collect();
    for kernel in model.order(fitting.iter().map(|(k, _)| *k)) {
        let spec = kernel.spec();
        let gathered_chunks: Vec<Chunk> = chunks(g.geometry, room_bits, spec.unit_bits)
            .into_iter()
            .filter(|c| !g.copied[c.output])
            .collect();
        let whole = gathered_chunks
            .iter()
            .all(|c| c.len_bits() == g.geometry[c.output].total_bits);
        // Generated kernels bind the whole input, in one window.
        let input_fits = g.input_bytes * 8 <= room_bits;
        if (spec.whole_outputs && !whole) || (spec.generated && !input_fits) {
            continue;
        }
        let layout = fitting.iter().find_map(|(k, fit)| match fit {
            Fit::Generated(layout) if *k == kernel => Some(layout.clone()),
            _ => None,
        });
        let generated_invocations = layout.as_ref().map(|l| l.invocations(g.outer));
        let cx = PassContext {
            geometry: g.geometry,
            placement: g.placement,
            dst_offsets_bytes: g.dst_offsets_bytes,
            limits,
            kernel,
            per_output: gathered.per_output,
            generated_invocations,
            whole_input: spec.generated.then_some(g.input_bytes),
        };
        let (passes, table) = build_passes(&cx, &gathered_chunks)?;
        let one_grid = generated_invocations.is_none_or(|n| n <= limits.max_invocations());
        if spec.generated && (passes.len() != 1 || !one_grid) {
            continue;
        }
        return Ok(Dispatches {
            kernel,
            passes,
            table,
            layout,
        });
    }
    match g.kernel {
        Some(kernel) => Err(PlanError::KernelDoesNotFit { kernel }),
        None => Err(PlanError::Internal {
            detail: "the word kernel did not plan".to_string(),
        }),
    }
}
