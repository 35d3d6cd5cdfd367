//! Runs ONNX backend node-test directories and compares every output bit-exactly.
//!
//! ```text
//! cargo run --release --example onnx_node_test -- [--device cpu|gpu|auto] DIR...
//! ```
//!
//! Prints `PASS <dir>` or `FAIL <dir>: <reason>` per directory, then
//! `N passed, M failed`, and exits 1 when anything failed (2 on a usage error).

use std::path::PathBuf;
use std::process::ExitCode;

use wgpu_split::host;
use wgpu_split::onnx::node_test::run_directories;

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
    if device != Device::Cpu {
        // The GPU path arrives with the GPU issue; say so rather than
        // silently running on the host.
        return usage(
            "--device gpu/auto needs the GPU path, which this version does not have yet; use --device cpu",
        );
    }
    let mut stdout = std::io::stdout().lock();
    match run_directories(&dirs, host::split_op, &mut stdout) {
        Ok(summary) if summary.failed == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: cannot write results: {e}");
            ExitCode::FAILURE
        }
    }
}
