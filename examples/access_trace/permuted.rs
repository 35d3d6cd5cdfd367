//! `access_trace --permuted`: split_bench's permuted moves (issue 39:
//! GPT-2's and a grouped-query QKV split into heads, GPT-2's head merge,
//! YOLOv8's distribution head), each planned for a GPU (striped lanes,
//! WebGPU's default limits: the plan of every GPU class) and run with
//! every dispatch in its module's trace variant
//! (`wgpu_split::gpu::trace::trace`), outputs checked against the
//! host path, each warp request of W = 32 and 64 counted in sectors
//! against the ideal, with the GPU model's work at W = 32: lanes per
//! request, steps per lane and warp requests per KiB. Issue 39's target:
//! loads and stores at most 1.15x. No predicted time: no GPU has measured
//! a permute kernel, so the model has no probe figure to price it with.

#[path = "../split_bench/permuted_cases.rs"]
mod permuted_cases;

use wgpu_split::PermutedConcat;
use wgpu_split::gpu::GpuSplitter;
use wgpu_split::gpu::trace::{TracedRun, trace};
use wgpu_split::plan::coalescing::analyse;
use wgpu_split::plan::{PermutedConcatPlan, PermutedPlan, PlanLimits};

/// Issue 39's bound on sectors per request over the ideal.
const TARGET: f64 = 1.15;

/// Traces every case (or the one `only` names), dispatches of more than
/// `most` invocations in three windows; true when every output is exact
/// and every request within the target.
pub fn run(
    gpu: &GpuSplitter,
    most: u64,
    only: Option<&str>,
) -> Result<bool, Box<dyn std::error::Error>> {
    println!(
        "{:<28} {:>4} {:>10} | W=32 ld    st    lanes steps req/KiB | W=64 ld    st    | exact | within {TARGET}",
        "case", "disp", "invoc"
    );
    let mut all = true;
    let mut seed = 0x39u64;
    for case in permuted_cases::cases(false)
        .into_iter()
        .filter(|c| only.is_none_or(|n| n == c.name))
    {
        let t = case.element_type;
        let (tensor, bytes) = case.input(&mut seed)?;
        let pieces = tensor.split_permuted(&case.split)?;
        let limits = PlanLimits::WEBGPU_DEFAULT;
        let (run, exact) = if case.concat {
            let merge = PermutedConcat::merge_heads(&case.split.output_shapes())?;
            let plan = PermutedConcatPlan::new(&merge, t, &limits)?;
            let inputs: Vec<&[u8]> = pieces
                .iter()
                .map(|p| p.as_bytes())
                .collect::<Result<_, _>>()?;
            let run = trace(gpu, &plan, &inputs, most)?;
            let exact = run.tensor[..bytes.len()] == bytes[..];
            (run, exact)
        } else {
            let plan = PermutedPlan::new(&case.split, t, &limits)?;
            let run = trace(gpu, &plan, &[&bytes], most)?;
            let exact = pieces.iter().enumerate().all(|(i, p)| {
                let want = p.as_bytes().unwrap_or_default();
                run.destinations[i][..want.len()] == want[..]
            });
            (run, exact)
        };
        all &= exact & print_row(case.name, &run, exact);
    }
    Ok(all)
}

/// One case's line; true when within the target.
fn print_row(name: &str, run: &TracedRun, exact: bool) -> bool {
    let [w32, w64] = [32, 64].map(|w| analyse(&run.dispatches, w));
    let within = [&w32, &w64]
        .iter()
        .all(|c| c.loads.sector_ratio() <= TARGET && c.stores.sector_ratio() <= TARGET);
    println!(
        "{:<28} {:>4} {:>10} |      {:<5.2} {:<5.2} {:<5.1} {:<5.1} {:<7.2} |      {:<5.2} {:<5.2} | {:<5} | {}",
        name,
        w32.dispatches,
        w32.invocations,
        w32.loads.sector_ratio(),
        w32.stores.sector_ratio(),
        w32.lanes_per_request(),
        w32.steps_per_lane(),
        w32.requests_per_byte() * 1024.0,
        w64.loads.sector_ratio(),
        w64.stores.sector_ratio(),
        if exact { "yes" } else { "NO" },
        if within { "yes" } else { "NO" },
    );
    within
}
