//! `access_trace`: how a GPU's warps would serve the memory accesses of the
//! kernels each class model plans, traced on the adapter at hand.
//!
//! ```text
//! cargo run --release --example access_trace -- [--rows N] [--most N] [--json PATH]
//!     [--case NAME] [--dtype TYPE --shape D,D,.. --axis A --split SPEC]
//! ```
//!
//! For every split_bench case (or the one split of the command line) and
//! every class model (`DISCRETE_GPU`, `INTEGRATED_GPU`, `LAVAPIPE`,
//! `CONSERVATIVE`), it plans the split for a compute pass under WebGPU's
//! default limits into buffers of their own, runs the plan's modules in
//! their trace variant (`wgpu_split::gpu::trace`; the adapter executes the
//! very WGSL a GPU gets), checks every output byte against the host path,
//! and counts, per warp request of W = 8, 16, 32 and 64 lanes, the 32-byte
//! sectors and 128-byte lines touched against the ideal for the bytes moved
//! (`wgpu_split::plan::coalescing`). Tensors of more than `--rows` rows
//! (default 256) are traced with that many rows: layouts do not depend on
//! the row count. Dispatches of more than `--most` invocations (default
//! 12,288) are traced in three windows (start, middle, end). Prints one
//! line per case and class at W = 32 and 64; `--json` writes every figure.

#[path = "../split_bench/cases.rs"]
#[allow(dead_code)]
mod cases;

mod args;

use std::process::ExitCode;

use wgpu_split::gpu::{GpuContext, GpuSplitter, trace::trace};
use wgpu_split::plan::coalescing::{Coalescing, analyse_with_rows};
use wgpu_split::plan::{
    CostModel, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use wgpu_split::{ElementType, HostTensor, ResolvedSplit, host};

/// The class models, as the table names them.
const CLASSES: [(&str, CostModel); 4] = [
    ("discrete", CostModel::DISCRETE_GPU),
    ("integrated", CostModel::INTEGRATED_GPU),
    ("software", CostModel::LAVAPIPE),
    ("unknown", CostModel::CONSERVATIVE),
];

/// Warp widths: lavapipe's SIMD, Intel's, NVIDIA's and RDNA's, GCN's.
const WARPS: [u32; 4] = [8, 16, 32, 64];

/// One case under one class model.
#[derive(Debug, serde::Serialize)]
struct Row {
    case: String,
    class: &'static str,
    kernel: String,
    lanes: String,
    dispatches: usize,
    /// Working invocations of the full plan's dispatches.
    invocations: u64,
    /// Invocations of a vec4 copy of the bytes the split moves.
    copy_invocations: u64,
    /// Rows of the traced tensor (the full tensor's when not shrunk).
    traced_rows: usize,
    /// Every output byte of the traced run equals the host path's.
    exact: bool,
    by_warp: Vec<Coalescing>,
}

fn main() -> ExitCode {
    let options = match args::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(rows) => {
            if rows.iter().all(|r| r.exact) {
                ExitCode::SUCCESS
            } else {
                eprintln!("an output differs from the host path");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &args::Options) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let ctx = GpuContext::new_default()?;
    let splitter = ctx.splitter()?;
    eprintln!("adapter: {}", ctx.describe());
    let splits: Vec<(String, ElementType, ResolvedSplit)> = match &options.split {
        Some((t, shape, split)) => vec![(format!("{t} {shape:?}"), *t, split.clone())],
        None => cases::suite(false)
            .into_iter()
            .filter(|c| options.case.as_ref().is_none_or(|n| n == c.name))
            .map(|c| Ok((c.name.to_string(), c.element_type, c.op.resolve(&c.shape)?)))
            .collect::<wgpu_split::Result<_>>()?,
    };
    println!(
        "{:<28} {:<10} {:<12} {:>4} {:>10} {:>5} | W=32 ld    st    lines  fp   | W=64 ld    st    fp   | exact",
        "case", "class", "kernel", "disp", "invoc", "/copy"
    );
    let mut rows = Vec::new();
    for (name, t, split) in &splits {
        for (class, model) in CLASSES {
            let row = trace_case(&splitter, name, class, model, *t, split, options)?;
            print_row(&row);
            rows.push(row);
        }
    }
    if let Some(path) = &options.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)?)?;
        eprintln!("wrote {path}");
    }
    Ok(rows)
}

fn print_row(r: &Row) {
    let at = |w: u32| r.by_warp.iter().find(|c| c.warp == w);
    let (Some(w32), Some(w64)) = (at(32), at(64)) else {
        println!(
            "{:<28} {:<10} {:<12} {:>4}   (no dispatch)",
            r.case, r.class, r.kernel, r.dispatches
        );
        return;
    };
    println!(
        "{:<28} {:<10} {:<12} {:>4} {:>10} {:>5.2} |      {:<5.2} {:<5.2} {:<5.2}  {:<4.2} |      {:<5.2} {:<5.2} {:<4.2} | {}",
        r.case,
        r.class,
        format!("{}/{}", r.kernel, &r.lanes[..1]),
        r.dispatches,
        r.invocations,
        r.invocations as f64 / r.copy_invocations.max(1) as f64,
        w32.loads.sector_ratio(),
        w32.stores.sector_ratio(),
        w32.loads.line_ratio().max(w32.stores.line_ratio()),
        w32.footprint(),
        w64.loads.sector_ratio(),
        w64.stores.sector_ratio(),
        w64.footprint(),
        if r.exact { "yes" } else { "NO" },
    );
}

/// The plan of a class model for a compute pass (dispatches only, the
/// kernel the model ranks first), under WebGPU's default limits.
fn plan_of(
    model: CostModel,
    t: ElementType,
    split: &ResolvedSplit,
    kernel: Option<Kernel>,
) -> wgpu_split::Result<SplitPlan> {
    let mut options = PlanOptions::default()
        .strategy(Strategy::Auto(model))
        .placement(Placement::Separate)
        .in_compute_pass();
    options.kernel = kernel;
    Ok(SplitPlan::new(
        split,
        t,
        &PlanLimits::WEBGPU_DEFAULT,
        &options,
    )?)
}

/// `split` with at most `rows` rows before its axis (the axis and what
/// follows it unchanged): the same layouts, fewer invocations to trace.
fn shrunk(split: &ResolvedSplit, rows: usize) -> wgpu_split::Result<ResolvedSplit> {
    let shape = split.input_shape();
    let outer: usize = shape[..split.axis()].iter().product();
    if outer <= rows {
        return Ok(split.clone());
    }
    let mut small = vec![rows];
    small.extend_from_slice(&shape[split.axis()..]);
    Ok(ResolvedSplit::from_windows(
        &small,
        1,
        split.windows().collect(),
        split.keep_axis(),
    )?)
}

fn trace_case(
    splitter: &GpuSplitter,
    name: &str,
    class: &'static str,
    model: CostModel,
    t: ElementType,
    split: &ResolvedSplit,
    options: &args::Options,
) -> Result<Row, Box<dyn std::error::Error>> {
    let full = plan_of(model, t, split, options.kernel)?;
    let small_split = shrunk(split, options.rows)?;
    let plan = plan_of(model, t, &small_split, options.kernel)?;
    if plan.kernel() != full.kernel() || plan.generated_layouts() != full.generated_layouts() {
        return Err(format!("{name}: the shrunk tensor plans another kernel or layout").into());
    }
    let bits = t.bit_width().ok_or("strings are not traced")? as u64;
    let moved: u64 = split
        .output_shapes()
        .iter()
        .map(|s| (s.iter().product::<usize>() as u64 * bits).div_ceil(8))
        .sum();
    let input = random_tensor(&small_split, t)?;
    let expected = host::split(&input, &small_split)?;
    let run = trace(splitter, &plan, input.as_bytes()?, options.most)?;
    let exact = expected.iter().enumerate().all(|(i, e)| {
        let bytes = e.as_bytes().unwrap_or_default();
        let at = plan.outputs()[i].arena_offset_bytes as usize;
        let dst = &run.destinations[plan.placement().destination_of(i)];
        e.is_empty() || dst[at..at + bytes.len()] == *bytes
    });
    let row_of = rows_of(&small_split, bits);
    let by_warp = if plan.dispatch_count() == 0 {
        Vec::new()
    } else {
        WARPS
            .iter()
            .map(|&w| analyse_with_rows(&run.dispatches, w, &row_of))
            .collect()
    };
    Ok(Row {
        case: name.to_string(),
        class,
        kernel: full.kernel().to_string(),
        lanes: full
            .shaders()
            .first()
            .map_or("-".to_string(), |k| k.lanes().name().to_string()),
        dispatches: full.dispatch_count(),
        invocations: full.passes().iter().map(|p| u64::from(p.invocations)).sum(),
        copy_invocations: moved.div_ceil(16),
        traced_rows: small_split.input_shape()[..small_split.axis()]
            .iter()
            .product(),
        exact,
        by_warp,
    })
}

/// The row a byte of a traced buffer lies in: input rows in buffer 0,
/// output `i`'s rows (runs) in buffer `i + 1`.
fn rows_of(split: &ResolvedSplit, bits: u64) -> impl Fn(usize, u64) -> u64 {
    let shape = split.input_shape();
    let inner: u64 = shape[split.axis() + 1..]
        .iter()
        .map(|&d| d as u64)
        .product();
    let block_bits = shape[split.axis()] as u64 * inner * bits;
    let runs: Vec<u64> = split
        .lengths()
        .iter()
        .map(|&l| (l as u64 * inner * bits).max(1))
        .collect();
    move |buffer, byte| match buffer {
        0 => byte * 8 / block_bits.max(1),
        b => byte * 8 / runs[b - 1],
    }
}

/// A tensor of `split`'s input shape with pseudo-random bits.
fn random_tensor(
    split: &ResolvedSplit,
    t: ElementType,
) -> Result<HostTensor, Box<dyn std::error::Error>> {
    let count: usize = split.input_shape().iter().product();
    let len = t.byte_len(count).ok_or("no packed length")?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    Ok(HostTensor::from_raw(t, split.input_shape(), bytes)?)
}
