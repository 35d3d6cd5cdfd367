//! `gpu_report`: everything a machine with a GPU should tell this project,
//! run unattended from the GPU bundle, where there is no cargo.
//!
//! ```text
//! scripts/gpu_bundle.sh BUNDLE_DIR            # here: builds the bundle
//! BUNDLE_DIR/run.sh REPORT_DIR [--quick]       # there: loaders, ICD, then this
//! gpu_report --bundle DIR --out REPORT_DIR [--quick] [--budget SECONDS]
//! ```
//!
//! The bundle (`scripts/gpu_bundle.sh`) holds the release binaries of
//! `split_bench`, `lanes_bench`, `onnx_node_test`, the burn integration's
//! `burn_bench`, every GPU test binary, the node-test data and
//! `scripts/torch_peer.py`. This program runs each as a step with a time
//! limit of its own, all of them within `--budget` (470 s: the report fits
//! in 8 minutes on an H100), and writes `REPORT_DIR/<adapter>.md` and
//! `.json`: per case the crate's plan, its best forced strategy, the copy
//! limit and a vec4 shader copy (µs and GB/s) beside torch's own ways on
//! the same device; striped against blocked lanes per kernel; burn's split
//! and cat against the crate's inside burn; the suites' pass and fail
//! counts; the class cost model against the calibrated one; the targets of
//! `docs/DEVICE.md` ("What to measure on a GPU") judged. `--quick` (CI's
//! dry run on lavapipe) takes the quick sizes, one run and 8 times each
//! step's limit.
//!
//! It exits 1, after writing the report, when the report lacks a row for
//! a split_bench case, a lanes_bench row for a generated kernel, a suite's
//! counts or burn's rows, or a suite failed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wgpu_split::gpu::GpuContext;
use wgpu_split::plan::Kernel;

type Failure = Box<dyn std::error::Error>;

/// The GPU test binaries the bundle carries (`tests/<name>.rs`).
const SUITES: [&str; 17] = [
    "gpu",
    "concat_gpu",
    "destinations",
    "packed_pages",
    "stress",
    "device_loss",
    "buffer_checks",
    "caches",
    "coalescing",
    "concat_offsets",
    "cost",
    "executor",
    "memory",
    "onnx_models",
    "windows",
    "permuted_gpu",
    "permuted_trace",
];

struct Options {
    bundle: PathBuf,
    out: PathBuf,
    quick: bool,
    budget: Duration,
}

fn options() -> Result<Options, Failure> {
    let (mut bundle, mut out, mut quick, mut budget) = (None, None, false, 470);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--bundle" => bundle = Some(PathBuf::from(value()?)),
            "--out" => out = Some(PathBuf::from(value()?)),
            "--budget" => budget = value()?.parse()?,
            "--quick" => quick = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    Ok(Options {
        bundle: bundle.ok_or("--bundle DIR is required (the GPU bundle, run by its run.sh)")?,
        out: out.ok_or("--out DIR is required")?,
        quick,
        budget: Duration::from_secs(budget),
    })
}

/// What one step did.
struct Outcome {
    title: String,
    command: String,
    seconds: f64,
    /// "ok", "failed (exit N)", "timed out after N s", "not run: why".
    status: String,
    output: String,
}

impl Outcome {
    fn ok(&self) -> bool {
        self.status == "ok"
    }

    fn json(&self) -> Value {
        json!({"title": self.title, "command": self.command, "seconds": self.seconds, "status": self.status})
    }
}

/// Runs the steps one after another, each within its own limit and what
/// is left of the budget.
struct Runner {
    bundle: PathBuf,
    out: PathBuf,
    deadline: Instant,
    /// Limits are a GPU's; the quick dry run on a software adapter in
    /// debug builds gets this many times as long (its budget still holds).
    scale: u64,
}

impl Runner {
    /// Runs `program args` for at most `limit` seconds; stdout and stderr
    /// go to a log file under `out` (no pipe to fill), read back after.
    fn step(&self, title: &str, program: &Path, args: &[String], limit: u64) -> Outcome {
        let command = format!("{} {}", self.relative(program), args.join(" "));
        let left = self.deadline.saturating_duration_since(Instant::now());
        let limit = Duration::from_secs(limit * self.scale).min(left);
        let not_run = |why: String| Outcome {
            title: title.to_string(),
            command: command.clone(),
            seconds: 0.0,
            status: format!("not run: {why}"),
            output: String::new(),
        };
        if limit < Duration::from_secs(5) {
            return not_run("the report's time budget is spent".into());
        }
        if !program.exists() && program.components().count() > 1 {
            return not_run(format!("{} is not in the bundle", self.relative(program)));
        }
        eprintln!("gpu_report: {title} (at most {} s) ...", limit.as_secs());
        let log = self.out.join(format!("{}.log", slug(title)));
        let started = Instant::now();
        let status = match std::fs::File::create(&log).and_then(|file| {
            let err = file.try_clone()?;
            Command::new(program)
                .args(args)
                .current_dir(&self.bundle)
                .env("WGPU_SPLIT_ROOT", self.bundle.join("data"))
                .stdin(Stdio::null())
                .stdout(file)
                .stderr(err)
                .spawn()
        }) {
            Err(e) => format!("failed to start: {e}"),
            Ok(mut child) => loop {
                match child.try_wait() {
                    Ok(Some(s)) if s.success() => break "ok".to_string(),
                    Ok(Some(s)) => break format!("failed ({s})"),
                    Ok(None) if started.elapsed() > limit => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break format!("timed out after {} s", limit.as_secs());
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                    Err(e) => break format!("lost: {e}"),
                }
            },
        };
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        let output = output
            .lines()
            .filter(|l| !l.contains("XDG_RUNTIME_DIR"))
            .collect::<Vec<_>>()
            .join("\n");
        Outcome {
            title: title.to_string(),
            command,
            seconds: started.elapsed().as_secs_f64(),
            status,
            output,
        }
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.bundle)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("gpu_report: {e}");
            std::process::exit(2);
        }
    }
}

/// Runs every step and writes the report; `Ok(false)` when it is
/// incomplete or a suite failed.
fn run() -> Result<bool, Failure> {
    let o = options()?;
    std::fs::create_dir_all(&o.out)?;
    let ctx = GpuContext::new_default()?;
    let adapter = ctx.describe();
    let slug = slug(&ctx.adapter.get_info().name);
    drop(ctx);
    println!("adapter: {adapter}");
    let runner = Runner {
        bundle: o.bundle.clone(),
        out: o.out.clone(),
        deadline: Instant::now() + o.budget,
        scale: if o.quick { 8 } else { 1 },
    };
    let bin = |name: &str| o.bundle.join("bin").join(name);
    let file = |name: &str| o.out.join(name).display().to_string();
    let strings = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (runs, quick): (&str, &[&str]) = if o.quick {
        ("1", &["--quick"])
    } else {
        ("15", &[])
    };
    let mut steps = Vec::new();
    let with_quick = |mut args: Vec<String>| {
        args.extend(strings(quick));
        args
    };
    // Issue 38's narrow shapes ride along: a GPU is where they matter.
    let cases_args = with_quick(strings(&["--narrow", "--cases", &file("cases.json")]));
    steps.push(runner.step("cases", &bin("split_bench"), &cases_args, 30));
    // A bench's arguments: its runs and the JSON it writes, quick or not.
    let timed = |json: &str| with_quick(strings(&["--runs", runs, "--json", &file(json)]));
    let mut bench = timed("split_bench.json");
    bench.push("--narrow".into());
    steps.push(runner.step("split_bench", &bin("split_bench"), &bench, 200));
    let peer = vec![
        o.bundle.join("torch_peer.py").display().to_string(),
        "--cases".into(),
        file("cases.json"),
        "--out".into(),
        file("torch_peer.json"),
        "--runs".into(),
        runs.into(),
    ];
    steps.push(runner.step("torch peer", Path::new("python3"), &peer, 90));
    let lanes = timed("lanes_bench.json");
    steps.push(runner.step("lanes_bench", &bin("lanes_bench"), &lanes, 60));
    let burn = timed("burn_bench.json");
    steps.push(runner.step("burn_bench", &bin("burn_bench"), &burn, 90));
    let mut suites = Vec::new();
    for suite in SUITES {
        let title = format!("suite {suite}");
        suites.push(runner.step(&title, &o.bundle.join("tests").join(suite), &[], 60));
    }
    let mut node_dirs = Vec::new();
    for set in ["onnx-node", "onnx-extra", "onnx-models/nodes"] {
        let root = o.bundle.join("data/tests/data").join(set);
        let mut dirs: Vec<String> = std::fs::read_dir(&root)
            .map_err(|e| format!("{}: {e}", root.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .map(|p| p.display().to_string())
            .collect();
        dirs.sort();
        node_dirs.extend(dirs);
    }
    let mut node_args = strings(&["--device", "gpu"]);
    let dir_count = node_dirs.len();
    node_args.extend(node_dirs);
    let mut node = runner.step("onnx_node_test", &bin("onnx_node_test"), &node_args, 60);
    node.command = format!(
        "bin/onnx_node_test --device gpu ({dir_count} directories of data/tests/data: onnx-node, onnx-extra, onnx-models/nodes)"
    );
    let read = |name: &str| -> Value {
        std::fs::read_to_string(o.out.join(name))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null)
    };
    let data = Data {
        cases: read("cases.json"),
        bench: read("split_bench.json"),
        peer: read("torch_peer.json"),
        lanes: read("lanes_bench.json"),
        burn: read("burn_bench.json"),
        suites: suites.iter().map(suite_counts).collect(),
        node: node_counts(&node),
    };
    let missing = data.missing();
    let commit = std::fs::read_to_string(o.bundle.join("COMMIT")).unwrap_or_default();
    let mut all_steps: Vec<&Outcome> = steps.iter().collect();
    all_steps.extend(&suites);
    all_steps.push(&node);
    let markdown = report_markdown(
        &adapter,
        commit.trim(),
        o.quick,
        &data,
        &all_steps,
        &missing,
    );
    let report_json = json!({
        "adapter": adapter, "commit": commit.trim(), "quick": o.quick,
        "date": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        "steps": all_steps.iter().map(|s| s.json()).collect::<Vec<_>>(),
        "cases": data.case_rows(), "torch": data.peer, "lanes": data.lanes["rows"],
        "burn": data.burn, "suites": data.suites, "node_tests": data.node,
        "cost_models": {
            "class": data.bench["device"]["default_cost_model"],
            "plan": data.bench["device"]["plan_cost_model"],
            "plan_origin": data.bench["device"]["plan_model_origin"],
            "calibrated": data.bench["device"]["calibrated_cost_model"],
        },
        "targets": data.targets(), "missing": missing,
    });
    let md_path = o.out.join(format!("{slug}.md"));
    std::fs::write(&md_path, markdown)?;
    std::fs::write(
        o.out.join(format!("{slug}.json")),
        serde_json::to_string_pretty(&report_json)?,
    )?;
    println!("wrote {}", md_path.display());
    for m in &missing {
        eprintln!("gpu_report: incomplete: {m}");
    }
    Ok(missing.is_empty())
}

/// A test binary's counts from libtest's `test result:` lines.
fn suite_counts(step: &Outcome) -> Value {
    let (mut passed, mut failed) = (0u64, 0u64);
    let mut seen = false;
    for line in step.output.lines() {
        if let Some(rest) = line.trim().strip_prefix("test result: ") {
            seen = true;
            passed += count_before(rest, " passed");
            failed += count_before(rest, " failed");
        }
    }
    json!({
        "suite": step.title.trim_start_matches("suite "), "status": step.status,
        "passed": seen.then_some(passed), "failed": seen.then_some(failed),
        "seconds": step.seconds,
    })
}

/// onnx_node_test's closing `N passed, M failed` line.
fn node_counts(step: &Outcome) -> Value {
    let line = step.output.lines().rev().find(|l| l.contains(" passed, "));
    json!({
        "status": step.status, "seconds": step.seconds,
        "passed": line.map(|l| count_before(l, " passed")),
        "failed": line.map(|l| count_before(l, " failed")),
    })
}

/// The number just before `word` in `text` (0 when there is none).
fn count_before(text: &str, word: &str) -> u64 {
    text.find(word)
        .and_then(|i| text[..i].rsplit([' ', ';', ',', ':']).next())
        .and_then(|n| n.trim_end_matches('.').parse().ok())
        .unwrap_or(0)
}

/// What the steps wrote, read back.
struct Data {
    cases: Value,
    bench: Value,
    peer: Value,
    lanes: Value,
    burn: Value,
    suites: Vec<Value>,
    node: Value,
}

/// The split_bench methods the report shows per case.
const METHODS: [&str; 4] = ["plan", "best_fixed", "copy_limit", "shader_copy"];

impl Data {
    fn case_names(&self) -> Vec<&str> {
        self.cases["cases"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
            .unwrap_or_default()
    }

    /// split_bench's (seconds, GB/s, note) of `method` on `case`.
    fn bench_row(&self, case: &str, method: &str) -> Option<(f64, f64, String)> {
        let rows = self.bench["results"].as_array()?;
        let r = rows
            .iter()
            .find(|r| r["case"] == case && r["method"] == method)?;
        let note = r["note"].as_str().unwrap_or_default().to_string();
        Some((r["seconds"].as_f64()?, r["gbps"].as_f64()?, note))
    }

    /// torch's rows of `case`: method -> (seconds, GB/s).
    fn peer_rows(&self, case: &str) -> BTreeMap<String, (f64, f64)> {
        let rows = self.peer["rows"].as_array().cloned().unwrap_or_default();
        rows.iter()
            .filter(|r| r["case"] == case)
            .filter_map(|r| {
                let m = r["method"].as_str()?.to_string();
                Some((m, (r["seconds"].as_f64()?, r["gbps"].as_f64()?)))
            })
            .collect()
    }

    /// One row per case: the crate's four methods and torch's.
    fn case_rows(&self) -> Vec<Value> {
        (self.case_names().into_iter())
            .map(|case| {
                let mut row = json!({"case": case});
                for m in METHODS {
                    if let Some((s, g, note)) = self.bench_row(case, m) {
                        row[m] = json!({"us": s * 1e6, "gbps": g, "note": note});
                    }
                }
                for (m, (s, g)) in self.peer_rows(case) {
                    row[m] = json!({"us": s * 1e6, "gbps": g});
                }
                row
            })
            .collect()
    }

    /// What the report lacks for CI's check.
    fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        let names = self.case_names();
        if names.is_empty() {
            missing.push("the cases (split_bench --cases wrote none)".to_string());
        }
        for case in names {
            if self.bench_row(case, "plan").is_none() {
                missing.push(format!("split_bench's plan row of {case}"));
            }
        }
        let lanes = self.lanes["rows"].as_array().cloned().unwrap_or_default();
        for kernel in Kernel::ALL.into_iter().filter(|k| k.is_generated()) {
            if !lanes.iter().any(|r| r["kernel"] == kernel.name()) {
                missing.push(format!("a lanes_bench row of kernel {}", kernel.name()));
            }
        }
        let burn_rows = self.burn["cases"].as_array().map_or(0, Vec::len)
            + self.burn["concat_cases"].as_array().map_or(0, Vec::len);
        if burn_rows == 0 {
            missing.push("burn_bench's rows".to_string());
        }
        for s in &self.suites {
            match (s["passed"].as_u64(), s["failed"].as_u64()) {
                (Some(_), Some(0)) if s["status"] == "ok" => {}
                (Some(p), Some(f)) => missing.push(format!(
                    "suite {} passed: {p} passed, {f} failed, {}",
                    s["suite"], s["status"]
                )),
                _ => missing.push(format!(
                    "the counts of suite {} ({})",
                    s["suite"], s["status"]
                )),
            }
        }
        match (self.node["passed"].as_u64(), self.node["failed"].as_u64()) {
            (Some(p), Some(0)) if p > 0 => {}
            _ => missing.push(format!("a passing onnx_node_test ({})", self.node)),
        }
        missing
    }

    /// The targets of issue 36 per case (None where a figure is missing).
    fn targets(&self) -> Vec<Value> {
        let ratio = |case: &str, a: &str, b: &str| {
            Some(self.bench_row(case, b)?.0 / self.bench_row(case, a)?.0)
        };
        (self.case_names().into_iter())
            .map(|case| {
                let plan = self.bench_row(case, "plan").map(|r| r.0);
                let peer = self.peer_rows(case);
                let per_piece = peer.get("torch_per_piece_copy").map(|r| r.0);
                let fastest = (peer.iter())
                    .filter(|(m, _)| m.as_str() != "torch_d2d_copy")
                    .map(|(_, r)| r.0)
                    .reduce(f64::min);
                json!({
                    "case": case,
                    "plan_over_copy_limit": ratio(case, "plan", "copy_limit"),
                    "plan_over_shader_copy": ratio(case, "plan", "shader_copy"),
                    "plan_over_torch_per_piece": plan.zip(per_piece).map(|(p, t)| t / p),
                    "plan_over_torch_fastest": plan.zip(fastest).map(|(p, t)| t / p),
                })
            })
            .collect()
    }
}

/// The report in markdown.
fn report_markdown(
    adapter: &str,
    commit: &str,
    quick: bool,
    data: &Data,
    steps: &[&Outcome],
    missing: &[String],
) -> String {
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    let kind = match quick {
        true => "a dry run (quick sizes, one run): its figures mean nothing",
        false => "release builds, full sizes, 15 runs",
    };
    let mut md = format!(
        "# GPU report: {adapter}\n\n{date}, commit {commit}, {kind}. Written by the GPU bundle \
         (`scripts/gpu_bundle.sh`, then its `run.sh`); what each part means: `docs/DEVICE.md` \
         (\"What to measure on a GPU\"). GB/s count bytes read + written.\n"
    );
    md += "\n## Cases: the crate against the device and torch\n\n";
    md += "| case | plan µs | plan GB/s | best forced GB/s | copy limit GB/s | shader copy GB/s | torch per piece GB/s | torch fastest GB/s | plan / copy limit | plan / shader copy | plan / torch per piece | plan / torch fastest |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    let cell =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for (row, target) in data.case_rows().iter().zip(data.targets()) {
        let g = |m: &str| row[m]["gbps"].as_f64();
        let peer = data.peer_rows(row["case"].as_str().unwrap_or_default());
        let fastest = (peer.iter())
            .filter(|(m, _)| m.as_str() != "torch_d2d_copy")
            .map(|(_, r)| r.1)
            .reduce(f64::max);
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row["case"].as_str().unwrap_or_default(),
            cell(row["plan"]["us"].as_f64(), 1),
            cell(g("plan"), 2),
            cell(g("best_fixed"), 2),
            cell(g("copy_limit"), 2),
            cell(g("shader_copy"), 2),
            cell(g("torch_per_piece_copy"), 2),
            cell(fastest, 2),
            cell(target["plan_over_copy_limit"].as_f64(), 2),
            cell(target["plan_over_shader_copy"].as_f64(), 2),
            cell(target["plan_over_torch_per_piece"].as_f64(), 2),
            cell(target["plan_over_torch_fastest"].as_f64(), 2),
        );
    }
    md += &torch_section(&data.peer);
    md += "\n## Striped against blocked lanes (lanes_bench)\n\n| case | kernel | blocked GB/s | striped GB/s | striped / blocked |\n|---|---|---:|---:|---:|\n";
    for r in data.lanes["rows"].as_array().cloned().unwrap_or_default() {
        let same = match r["same_plan"] == true {
            true => " (one lane order)",
            false => "",
        };
        let _ = writeln!(
            md,
            "| `{}` | {}{same} | {:.2} | {:.2} | {:.2} |",
            r["case"].as_str().unwrap_or_default(),
            r["kernel"].as_str().unwrap_or_default(),
            r["blocked_gbps"].as_f64().unwrap_or(0.0),
            r["striped_gbps"].as_f64().unwrap_or(0.0),
            r["striped_over_blocked"].as_f64().unwrap_or(0.0)
        );
    }
    md += "\n## Inside burn (burn_bench: ms from the call to the device finished)\n\n| case | wgpu-split ms | burn ms | burn / wgpu-split | one copy ms |\n|---|---:|---:|---:|---:|\n";
    for key in ["cases", "concat_cases"] {
        for r in data.burn[key].as_array().cloned().unwrap_or_default() {
            let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
            let _ = writeln!(
                md,
                "| `{}` | {:.3} | {:.3} | {:.2} | {:.3} |",
                r["name"].as_str().unwrap_or_default(),
                f("wgpu_split_ms"),
                f("burn_ms"),
                f("ratio"),
                f("one_copy_ms")
            );
        }
    }
    md += "\n## Suites (0 wrong bits: every suite compares bytes)\n\n| suite | passed | failed | status | s |\n|---|---:|---:|---|---:|\n";
    let count = |v: &Value| v.as_u64().map_or("-".to_string(), |n| n.to_string());
    for s in &data.suites {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.0} |",
            s["suite"].as_str().unwrap_or_default(),
            count(&s["passed"]),
            count(&s["failed"]),
            s["status"].as_str().unwrap_or_default(),
            s["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    let n = &data.node;
    let _ = writeln!(
        md,
        "| onnx_node_test --device gpu | {} | {} | {} | {:.0} |",
        count(&n["passed"]),
        count(&n["failed"]),
        n["status"].as_str().unwrap_or_default(),
        n["seconds"].as_f64().unwrap_or(0.0)
    );
    md += "\n## The cost model: the one the planner used against the calibrated one\n\n";
    let device = &data.bench["device"];
    let _ = writeln!(
        md,
        "Class `{}`; `plan` planned with `{}`.\n\n```json\n{{\"class\": {},\n \"plan\": {},\n \"calibrated\": {}}}\n```",
        device["class"].as_str().unwrap_or("unknown"),
        device["plan_model_origin"].as_str().unwrap_or("unknown"),
        device["default_cost_model"],
        device["plan_cost_model"],
        device["calibrated_cost_model"]
    );
    md += "\n## Steps\n\n| step | status | s | command |\n|---|---|---:|---|\n";
    for s in steps {
        let _ = writeln!(
            md,
            "| {} | {} | {:.0} | `{}` |",
            s.title, s.status, s.seconds, s.command
        );
    }
    if !missing.is_empty() {
        md += "\n## Missing or failed\n\n";
        for m in missing {
            let _ = writeln!(md, "- {m}");
        }
    }
    for s in steps.iter().filter(|s| !s.ok()) {
        let tail: Vec<&str> = s.output.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let _ = write!(
            md,
            "\n### {}: {}\n\n```text\n{}\n```\n",
            s.title,
            s.status,
            tail.join("\n")
        );
    }
    md
}

/// torch's side: its version and device, or why it did not run, and what
/// it skipped.
fn torch_section(peer: &Value) -> String {
    let mut md = String::from("\n### torch on the same device (`torch_peer.py`)\n\n");
    if peer["available"] != true {
        let why = peer["why"]
            .as_str()
            .unwrap_or("torch_peer.py wrote nothing");
        let _ = writeln!(md, "Not run: {why}.");
        return md;
    }
    let _ = writeln!(
        md,
        "torch {} on {} (CUDA {}), CUDA events, median of {} runs; outputs checked against the views.",
        peer["torch"].as_str().unwrap_or("?"),
        peer["device"].as_str().unwrap_or("?"),
        peer["cuda"].as_str().unwrap_or("none"),
        peer["runs"]
    );
    for s in peer["skipped"].as_array().cloned().unwrap_or_default() {
        let _ = writeln!(
            md,
            "- skipped `{}` {}: {}",
            s["case"].as_str().unwrap_or_default(),
            s["method"].as_str().unwrap_or("(every method)"),
            s["why"].as_str().unwrap_or_default()
        );
    }
    for f in peer["failures"].as_array().cloned().unwrap_or_default() {
        let _ = writeln!(md, "- **failed** {f}");
    }
    md
}

/// A file name for an adapter or a step: lower case, words joined by dashes.
fn slug(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    words.join("-")
}
