//! Fused permuted moves against the two passes a runtime runs without
//! them: split_bench's permuted-move cases (`split_bench/permuted.rs`,
//! issue 39) alone.
//!
//! ```text
//! cargo run --release --example permute_bench [-- --runs N] [--quick]
//! ```
//!
//! Prints per case the median device milliseconds of each (timestamp
//! queries where the adapter has them) and fused / two passes.

#[path = "split_bench/gpu_timer.rs"]
#[allow(dead_code)]
mod gpu_timer;
#[path = "split_bench/permuted.rs"]
mod permuted;
#[path = "split_bench/permuted_cases.rs"]
mod permuted_cases;

use gpu_timer::GpuTimer;
use wgpu_split::gpu::GpuContext;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let runs: usize = match args.iter().position(|a| a == "--runs") {
        Some(i) => args.get(i + 1).ok_or("--runs N")?.parse()?,
        None => 15,
    };
    let ctx = GpuContext::new_default()?;
    let gpu = &ctx.splitter()?;
    let timer = GpuTimer::new(gpu.device(), gpu.queue());
    println!("adapter: {}", ctx.describe());
    println!(
        "timing: {}, median of {runs} runs after a warm-up\n",
        timer.kind()
    );
    println!(
        "{:<28} {:>10} {:>12} {:>8}",
        "case", "fused ms", "2 passes ms", "speedup"
    );
    for t in permuted::bench(gpu, &timer, runs, quick, None)? {
        let (f, w) = (t.fused_ms, t.two_passes_ms);
        println!("{:<28} {f:>10.3} {w:>12.3} {:>7.2}x", t.name, w / f);
    }
    Ok(())
}
