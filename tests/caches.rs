//! What encodes reuse, and its bounds: uploaded parameter tables follow
//! their plans and buffers whatever was cached before, one table serves a
//! plan at every offset, the cache policy bounds the memory kept (or keeps
//! none) and the generated kernels' pipelines kept, and a plan warms up
//! ahead of time.

mod common;

use common::{Rng, assert_outputs_equal, encode_fresh, gpu, random_tensor, read_buffer};
use wgpu_split::gpu::{BufferRegion, CachePolicy, CacheUsage, GpuSplitter};

const TABLE_OVERHEAD_BYTES: u64 = CachePolicy::TABLE_OVERHEAD_BYTES;
use wgpu_split::plan::{Placement, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, HostTensor, ResolvedSplit};

fn gather() -> PlanOptions {
    PlanOptions::default().strategy(Strategy::Gather)
}

#[test]
fn cached_tables_follow_plans_and_buffers() {
    let Some(gpu) = gpu("cached_tables_follow_plans_and_buffers") else {
        return;
    };
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
                let expected = input.split(split).unwrap();
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
fn one_table_serves_a_plan_at_every_offset() {
    let Some(shared) = gpu("one_table_serves_a_plan_at_every_offset") else {
        return;
    };
    // A runtime whose slices move a few bytes each step: the input and
    // three outputs at independent offsets, none a multiple of WebGPU's
    // 256-byte binding alignment. (At 1aaeec9 each offset uploaded a table
    // of its own: 40 encodes kept 40 tables.)
    let splitter = GpuSplitter::new(shared.device(), shared.queue()).unwrap();
    let split = ResolvedSplit::new(&[16, 24], 1, vec![8, 12, 4], true).unwrap();
    let plan = SplitPlan::new(
        &split,
        ElementType::Float16,
        &PlanLimits::WEBGPU_DEFAULT,
        &gather(),
    )
    .unwrap();
    let mut rng = Rng::new(21);
    let input = random_tensor(&mut rng, ElementType::Float16, &[16, 24]);
    let expected = input.split(&split).unwrap();
    let page_bytes = 4 * 4096;
    let pages: Vec<wgpu::Buffer> = (0..2)
        .map(|_| {
            common::round_trip(&splitter)
                .create_input(&vec![0u8; page_bytes])
                .unwrap()
        })
        .collect();
    let step = plan.offset_alignment_bytes();
    for round in 0..40u64 {
        let mut at = |slot: u64| slot * 4096 + 16 + rng.below(200) as u64 / step * step;
        let input_at = at(0);
        splitter
            .queue()
            .write_buffer(&pages[0], input_at, input.as_bytes().unwrap());
        let outputs: Vec<(u64, u64)> = (1..4)
            .map(|slot| (at(slot), plan.destination_bytes(slot as usize - 1)))
            .collect();
        let regions: Vec<BufferRegion> = outputs
            .iter()
            .map(|&(offset, size)| BufferRegion::new(&pages[1], offset, size))
            .collect();
        let source = BufferRegion::new(&pages[0], input_at, plan.input_binding_bytes());
        common::encode_and_submit(&splitter, &plan, source, &regions).unwrap();
        let bytes = read_buffer(&splitter, &pages[1]);
        for ((offset, _), e) in outputs.iter().zip(&expected) {
            let e = e.as_bytes().unwrap();
            let got = &bytes[*offset as usize..*offset as usize + e.len()];
            assert_eq!(got, e, "round {round}");
        }
        assert_eq!(splitter.cache().usage().tables, 1, "round {round}");
    }
}

#[test]
fn the_cache_policy_bounds_the_memory_kept_and_can_keep_none() {
    let Some(shared) = gpu("the_cache_policy_bounds_the_memory_kept_and_can_keep_none") else {
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
    let none = GpuSplitter::new(device, shared.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::default().table_bytes(0));
    run(&none);
    assert_eq!(none.cache().usage().tables, 0);
    // Each table counts its device bytes, its host copy and the overhead.
    let budget = 4 * TABLE_OVERHEAD_BYTES;
    let small = GpuSplitter::new(device, shared.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::default().table_bytes(budget));
    run(&small);
    let usage = small.cache().usage();
    assert!(usage.tables > 0 && usage.tables < 4, "{usage:?}");
    assert!(usage.table_bytes <= budget, "{usage:?}");
    assert!(usage.table_bytes > usage.tables as u64 * TABLE_OVERHEAD_BYTES);
    small.cache().clear();
    assert_eq!(small.cache().usage(), CacheUsage::default());
    // A smaller policy drops what exceeds it at once.
    let roomy = GpuSplitter::new(device, shared.queue()).unwrap();
    run(&roomy);
    assert!(roomy.cache().usage().tables > 4);
    let shrunk = roomy.with_cache_policy(CachePolicy::default().table_bytes(budget));
    assert!(shrunk.cache().usage().table_bytes <= budget);
}

/// Encodes row-block plans of `count` layouts (u8 rows of m bytes split
/// [a, m - a]) and then the first again, checking every result and, after
/// each, that at most `kept` pipelines are held; returns the layouts.
fn cycle_row_block_layouts(splitter: &GpuSplitter, count: usize, kept: usize) -> usize {
    let mut rng = Rng::new(81);
    let mut layouts = std::collections::HashSet::new();
    let shapes = (3..=16).flat_map(|m| (1..m).map(move |a| (m, a)));
    for (m, a) in shapes.take(count).chain([(3, 1)]) {
        let split = ResolvedSplit::new(&[128, m], 1, vec![a, m - a], true).unwrap();
        let input = random_tensor(&mut rng, ElementType::Uint8, &[128, m]);
        let plan = splitter
            .plan_with(&split, ElementType::Uint8, &gather())
            .unwrap();
        layouts.insert(
            plan.generated_layouts()
                .first()
                .copied()
                .expect("a row-block plan")
                .clone(),
        );
        let actual = common::round_trip(splitter)
            .run_plan(&plan, &input)
            .unwrap();
        assert_outputs_equal(&input.split(&split).unwrap(), &actual, "row blocks");
        assert!(splitter.cache().usage().generated_pipelines <= kept);
    }
    layouts.len()
}

#[test]
fn generated_pipelines_are_kept_within_the_policy() {
    let Some(gpu) = gpu("generated_pipelines_are_kept_within_the_policy") else {
        return;
    };
    // The default keeps 32: 40 layouts cycle through them.
    let default = GpuSplitter::new(gpu.device(), gpu.queue()).unwrap();
    assert_eq!(default.cache_policy().generated_pipelines, 32);
    let layouts = cycle_row_block_layouts(&default, 40, 32);
    assert!(layouts > 32, "{layouts} layouts");
    assert_eq!(default.cache().usage().generated_pipelines, 32);
    // The caller's bound, above and below the default.
    let roomy = GpuSplitter::new(gpu.device(), gpu.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::default().generated_pipelines(64));
    let layouts = cycle_row_block_layouts(&roomy, 40, 64);
    assert_eq!(roomy.cache().usage().generated_pipelines, layouts);
    let tight = GpuSplitter::new(gpu.device(), gpu.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::default().generated_pipelines(4));
    cycle_row_block_layouts(&tight, 8, 4);
    assert_eq!(tight.cache().usage().generated_pipelines, 4);
}

#[test]
fn a_plan_warms_up_ahead_of_its_first_encode() {
    let Some(gpu) = gpu("a_plan_warms_up_ahead_of_its_first_encode") else {
        return;
    };
    let splitter = GpuSplitter::new(gpu.device(), gpu.queue()).unwrap();
    let split = ResolvedSplit::new(&[128, 7], 1, vec![3, 4], true).unwrap();
    let plan = splitter
        .plan_with(&split, ElementType::Uint8, &gather())
        .unwrap();
    assert!(
        plan.generated_layouts().first().copied().is_some(),
        "a generated kernel"
    );
    splitter.cache().warm_up(&plan).unwrap();
    let warm = splitter.cache().usage();
    assert_eq!((warm.tables, warm.generated_pipelines), (1, 1));
    // The encode finds both; the result is the split's.
    let mut rng = Rng::new(3);
    let input = random_tensor(&mut rng, ElementType::Uint8, &[128, 7]);
    let actual = common::round_trip(&splitter)
        .run_plan(&plan, &input)
        .unwrap();
    assert_outputs_equal(&input.split(&split).unwrap(), &actual, "warmed up");
    assert_eq!(splitter.cache().usage(), warm);
    // A plan without dispatches needs nothing.
    let copies = splitter
        .plan_with(
            &ResolvedSplit::new(&[2, 8], 0, vec![1, 1], true).unwrap(),
            ElementType::Float,
            &PlanOptions::default().strategy(Strategy::Copy),
        )
        .unwrap();
    splitter.cache().warm_up(&copies).unwrap();
    assert_eq!(splitter.cache().usage(), warm);
}

/// Permuted moves of many modules (destination counts, element widths,
/// lane orders) through one splitter: their compiled pipelines are kept
/// with the generated kernels', within the policy, counted and cleared;
/// every move exact.
#[test]
fn permuted_pipelines_are_kept_within_the_policy() {
    let Some(gpu) = gpu("permuted_pipelines_are_kept_within_the_policy") else {
        return;
    };
    use wgpu_split::plan::LaneOrder;
    let splitter = GpuSplitter::new(gpu.device(), gpu.queue())
        .unwrap()
        .with_cache_policy(CachePolicy::default().generated_pipelines(4));
    let mut rng = Rng::new(91);
    let mut moves = 0;
    for heads in 1..=4usize {
        for t in [ElementType::Float, ElementType::Float16, ElementType::Uint8] {
            for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
                let split = wgpu_split::PermutedSplit::split_heads(
                    &[2, 3, heads * 2 * 4],
                    &vec![8; heads],
                    4,
                )
                .unwrap();
                let plan = splitter.plan(&split, t).unwrap().lanes(lanes);
                let input = random_tensor(&mut rng, t, split.split().input_shape());
                let source = common::round_trip(&splitter)
                    .create_input(input.as_bytes().unwrap())
                    .unwrap();
                let outputs: Vec<wgpu::Buffer> = (0..heads)
                    .map(|i| {
                        common::round_trip(&splitter)
                            .create_input(&vec![0; plan.output_region_bytes(i) as usize])
                            .unwrap()
                    })
                    .collect();
                let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
                let mut encoder = splitter
                    .device()
                    .create_command_encoder(&Default::default());
                splitter
                    .encode(&mut encoder, &plan, BufferRegion::whole(&source), &regions)
                    .unwrap();
                splitter.queue().submit([encoder.finish()]);
                for (o, want) in outputs.iter().zip(input.split_permuted(&split).unwrap()) {
                    let got = read_buffer(&splitter, o);
                    let want = want.as_bytes().unwrap();
                    assert_eq!(&got[..want.len()], want, "{heads} heads {t} {lanes:?}");
                }
                moves += 1;
                assert!(splitter.cache().usage().generated_pipelines <= 4);
            }
        }
    }
    assert_eq!(moves, 24);
    assert_eq!(splitter.cache().usage().generated_pipelines, 4);
    splitter.cache().clear();
    assert_eq!(splitter.cache().usage().generated_pipelines, 0);
}
