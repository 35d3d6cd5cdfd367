//! What a generated kernel's pipeline costs, and the cache's bound: the
//! first encode of a new row-block layout (module and pipeline built) and
//! its first execution (the driver's compile), the same for new row-copy
//! layouts, a warmed-up layout's first execution, and rounds of encodes cycling through 33 layouts with the
//! default bound of 32 (every encode rebuilds) and with a bound of 64.
//!
//! `cargo bench --bench pipeline_cache`

use std::time::Instant;

use wgpu_split::gpu::{BufferRegion, CachePolicy, GpuContext, GpuSplitter, RoundTrip};
use wgpu_split::plan::internals::GeneratedLayout;
use wgpu_split::plan::{PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

/// Row-block plans of `count` distinct layouts (u8 rows of m bytes split
/// [a, m - a]), from the `skip`-th.
fn layouts(splitter: &GpuSplitter, skip: usize, count: usize) -> Vec<SplitPlan> {
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    (3..=24)
        .flat_map(|m| (1..m).map(move |a| (m, a)))
        .skip(skip)
        .take(count)
        .map(|(m, a)| {
            let split = ResolvedSplit::new(&[256, m], 1, vec![a, m - a], true).unwrap();
            let plan = splitter
                .plan_with(&split, ElementType::Uint8, &gather)
                .unwrap();
            assert!(plan.generated_layouts().first().copied().is_some());
            plan
        })
        .collect()
}

/// Row-copy plans of `count` distinct layouts (f32 rows of 16k floats
/// split in halves).
fn row_copy_layouts(splitter: &GpuSplitter, count: usize) -> Vec<SplitPlan> {
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    (1..=count)
        .map(|k| {
            let split = ResolvedSplit::new(&[256, 16 * k], 1, vec![8 * k; 2], true).unwrap();
            let plan = splitter
                .plan_with(&split, ElementType::Float, &gather)
                .unwrap();
            assert!(matches!(
                plan.generated_layouts().first().copied(),
                Some(GeneratedLayout::RowCopies(_))
            ));
            plan
        })
        .collect()
}

/// Seconds to encode `plan` (bind groups, and the pipeline if not kept),
/// and to submit and wait for it.
fn encode_and_run(splitter: &GpuSplitter, plan: &SplitPlan) -> (f64, f64) {
    let buffers = RoundTrip::new(splitter);
    let input = buffers
        .create_input(&vec![1; plan.input_binding_bytes() as usize])
        .unwrap();
    let outputs = buffers.create_destinations(plan).unwrap();
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    splitter
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let started = Instant::now();
    let mut encoder = splitter
        .device()
        .create_command_encoder(&Default::default());
    splitter
        .encode(&mut encoder, plan, BufferRegion::whole(&input), &regions)
        .unwrap();
    let encoded = started.elapsed().as_secs_f64();
    let started = Instant::now();
    splitter.queue().submit([encoder.finish()]);
    splitter
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    (encoded, started.elapsed().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let ctx = GpuContext::new_default().expect("a GPU adapter (mesa-vulkan-drivers)");
    let fresh = |policy| ctx.splitter().unwrap().with_cache_policy(policy);
    // First encode and first run of new layouts, then the same again.
    let splitter = fresh(CachePolicy::default());
    let plans = layouts(&splitter, 0, 8);
    let first: Vec<(f64, f64)> = plans.iter().map(|p| encode_and_run(&splitter, p)).collect();
    let again: Vec<(f64, f64)> = plans.iter().map(|p| encode_and_run(&splitter, p)).collect();
    println!(
        "new layout: encode (module + pipeline built) {:.2} ms, first run {:.2} ms; \
         kept: encode {:.3} ms, run {:.2} ms (medians of 8 layouts)",
        1e3 * median(first.iter().map(|t| t.0).collect()),
        1e3 * median(first.iter().map(|t| t.1).collect()),
        1e3 * median(again.iter().map(|t| t.0).collect()),
        1e3 * median(again.iter().map(|t| t.1).collect()),
    );
    let copies = row_copy_layouts(&splitter, 8);
    let first: Vec<(f64, f64)> = copies
        .iter()
        .map(|p| encode_and_run(&splitter, p))
        .collect();
    println!(
        "new row-copy layout: encode {:.2} ms, first run {:.2} ms (medians of 8 layouts)",
        1e3 * median(first.iter().map(|t| t.0).collect()),
        1e3 * median(first.iter().map(|t| t.1).collect()),
    );
    // Warmed up ahead of time: the first encode and run find it all ready.
    let warm = layouts(&splitter, 8, 8);
    let started = Instant::now();
    for plan in &warm {
        splitter.cache().warm_up(plan).unwrap();
    }
    splitter
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let warm_up = started.elapsed().as_secs_f64() / warm.len() as f64;
    let warmed: Vec<(f64, f64)> = warm.iter().map(|p| encode_and_run(&splitter, p)).collect();
    println!(
        "warm_up: {:.2} ms per layout; then first encode {:.3} ms, first run {:.2} ms",
        1e3 * warm_up,
        1e3 * median(warmed.iter().map(|t| t.0).collect()),
        1e3 * median(warmed.iter().map(|t| t.1).collect()),
    );
    // Cycling 33 layouts, three rounds after a first: bound 32 and 64.
    for (name, policy) in [
        ("bound 32 (default)", CachePolicy::default()),
        ("bound 64", CachePolicy::default().generated_pipelines(64)),
    ] {
        let splitter = fresh(policy);
        let cycle = layouts(&splitter, 16, 33);
        for plan in &cycle {
            encode_and_run(&splitter, plan);
        }
        let mut encodes = Vec::new();
        let mut runs = Vec::new();
        for _ in 0..3 {
            for plan in &cycle {
                let (e, r) = encode_and_run(&splitter, plan);
                encodes.push(e);
                runs.push(r);
            }
        }
        println!(
            "33 layouts cycled, {name}: encode {:.3} ms, run {:.2} ms (medians of 99)",
            1e3 * median(encodes),
            1e3 * median(runs)
        );
    }
}
