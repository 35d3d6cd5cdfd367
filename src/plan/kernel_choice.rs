//! Which kernel moves the gathered outputs, and its dispatches: the kernels
//! that fit the geometry, tried cheapest first by the cost model, each
//! planned into passes until one fits the device.

use super::abi::Kernel;
use super::chunks::{Chunk, chunks};
use super::cost::CostModel;
use super::generated::GeneratedLayout;
use super::geometry::OutputGeometry;
use super::limits::PlanLimits;
use super::passes::{Pass, PassContext, build_passes};
use super::placement::Outputs;
use super::row_block::RowBlock;
use super::row_streams::RowStreams;
use super::strategy::Strategy;
use crate::error::{Error, Result};

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
    pub outputs: Outputs,
}

/// The gather's kernel, passes and tables (no passes when nothing is
/// gathered), and the layout of a generated kernel.
pub(crate) struct Dispatches {
    pub kernel: Kernel,
    pub passes: Vec<Pass>,
    pub table: Vec<u8>,
    pub generated: Option<GeneratedLayout>,
}

/// The dispatches of the cheapest kernel that fits. The funnel, row blocks
/// and row streams move whole outputs, so an output cut into chunks (past
/// the binding limit) takes another kernel; the generated kernels (row
/// blocks, row streams) also need every gathered output in one dispatch.
/// Words fit anything.
pub(crate) fn gather_dispatches(g: &GatherInputs<'_>) -> Result<Dispatches> {
    let limits = g.limits;
    let strategy = g.strategy;
    // A chunk's windows, widened to alignments at both ends, plus the
    // alignment kept free for the caller's offsets, fit one window.
    let room_bits = (limits.window_bytes() - 3 * limits.alignment_bytes()) * 8;
    let model = match strategy {
        Strategy::Auto(model) => model,
        _ => CostModel::default(),
    };
    // The generated kernels move every output in one dispatch of vec4s.
    let generated_fits =
        strategy != Strategy::GatherPerOutput && limits.alignment_bytes().is_multiple_of(16);
    let row_block = RowBlock::new(g.geometry, g.copied, g.outer)
        .filter(|_| generated_fits)
        .map(GeneratedLayout::RowBlock);
    let row_streams = RowStreams::new(g.geometry, g.copied, g.input_bytes)
        .filter(|_| generated_fits)
        .map(GeneratedLayout::RowStreams);
    let eligible = Eligible {
        vec4: vec4_fits(g.geometry, g.copied, g.outer, limits),
        rows: row_block.is_some(),
        streams: row_streams.is_some(),
        funnel: funnel_fits(g.geometry, g.copied, g.input_bytes, limits),
    };
    for kernel in eligible.by_cost(&model) {
        let gathered_chunks: Vec<Chunk> = chunks(g.geometry, room_bits, kernel.unit_bits())
            .into_iter()
            .filter(|c| !g.copied[c.output])
            .collect();
        let whole = gathered_chunks
            .iter()
            .all(|c| c.len_bits() == g.geometry[c.output].total_bits);
        if matches!(kernel, Kernel::Funnel | Kernel::Rows | Kernel::Streams) && !whole {
            continue;
        }
        let generated = match kernel {
            Kernel::Rows => row_block.clone(),
            Kernel::Streams => row_streams.clone(),
            _ => None,
        };
        let generated_invocations = generated.as_ref().map(|l| l.invocations(g.outer));
        let cx = PassContext {
            geometry: g.geometry,
            outputs: g.outputs,
            dst_offsets_bytes: g.dst_offsets_bytes,
            limits,
            kernel,
            per_output: strategy == Strategy::GatherPerOutput,
            generated_invocations,
        };
        let (passes, table) = build_passes(&cx, &gathered_chunks)?;
        let one_grid = generated_invocations.is_none_or(|n| n <= limits.max_invocations());
        if generated.is_some() && (passes.len() != 1 || !one_grid) {
            continue;
        }
        return Ok(Dispatches {
            kernel,
            passes,
            table,
            generated,
        });
    }
    Err(Error::Internal {
        detail: "the word kernel did not plan".to_string(),
    })
}

/// [`Kernel::Vec4`] moves the gathered outputs (copied ones do not
/// constrain it) when 128 bits divide every run, offset and stride, and
/// bindings start on 16 bytes.
fn vec4_fits(
    geometry: &[OutputGeometry],
    copied: &[bool],
    outer: u64,
    limits: &PlanLimits,
) -> bool {
    limits.alignment_bytes().is_multiple_of(16)
        && gathered(geometry, copied).all(|g| g.is_aligned_to(128, outer))
}

/// [`Kernel::Funnel`] moves the gathered outputs when every run is at
/// least 128 bits (a unit crosses one run end at most) and every output and
/// the input are whole vec4s.
fn funnel_fits(
    geometry: &[OutputGeometry],
    copied: &[bool],
    input_bytes: u64,
    limits: &PlanLimits,
) -> bool {
    limits.alignment_bytes().is_multiple_of(16)
        && input_bytes.is_multiple_of(16)
        && gathered(geometry, copied).all(|g| g.run_bits >= 128 && g.total_bits.is_multiple_of(128))
}

/// The non-empty outputs the dispatches move.
fn gathered<'g>(
    geometry: &'g [OutputGeometry],
    copied: &'g [bool],
) -> impl Iterator<Item = &'g OutputGeometry> {
    geometry
        .iter()
        .zip(copied)
        .filter(|(g, c)| !**c && !g.is_empty())
        .map(|(g, _)| g)
}

/// Which kernels can move a plan's gathered outputs.
struct Eligible {
    vec4: bool,
    rows: bool,
    streams: bool,
    funnel: bool,
}

impl Eligible {
    /// The eligible kernels, cheapest first by the cost model's bandwidths
    /// (ties keep the order rows, funnel, streams); words, which moves
    /// anything, always last as the fallback. Vec4, a plain copy of
    /// aligned units, goes first whenever it fits.
    fn by_cost(&self, model: &CostModel) -> Vec<Kernel> {
        let mut kernels: Vec<(Kernel, f64)> = [
            (self.rows, Kernel::Rows, model.gather_rows_bytes_per_second),
            (
                self.funnel,
                Kernel::Funnel,
                model.gather_funnel_bytes_per_second,
            ),
            (
                self.streams,
                Kernel::Streams,
                model.gather_streams_bytes_per_second,
            ),
        ]
        .into_iter()
        .filter(|(fits, _, _)| *fits)
        .map(|(_, k, bandwidth)| (k, bandwidth))
        .filter(|(_, bandwidth)| *bandwidth >= model.gather_bits_bytes_per_second)
        .collect();
        kernels.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut order: Vec<Kernel> = Vec::with_capacity(5);
        if self.vec4 {
            order.push(Kernel::Vec4);
        }
        order.extend(kernels.into_iter().map(|(k, _)| k));
        order.push(Kernel::Words);
        order
    }
}
