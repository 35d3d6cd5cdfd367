//! `split_bench`: how close the crate's split gets to what the device can do.
//!
//! ```text
//! cargo run --release --example split_bench -- [--quick] [--narrow] [--runs N] [--case NAME]
//!     [--json PATH] [--plot PATH] [--calibrate] [--report] [--cases PATH]
//! cargo run --example split_bench -- --markdown REPORT.json [--full] [--plot PATH]
//! ```
//!
//! Every run calibrates first (`plan_calibrated` plans with what it
//! measured; the JSON keeps both models); `--calibrate` only calibrates,
//! prints the class model beside the calibrated one, and exits without
//! timing a case. `--cases PATH` writes the cases as data (shapes, axes,
//! pieces, bytes counted) for `scripts/torch_peer.py` and exits.
//!
//! `--narrow` adds issue 38's shapes (`cases::narrow_suite`: one-element
//! columns past one dispatch's destinations, rotary sections, an unbind
//! on the last axis, u8 thirds, a one-byte piece between long ones).
//!
//! Then the permuted moves (`permuted.rs`, issue 39: GPT-2's and a
//! grouped-query QKV into attention heads, the head merge, YOLOv8's
//! distribution head), each fused against a split then a transpose of
//! each piece, in the same run (JSON `permuted`; `--case` names one).
//!
//! `--markdown` prints the README's table from a JSON report (`--full`: the
//! table of every method and ratio, `docs/PERFORMANCE.md`'s), draws
//! `--plot` from it too, and exits (no GPU needed).
//!
//! For each case of a fixed suite it measures, on the default adapter and in
//! one process, the crate's planner (`plan`), the forced gather dispatch, two
//! naive baselines, the device's copy and shader limits for the same byte
//! count, the host path and a host memcpy. Every method's output is checked
//! against the host path before it is timed. Device time comes from timestamp
//! queries when the adapter has them (else submit + poll wall time); the
//! figure is the median of `--runs` (default 10) runs after a warm-up, in GB/s
//! counting bytes read + written. The GPU methods run in rounds, one run of
//! each per round; a ratio of two of them is the median of their per-round
//! ratios (the JSON also keeps each ratio of medians, `..._of_medians`).

mod cases;
mod console;
mod gpu_timer;
mod method;
mod permuted;
mod permuted_cases;
mod plot;
mod report;
mod work;

use std::path::Path;
use std::time::Instant;

use cases::{Case, concat_suite, narrow_suite, suite};
use gpu_timer::GpuTimer;
use wgpu_split::gpu::{Calibration, GpuContext, ModelOrigin};
use wgpu_split::plan::{CostModel, DeviceClass, Strategy};

struct Options {
    quick: bool,
    runs: usize,
    case: Option<String>,
    json: Option<String>,
    plot: Option<String>,
    calibrate: bool,
    report: bool,
    markdown: Option<String>,
    full: bool,
    cases: Option<String>,
    narrow: bool,
}

const USAGE: &str = "\
usage: split_bench [--quick] [--narrow] [--runs N] [--case NAME] [--json PATH] [--plot PATH] [--report]
       split_bench --calibrate     calibrate only: print the class model and the calibrated
                                   one, time no case, exit (every run calibrates first anyway)
       split_bench --cases PATH [--quick]   write the cases as data (torch_peer.py) and exit
       split_bench --markdown REPORT.json [--full] [--plot PATH]";

impl Options {
    /// The suite and its concats, and issue 38's shapes with `--narrow`.
    fn cases(&self) -> Vec<Case> {
        let narrow = if self.narrow {
            narrow_suite(self.quick)
        } else {
            Vec::new()
        };
        suite(self.quick)
            .into_iter()
            .chain(concat_suite(self.quick))
            .chain(narrow)
            .collect()
    }
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        runs: 10,
        case: None,
        json: None,
        plot: None,
        calibrate: false,
        report: false,
        markdown: None,
        full: false,
        cases: None,
        narrow: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--narrow" => o.narrow = true,
            "--calibrate" => o.calibrate = true,
            "--report" => o.report = true,
            "--full" => o.full = true,
            "--runs" => {
                o.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?;
                if o.runs == 0 {
                    return Err("--runs must be at least 1".into());
                }
            }
            "--case" => o.case = Some(value("--case")?),
            "--json" => o.json = Some(value("--json")?),
            "--plot" => o.plot = Some(value("--plot")?),
            "--markdown" => o.markdown = Some(value("--markdown")?),
            "--cases" => o.cases = Some(value("--cases")?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("split_bench: {e}");
        std::process::exit(1);
    }
}

/// Writes `contents` to `path`, creating its directory; errors name the
/// path.
fn write_file(path: &str, contents: &[u8]) -> Result<(), String> {
    let parent = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, contents).map_err(|e| format!("cannot write {path}: {e}"))
}

/// The README's table of a JSON report (`full`: every method and ratio),
/// and its plot if asked for.
fn print_markdown(path: &str, options: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let json: serde_json::Value = serde_json::from_str(&text)?;
    let rows = report::rows_from_json(&json)?;
    if options.full {
        print!("{}", report::markdown_full(&rows));
    } else {
        print!("{}", report::markdown(&rows));
    }
    if let Some(plot) = &options.plot {
        let device = &json["device"];
        let caption = format!(
            "{}, {}",
            device["name"].as_str().unwrap_or("unknown adapter"),
            device["started"].as_str().unwrap_or("undated")
        );
        plot_to(&rows, plot, &caption)?;
    }
    Ok(())
}

/// Draws the plot of `rows` to `path`, creating its directory.
fn plot_to(
    rows: &[report::Row],
    path: &str,
    caption: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    plot::ratio_chart(rows, path, caption)?;
    eprintln!("wrote {path}");
    Ok(())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let options = parse_args()?;
    if let Some(path) = &options.markdown {
        return print_markdown(path, &options);
    }
    if let Some(path) = &options.cases {
        let cases: Vec<Case> = options.cases();
        let json = report::cases_json(&cases, options.quick)?;
        write_file(path, serde_json::to_string_pretty(&json)?.as_bytes())?;
        println!("wrote {path}");
        return Ok(());
    }
    let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    let ctx = pollster::block_on(GpuContext::request_with_features(wanted))?;
    let splitter = ctx.splitter()?;
    let timer = GpuTimer::new(&ctx.device, &ctx.queue);
    let info = ctx.adapter.get_info();
    println!("adapter: {}", ctx.describe());
    println!(
        "timing: {}, median of {} runs after a warm-up",
        timer.kind(),
        options.runs
    );
    let class = DeviceClass::of_adapter(&info);
    let default_model = CostModel::for_class(class);
    let plan_model = match splitter.strategy() {
        Strategy::Auto(model) => *model,
        _ => default_model,
    };
    println!(
        "plan's model: {}",
        match splitter.model_origin() {
            ModelOrigin::Class => format!("the {class:?} class's documented one"),
            ModelOrigin::MeasuredAtStart { seconds } => format!(
                "measured on this adapter when the splitter was made ({seconds:.2} s, 3 rounds, the copy probes 4 times a round, once more where a figure read unsteadily: a software adapter)"
            ),
            _ => "given".to_string(),
        }
    );
    // Every run calibrates first: `plan_calibrated` plans with what it
    // measures.
    let calibrated = {
        let started = Instant::now();
        let calibration = Calibration::measure(&splitter)?;
        let seconds = started.elapsed().as_secs_f64();
        console::print_models(
            &format!("{class:?}"),
            &default_model,
            &plan_model,
            &calibration,
            seconds,
        );
        Some(calibration.model)
    };
    if options.calibrate {
        return Ok(());
    }
    let json = options
        .json
        .clone()
        .or_else(|| options.report.then(|| "split_report.json".to_string()));
    let cases: Vec<Case> = options
        .cases()
        .into_iter()
        .filter(|c| options.case.as_deref().is_none_or(|n| n == c.name))
        .collect();
    // The permuted moves run after the splits and concats: all of them, or
    // the one `--case` names.
    let permuted_names: Vec<&str> = permuted::cases(true).iter().map(|c| c.name).collect();
    let permuted_case = options
        .case
        .as_deref()
        .filter(|n| permuted_names.contains(n));
    let run_permuted = options.case.is_none() || permuted_case.is_some();
    if cases.is_empty() && !run_permuted {
        return Err("no case matches --case".into());
    }
    let started = Instant::now();
    // When the run began, in the JSON and the plot's caption.
    let started_utc = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut rows = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        eprintln!(
            "[{}/{}] {} {:?} ({:.0} s elapsed)",
            i + 1,
            cases.len(),
            case.name,
            case.shape,
            started.elapsed().as_secs_f64()
        );
        rows.extend(work::bench_case(
            &splitter,
            calibrated.as_ref(),
            &timer,
            case,
            options.runs,
        )?);
    }
    console::print_table(&rows);
    let permuted_rows = if run_permuted {
        eprintln!(
            "permuted moves ({:.0} s elapsed)",
            started.elapsed().as_secs_f64()
        );
        permuted::bench(
            &splitter,
            &timer,
            options.runs,
            options.quick,
            permuted_case,
        )?
    } else {
        Vec::new()
    };
    console::print_permuted(&permuted_rows);
    if let Some(path) = &json {
        let device = serde_json::json!({
            "name": info.name,
            "backend": format!("{:?}", info.backend),
            "device_type": format!("{:?}", info.device_type),
            "driver": info.driver,
            "driver_info": info.driver_info,
            "class": format!("{class:?}"),
            "default_cost_model": default_model,
            "plan_cost_model": plan_model,
            "plan_model_origin": format!("{:?}", splitter.model_origin()),
            "calibrated_cost_model": calibrated,
            "timing": timer.kind(),
            "runs": options.runs,
            "quick": options.quick,
            "started": started_utc,
        });
        let doc = serde_json::json!({
            "device": device,
            "results": report::results_json(&rows),
            "summary": report::summary_json(&rows),
            "permuted": permuted_rows
                .iter()
                .map(|t| serde_json::json!({
                    "case": t.name,
                    "fused_ms": t.fused_ms,
                    "two_passes_ms": t.two_passes_ms,
                    "speedup": t.two_passes_ms / t.fused_ms,
                }))
                .collect::<Vec<_>>(),
        });
        write_file(path, serde_json::to_string_pretty(&doc)?.as_bytes())?;
        println!("wrote {path}");
    }
    if let Some(path) = &options.plot {
        plot_to(&rows, path, &format!("{}, {started_utc}", info.name))?;
    }
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
