//! Lab of 2026-11-24 (`docs/journal/2026-11-24-host-costs.md`, "Copies into one buffer"):
//! the device and host time per copy command of a copy plan into one arena
//! against the same plan into separate buffers, interleaved in 15 rounds.
//!
//! An example behind the `lab` feature (CI builds it; timings on a shared
//! machine mean nothing):
//!
//! ```text
//! cargo run --release --features lab --example lab_arena_copies
//! ```
#[path = "../../examples/split_bench/gpu_timer.rs"]
#[allow(dead_code)] // split_bench's timer; labs use part of it
mod gpu_timer;
use gpu_timer::GpuTimer;
use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
use wgpu_split::plan::{Placement, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

fn main() {
    let ctx = pollster::block_on(GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ))
    .unwrap();
    let splitter = ctx.splitter().unwrap();
    let timer = GpuTimer::new(&ctx.device, &ctx.queue);
    let limits = PlanLimits::LAVAPIPE;
    for (shape, lens) in [
        ([2048usize, 512usize], vec![256usize, 256]),
        ([4096, 1536], vec![768, 768]),
    ] {
        let split = ResolvedSplit::new(&shape, 1, lens, true).unwrap();
        let plans: Vec<SplitPlan> = [Placement::Separate, Placement::Arena]
            .into_iter()
            .map(|p| {
                SplitPlan::new(
                    &split,
                    ElementType::Float,
                    &limits,
                    &PlanOptions::default().strategy(Strategy::Copy).placement(p),
                )
                .unwrap()
            })
            .collect();
        let input = RoundTrip::new(&splitter)
            .create_input(&vec![1u8; plans[0].input_bytes() as usize])
            .unwrap();
        let outs: Vec<Vec<wgpu::Buffer>> = plans
            .iter()
            .map(|p| RoundTrip::new(&splitter).create_destinations(p).unwrap())
            .collect();
        let rec = |i: usize| {
            let plan = &plans[i];
            let outs = &outs[i];
            let input = &input;
            let splitter = &splitter;
            move |e: &mut wgpu::CommandEncoder| {
                let regions: Vec<BufferRegion> = outs.iter().map(BufferRegion::whole).collect();
                splitter
                    .encode(e, plan, BufferRegion::whole(input), &regions)
                    .unwrap();
            }
        };
        let (r0, r1) = (rec(0), rec(1));
        timer.warm_up(&r0);
        timer.warm_up(&r1);
        let mut t = [vec![], vec![]];
        for _ in 0..15 {
            t[0].push(timer.once(&r0));
            t[1].push(timer.once(&r1));
        }
        for (i, name) in ["separate", "arena"].iter().enumerate() {
            let mut d: Vec<f64> = t[i].iter().map(|x| x.0).collect();
            let mut h: Vec<f64> = t[i].iter().map(|x| x.1).collect();
            d.sort_by(f64::total_cmp);
            h.sort_by(f64::total_cmp);
            let n = plans[i].copy_count() as f64;
            println!(
                "{shape:?} {name}: {} copies, device {:.2} ms ({:.3} us/copy), host {:.2} ms ({:.3} us/copy)",
                n,
                d[7] * 1e3,
                d[7] / n * 1e6,
                h[7] * 1e3,
                h[7] / n * 1e6
            );
        }
    }
}
