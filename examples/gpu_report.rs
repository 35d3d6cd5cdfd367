//! `gpu_report`: everything a machine with a GPU should tell this project,
//! in one command, unattended, written to `docs/gpu/<adapter>.md`.
//!
//! ```text
//! cargo run --release --example gpu_report -- [--dry-run] [--out DIR]
//! ```
//!
//! It runs, each as its own cargo command on the default adapter:
//! `split_bench` (every method, the calibrated model, the README's table),
//! `access_trace` (every class model's kernels, split_bench's cases and the
//! sweep, sectors per warp request), `lanes_bench` (each generated kernel,
//! striped lanes against blocked ones, timed on this device) and the burn
//! integration's `burn_bench`, and writes their output with the adapter's
//! name, the date and the commit. About 10 minutes on a GPU. `--dry-run`
//! (what CI runs on lavapipe) takes the quick sizes and one to three runs
//! in debug builds, and writes to `target/gpu_report/` unless `--out` says
//! otherwise.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use wgpu_split::gpu::GpuContext;

type Failure = Box<dyn std::error::Error>;

/// One step: a title, the directory it runs in, and its cargo arguments.
struct Step {
    title: &'static str,
    dir: &'static str,
    args: Vec<String>,
}

fn main() -> Result<(), Failure> {
    let mut dry_run = false;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--dry-run" => dry_run = true,
            "--out" => out = Some(args.next().ok_or("--out needs a directory")?.into()),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = out.unwrap_or_else(|| match dry_run {
        true => root.join("target/gpu_report"),
        false => root.join("docs/gpu"),
    });
    let ctx = GpuContext::new_default()?;
    let adapter = ctx.describe();
    let slug = slug(&ctx.adapter.get_info().name);
    drop(ctx);
    let mut report = header(&adapter, dry_run);
    for step in steps(dry_run) {
        let started = Instant::now();
        eprintln!("gpu_report: {} ...", step.title);
        let output = run(root, &step)?;
        let seconds = started.elapsed().as_secs_f64();
        let command = format!("cargo {}", step.args.join(" "));
        let _ = write!(
            report,
            "\n## {}\n\n`{command}` in `{}` ({seconds:.0} s)\n\n```text\n{}\n```\n",
            step.title,
            step.dir,
            output.trim_end()
        );
    }
    std::fs::create_dir_all(&out)?;
    let path = out.join(format!("{slug}.md"));
    std::fs::write(&path, report)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The report's title and provenance.
fn header(adapter: &str, dry_run: bool) -> String {
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".to_string(), |s| s.trim().to_string());
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    let kind = if dry_run {
        "a dry run (quick sizes, debug builds): its figures mean nothing"
    } else {
        "release builds, full sizes"
    };
    format!(
        "# GPU report: {adapter}\n\n{date}, commit {commit}, {kind}. Written by \
         `cargo run --release --example gpu_report`; what each part means: \
         `docs/DEVICE.md` (\"What to measure on a GPU\").\n"
    )
}

/// The steps, at full size or as a dry run.
fn steps(dry_run: bool) -> Vec<Step> {
    let cargo = |dir: &'static str, title: &'static str, example: &str, args: &[&str]| {
        let mut all: Vec<String> = vec!["run".into()];
        if !dry_run {
            all.push("--release".into());
        }
        all.extend(["--example".into(), example.into(), "--".into()]);
        all.extend(args.iter().map(|a| a.to_string()));
        Step {
            title,
            dir,
            args: all,
        }
    };
    let (quick, runs, lanes_runs, burn): (&[&str], &str, &str, &[&str]) = if dry_run {
        (&["--quick"], "1", "1", &["--quick", "--runs", "1"])
    } else {
        (&[], "15", "15", &[])
    };
    let mut bench = vec!["--runs", runs, "--calibrate", "--report"];
    bench.extend(quick);
    let mut lanes = vec!["--runs", lanes_runs];
    lanes.extend(quick);
    vec![
        cargo(".", "split_bench", "split_bench", &bench),
        cargo(
            ".",
            "Access trace, split_bench's cases",
            "access_trace",
            &[],
        ),
        cargo(".", "Access trace, the sweep", "access_trace", &["--sweep"]),
        cargo(".", "Striped against blocked lanes", "lanes_bench", &lanes),
        cargo("integrations/burn", "burn_bench", "burn_bench", burn),
    ]
}

/// Runs one step and returns what it printed (both streams); a step that
/// fails fails the report.
fn run(root: &Path, step: &Step) -> Result<String, Failure> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args(&step.args)
        .current_dir(root.join(step.dir))
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Cargo's own progress lines are noise in a report.
    let stderr: String = stderr
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("Compiling")
                || t.starts_with("Finished")
                || t.starts_with("Running")
                || t.starts_with("Blocking")
                || t.contains("XDG_RUNTIME_DIR"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    if !output.status.success() {
        return Err(format!("{} failed:\n{stdout}\n{stderr}", step.title).into());
    }
    Ok(format!("{stdout}{stderr}"))
}

/// A file name for an adapter: lower case, words joined by dashes.
fn slug(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    words.join("-")
}
