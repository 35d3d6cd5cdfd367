//! Dropped buffers free their memory: the splitter keeps no reference to a
//! caller's buffer (bind groups are made per encode; the cache holds only
//! the splitter's own tables). Alone in its test binary, so that resident
//! memory is this test's.

mod common;

use common::gpu;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::Placement;
use wgpu_split::plan::{PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

/// Resident memory of this process in bytes (Linux).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn wait_idle(gpu: &GpuSplitter) {
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
}

/// One run of the pattern that used to pin memory: a fresh 4 MiB input and
/// fresh outputs, encoded, submitted, dropped.
fn encode_fresh(gpu: &GpuSplitter, plan: &SplitPlan, arena: bool) {
    let input = common::round_trip(gpu)
        .create_input(&vec![7u8; plan.input_bytes() as usize])
        .unwrap();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    if arena {
        let arena = common::round_trip(gpu)
            .create_destinations(plan)
            .unwrap()
            .remove(0);
        gpu.encode(
            &mut encoder,
            plan,
            BufferRegion::whole(&input),
            &[BufferRegion::whole(&arena)],
        )
        .unwrap();
    } else {
        let outputs = common::round_trip(gpu).create_destinations(plan).unwrap();
        let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
        gpu.encode(&mut encoder, plan, BufferRegion::whole(&input), &regions)
            .unwrap();
    }
    gpu.queue().submit([encoder.finish()]);
    wait_idle(gpu);
}

#[test]
fn dropped_buffers_free_their_memory() {
    let Some(gpu) = gpu("dropped_buffers_free_their_memory") else {
        return;
    };
    // f32 [1024, 1024] (4 MiB) split on the last axis into 4: the gather.
    let split = ResolvedSplit::new(&[1024, 1024], 1, vec![256; 4], true).unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = gpu.plan_with(&split, ElementType::Float, &gather).unwrap();
    let arena_plan = gpu
        .plan_with(
            &split,
            ElementType::Float,
            &PlanOptions::default().placement(Placement::Arena),
        )
        .unwrap();
    for _ in 0..5 {
        encode_fresh(gpu, &plan, false);
        encode_fresh(gpu, &arena_plan, true);
    }
    let start = resident_bytes();
    for _ in 0..100 {
        encode_fresh(gpu, &plan, false);
        encode_fresh(gpu, &arena_plan, true);
    }
    let grown = resident_bytes().saturating_sub(start);
    println!(
        "200 encodes of fresh 4 MiB inputs and outputs: resident memory grew {} MiB; cached tables {} bytes",
        grown >> 20,
        gpu.cached_table_bytes()
    );
    assert!(grown < 64 << 20, "resident memory grew {grown} bytes");
}
