//! What split_bench prints: the cost models in units, every measured row in
//! aligned columns, and a summary of the ratios narrow enough for a
//! terminal (the JSON report keeps every ratio).

use wgpu_split::gpu::{Calibration, Figure, Timing};
use wgpu_split::plan::CostModel;

use crate::method::Method;
use crate::report::{Row, cases_of, ratio};

/// The widest case name in the suite.
const CASE: usize = 26;

/// `seconds` in µs, with as many decimals as a small figure needs.
fn micros(seconds: f64) -> String {
    let us = seconds * 1e6;
    if us < 10.0 {
        format!("{us:.2} µs")
    } else {
        format!("{us:.1} µs")
    }
}

fn gbps(bytes_per_second: f64) -> String {
    format!("{:.1} GB/s", bytes_per_second / 1e9)
}

/// The figures of a model, one `(what, value)` line each.
fn figures(model: &CostModel) -> Vec<(String, String)> {
    let resident = if model.resident_invocations > 0.0 {
        format!("{:.0}", model.resident_invocations)
    } else {
        "not modeled".to_string()
    };
    let mut lines = vec![
        ("copy bandwidth".into(), gbps(model.copy_bytes_per_second)),
        (
            "per copy command".into(),
            micros(model.copy_command_seconds),
        ),
        ("per dispatch".into(), micros(model.dispatch_seconds)),
        ("host, per copy".into(), micros(model.host_copy_seconds)),
        (
            "host, per dispatch".into(),
            micros(model.host_dispatch_seconds),
        ),
        (
            "load factors (copy, kernel)".into(),
            format!("{}, {}", model.copy_load_factor, model.gather_load_factor),
        ),
        ("lanes".into(), model.lanes.name().to_string()),
        ("resident invocations".into(), resident),
    ];
    lines.extend(
        model
            .gather_bytes_per_second
            .iter()
            .map(|(kernel, rate)| (format!("kernel {}", kernel.name()), gbps(rate))),
    );
    lines
}

/// The planner's model for the adapter's class beside the one
/// `calibrate()` measured, figure by figure.
pub fn print_models(
    class: &str,
    default: &CostModel,
    plan: &CostModel,
    calibration: &Calibration,
    seconds: f64,
) {
    let unsteady: Vec<String> = calibration.unsteady.iter().map(figure_name).collect();
    println!(
        "calibration: {:.2} s, {} (resolution {}); unsteady: {}",
        seconds,
        match calibration.timing {
            Timing::Timestamps => "timestamp queries",
            Timing::WallClock => "wall clock",
        },
        if calibration.resolution_seconds < 1e-6 {
            format!("{:.0} ns", calibration.resolution_seconds * 1e9)
        } else {
            micros(calibration.resolution_seconds)
        },
        if unsteady.is_empty() {
            "none".to_string()
        } else {
            unsteady.join(", ")
        }
    );
    println!();
    let default_head = format!("{class} class");
    println!(
        "{:<28} {:>14} {:>14} {:>14}",
        "cost model", default_head, "plan's", "calibrated"
    );
    let measured = figures(&calibration.model);
    let rows = figures(default)
        .into_iter()
        .zip(figures(plan))
        .zip(measured);
    for (((what, value), (_, planned)), (_, calibrated)) in rows {
        println!("{what:<28} {value:>14} {planned:>14} {calibrated:>14}");
    }
}

fn figure_name(figure: &Figure) -> String {
    match figure {
        Figure::CopyBandwidth => "copy bandwidth".into(),
        Figure::CopyCommand => "copy command".into(),
        Figure::Gather(kernel) => format!("kernel {}", kernel.name()),
        Figure::Dispatch => "dispatch".into(),
    }
}

/// Every row, a blank line between cases, then the summary.
pub fn print_table(rows: &[Row]) {
    println!();
    println!(
        "{:<CASE$} {:<19} {:>8} {:>8} {:>8} {:>10}  note",
        "case", "method", "ms", "GB/s", "/ limit", "record ms"
    );
    let mut last_case = "";
    for r in rows {
        if !last_case.is_empty() && r.case != last_case {
            println!();
        }
        last_case = &r.case;
        let reference = if r.method.is_host() {
            Method::HostMemcpy
        } else {
            Method::CopyLimit
        };
        let limit = ratio(rows, &r.case, r.method, reference).unwrap_or(f64::NAN);
        let record = r
            .record_seconds
            .map_or("-".to_string(), |s| format!("{:.3}", s * 1e3));
        println!(
            "{:<CASE$} {:<19} {:>8.3} {:>8.2} {:>8.2} {:>10}  {}",
            r.case,
            r.method,
            r.seconds * 1e3,
            r.gbps,
            limit,
            record,
            r.note
        );
    }
    println!();
    println!("GB/s counts bytes read + written. / limit: to copy_limit (GPU methods) or");
    println!("host_memcpy (host methods). record ms: host time from creating the encoder");
    println!("to submit returning.");
    print_summary(rows);
}

/// The summary's columns: a two-line heading (numerator, denominator) and
/// the ratio, of speeds (above 1: the numerator is faster).
const SUMMARY: [(&str, &str, Method, Method); 5] = [
    ("plan /", "copy_limit", Method::Plan, Method::CopyLimit),
    ("plan /", "shader_copy", Method::Plan, Method::ShaderCopy),
    ("plan /", "best_fixed", Method::Plan, Method::BestFixed),
    (
        "calibrated /",
        "best_fixed",
        Method::PlanCalibrated,
        Method::BestFixed,
    ),
    (
        "discrete /",
        "shader_copy",
        Method::GpuDiscrete,
        Method::ShaderCopy,
    ),
];

/// A column's width: its longest heading and a space.
const COLUMN: usize = 13;

fn print_summary(rows: &[Row]) {
    println!();
    println!("Speed ratios, each the median of the per-round ratios (above 1: the first");
    println!("is faster; calibrated: plan_calibrated; discrete: gpu_discrete; every ratio");
    println!("is in the JSON report):");
    println!();
    print!("{:<CASE$}", "");
    for (top, ..) in SUMMARY {
        print!("{top:>COLUMN$}");
    }
    println!();
    print!("{:<CASE$}", "case");
    for (_, bottom, ..) in SUMMARY {
        print!("{bottom:>COLUMN$}");
    }
    println!();
    for case in cases_of(rows) {
        print!("{case:<CASE$}");
        for (.., a, b) in SUMMARY {
            match ratio(rows, case, a, b) {
                Some(r) => print!("{r:>COLUMN$.2}"),
                None => print!("{:>COLUMN$}", "n/a"),
            }
        }
        println!();
    }
}

/// The permuted moves' table: fused against split then transposes.
pub fn print_permuted(rows: &[super::permuted::Timed]) {
    if rows.is_empty() {
        return;
    }
    println!(
        "\n{:<28} {:>10} {:>14} {:>8}",
        "permuted move", "fused ms", "two passes ms", "speedup"
    );
    for t in rows {
        let (f, w) = (t.fused_ms, t.two_passes_ms);
        println!("{:<28} {f:>10.3} {w:>14.3} {:>7.2}x", t.name, w / f);
    }
}
