//! How each output moves: copy commands or the gather dispatch, chosen by a
//! [`Strategy`] and, for [`Strategy::Auto`], a [`CostModel`].

use crate::plan::choice::cost::CostModel;
use crate::plan::error::PlanError;
use crate::plan::geometry::OutputGeometry;

/// How the planner moves each output.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Strategy {
    /// Per output, copy commands or the gather dispatch, whichever the cost
    /// model says is cheaper; outputs that are not 4-byte aligned always
    /// gather. The default of [`crate::gpu::GpuSplitter::plan`].
    Auto(CostModel),
    /// Every output through the kernels, no copy command, the kernel chosen
    /// by the default model: the strategy for buffers without copy usages.
    /// (To record inside a compute pass with the splitter's own model, plan
    /// with [`crate::plan::PlanOptions::in_compute_pass`].) One dispatch per
    /// [`crate::plan::PlanLimits::destinations_per_dispatch`] outputs.
    Gather,
    /// The kernels with one dispatch per output (a naive baseline for
    /// benchmarks).
    GatherPerOutput,
    /// One `copy_buffer_to_buffer` per contiguous run; fails with
    /// [`PlanError::NotCopyable`] when a run is not 4-byte aligned.
    Copy,
}

/// Copy commands for one output: `count` runs of `size_bytes` bytes, run `k`
/// from input byte `src_offset_bytes + k * src_stride_bytes` to destination
/// byte `dst_offset_bytes + k * size_bytes` (both relative to the caller's
/// offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CopyRuns {
    /// The output.
    pub output: usize,
    /// Input byte of the first run.
    pub src_offset_bytes: u64,
    /// Input bytes from one run to the next.
    pub src_stride_bytes: u64,
    /// Destination byte of the first run.
    pub dst_offset_bytes: u64,
    /// Bytes per run (a multiple of 4).
    pub size_bytes: u64,
    /// Number of runs (copy commands).
    pub count: u64,
}

/// Copy commands for an output: `(count, bytes each)`; one command when the
/// runs are back to back in the source.
pub(crate) fn copy_shape(g: &OutputGeometry, outer: u64) -> (u64, u64) {
    let size = g.run_bits / 8;
    if outer <= 1 || g.run_bits == g.block_bits {
        (1, size * outer)
    } else {
        (outer, size)
    }
}

/// Which outputs move with copy commands (`true`) rather than the gather.
///
/// # Errors
///
/// [`PlanError::NotCopyable`] for [`Strategy::Copy`] when an output's runs are
/// not 4-byte aligned.
pub(crate) fn choose_copies(
    strategy: &Strategy,
    geometry: &[OutputGeometry],
    outer: u64,
) -> Result<Vec<bool>, PlanError> {
    let copyable = |g: &OutputGeometry| g.is_aligned_to(32, outer);
    match strategy {
        Strategy::Gather | Strategy::GatherPerOutput => Ok(vec![false; geometry.len()]),
        Strategy::Copy => geometry
            .iter()
            .enumerate()
            .map(|(output, g)| {
                if g.is_empty() || copyable(g) {
                    Ok(!g.is_empty())
                } else {
                    Err(PlanError::NotCopyable {
                        output,
                        run_bits: g.run_bits,
                        offset_bits: g.offset_bits,
                    })
                }
            })
            .collect(),
        Strategy::Auto(model) => Ok(cheapest(model, geometry, outer, copyable)),
    }
}

/// [`Strategy::Auto`]: per output the cheaper of copying and gathering, as
/// [`CostModel::robust_seconds`] weighs them (expected cost, leaning to the
/// option that slows down less when the device is busy); then, when only
/// copyable outputs are left to gather, copying them too also saves the
/// dispatch's fixed cost.
fn cheapest(
    model: &CostModel,
    geometry: &[OutputGeometry],
    outer: u64,
    copyable: impl Fn(&OutputGeometry) -> bool,
) -> Vec<bool> {
    let copy_cost = |g: &OutputGeometry| {
        let (count, size) = copy_shape(g, outer);
        model.copy_robust_seconds(count, size)
    };
    let candidate: Vec<bool> = geometry
        .iter()
        .map(|g| !g.is_empty() && copyable(g))
        .collect();
    // The dispatch that would gather every output: its invocations set the
    // share of the device it fills.
    let invocations = model.invocations_for(geometry.iter().map(|g| g.total_bits).sum());
    let gather_cost = |i: usize| model.gather_robust_seconds(&geometry[i], invocations);
    let mut copied: Vec<bool> = (0..geometry.len())
        .map(|i| candidate[i] && copy_cost(&geometry[i]) < gather_cost(i))
        .collect();
    let gathered: Vec<usize> = (0..geometry.len())
        .filter(|&i| !geometry[i].is_empty() && !copied[i])
        .collect();
    if !gathered.is_empty() && gathered.iter().all(|&i| candidate[i]) {
        let copy: f64 = gathered.iter().map(|&i| copy_cost(&geometry[i])).sum();
        let gather: f64 = gathered.iter().map(|&i| gather_cost(i)).sum();
        if copy < gather + model.dispatch_seconds + model.host_seconds(0, 1) {
            gathered.iter().for_each(|&i| copied[i] = true);
        }
    }
    // Windows that overlap (framework calls: `tensor_split(x, [768, 256])`)
    // read bytes another window of the same row reads: one dispatch of them
    // all loads those once, copy commands once each. Gathering every
    // output is weighed whole against the choice so far.
    let reread = reread_bits(geometry);
    if reread.iter().any(|&r| r > 0) {
        let fresh = |i: usize| {
            let run = geometry[i].run_bits.max(1);
            gather_cost(i) * (1.0 - reread[i] as f64 / (2 * run) as f64)
        };
        let dispatch = model.dispatch_seconds + model.host_seconds(0, 1);
        let live = || (0..geometry.len()).filter(|&i| !geometry[i].is_empty());
        let all: f64 = live().map(fresh).sum::<f64>() + dispatch;
        let mixed: f64 = live()
            .map(|i| {
                if copied[i] {
                    copy_cost(&geometry[i])
                } else {
                    gather_cost(i)
                }
            })
            .sum::<f64>()
            + if live().all(|i| copied[i]) {
                0.0
            } else {
                dispatch
            };
        if all < mixed {
            copied.iter_mut().for_each(|c| *c = false);
        }
    }
    copied
}

/// Per output, the bits of its run that the runs of outputs starting no
/// later in the same row also cover (taken in order of their starts, the
/// first to start reads them): 0 for every output of a partition.
fn reread_bits(geometry: &[OutputGeometry]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..geometry.len())
        .filter(|&i| !geometry[i].is_empty())
        .collect();
    order.sort_by_key(|&i| (geometry[i].offset_bits, i));
    let mut reread = vec![0; geometry.len()];
    let mut covered_to = 0;
    for i in order {
        let g = &geometry[i];
        let end = g.offset_bits + g.run_bits;
        reread[i] = covered_to.min(end).saturating_sub(g.offset_bits);
        covered_to = covered_to.max(end);
    }
    reread
}

/// The copy commands of the copied outputs; `dst_offsets_bytes[i]` is where
/// output `i` starts in its destination.
pub(crate) fn copy_runs(
    geometry: &[OutputGeometry],
    copied: &[bool],
    dst_offsets_bytes: &[u64],
    outer: u64,
) -> Vec<CopyRuns> {
    (0..geometry.len())
        .filter(|&i| copied[i])
        .map(|i| {
            let g = &geometry[i];
            let (count, size_bytes) = copy_shape(g, outer);
            CopyRuns {
                output: i,
                src_offset_bytes: g.offset_bits / 8,
                src_stride_bytes: g.block_bits / 8,
                dst_offset_bytes: dst_offsets_bytes[i],
                size_bytes,
                count,
            }
        })
        .collect()
}

impl Default for Strategy {
    fn default() -> Self {
        Strategy::Auto(CostModel::default())
    }
}

#[cfg(test)]
mod tests {
    use super::{OutputGeometry, reread_bits};

    fn run(offset: u64, run: u64) -> OutputGeometry {
        OutputGeometry {
            run_bits: run,
            offset_bits: offset,
            block_bits: 1024,
            total_bits: 8 * run,
        }
    }

    #[test]
    fn overlapping_windows_reread_what_an_earlier_start_covers() {
        // torch.tensor_split(x, [768, 256]) on rows of 1,024: [0, 768),
        // empty, [256, 1024): the last re-reads [256, 768).
        let empty = OutputGeometry {
            total_bits: 0,
            ..run(768, 0)
        };
        assert_eq!(
            reread_bits(&[run(0, 768), empty, run(256, 768)]),
            [0, 0, 512]
        );
        // Listed out of order: the first to start reads the bytes.
        assert_eq!(reread_bits(&[run(256, 768), run(0, 768)]), [512, 0]);
        // A partition re-reads nothing; a window inside another, all of it.
        assert_eq!(reread_bits(&[run(0, 300), run(300, 724)]), [0, 0]);
        assert_eq!(reread_bits(&[run(0, 1024), run(100, 50)]), [0, 50]);
    }
}
