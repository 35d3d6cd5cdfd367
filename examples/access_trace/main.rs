//! `access_trace`: how a GPU's warps would serve the memory accesses of the
//! kernels each class model plans, traced on the adapter at hand.
//!
//! ```text
//! cargo run --release --example access_trace -- [--rows N] [--most N] [--json PATH]
//!     [--case NAME] [--sweep] [--concat] [--limits webgpu|native]
//!     [--dtype TYPE --shape D,D,.. --axis A --split SPEC]
//! ```
//!
//! For every split_bench case (or the one split of the command line) and
//! every class model (`DISCRETE_GPU`, `INTEGRATED_GPU`, `LAVAPIPE`,
//! `CONSERVATIVE`), it plans the split for a compute pass under WebGPU's
//! default limits (`--limits native`: lavapipe's, 30 destinations a
//! dispatch, as a native device binds, less the trace's own binding) into
//! buffers of their own, runs the plan's modules in
//! their trace variant (`wgpu_split::gpu::trace`; the adapter executes the
//! very WGSL a GPU gets), checks every output byte against the host path,
//! and counts, per warp request of W = 8, 16, 32 and 64 lanes, the 32-byte
//! sectors and 128-byte lines touched against the ideal for the bytes moved
//! (`wgpu_split::plan::coalescing`). Tensors of more than `--rows` rows
//! (default 256) are traced with that many rows, or the few more their
//! plan's layouts need to divide into blocks as the full tensor's do
//! (layouts do not otherwise depend on the row count). Dispatches of more than `--most` invocations (default
//! 12,288) are traced in three windows (start, middle, end). Prints one
//! line per case and class at W = 32 and 64, with `reads`, the bytes the
//! plan's dispatches load in all against the tensor's (each sector once per
//! dispatch: a plan of k dispatches that each read every row reads k
//! times; `-` where a dispatch is traced in windows: raise `--most` or
//! lower `--rows`); `--json` writes every figure.
//! `--concat` traces the concat that mirrors each split instead (the
//! split's outputs joined back into the tensor, checked against it).
//! Then, per GPU-class plan, the GPU model's figures (`h200.rs`): lanes
//! per request, steps per lane, warp requests per KiB, and the time the
//! H200's calibration predicts for it and for a vec4 shader copy.
//! `--permuted` traces split_bench's permuted moves instead (attention's
//! heads and their merge, YOLOv8's distribution head; `permuted.rs`).

#[path = "../split_bench/cases.rs"]
#[allow(dead_code)]
mod cases;

mod args;
mod h200;
mod measure;
mod permuted;

use std::process::ExitCode;

use measure::{Row, TraceOptions, trace_case};
use wgpu_split::gpu::GpuContext;
use wgpu_split::plan::{CostModel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

/// The class models, as the table names them.
const CLASSES: [(&str, CostModel); 4] = [
    ("discrete", CostModel::DISCRETE_GPU),
    ("integrated", CostModel::INTEGRATED_GPU),
    ("software", CostModel::LAVAPIPE),
    ("unknown", CostModel::CONSERVATIVE),
];

fn main() -> ExitCode {
    let options = match args::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if options.permuted {
        let traced = GpuContext::new_default()
            .and_then(|ctx| ctx.splitter())
            .map_err(|e| e.into())
            .and_then(|gpu| permuted::run(&gpu, options.most, options.case.as_deref()));
        return match traced {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => {
                eprintln!("an output differs from the host path, or a request misses 1.15x");
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
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
        None if options.sweep => measure::sweep(),
        None => cases::suite(false)
            .into_iter()
            .filter(|c| options.case.as_ref().is_none_or(|n| n == c.name))
            .map(|c| Ok((c.name.to_string(), c.element_type, c.op.resolve(&c.shape)?)))
            .collect::<wgpu_split::Result<_>>()?,
    };
    println!(
        "{:<28} {:<10} {:<12} {:>4} {:>10} {:>5} {:>5} | W=32 ld    st    lines  fp   | W=64 ld    st    fp   | exact | targets",
        "case", "class", "kernel", "disp", "invoc", "/copy", "reads"
    );
    let mut rows = Vec::new();
    for (name, t, split) in &splits {
        if options.concat && wgpu_split::ResolvedConcat::inverse_of(split).is_none() {
            println!("{name:<28} (its windows do not cover the axis: no concat mirrors it)");
            continue;
        }
        for (class, model) in CLASSES {
            let traced = TraceOptions {
                rows: options.rows,
                most: options.most,
                kernel: options.kernel,
                concat: options.concat,
                limits: options.limits,
            };
            let row = trace_case(&splitter, name, class, model, *t, split, traced)?;
            print_row(&row);
            rows.push(row);
        }
    }
    if let Some(path) = &options.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)?)?;
        eprintln!("wrote {path}");
    }
    print_model(&rows)?;
    print_alternatives(&splits)?;
    Ok(rows)
}

/// What the GPU model (`wgpu_split::plan::gpu_model`, with the H200's
/// calibration and 093c280's probes: `h200.rs`) says of each GPU-class
/// plan (striped lanes): at W = 32 its lanes per request, steps per lane
/// and warp requests per KiB moved, its work per byte against its kernel's
/// probe, and its predicted time against a vec4 shader copy's of the same
/// bytes.
fn print_model(rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    let model = h200::model();
    println!(
        "\nGPU model (H200) | {:<28} {:<10} {:<12} {:>5} {:>5} {:>7} {:>5} {:>9} {:>9} {:>5}",
        "case",
        "class",
        "kernel",
        "lanes",
        "steps",
        "req/KiB",
        "work",
        "pred us",
        "copy us",
        "ratio"
    );
    for r in rows.iter().filter(|r| r.lanes == "striped") {
        let Some(w32) = r.by_warp.iter().find(|c| c.warp == 32) else {
            continue;
        };
        let row = serde_json::to_value(r)?;
        let Some((plan, copy)) = h200::against_copy(&model, &row) else {
            continue;
        };
        let t = h200::traced(&row);
        println!(
            "                 | {:<28} {:<10} {:<12} {:>5.1} {:>5.1} {:>7.2} {:>5.2} {:>9.1} {:>9.1} {:>5.2}",
            r.case,
            r.class,
            r.kernel,
            t.lanes,
            w32.steps_per_lane(),
            w32.requests_per_byte() * 1024.0,
            plan.work_over_probe,
            plan.seconds() * 1e6,
            copy.seconds() * 1e6,
            copy.seconds() / plan.seconds(),
        );
    }
    Ok(())
}

/// What each GPU class's plan (into buffers of its own, the runtime's
/// tensors) costs by the class model, against an arena, copies only and
/// views of the input: why the plan is what it is (`CostModel::plan_cost`;
/// device and host microseconds).
fn print_alternatives(
    splits: &[(String, ElementType, ResolvedSplit)],
) -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "\nmodeled us (device + host) | {:<28} {:<10} {:>16} {:>16} {:>16} {:>6}",
        "case", "class", "plan (disp)", "arena (disp)", "copies (count)", "views"
    );
    for (name, t, split) in splits {
        for (class, model) in CLASSES.into_iter().filter(|(c, _)| *c != "software") {
            let plan = |placement, strategy| {
                let options = PlanOptions::default()
                    .strategy(strategy)
                    .placement(placement);
                SplitPlan::new(split, *t, &PlanLimits::WEBGPU_DEFAULT, &options)
            };
            let cell = |p: &SplitPlan, n: u64| {
                let cost = model.plan_cost(p);
                format!("{:.0} ({n})", cost.total_seconds() * 1e6)
            };
            let own = plan(Placement::Separate, Strategy::Auto(model))?;
            let arena = plan(Placement::Arena, Strategy::Auto(model))?;
            let copies = plan(Placement::Separate, Strategy::Copy)
                .map_or("-".to_string(), |p| cell(&p, p.copy_count()));
            let views = if own.input_views().is_some() {
                "0"
            } else {
                "-"
            };
            println!(
                "                            | {:<28} {:<10} {:>16} {:>16} {:>16} {:>6}",
                name,
                class,
                cell(&own, own.dispatch_count() as u64),
                cell(&arena, arena.dispatch_count() as u64),
                copies,
                views
            );
        }
    }
    Ok(())
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
        "{:<28} {:<10} {:<12} {:>4} {:>10} {:>5.2} {:>5} |      {:<5.2} {:<5.2} {:<5.2}  {:<4.2} |      {:<5.2} {:<5.2} {:<4.2} | {:<5} | {}",
        r.case,
        r.class,
        format!("{}/{}", r.kernel, &r.lanes[..1]),
        r.dispatches,
        r.invocations,
        r.invocations as f64 / r.copy_invocations.max(1) as f64,
        w32.reads(r.read_bytes)
            .map_or("-".to_string(), |x| format!("{x:.2}")),
        w32.loads.sector_ratio(),
        w32.stores.sector_ratio(),
        w32.loads.line_ratio().max(w32.stores.line_ratio()),
        w32.footprint(),
        w64.loads.sector_ratio(),
        w64.stores.sector_ratio(),
        w64.footprint(),
        if r.exact { "yes" } else { "NO" },
        // The targets are a GPU's: blocked lanes (lavapipe's) miss them.
        if r.lanes == "striped" {
            measure::missed(r).join(" ")
        } else {
            "(lavapipe's lanes)".to_string()
        },
    );
}
