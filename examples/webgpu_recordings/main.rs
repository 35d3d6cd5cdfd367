//! Writes what encodes record, with everything needed to execute them and
//! check the result, for the Dawn replay (`tests/dawn/replay.mjs`, which
//! validates) and the browser suite (`tests/browser/run.mjs`, which executes
//! in headless Chromium): every kernel in both placements, split_bench's
//! cases scaled down, every element width, the frameworks' windows (empty,
//! overlapping, gapped), 1 to 100 outputs, each into buffers of their own,
//! into one page packed at 4- and 16-byte steps and (plans without copies)
//! into the input's page after the input, all planned for WebGPU's default
//! limits. Then the concats (`concat.rs`): the inverse of every split case
//! that has one and concats of their own (a tensor given twice, inputs
//! that take no part, copies), every kernel that moves concats in both
//! placements and lane orders, the inputs in buffers of their own, packed
//! pages, the output's page, or sharing one region. Then the permuted
//! moves (`permuted.rs`): attention heads, YOLOv8's distribution head and
//! transposes of the fastest axis, split and concatenated back, in both
//! lane orders and three layouts. Beside each recording,
//! every buffer's bytes before the operator (guard bytes around every
//! region, the tensors read) and after it (the host path's outputs, every
//! other byte unchanged).
//!
//! ```text
//! cargo run --example webgpu_recordings -- OUT.json
//! node tests/dawn/replay.mjs OUT.json
//! node --experimental-websocket tests/browser/run.mjs OUT.json
//! ```
//!
//! `OUT.json` names its bytes, `OUT.bin`, written beside it. With
//! `--timing`, it writes the browser timing's cases instead (`timing.rs`;
//! `--quick`: split_bench's `--quick` sizes).
//!
//! Needs no GPU: plans, bindings and the host path are plain data and CPU.

/// split_bench's cases, for the timing.
#[path = "../split_bench/cases.rs"]
#[allow(dead_code)]
mod bench_cases;
mod cases;
mod concat;
mod concat_cases;
mod concat_layout;
mod contents;
mod layout;
mod onnx_nodes;
mod permuted;
mod permuted_layouts;
mod timing;
mod writer;

use std::collections::HashSet;
use std::path::Path;

use cases::{
    Case, Forced, bench_cases, count_cases, kernel_cases, staged_cases, width_cases, window_cases,
};
use concat::ConcatSuite;
use contents::{Rng, split_placed};
use layout::{Layout, regions};
use serde_json::json;
use wgpu_split::HostTensor;
use wgpu_split::plan::internals::{PlainRegion, Recording};
use wgpu_split::plan::{
    CostModel, Kernel, LaneOrder, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use writer::Writer;

/// Both placements.
const PLACEMENTS: [Placement; 2] = [Placement::Separate, Placement::Arena];

/// Both lane orders, by the cost model that picks each: blocked
/// (lavapipe's model) and striped (a GPU's).
const LANES: [(&str, Strategy); 2] = [
    ("blocked", Strategy::Auto(CostModel::LAVAPIPE)),
    ("striped", Strategy::Auto(CostModel::DISCRETE_GPU)),
];

/// The strategies the varied cases are planned with.
const STRATEGIES: [(&str, Strategy); 5] = [
    ("lavapipe", Strategy::Auto(CostModel::LAVAPIPE)),
    ("discrete", Strategy::Auto(CostModel::DISCRETE_GPU)),
    ("gather", Strategy::Gather),
    ("per_output", Strategy::GatherPerOutput),
    ("copy", Strategy::Copy),
];

/// `kernel` forced in one form, in both placements and both lane orders,
/// recorded inside a compute pass: each variant's name and options.
fn kernel_variants((kernel, form): Forced) -> Vec<(String, PlanOptions)> {
    let mut variants = Vec::new();
    for placement in PLACEMENTS {
        for (order, strategy) in LANES {
            let options = PlanOptions::default()
                .strategy(strategy)
                .in_compute_pass()
                .kernel(kernel)
                .form(form)
                .placement(placement);
            variants.push((format!("{} {order}", placement.name()), options));
        }
    }
    variants
}

/// A varied case's variants: every strategy in both placements and, where
/// `forced`, every kernel forced in each of its forms (gathered); each
/// variant's name and options.
fn varied_variants(forced: bool) -> Vec<(String, PlanOptions)> {
    let mut variants = Vec::new();
    for placement in PLACEMENTS {
        for (s, strategy) in STRATEGIES {
            let options = PlanOptions::default()
                .strategy(strategy)
                .placement(placement);
            variants.push((format!("{} {s}", placement.name()), options));
        }
        let forms = wgpu_split::plan::internals::kernel_forms();
        for (kernel, form) in forms.into_iter().filter(|_| forced) {
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .kernel(kernel)
                .form(form)
                .placement(placement);
            let name = format!("{} {kernel:?} {}", placement.name(), form.name());
            variants.push((name, options));
        }
    }
    variants
}

/// A staged plan's variants: encoded by the cost model (copies out of the
/// scratch where they are whole words), and in a compute pass.
fn staged_variants() -> Vec<(String, PlanOptions)> {
    let staged = PlanOptions::default().staging(true);
    vec![
        ("staged".to_string(), staged),
        ("staged in a pass".to_string(), staged.in_compute_pass()),
    ]
}

/// A plan to record, its case (an index into the cases) and its name.
struct Planned {
    name: String,
    case: usize,
    plan: SplitPlan,
}

/// The split plans of the suite, their cases, and the kernel forms that
/// move splits (their own cases plan with them).
struct SplitPlans {
    cases: Vec<Case>,
    plans: Vec<Planned>,
    kernels: Vec<Forced>,
}

/// Every plan of the suite, each once (a strategy or kernel that plans the
/// same as an earlier one adds nothing), and the cases they split; fails
/// unless every kernel that moves splits runs in both placements and lane
/// orders; and the kernels that move splits.
fn plans() -> Result<SplitPlans, String> {
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let mut all_cases = Vec::new();
    let mut planned = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |cases: &mut Vec<Case>, name: String, c: usize, options: PlanOptions| {
        let case = &cases[c];
        if let Ok(plan) = SplitPlan::new(&case.split, case.element_type, &limits, &options)
            && seen.insert(plan.clone())
        {
            planned.push(Planned {
                name,
                case: c,
                plan,
            });
        }
    };
    let mut required = Vec::new();
    // Each kernel's cases in both placements and both lane orders.
    for (kernel, c) in kernel_cases() {
        all_cases.push(c);
        let i = all_cases.len() - 1;
        for (variant, options) in kernel_variants(kernel) {
            let case = &all_cases[i];
            if SplitPlan::new(&case.split, case.element_type, &limits, &options).is_ok() {
                required.push(kernel);
            }
            let name = format!("{} {variant}", all_cases[i].name);
            add(&mut all_cases, name, i, options);
        }
    }
    // Every kernel that can move the split, forced, for the widths and
    // windows (split_bench's cases take the strategies' kernels: forcing
    // each there compiled 90 more modules for little more coverage).
    let varied = [
        (bench_cases(), false),
        (width_cases(), true),
        (window_cases(), true),
    ];
    for (c, forced) in varied
        .into_iter()
        .flat_map(|(cases, forced)| cases.into_iter().map(move |c| (c, forced)))
    {
        all_cases.push(c);
        let i = all_cases.len() - 1;
        for (variant, options) in varied_variants(forced) {
            let name = format!("{} {variant}", all_cases[i].name);
            add(&mut all_cases, name, i, options);
        }
    }
    for c in count_cases() {
        all_cases.push(c);
        let i = all_cases.len() - 1;
        for placement in PLACEMENTS {
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .placement(placement);
            let name = format!("{} {}", all_cases[i].name, placement.name());
            add(&mut all_cases, name, i, options);
        }
        // Past one dispatch's destinations: staged through the scratch,
        // encoded (copies out where whole words) and in a compute pass.
        if [8, 9, 15, 31, 50, 100].contains(&all_cases[i].split.output_count()) {
            for (variant, options) in staged_variants() {
                let name = format!("{} {variant}", all_cases[i].name);
                add(&mut all_cases, name, i, options);
            }
        }
    }
    for c in staged_cases() {
        all_cases.push(c);
        let i = all_cases.len() - 1;
        for (variant, options) in staged_variants() {
            let name = format!("{} {variant}", all_cases[i].name);
            add(&mut all_cases, name, i, options);
        }
    }
    let ran: Vec<_> = planned
        .iter()
        .map(|p| {
            let lanes = p.plan.shaders().first().map(|s| s.lanes());
            ((p.plan.kernel(), p.plan.form()), p.plan.placement(), lanes)
        })
        .collect();
    check_coverage("split", &required, &ran)?;
    Ok(SplitPlans {
        cases: all_cases,
        plans: planned,
        kernels: required,
    })
}

/// Fails unless every kernel in `required` (those whose own cases plan
/// with them forced for `what`: a kernel added to [`Kernel::ALL`] joins
/// the suite through its samples and the forced variants) runs in both
/// placements and both lane orders among the plans that `ran` (kernel,
/// placement, first module's lanes); and unless every kernel moves splits
/// or concats. This says when no case gives a kernel work.
fn check_coverage(
    what: &str,
    required: &[Forced],
    ran: &[(Forced, Placement, Option<LaneOrder>)],
) -> Result<(), String> {
    let orders = [LaneOrder::Blocked, LaneOrder::Striped];
    let missing: Vec<String> = wgpu_split::plan::internals::kernel_forms()
        .into_iter()
        .filter(|k| required.contains(k))
        .flat_map(|k| PLACEMENTS.map(|p| (k, p)))
        .flat_map(|(k, p)| orders.map(|l| (k, p, l)))
        // Row blocks and the funnel join concats with striped lanes only
        // (row blocks' looped form, `RowBlocks::new`; the funnel's concat
        // streams, `ConcatStreams`).
        .filter(|&(k, _, l)| {
            let striped_only = matches!(k.0, Kernel::RowBlocks | Kernel::Funnel);
            !(what == "concat" && striped_only && l == LaneOrder::Blocked)
        })
        .filter(|&(k, p, l)| !ran.contains(&(k, p, Some(l))))
        .map(|((k, f), p, l)| format!("{k:?} {} {} {}", f.name(), p.name(), l.name()))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no recorded {what} plan runs {}",
            missing.join(", ")
        ))
    }
}

/// A case's input (pseudo-random bytes, seeded by its index) and the host
/// path's outputs.
fn case_data(index: usize, case: &Case) -> Result<(Vec<u8>, Vec<Vec<u8>>), wgpu_split::Error> {
    let t = case.element_type;
    let count = case.split.input_shape().iter().product();
    let len = t.byte_len(count).expect("a fixed-width type");
    let bytes = Rng::new(index as u32 + 1).bytes(len);
    let input = HostTensor::from_raw(t, case.split.input_shape(), bytes.clone())?;
    let outputs = input
        .split(&case.split)?
        .iter()
        .map(|o| o.as_bytes().map(<[u8]>::to_vec))
        .collect::<Result<_, _>>()?;
    Ok((bytes, outputs))
}

/// One recording of the suite: its plan, the regions it was bound to and
/// what it records.
struct Recorded<'p> {
    name: String,
    planned: &'p Planned,
    input: PlainRegion,
    destinations: Vec<PlainRegion>,
    recording: Recording,
}

/// Every plan in every layout it accepts.
fn record(plans: &[Planned]) -> Result<Vec<Recorded<'_>>, String> {
    let mut recorded = Vec::new();
    for p in plans {
        for (l, layout) in Layout::all(&p.plan) {
            let (input, destinations) = regions(&p.plan, layout);
            let recording = p
                .plan
                .recording(&input, &destinations)
                .map_err(|e| format!("{}, {l}: {e}", p.name))?;
            recorded.push(Recorded {
                name: format!("{}, {l}", p.name),
                planned: p,
                input,
                destinations,
                recording,
            });
        }
    }
    Ok(recorded)
}

/// Writes the suite: `path` (JSON) and its bytes beside it.
fn write_suite(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let SplitPlans {
        cases,
        plans,
        kernels: split_kernels,
    } = plans()?;
    let concats = ConcatSuite::new()?;
    let idle: Vec<String> = Kernel::ALL
        .into_iter()
        .filter(|&k| {
            let moves = |forced: &[Forced]| forced.iter().any(|&(f, _)| f == k);
            !moves(&split_kernels) && !moves(concats.kernels())
        })
        .map(|k| k.name().to_string())
        .collect();
    if !idle.is_empty() {
        return Err(format!(
            "kernels that move neither splits nor concats: {}",
            idle.join(", ")
        )
        .into());
    }
    let recordings = record(&plans)?;
    let concat_recordings = concats.record()?;
    let permuted = permuted::PermutedSuite::new()?;
    let permuted_recordings = permuted.record()?;
    let mut writer = Writer::new(
        recordings
            .iter()
            .map(|r| &r.recording)
            .chain(concat_recordings.iter().map(|r| &r.recording))
            .chain(permuted_recordings.iter().map(|r| &r.recording)),
    );
    let data: Vec<_> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| case_data(i, c))
        .collect::<Result<_, _>>()?;
    for r in &recordings {
        let (input, outputs) = &data[r.planned.case];
        let outputs: Vec<&[u8]> = outputs.iter().map(Vec::as_slice).collect();
        let placed = split_placed(&r.planned.plan, input, &outputs, &r.input, &r.destinations);
        writer.push("split", &r.name, &r.recording, placed);
    }
    concats.write(&mut writer, &concat_recordings)?;
    permuted.write(&mut writer, &permuted_recordings);
    let blob_name = blob_path(path);
    let doc = json!({
        "format": "wgpu-split recordings 3",
        "limits": "WebGPU default",
        "blob": Path::new(&blob_name).file_name().and_then(|n| n.to_str()),
        "modules": writer.modules(),
        "recordings": writer.entries(),
    });
    let modules = writer.modules().len();
    let bytes = writer.into_bytes();
    write(&blob_name, &bytes)?;
    write(path, serde_json::to_string(&doc)?.as_bytes())?;
    let (concat_plans, concat_cases) = concats.counts();
    let (permuted_count, permuted_cases) = permuted.counts(&permuted_recordings);
    println!(
        "{} split recordings of {} plans of {} cases, {} concat recordings of {} plans of {} \
         cases, {} permuted recordings of {} cases, {} modules, {} bytes of data: {path}",
        recordings.len(),
        plans.len(),
        cases.len(),
        concat_recordings.len(),
        concat_plans,
        concat_cases,
        permuted_count,
        permuted_cases,
        modules,
        bytes.len(),
    );
    Ok(())
}

/// `OUT.json`'s bytes: `OUT.bin`.
fn blob_path(path: &str) -> String {
    let p = Path::new(path);
    p.with_extension("bin").to_string_lossy().into_owned()
}

/// Writes `bytes` to `path`, creating its directory; errors name the path.
fn write(path: &str, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {path}: {e}"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, path] if flag == "--timing" => timing::write_timing(path, false),
        [flag, quick, path] if flag == "--timing" && quick == "--quick" => {
            timing::write_timing(path, true)
        }
        [path] if !path.starts_with("--") => write_suite(path),
        _ => Err("usage: webgpu_recordings [--timing [--quick]] OUT.json".into()),
    }
}
