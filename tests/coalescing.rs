//! Coalesced by construction, checked on the adapter at hand: every module
//! a GPU-class plan records (split_bench's cases, its `--narrow` shapes and
//! a sweep of shapes, under WebGPU's default limits) runs in its trace
//! variant, every output byte is checked against the host path, and every
//! warp request at W = 32 and 64 (and of the concats that mirror them) must
//! touch at most 1.15x the sectors and lines its bytes need (one more per
//! row it touches), each warp at most 1.05x its bytes' sectors (one more
//! per row), and a split of 64 KiB or more must launch at least half the
//! invocations of a vec4 copy (`access_trace`'s targets,
//! `docs/PERFORMANCE.md`). Each plan of 64 KiB or more is priced by the
//! H200's GPU model against a vec4 shader copy of the same bytes: at 0.9
//! or more, or listed below the target with its reason (issue 55). Lavapipe's own
//! plans (blocked lanes) are pinned, so that a change to them shows; and
//! the GPU classes rank the kernels as their traces do.

#[path = "../examples/split_bench/cases.rs"]
#[allow(dead_code)]
mod cases;
mod common;
#[path = "../examples/access_trace/h200.rs"]
#[allow(dead_code)]
mod h200;
#[path = "../examples/access_trace/measure.rs"]
#[allow(dead_code)]
mod measure;

use measure::{Row, TraceOptions, missed, sweep, trace_case};
use wgpu_split::plan::{
    CostModel, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use wgpu_split::{ElementType, ResolvedSplit};

/// The GPU classes, whose plans run striped lanes.
const GPU_CLASSES: [(&str, CostModel); 2] = [
    ("discrete", CostModel::DISCRETE_GPU),
    ("integrated", CostModel::INTEGRATED_GPU),
];

/// Traced tensors: at most 128 rows, 4,096 invocations a dispatch.
const TRACE: TraceOptions = TraceOptions {
    rows: 128,
    most: 4096,
    kernel: None,
    concat: false,
    limits: PlanLimits::WEBGPU_DEFAULT,
};

/// split_bench's cases, resolved.
fn bench_splits() -> Vec<(String, ElementType, ResolvedSplit)> {
    resolved(cases::suite(false))
}

/// split_bench's own concat cases (YOLOv8's C2f, attention's head merge,
/// 1,000 sequence entries stacked), each resolved as the split it mirrors;
/// the suite's other concats mirror its splits.
fn concat_splits() -> Vec<(String, ElementType, ResolvedSplit)> {
    let splits: Vec<&str> = cases::suite(false).iter().map(|c| c.name).collect();
    let own = cases::concat_suite(false)
        .into_iter()
        .filter(|c| {
            !c.name
                .strip_prefix("cat_")
                .is_some_and(|n| splits.contains(&n))
        })
        .collect();
    resolved(own)
}

/// split_bench's `--narrow` cases, resolved.
fn narrow_splits() -> Vec<(String, ElementType, ResolvedSplit)> {
    resolved(cases::narrow_suite(false))
}

fn resolved(cases: Vec<cases::Case>) -> Vec<(String, ElementType, ResolvedSplit)> {
    cases
        .into_iter()
        .map(|c| {
            let split = c.op.resolve(&c.shape).expect("a bench case");
            (c.name.to_string(), c.element_type, split)
        })
        .collect()
}

/// Traces `splits` under `model`, asserting every output exact.
fn traced(
    class: &'static str,
    model: CostModel,
    splits: &[(String, ElementType, ResolvedSplit)],
    options: TraceOptions,
) -> Vec<Row> {
    let gpu = common::gpu("coalescing").expect("an adapter");
    splits
        .iter()
        .map(|(name, t, split)| {
            let row = trace_case(gpu, name, class, model, *t, split, options)
                .unwrap_or_else(|e| panic!("{name} under {class}: {e}"));
            assert!(
                row.exact,
                "{name} under {class}: an output differs from the host path"
            );
            row
        })
        .collect()
}

/// One line of figures per row, for failure messages.
fn table(rows: &[Row]) -> String {
    rows.iter()
        .map(|r| {
            let w32 = r.by_warp.iter().find(|c| c.warp == 32);
            let figures = w32.map_or(String::from("no dispatch"), |c| {
                format!(
                    "ld {:.2} st {:.2} lines {:.2}/{:.2} fp {:.2}",
                    c.loads.sector_ratio(),
                    c.stores.sector_ratio(),
                    c.loads.line_ratio(),
                    c.stores.line_ratio(),
                    c.footprint()
                )
            });
            format!(
                "{} {} {}/{}: {figures}\n",
                r.case, r.class, r.kernel, r.lanes
            )
        })
        .collect()
}

fn assert_targets(rows: &[Row]) {
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !missed(r).is_empty())
        .map(|r| format!("{} {}: {:?}", r.case, r.class, missed(r)))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}\n{}", table(rows));
    for r in rows {
        assert_eq!(r.lanes, "striped", "{} under {}", r.case, r.class);
    }
}

/// Issue 55's target: a GPU-class plan of a tensor of [`PRICED_BYTES`] or
/// more is predicted, by the H200's model (`h200.rs`:
/// `wgpu_split::plan::gpu_model` with the H200's calibration), at
/// [`PRICE_TARGET`] or more of one vec4 shader copy of the same bytes.
const PRICE_TARGET: f64 = 0.9;

/// The smallest tensor [`PRICE_TARGET`] holds for (64 KiB).
const PRICED_BYTES: f64 = 65_536.0;

/// Why a plan is predicted below [`PRICE_TARGET`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Below {
    /// Its separate destinations need more dispatches than one under
    /// WebGPU's 8 storage buffers a stage (7 outputs and the input), and
    /// those dispatches' fixed costs alone, at the shader copy's speed,
    /// keep it below the target: no kernel reaches it (checked).
    Bindings,
    /// No kernel the H200 measured at the target or more (at its probe's
    /// work: the vec4 kernel only) can move these pieces, and the one that
    /// moves them is below the target at its own probe's work (checked). A
    /// kernel no GPU has measured has no figure to be priced by.
    Rate,
    /// Its kernel reaches the target at its probe's work (checked), but
    /// the plan does more work per byte than the probe: open (issue 55,
    /// build 2).
    Work,
}

/// Every case whose GPU-class plans are predicted below [`PRICE_TARGET`]
/// (split_bench's, its `--narrow` ones, the sweep's), in both directions
/// (the split and its mirror concat), for the discrete and integrated
/// classes alike, and why. The list is exact both ways: a plan that falls
/// below and is not here fails, and so does one here that reaches the
/// target (take it out, or say which direction still misses).
const BELOW: [(&str, Below); 22] = [
    // 1,000, 100 and 100 outputs: 143, 15 and 15 dispatches at least;
    // attention's 8 heads joined: 2 (docs/PERFORMANCE.md).
    ("f32_1000x4096_seq", Below::Bindings),
    ("f32 [100, 1024] seq", Below::Bindings),
    ("f32 [64, 700] torch.chunk(100)", Below::Bindings),
    ("cat_f16_8x8x512x64_heads", Below::Bindings),
    // 31, 64 and 20 narrow columns: 5, 10 and 3 dispatches at least.
    ("f16_1048576x31_columns", Below::Bindings),
    ("f32_1048576x31_columns", Below::Bindings),
    ("cat_f16_1048576x31_columns", Below::Bindings),
    ("f16 [65536, 31] columns", Below::Bindings),
    ("f16 [4096, 31] columns", Below::Bindings),
    ("f32 [4096, 31] columns", Below::Bindings),
    ("f16 [32768, 64] columns", Below::Bindings),
    ("u8 [262144, 40] [1, 3, 1, 3, ..]", Below::Bindings),
    // Runs of sub-vec4 or unaligned lengths: row blocks (0.69 of the
    // copy's rate at its probe's work), row streams (0.85), row words,
    // the words kernel and concat words.
    ("f16_1048576x6_axis1_123", Below::Rate),
    ("u8_4096x4097_axis1_2", Below::Rate),
    ("i4_4096x4099_axis1_3", Below::Rate),
    ("f32_4096x4097_odd_words", Below::Rate),
    ("f32_4194304x4_unbind", Below::Rate),
    ("u8_16384x3000_thirds", Below::Rate),
    ("u8 [4096, 3000] thirds", Below::Rate),
    ("i8_32768x1023_511_1_511", Below::Rate),
    // Row copies with six runs of 2-3 vec4s a row: each warp stores to
    // six buffers, 9.1 lanes a request (3.5x the probe's requests).
    ("bf16 [3, 4096, 128] M-RoPE", Below::Work),
    // Row streams whose runs of 511 bytes straddle a row in nearly every
    // warp: a second pair of loads for one lane, 20 lanes a request
    // (0.87-0.89 of the copy; the one-byte run is gathered).
    ("i8 [2048, 1023] [511, 1, 511]", Below::Work),
];

/// Prices each row of `rows` (traced from `splits` under `model`, in
/// order; `concat`: their mirrors) by the H200's model, prints it (case,
/// direction, class, kernel, dispatches, tensor KiB, predicted and shader
/// copy µs, their ratio, the bindings' floor, the kernel's cap at its
/// probe's work, the entry in [`BELOW`]), and returns where it misses
/// [`PRICE_TARGET`] or its entry.
fn priced(
    rows: &[Row],
    splits: &[(String, ElementType, ResolvedSplit)],
    model: CostModel,
    concat: bool,
) -> Vec<String> {
    let h200 = h200::model();
    let slots = u64::from(TRACE.limits.max_storage_buffers_per_shader_stage - 1);
    let mut failed = Vec::new();
    assert_eq!(rows.len(), splits.len());
    for (row, (name, t, split)) in rows.iter().zip(splits) {
        let value = serde_json::to_value(row).expect("a row");
        let Some((plan, copy)) = h200::against_copy(&h200, &value) else {
            continue;
        };
        let traced = h200::traced(&value);
        let ratio = copy.seconds() / plan.seconds();
        let outputs = split
            .output_shapes()
            .iter()
            .filter(|s| s.iter().product::<usize>() > 0)
            .count() as u64;
        // The fewest dispatches its outputs' bindings allow, at the
        // shader copy's own time.
        let fewest = outputs.div_ceil(slots);
        let floor = copy.seconds() / (copy.seconds() + (fewest - 1) as f64 * h200.dispatch_seconds);
        // Its kernel at its probe's work, in as many dispatches.
        let at_probe = |kernel: Kernel| {
            let p = h200.at_probe_work(kernel, traced.moved_bytes)?;
            let fixed = (row.dispatches.max(1) - 1) as f64 * h200.dispatch_seconds;
            Some(copy.seconds() / (p.seconds() + fixed))
        };
        let cap = at_probe(traced.kernel).unwrap_or(0.0);
        let entry = BELOW.iter().find(|(case, _)| case == name).map(|e| e.1);
        println!(
            "priced | {:<32} {:<6} {:<10} {:<12} {:>4} {:>9.0} {:>9.1} {:>9.1} {:>5.2} {:>5.2} {:>5.2} {entry:?}",
            name,
            if concat { "concat" } else { "split" },
            row.class,
            row.kernel,
            row.dispatches,
            traced.moved_bytes / 2.0 / 1024.0,
            plan.seconds() * 1e6,
            copy.seconds() * 1e6,
            ratio,
            floor,
            cap,
        );
        if traced.moved_bytes / 2.0 < PRICED_BYTES {
            continue;
        }
        let case = format!(
            "{name} ({}, {})",
            row.class,
            if concat { "concat" } else { "split" }
        );
        let why = match (ratio >= PRICE_TARGET, entry) {
            (true, None) => continue,
            (false, Some(Below::Work)) if cap >= PRICE_TARGET => continue,
            (false, Some(Below::Work)) => {
                format!("{ratio:.2}, listed Work, but its kernel's cap is {cap:.2}: Rate")
            }
            (true, Some(why)) => format!("{ratio:.2}, listed {why:?}: take it out of BELOW"),
            (false, None) => format!("{ratio:.2}, below {PRICE_TARGET}"),
            (false, Some(Below::Bindings)) if floor < PRICE_TARGET => continue,
            (false, Some(Below::Bindings)) => {
                format!("{ratio:.2}, listed Bindings, but {fewest} dispatches allow {floor:.2}")
            }
            (false, Some(Below::Rate)) if cap >= PRICE_TARGET => {
                format!("{ratio:.2}, listed Rate, but its kernel reaches {cap:.2}")
            }
            (false, Some(Below::Rate)) => {
                // Every kernel that would reach the target at its probe's
                // work cannot move these pieces.
                let fast: Vec<Kernel> = Kernel::ALL
                    .into_iter()
                    .filter(|&k| at_probe(k).is_some_and(|r| r >= PRICE_TARGET))
                    .collect();
                assert!(!fast.is_empty(), "the vec4 kernel reaches the target");
                let moves = |k: Kernel| {
                    if concat {
                        measure::concat_plan_of(model, *t, split, Some(k), &TRACE.limits).is_ok()
                    } else {
                        measure::plan_of(model, *t, split, Some(k), &TRACE.limits).is_ok()
                    }
                };
                match fast.into_iter().find(|&k| moves(k)) {
                    None => continue,
                    Some(k) => format!("{ratio:.2}, listed Rate, but {k:?} moves it"),
                }
            }
        };
        failed.push(format!("{case}: {why}"));
    }
    failed
}

#[test]
fn gpu_class_plans_of_split_bench_are_coalesced() {
    let splits = bench_splits();
    let mut missed = Vec::new();
    for (class, model) in GPU_CLASSES {
        let rows = traced(class, model, &splits, TRACE);
        assert_targets(&rows);
        missed.extend(priced(&rows, &splits, model, false));
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// split_bench's `--narrow` shapes (columns, unbinds, thirds,
/// 511/1/511) and the concats that mirror them. Its M-RoPE sections (201
/// MB) pass one binding, so their plan cuts the tensor into windows that a
/// tensor shrunk for tracing does not need: the sweep traces them at 3 MB.
#[test]
fn gpu_class_plans_of_the_narrow_shapes_are_coalesced() {
    let mut splits = narrow_splits();
    let window = TRACE.limits.max_storage_buffer_binding_size as usize;
    splits.retain(|(_, t, split)| {
        let elements: usize = split.input_shape().iter().product();
        elements * t.bit_width().unwrap_or(8) as usize / 8 <= window
    });
    assert_eq!(splits.len(), 6);
    let mut missed = Vec::new();
    for (class, model) in GPU_CLASSES {
        let rows = traced(class, model, &splits, TRACE);
        assert_targets(&rows);
        missed.extend(priced(&rows, &splits, model, false));
        let concat = TraceOptions {
            concat: true,
            ..TRACE
        };
        let rows = traced(class, model, &splits, concat);
        assert_targets(&rows);
        missed.extend(priced(&rows, &splits, model, true));
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// What a GPU-class plan reads in all (`Coalescing::loaded_bytes`: each
/// sector once per dispatch), traced whole on few rows: a plan of one
/// dispatch reads its input at most 1.1x (issue 38's target); a plan of
/// several never reads it more than once per dispatch, and a staged plan
/// (separate destinations past one dispatch's, where the class model
/// prices re-reading above a pass more) reads its input once and its
/// scratch once: at most 2x in all (issue 38's target).
#[test]
fn gpu_class_plans_read_their_input_once_per_dispatch() {
    let whole = TraceOptions {
        rows: 32,
        most: 150_000,
        ..TRACE
    };
    let mut splits = bench_splits();
    splits.extend(concat_splits());
    splits.extend(sweep());
    let (mut staged, mut rereads) = (0, 0);
    for (class, model) in GPU_CLASSES {
        for r in traced(class, model, &splits, whole) {
            let Some(c) = r.by_warp.iter().find(|c| c.warp == 32) else {
                continue;
            };
            // A tensor of few rows (a split on axis 0) is traced at full
            // size, in windows where it is large: nothing to say of it.
            let Some(reads) = c.reads(r.read_bytes) else {
                assert!(
                    r.traced_rows <= whole.rows,
                    "{} under {class}: shrunk, yet traced in windows",
                    r.case
                );
                continue;
            };
            if r.dispatches == 1 {
                assert!(reads <= 1.1, "{} under {class}: reads {reads:.2}", r.case);
            } else if r.staged {
                // Staged: the input loaded once, the scratch once more.
                let all = c.all_reads(r.read_bytes).unwrap_or(f64::INFINITY);
                assert!(
                    reads <= 1.1 && all <= 2.1,
                    "{} under {class}: staged, reads {reads:.2}, with the scratch {all:.2}",
                    r.case
                );
                staged += 1;
                eprintln!(
                    "{} under {class}: staged in {} dispatches, reads {reads:.2}x, \
                     {all:.2}x with the scratch",
                    r.case, r.dispatches
                );
            } else {
                assert!(
                    reads <= r.dispatches as f64 + 0.1,
                    "{} under {class}: reads {reads:.2} in {} dispatches",
                    r.case,
                    r.dispatches
                );
                eprintln!(
                    "{} under {class}: {} dispatches read {reads:.2}x",
                    r.case, r.dispatches
                );
                if reads > 2.0 && input_bytes(&splits, &r.case) >= 1 << 16 {
                    assert_staging_costs_more(class, model, &splits, &r.case);
                    rereads += 1;
                }
            }
        }
    }
    // The sweep's wide column splits stage under both GPU classes; issue
    // 38's own [4096, 31] columns are re-read under both in f16 (in f32
    // they stage, since row words ranks below the funnel).
    assert!(staged >= 8, "{staged} staged plans traced");
    assert!(rereads >= 2, "{rereads} re-read plans past 2x traced");
}

/// The bytes of `case`'s whole input (a trace shrinks it).
fn input_bytes(splits: &[(String, ElementType, ResolvedSplit)], case: &str) -> u64 {
    let (_, t, split) = splits.iter().find(|(name, ..)| name == case).unwrap();
    let elements: usize = split.input_shape().iter().product();
    (elements as u64 * u64::from(t.bit_width().unwrap())).div_ceil(8)
}

/// Issue 38 asks that a plan of several dispatches load at most 2x its
/// input from 64 KiB up. Where a GPU-class plan of 64 KiB or more re-reads
/// past that, staging would not pay: its unstaging takes as many
/// dispatches (or one copy command an output) as the re-reading plan
/// does, so staging adds a whole pass (5-10 us of fixed cost) to save
/// loads that take less (and come from the L2 cache, which holds the
/// whole input). Asserted with the class model's own figures (discrete:
/// f16 [4096, 31] re-read 57 us, staged 79 us; integrated: f32 [4096, 31]
/// 102 us against 110 us): what a GPU would have to refute.
fn assert_staging_costs_more(
    class: &str,
    model: CostModel,
    splits: &[(String, ElementType, ResolvedSplit)],
    case: &str,
) {
    let (_, t, split) = splits.iter().find(|(name, ..)| name == case).unwrap();
    let plan = |staging| {
        let options = PlanOptions::default()
            .strategy(Strategy::Auto(model))
            .placement(Placement::Separate)
            .in_compute_pass()
            .staging(staging);
        SplitPlan::new(split, *t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap()
    };
    let (staged, reread) = (plan(true), plan(false));
    assert!(staged.is_staged() && !reread.is_staged(), "{case}");
    let (s, r) = (
        model.traffic_seconds(&staged) * 1e6,
        model.traffic_seconds(&reread) * 1e6,
    );
    eprintln!(
        "{case} under {class}: re-read {r:.1} us in {} dispatches, staged {s:.1} us in {}",
        reread.dispatch_count(),
        staged.dispatch_count()
    );
    assert!(
        s > r,
        "{case} under {class}: staged {s:.1} us, re-read {r:.1} us"
    );
}

/// One-element columns, as many as a native device binds in a dispatch
/// (30 under lavapipe's limits less the trace's own binding), and their
/// concat: one dispatch of row blocks staged in a loop, every load and
/// store coalesced, the input read once. (Under WebGPU's defaults the same splits take five
/// dispatches of narrow words: issue 38's open part.)
#[test]
fn columns_a_dispatch_binds_are_staged_in_one_pass() {
    let native = TraceOptions {
        rows: 64,
        most: 150_000,
        limits: PlanLimits {
            max_storage_buffers_per_shader_stage: PlanLimits::LAVAPIPE
                .max_storage_buffers_per_shader_stage
                - 1,
            ..PlanLimits::LAVAPIPE
        },
        ..TRACE
    };
    let columns = |shape: [usize; 2], t| {
        let split = ResolvedSplit::new(&shape, 1, vec![1; shape[1]], true).unwrap();
        (format!("{t} {shape:?} columns"), t, split)
    };
    let splits = [
        columns([512, 30], ElementType::Float16),
        columns([4096, 30], ElementType::Float),
    ];
    // And joined back: the pieces staged into the tensor's rows in
    // workgroup memory (before, the concat assembled a tensor word a lane
    // from one-element pieces: 1,439 µs against a shader copy's 39 for
    // f16 [1M, 31] on an H200).
    let joined = TraceOptions {
        concat: true,
        ..native
    };
    for (class, model) in GPU_CLASSES {
        for options in [native, joined] {
            let rows = traced(class, model, &splits, options);
            assert_targets(&rows);
            for r in &rows {
                assert_eq!(
                    (r.kernel.as_str(), r.dispatches),
                    ("row_blocks", 1),
                    "{}",
                    r.case
                );
                let w32 = r.by_warp.iter().find(|c| c.warp == 32).unwrap();
                assert_eq!(w32.reads(r.read_bytes), Some(1.0), "{}", r.case);
            }
        }
    }
}

/// The concats that mirror split_bench's cases and the sweep, and
/// split_bench's own concat cases, planned by the GPU classes: held to the
/// same targets.
#[test]
fn gpu_class_plans_of_concats_are_coalesced() {
    let concat = TraceOptions {
        concat: true,
        ..TRACE
    };
    let mut splits = bench_splits();
    splits.extend(concat_splits());
    splits.extend(sweep());
    // A split whose windows do not cover its axis (tensor_split's) has no
    // concat mirror.
    splits.retain(|(_, _, split)| wgpu_split::ResolvedConcat::inverse_of(split).is_some());
    let mut staged = Vec::new();
    let mut missed = Vec::new();
    for (class, model) in GPU_CLASSES {
        let rows = traced(class, model, &splits, concat);
        assert_targets(&rows);
        missed.extend(priced(&rows, &splits, model, true));
        staged.extend(
            rows.iter()
                .filter(|r| r.staged)
                .map(|r| (class, r.case.clone())),
        );
    }
    // The concats of the sweep's wide columns join staged: the pieces into
    // the scratch, then one pass of row blocks into the tensor.
    assert!(staged.len() >= 4, "{staged:?}");
    assert!(missed.is_empty(), "{missed:#?}");
}

#[test]
fn gpu_class_plans_of_the_sweep_are_coalesced() {
    let splits = sweep();
    let mut missed = Vec::new();
    for (class, model) in GPU_CLASSES {
        let rows = traced(class, model, &splits, TRACE);
        assert_targets(&rows);
        missed.extend(priced(&rows, &splits, model, false));
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// Lavapipe's plans of split_bench (blocked lanes, the model's kernel for
/// a compute pass): (case, kernel, load and store sectors per ideal at
/// W = 32, in hundredths). Blocked stretches touch twice the sectors a
/// warp needs on a GPU, which lavapipe's 8-lane SIMD rewards.
const SOFTWARE_PINS: [(&str, &str, u32, u32); 14] = [
    ("f32_4096x4096_axis0_4", "row_copies", 200, 200),
    ("f32_64x1024x256_axis1_4", "row_copies", 200, 200),
    ("f32_4096x4096_axis1_4", "row_copies", 200, 200),
    ("f16_1048576x6_axis1_123", "row_blocks", 200, 183),
    ("u8_4096x4097_axis1_2", "row_streams", 200, 200),
    ("i4_4096x4099_axis1_3", "row_streams", 196, 196),
    ("f32_1000x4096_seq", "row_copies", 200, 200),
    ("f16_8x512x2304_qkv", "row_copies", 200, 200),
    ("f32_1x84x8400_yolo", "vec4", 196, 196),
    ("f32_1x8400x84_yolo_t", "vec4", 200, 195),
    ("f32_1x3x640x640_ch", "row_copies", 200, 200),
    ("f32_4096x4097_odd_words", "row_streams", 199, 200),
    ("f32_1x8400x85_yolov5", "row_streams", 205, 193),
    ("f32_4096x1024_tensor_split", "row_copies", 200, 200),
];

#[test]
fn lavapipes_own_plans_keep_their_blocked_stretches() {
    let rows = traced("software", CostModel::LAVAPIPE, &bench_splits(), TRACE);
    let hundredths = |x: f64| (x * 100.0).round() as u32;
    let actual: Vec<(String, String, u32, u32)> = rows
        .iter()
        .map(|r| {
            let w32 = r.by_warp.iter().find(|c| c.warp == 32).expect("dispatches");
            (
                r.case.clone(),
                r.kernel.clone(),
                hundredths(w32.loads.sector_ratio()),
                hundredths(w32.stores.sector_ratio()),
            )
        })
        .collect();
    let pinned: Vec<(String, String, u32, u32)> = SOFTWARE_PINS
        .iter()
        .map(|&(c, k, l, s)| (c.to_string(), k.to_string(), l, s))
        .collect();
    assert_eq!(actual, pinned, "\n{}", table(&rows));
    assert!(rows.iter().all(|r| r.lanes == "blocked"));
}

/// Every split the suites know: each kernel's samples, split_bench's
/// cases and the sweep.
fn corpus() -> Vec<(String, ElementType, ResolvedSplit)> {
    let mut splits: Vec<(String, ElementType, ResolvedSplit)> = Kernel::ALL
        .into_iter()
        .flat_map(wgpu_split::plan::internals::samples)
        .map(|(_, split, t)| (format!("{t} {:?}", split.input_shape()), t, split))
        .collect();
    splits.extend(bench_splits());
    splits.extend(sweep());
    splits
}

/// `kernel` forced, striped, on each split of the corpus (by name): its
/// loads' and stores' ideal sectors against those touched at W = 32, and
/// the ideal requests (vec4 lanes, 512 bytes a request) against those
/// issued, for the splits it moves.
fn trace_efficiency(kernel: Kernel) -> Vec<(String, Efficiency)> {
    let gpu = common::gpu("coalescing").expect("an adapter");
    let options = TraceOptions {
        rows: 64,
        most: 2048,
        kernel: Some(kernel),
        ..TRACE
    };
    // Tensors past 8 MiB (after the rows are shrunk) only repeat patterns
    // the others show, at a cost in time.
    let small = |t: ElementType, split: &ResolvedSplit| {
        let rows: usize = split.input_shape()[..split.axis()].iter().product();
        let inner: usize = split.input_shape()[split.axis()..].iter().product();
        t.byte_len(rows.min(64) * inner)
            .is_some_and(|b| b <= 8 << 20)
    };
    let mut efficiencies = Vec::new();
    for (name, t, split) in corpus().into_iter().filter(|(_, t, s)| small(*t, s)) {
        let model = CostModel::DISCRETE_GPU;
        let Ok(row) = trace_case(gpu, &name, "discrete", model, t, &split, options) else {
            continue; // the kernel does not move this split
        };
        assert!(row.exact, "{name}, {kernel} forced: an output differs");
        for c in row.by_warp.iter().filter(|c| c.warp == 32) {
            let sectors = c.loads.sectors + c.stores.sectors;
            let ideal = c.loads.ideal_sectors + c.stores.ideal_sectors;
            let requests = c.loads.requests + c.stores.requests;
            let ideal_requests = c.loads.bytes.div_ceil(512) + c.stores.bytes.div_ceil(512);
            efficiencies.push((
                name.clone(),
                [
                    ideal as f64 / sectors as f64,
                    ideal_requests as f64 / requests as f64,
                ],
            ));
        }
    }
    efficiencies
}

/// A trace's efficiency: of sectors, of requests.
type Efficiency = [f64; 2];

/// The mean efficiencies of `a` and of `b` over the splits both move.
fn on_common_splits(
    a: &[(String, Efficiency)],
    b: &[(String, Efficiency)],
) -> Option<(Efficiency, Efficiency, usize)> {
    let common: Vec<(Efficiency, Efficiency)> = a
        .iter()
        .filter_map(|(name, ea)| b.iter().find(|(n, _)| n == name).map(|(_, eb)| (*ea, *eb)))
        .collect();
    let n = common.len();
    (n > 0).then(|| {
        let mean = |f: &dyn Fn(&(Efficiency, Efficiency)) -> f64| {
            common.iter().map(f).sum::<f64>() / n as f64
        };
        (
            [mean(&|c| c.0[0]), mean(&|c| c.0[1])],
            [mean(&|c| c.1[0]), mean(&|c| c.1[1])],
            n,
        )
    })
}

#[test]
fn gpu_classes_rank_the_kernels_as_their_traces_do() {
    // Kernels ranked by rate (the first ones are tried whenever they fit,
    // the word kernel last), compared pair by pair on the splits both move
    // (striped, W = 32): one whose modules touch clearly fewer sectors, or
    // issue clearly fewer requests, per byte there and are not clearly
    // worse by the other count ranks at least as high on every GPU class.
    // Where the counts disagree (4-byte lanes: row words touch fewer
    // sectors than the funnel but issue four times its requests), the
    // trace does not order the pair: the H200's measurements do
    // (docs/DEVICE.md).
    let ranked = [
        Kernel::RowWords,
        Kernel::RowBlocks,
        Kernel::Funnel,
        Kernel::Words,
    ];
    let traces: Vec<(Kernel, Vec<(String, Efficiency)>)> =
        ranked.iter().map(|&k| (k, trace_efficiency(k))).collect();
    let mut ordered = 0;
    for (a, ta) in &traces {
        for (b, tb) in &traces {
            let Some((ea, eb, n)) = on_common_splits(ta, tb) else {
                continue;
            };
            let better = (0..2).any(|i| ea[i] > eb[i] + 0.02);
            let never_worse = (0..2).all(|i| ea[i] >= eb[i] - 0.02);
            if better && never_worse {
                ordered += 1;
                for (class, model) in GPU_CLASSES {
                    let rate = |k: Kernel| model.gather_bytes_per_second.get(k);
                    assert!(
                        rate(*a) >= rate(*b),
                        "{class}: {a} ({:.3} of the ideal sectors, {:.3} of the ideal requests \
                         on {n} splits) ranks below {b} ({:.3}, {:.3})",
                        ea[0],
                        ea[1],
                        eb[0],
                        eb[1]
                    );
                }
            }
        }
    }
    // Row blocks over the funnel and the words kernel, the funnel over the
    // words kernel, at least.
    assert!(ordered >= 3, "{ordered} pairs ordered by their traces");
}

#[test]
#[ignore = "prints the kernels' trace efficiencies, pair by pair"]
fn print_trace_efficiencies() {
    let traces: Vec<(Kernel, Vec<(String, Efficiency)>)> = Kernel::ALL
        .iter()
        .map(|&k| (k, trace_efficiency(k)))
        .collect();
    for (a, ta) in &traces {
        for (b, tb) in &traces {
            if let Some((ea, eb, n)) = on_common_splits(ta, tb) {
                println!(
                    "{a} {:.3} (requests {:.3}) against {b} {:.3} (requests {:.3}) on {n} splits",
                    ea[0], ea[1], eb[0], eb[1]
                );
            }
        }
    }
}
