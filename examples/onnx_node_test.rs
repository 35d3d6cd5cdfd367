//! Runs ONNX backend node-test directories (one split node, possibly fed by
//! `Constant` and `Identity` nodes; every `test_data_set_*`) and compares
//! every output bit-exactly.
//!
//! ```text
//! cargo run --release --example onnx_node_test -- [--device cpu|gpu|auto] DIR...
//! ```
//!
//! Prints `PASS <dir>` or `FAIL <dir>: <reason>` per directory, then
//! `N passed, M failed`, and exits 1 when anything failed (2 on a usage error
//! or, with `--device gpu`, when no adapter exists). `--device cpu` (the
//! default) uses the host path, `gpu` the GPU path (strings always on the host),
//! `auto` the GPU when an adapter exists. The device used goes to stderr.
//! `Concat` and `ConcatFromSequence` directories run the same way: on the
//! GPU, through `RoundTrip::concat`.

use std::path::PathBuf;
use std::process::ExitCode;

use wgpu_split::gpu::{GpuContext, RoundTrip};
use wgpu_split::onnx::node_test::run_directories_with;
use wgpu_split::{ConcatOperator, ElementType, HostTensor, Operator};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Device {
    Cpu,
    Gpu,
    Auto,
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("error: {problem}");
    eprintln!("usage: onnx_node_test [--device cpu|gpu|auto] DIR...");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut device = Device::Cpu;
    let mut dirs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--device" => {
                device = match args.next().as_deref() {
                    Some("cpu") => Device::Cpu,
                    Some("gpu") => Device::Gpu,
                    Some("auto") => Device::Auto,
                    other => return usage(&format!("unknown device {other:?}")),
                }
            }
            "-h" | "--help" => return usage("help requested"),
            flag if flag.starts_with("--") => return usage(&format!("unknown flag {flag}")),
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    if dirs.is_empty() {
        return usage("no directories given");
    }
    // The GPU splitter, or None for the host path. `auto` falls back to the
    // host when no adapter exists and says so.
    let splitter = match device {
        Device::Cpu => None,
        Device::Gpu | Device::Auto => match GpuContext::new_default().and_then(|ctx| {
            eprintln!("device: {}", ctx.describe());
            ctx.splitter()
        }) {
            Ok(splitter) => Some(splitter),
            Err(e) if device == Device::Auto => {
                eprintln!("device: host path ({e})");
                None
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };
    if splitter.is_none() {
        eprintln!("device: host path");
    }
    // Strings have no GPU layout: the host path splits them on every device.
    let execute = |op: &Operator, data: &HostTensor| match &splitter {
        Some(gpu) if data.element_type() != ElementType::String => {
            RoundTrip::new(gpu).split(op, data)
        }
        _ => op.split_on_host(data),
    };
    let concat = |op: &ConcatOperator, inputs: &[&HostTensor]| match &splitter {
        Some(gpu)
            if inputs
                .iter()
                .all(|t| t.element_type() != ElementType::String) =>
        {
            RoundTrip::new(gpu).concat(op, inputs)
        }
        _ => op.concat_on_host(inputs),
    };
    let mut stdout = std::io::stdout().lock();
    match run_directories_with(&dirs, execute, concat, &mut stdout) {
        Ok(summary) if summary.failed == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: cannot write results: {e}");
            ExitCode::FAILURE
        }
    }
}
