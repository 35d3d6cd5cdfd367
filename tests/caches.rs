//! What encodes reuse, and its bounds: uploaded parameter tables follow
//! their plans and buffers whatever was cached before, the cache policy
//! bounds the bytes kept (or keeps none), and generated kernels' pipelines
//! are kept for at most 32 layouts.

mod common;

use common::{Rng, assert_outputs_equal, encode_fresh, gpu, random_tensor, read_buffer};
use wgpu_split::gpu::{CachePolicy, GpuSplitter};
use wgpu_split::plan::{Placement, PlanOptions, Strategy};
use wgpu_split::{ElementType, HostTensor, ResolvedSplit, host};

fn gather() -> PlanOptions {
    PlanOptions::default().strategy(Strategy::Gather)
}

#[test]
fn cached_tables_follow_plans_and_buffers() {
    let Some(gpu) = gpu("cached_tables_follow_plans_and_buffers") else {
        return;
    };
    use wgpu_split::gpu::BufferRegion;
    let mut rng = Rng::new(33);
    let shape = [6, 10];
    let a = ResolvedSplit::new(&shape, 1, vec![3, 7], true).unwrap();
    let b = ResolvedSplit::new(&shape, 1, vec![7, 3], true).unwrap();
    let arena_options = gather().placement(Placement::Arena);
    let plan = |split| {
        gpu.plan_with(split, ElementType::Uint8, &arena_options)
            .unwrap()
    };
    let (plan_a, plan_b) = (plan(&a), plan(&b));
    let arena = common::round_trip(gpu)
        .create_destinations(if plan_a.arena_bytes() > plan_b.arena_bytes() {
            &plan_a
        } else {
            &plan_b
        })
        .unwrap()
        .remove(0);
    let inputs: Vec<HostTensor> = (0..2)
        .map(|_| random_tensor(&mut rng, ElementType::Uint8, &shape))
        .collect();
    let buffers: Vec<wgpu::Buffer> = inputs
        .iter()
        .map(|t| {
            common::round_trip(gpu)
                .create_input(t.as_bytes().unwrap())
                .unwrap()
        })
        .collect();
    // Alternate plans and inputs through the same arena; every result must
    // match its own plan and input, whatever was cached before.
    for round in 0..3 {
        for (plan, split) in [(&plan_a, &a), (&plan_b, &b)] {
            for (input, buffer) in inputs.iter().zip(&buffers) {
                let mut encoder = gpu.device().create_command_encoder(&Default::default());
                gpu.encode(
                    &mut encoder,
                    plan,
                    BufferRegion::whole(buffer),
                    &[BufferRegion::whole(&arena)],
                )
                .unwrap();
                gpu.queue().submit([encoder.finish()]);
                let bytes = read_buffer(gpu, &arena);
                let expected = host::split(input, split).unwrap();
                for (slot, e) in plan.outputs().iter().zip(&expected) {
                    let range = slot.arena_range();
                    let got = &bytes[range.start as usize..range.end as usize];
                    assert_eq!(got, e.as_bytes().unwrap(), "round {round}");
                }
            }
        }
    }
}

#[test]
fn the_cache_policy_bounds_the_tables_kept_and_can_be_off() {
    let Some(shared) = gpu("the_cache_policy_bounds_the_tables_kept_and_can_be_off") else {
        return;
    };
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let run = |gpu: &GpuSplitter| {
        let mut rng = Rng::new(5);
        for cols in 4..40 {
            let lengths = rng.lengths(cols, 3);
            let split = ResolvedSplit::new(&[8, cols], 1, lengths, true).unwrap();
            let plan = gpu.plan_with(&split, ElementType::Uint8, &gather).unwrap();
            encode_fresh(gpu, &plan);
        }
    };
    let device = shared.device();
    let off = GpuSplitter::new(device, shared.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::Off);
    run(&off);
    assert_eq!(off.cached_table_bytes(), 0);
    let small = GpuSplitter::new(device, shared.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::Bytes(4096));
    run(&small);
    assert!(small.cached_table_bytes() > 0 && small.cached_table_bytes() <= 4096);
    small.clear_cache();
    assert_eq!(small.cached_table_bytes(), 0);
}

#[test]
fn row_block_pipelines_are_bounded() {
    let Some(gpu) = gpu("row_block_pipelines_are_bounded") else {
        return;
    };
    // A fresh splitter: 40 layouts (u8 rows of m bytes split [a, m - a]),
    // then the first again.
    let splitter = GpuSplitter::new(gpu.device(), gpu.queue()).unwrap();
    let mut rng = Rng::new(81);
    let mut layouts = std::collections::HashSet::new();
    let shapes = (3..=16).flat_map(|m| (1..m).map(move |a| (m, a)));
    for (m, a) in shapes.take(40).chain([(3, 1)]) {
        let split = ResolvedSplit::new(&[128, m], 1, vec![a, m - a], true).unwrap();
        let input = random_tensor(&mut rng, ElementType::Uint8, &[128, m]);
        let plan = splitter
            .plan_with(&split, ElementType::Uint8, &gather())
            .unwrap();
        layouts.insert(plan.generated_layout().expect("a row-block plan").clone());
        let actual = common::round_trip(&splitter)
            .run_plan(&plan, &input)
            .unwrap();
        assert_outputs_equal(&host::split(&input, &split).unwrap(), &actual, "row blocks");
        assert!(splitter.cached_pipelines() <= 32);
    }
    assert!(layouts.len() > 32, "{} layouts", layouts.len());
    assert_eq!(splitter.cached_pipelines(), 32);
}
