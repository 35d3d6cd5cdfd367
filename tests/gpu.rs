//! The GPU path against the host path and the naive oracle, byte for byte:
//! every width, ranks 1 to 6, every axis, zero-length outputs, zero-size
//! inputs, odd sizes, mid-word runs, many outputs, multi-pass plans, 2-D
//! grids, a tensor above the 128 MiB binding limit, and random problems.

mod common;

use common::{Rng, assert_outputs_equal, gpu, naive_split, random_tensor, tiny};
use proptest::prelude::*;
use wgpu_split::error::PlanError;
use wgpu_split::gpu::GpuSplitter;
use wgpu_split::plan::{
    CostModel, Form, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan,
    Strategy as PlanStrategy,
};
use wgpu_split::{
    ElementType, Error, HostTensor, OnnxSplit, OnnxSplitToSequence, Operator, ResolvedSplit,
};

/// Dispatches only, each output into its own region.
fn gather() -> PlanOptions {
    PlanOptions::default().strategy(PlanStrategy::Gather)
}

/// The pure-gather plan on this device's limits, its kernels ranked by the
/// model a plan made without a device uses (`CostModel::default()`): the
/// splitter's own is measured when it is made on a software adapter, and
/// a busy machine can reorder it.
fn gather_plan(gpu: &GpuSplitter, split: &ResolvedSplit, t: ElementType) -> SplitPlan {
    SplitPlan::new(split, t, gpu.limits(), &gather()).unwrap()
}

/// Splits on the GPU and compares with the host path (and, for small
/// tensors, the naive oracle).
fn check(
    gpu: &wgpu_split::gpu::GpuSplitter,
    input: &HostTensor,
    split: &ResolvedSplit,
    context: &str,
) {
    let actual = common::round_trip(gpu)
        .run(split, input)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let expected = input.split(split).unwrap();
    assert_outputs_equal(&expected, &actual, context);
    if input.len() <= 4096 {
        assert_outputs_equal(&naive_split(input, split), &actual, context);
    }
}

#[test]
fn every_width_rank_and_axis() {
    let Some(gpu) = gpu("every_width_rank_and_axis") else {
        return;
    };
    let mut rng = Rng::new(21);
    // One type per width, and the sub-byte and 8-bit float variants.
    let types = [
        ElementType::Int2,
        ElementType::Int4,
        ElementType::Float4E2M1,
        ElementType::Uint8,
        ElementType::Float8E5M2,
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
        ElementType::Complex128,
    ];
    let mut cases = 0;
    for element_type in types {
        for rank in 1..=6 {
            for axis in 0..rank {
                let shape: Vec<usize> = (0..rank)
                    .map(|d| {
                        if d == axis {
                            2 + rng.below(9)
                        } else {
                            1 + rng.below(4)
                        }
                    })
                    .collect();
                let count = 1 + rng.below(4);
                let lengths = rng.lengths(shape[axis], count);
                // Negative axes resolve to the same split.
                let negative = axis as i64 - rank as i64;
                let op = OnnxSplit::new(13, lengths.len())
                    .axis(negative)
                    .split_input(wgpu_split::ParamTensor::int64_1d(
                        &lengths.iter().map(|&l| l as i64).collect::<Vec<_>>(),
                    ));
                let split = op.resolve(&shape).unwrap();
                assert_eq!(split.axis(), axis);
                let input = random_tensor(&mut rng, element_type, &shape);
                check(
                    gpu,
                    &input,
                    &split,
                    &format!("{element_type} {shape:?} axis {negative} {lengths:?}"),
                );
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 9 * 21);
}

#[test]
fn every_element_type_and_strings_are_refused() {
    let Some(gpu) = gpu("every_element_type_and_strings_are_refused") else {
        return;
    };
    let mut rng = Rng::new(22);
    for element_type in ElementType::ALL {
        let shape = [5, 9];
        let input = random_tensor(&mut rng, element_type, &shape);
        let split = ResolvedSplit::new(&shape, 1, vec![2, 0, 4, 3], true).unwrap();
        if element_type == ElementType::String {
            // No GPU layout: a typed error that points at the host path.
            let e = common::round_trip(gpu).run(&split, &input).unwrap_err();
            assert_eq!(e, Error::Plan(PlanError::NotOnGpu { element_type }));
            continue;
        }
        check(gpu, &input, &split, &format!("{element_type}"));
    }
}

#[test]
fn zero_length_outputs_and_zero_size_inputs() {
    let Some(gpu) = gpu("zero_length_outputs_and_zero_size_inputs") else {
        return;
    };
    let mut rng = Rng::new(23);
    for element_type in [
        ElementType::Int4,
        ElementType::Uint8,
        ElementType::Float,
        ElementType::Complex64,
    ] {
        let input = random_tensor(&mut rng, element_type, &[4, 6]);
        let split = ResolvedSplit::new(&[4, 6], 1, vec![0, 6, 0], true).unwrap();
        check(gpu, &input, &split, &format!("{element_type} zero-length"));
        let empty = random_tensor(&mut rng, element_type, &[0, 6]);
        let split = ResolvedSplit::new(&[0, 6], 1, vec![3, 3], true).unwrap();
        check(gpu, &empty, &split, &format!("{element_type} zero-size"));
        assert_eq!(gpu.plan(&split, element_type).unwrap().dispatch_count(), 0);
    }
    // An empty sequence.
    let input = random_tensor(&mut rng, ElementType::Float, &[0, 3]);
    let out = common::round_trip(gpu)
        .split(&OnnxSplitToSequence::new(11).into(), &input)
        .unwrap();
    assert!(out.is_empty());
}

#[test]
fn odd_sizes_and_runs_that_start_and_end_mid_word() {
    let Some(gpu) = gpu("odd_sizes_and_runs_that_start_and_end_mid_word") else {
        return;
    };
    let mut rng = Rng::new(24);
    // Sizes that are not multiples of the workgroup (256) or of a word.
    for (element_type, shape, axis, lengths) in [
        (ElementType::Uint8, vec![257, 1027], 1, vec![1, 513, 513]),
        (ElementType::Int4, vec![333, 41], 1, vec![7, 1, 33]),
        (ElementType::Uint2, vec![17, 3, 23], 2, vec![5, 11, 7]),
        (ElementType::Float16, vec![1001, 6], 1, vec![1, 2, 3]),
        (ElementType::Bool, vec![3, 5, 7, 11], 3, vec![3, 3, 5]),
        (ElementType::Int16, vec![999], 0, vec![1, 997, 1]),
        (ElementType::Float, vec![255, 3], 0, vec![100, 155]),
    ] {
        let input = random_tensor(&mut rng, element_type, &shape);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        check(gpu, &input, &split, &format!("{element_type} {shape:?}"));
    }
}

#[test]
fn the_plan_picks_row_copies_or_vec4_when_everything_is_128_bit_aligned() {
    let Some(gpu) = gpu("the_plan_picks_row_copies_or_vec4_when_everything_is_128_bit_aligned")
    else {
        return;
    };
    let mut rng = Rng::new(25);
    let input = random_tensor(&mut rng, ElementType::Float, &[6, 64]);
    let split = ResolvedSplit::new(&[6, 64], 1, vec![16, 32, 16], true).unwrap();
    assert_eq!(
        common::runs(&gather_plan(gpu, &split, ElementType::Float)),
        common::ROW_COPIES
    );
    check(gpu, &input, &split, "row copies");
    // The table-driven vec4 kernel (past one dispatch's outputs), forced.
    let expected = input.split(&split).unwrap();
    for placement in [Placement::Separate, Placement::Arena] {
        let options = common::forced(gather(), common::VEC4_TABLE).placement(placement);
        let plan = gpu.plan_with(&split, ElementType::Float, &options).unwrap();
        let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
        assert_outputs_equal(&expected, &actual, &format!("vec4 {placement:?}"));
    }
    // Runs of whole words only: the row-words kernel.
    let split = ResolvedSplit::new(&[6, 64], 1, vec![17, 31, 16], true).unwrap();
    assert_eq!(
        gather_plan(gpu, &split, ElementType::Float).kernel(),
        Kernel::RowWords
    );
    check(gpu, &input, &split, "row words");
}

/// Runs the gather plan in both placements and compares with the host path.
fn check_gather_plans(gpu: &GpuSplitter, input: &HostTensor, split: &ResolvedSplit) -> Kernel {
    check_plans_with(gpu, input, split, gather()).0
}

/// [`check_gather_plans`] with another strategy (a cost model that ranks
/// the kernels differently).
fn check_plans_with(
    gpu: &GpuSplitter,
    input: &HostTensor,
    split: &ResolvedSplit,
    options: PlanOptions,
) -> (Kernel, Form) {
    let expected = input.split(split).unwrap();
    let mut kernel = None;
    for outputs in [Placement::Separate, Placement::Arena] {
        let plan = gpu
            .plan_with(split, input.element_type(), &options.placement(outputs))
            .unwrap();
        let actual = common::round_trip(gpu).run_plan(&plan, input).unwrap();
        let context = format!(
            "{} {split:?} {outputs:?} {:?}",
            input.element_type(),
            plan.kernel()
        );
        assert_outputs_equal(&expected, &actual, &context);
        kernel = Some(common::runs(&plan));
    }
    kernel.unwrap()
}

/// Runs `cases` (all split on axis 1) and random splits from `generate` of
/// every width on the GPU in both placements; returns how many took
/// `kernel`, and of how many.
fn kernel_cases(
    gpu: &GpuSplitter,
    mut cases: Vec<(ElementType, Vec<usize>, Vec<usize>)>,
    generate: common::SplitGenerator,
    (kernel, options): ((Kernel, Form), PlanOptions),
    seed: u64,
) -> (usize, usize) {
    let mut rng = Rng::new(seed);
    for t in common::one_type_per_width() {
        for count in 2..6 {
            let split = generate(&mut rng, t, count);
            cases.push((t, split.input_shape().to_vec(), split.lengths().to_vec()));
        }
    }
    let total = cases.len();
    let taken = cases
        .into_iter()
        .filter(|(t, shape, lengths)| {
            let split = ResolvedSplit::new(shape, 1, lengths.clone(), true).unwrap();
            let input = random_tensor(&mut rng, *t, shape);
            check_plans_with(gpu, &input, &split, options) == kernel
        })
        .count();
    (taken, total)
}

#[test]
fn the_funnel_moves_unaligned_runs_of_every_width() {
    let Some(gpu) = gpu("the_funnel_moves_unaligned_runs_of_every_width") else {
        return;
    };
    // The split_bench cases, scaled down, then random ones of every width.
    let cases = vec![
        (ElementType::Uint8, vec![64, 4097], vec![2048, 2049]),
        (ElementType::Int4, vec![64, 4099], vec![1000, 1000, 2099]),
        (ElementType::Float, vec![840, 85], vec![5, 80]),
    ];
    let (funnels, total) = kernel_cases(
        gpu,
        cases,
        common::funnel_split,
        (common::FUNNEL_TABLE, common::funnel_first()),
        78,
    );
    // The rest had runs that happen to be vec4-aligned.
    assert!(
        4 * funnels >= 3 * total,
        "{funnels} of {total} cases took the funnel"
    );
}

#[test]
fn row_streams_move_unaligned_runs_of_every_width() {
    let Some(gpu) = gpu("row_streams_move_unaligned_runs_of_every_width") else {
        return;
    };
    // The split_bench cases, scaled down (rows that straddle vec4s in one
    // output, in all three), then random ones of every width.
    let cases = vec![
        (ElementType::Uint8, vec![64, 4097], vec![2048, 2049]),
        (ElementType::Int4, vec![64, 4099], vec![1000, 1000, 2099]),
        (ElementType::Float, vec![840, 85], vec![5, 80]),
        (ElementType::Uint8, vec![32, 100], vec![17, 17, 17, 17, 32]),
        // Short runs of whole words (one, two and three) beside long ones:
        // YOLOv5's head, int4 and f16 rows.
        (ElementType::Float, vec![64, 85], vec![4, 1, 80]),
        (ElementType::Int4, vec![32, 72], vec![8, 64]),
        (ElementType::Float16, vec![8, 22], vec![4, 6, 12]),
        (ElementType::Float, vec![12, 131], vec![3, 128]),
    ];
    let options = PlanOptions::default().strategy(PlanStrategy::Auto(common::streams_first()));
    let (streams, total) = kernel_cases(
        gpu,
        cases,
        common::funnel_split,
        (common::ROW_STREAMS, options),
        81,
    );
    // The rest had runs that happen to be vec4-aligned.
    assert!(
        4 * streams >= 3 * total,
        "{streams} of {total} cases took row streams"
    );
}

#[test]
fn short_runs_at_any_offset_split_through_the_funnel_on_gpus() {
    let Some(gpu) = gpu("short_runs_at_any_offset_split_through_the_funnel_on_gpus") else {
        return;
    };
    // A few short runs that are not whole words at whole-word offsets
    // beside long ones: the int8 511/1/511 split scaled down, a byte last in
    // its row, two in a row, an f16 at an odd element, int2 and int4 runs,
    // a run of 100 bits. Striped lanes (GPUs) gather them from any offset;
    // lavapipe's blocked lanes keep another kernel.
    let cases = [
        (ElementType::Int8, vec![64, 1023], vec![511, 1, 511]),
        (ElementType::Uint8, vec![64, 1024], vec![1023, 1]),
        (ElementType::Uint8, vec![64, 2000], vec![999, 1, 1, 999]),
        (ElementType::Float16, vec![64, 1000], vec![499, 1, 500]),
        (ElementType::Int2, vec![64, 4000], vec![1990, 3, 2007]),
        (ElementType::Int4, vec![64, 2050], vec![1000, 2, 1048]),
        (ElementType::Int4, vec![64, 2100], vec![25, 2075]),
        (ElementType::Uint8, vec![64, 2051], vec![1024, 3, 1024]),
    ];
    let mut rng = Rng::new(56);
    for (t, shape, lengths) in cases {
        let split = ResolvedSplit::new(&shape, 1, lengths, true).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        for (model, gathered) in [
            (CostModel::DISCRETE_GPU, true),
            (CostModel::LAVAPIPE, false),
        ] {
            let options = PlanOptions::default().strategy(PlanStrategy::Auto(model));
            let runs = check_plans_with(gpu, &input, &split, options);
            let context = format!("{t:?} {shape:?} {:?}: {runs:?}", model.lanes);
            assert_eq!(runs == common::ROW_STREAMS, gathered, "{context}");
        }
    }
}

#[test]
fn row_blocks_move_short_runs_of_every_width() {
    let Some(gpu) = gpu("row_blocks_move_short_runs_of_every_width") else {
        return;
    };
    let cases = vec![
        // The split_bench case, scaled down: runs of 2, 4 and 6 bytes.
        (ElementType::Float16, vec![4096, 6], vec![1, 2, 3]),
        // A detection head's boxes and scores, f32 [N, 4 + 1].
        (ElementType::Float, vec![1024, 5], vec![4, 1]),
        // Feature maps: a few channels of a small image.
        (ElementType::Uint8, vec![64, 3, 4], vec![1, 2]),
    ];
    let (rows, total) = kernel_cases(
        gpu,
        cases,
        common::row_block_split,
        (
            common::ROW_BLOCKS,
            PlanOptions::default().strategy(PlanStrategy::Auto(common::row_blocks_first())),
        ),
        79,
    );
    // The rest have blocks past 64 words.
    assert!(
        4 * rows >= 3 * total,
        "{rows} of {total} cases took row blocks"
    );
}

#[test]
fn ten_thousand_and_100_000_outputs() {
    let Some(gpu) = gpu("ten_thousand_and_100_000_outputs") else {
        return;
    };
    let mut rng = Rng::new(26);
    let input = random_tensor(&mut rng, ElementType::Float16, &[3, 10_000]);
    let op: Operator = OnnxSplitToSequence::new(11).axis(1).keepdims(0).into();
    let split = op.resolve(input.shape()).unwrap();
    assert_eq!(split.output_count(), 10_000);
    // Into one arena: one dispatch.
    let arena = gpu
        .plan_with(
            &split,
            ElementType::Float16,
            &PlanOptions::default().placement(Placement::Arena),
        )
        .unwrap();
    assert_eq!(arena.dispatch_count(), 1);
    let expected = input.split(&split).unwrap();
    assert_outputs_equal(
        &expected,
        &common::round_trip(gpu).run_plan(&arena, &input).unwrap(),
        "arena",
    );
    // Into 10,000 regions: one dispatch per destinations_per_dispatch outputs.
    let plan = gpu.plan(&split, ElementType::Float16).unwrap();
    let per = gpu.limits().destinations_per_dispatch() as usize;
    assert_eq!(plan.dispatch_count(), 10_000usize.div_ceil(per));
    check(gpu, &input, &split, "10,000 outputs");
    // 100,000 outputs: the arena table is 4.8 MB, far past the 64 KiB uniform
    // limit; it lives in a storage buffer, still one dispatch.
    let input = random_tensor(&mut rng, ElementType::Uint8, &[100_000]);
    let split = OnnxSplitToSequence::new(11).resolve(input.shape()).unwrap();
    let arena = gpu
        .plan_with(
            &split,
            ElementType::Uint8,
            &PlanOptions::default().placement(Placement::Arena),
        )
        .unwrap();
    assert_eq!(arena.dispatch_count(), 1);
    assert!(arena.table().len() > 64 << 10);
    let expected = input.split(&split).unwrap();
    assert_outputs_equal(
        &expected,
        &common::round_trip(gpu).run_plan(&arena, &input).unwrap(),
        "100,000 arena",
    );
    check(gpu, &input, &split, "100,000 outputs into 100,000 regions");
}

#[test]
fn multi_pass_plans_with_small_windows_are_exact() {
    let Some(gpu) = gpu("multi_pass_plans_with_small_windows_are_exact") else {
        return;
    };
    let mut rng = Rng::new(27);
    for (element_type, shape, axis, lengths, window) in [
        // Rows per chunk (several blocks fit in a window).
        (ElementType::Float, vec![64, 100], 1, vec![30, 70], 4096),
        (ElementType::Int4, vec![300, 37], 1, vec![5, 32], 2048),
        // Chunks that start mid-run (non-zero run phase).
        (ElementType::Int4, vec![400, 20], 1, vec![9, 11], 2048),
        // Blocks larger than a window: chunks inside runs, mid-word run ends.
        (
            ElementType::Uint8,
            vec![3, 9001],
            1,
            vec![4500, 1, 4500],
            2048,
        ),
        (
            ElementType::Int4,
            vec![2, 20001],
            1,
            vec![9999, 10002],
            2048,
        ),
        (
            ElementType::Uint2,
            vec![3, 30001],
            1,
            vec![15001, 15000],
            2048,
        ),
        (
            ElementType::Float16,
            vec![4, 5003],
            1,
            vec![2500, 2503],
            2048,
        ),
        (ElementType::Float, vec![40000], 0, vec![10000, 30000], 4096),
        (
            ElementType::Complex128,
            vec![5, 300],
            1,
            vec![100, 200],
            4096,
        ),
    ] {
        let input = random_tensor(&mut rng, element_type, &shape);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let plan = SplitPlan::new(&split, element_type, &tiny(window, 65535), &gather()).unwrap();
        assert!(
            plan.dispatch_count() > 1,
            "{element_type} {shape:?} should need several passes"
        );
        let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
        let context = format!(
            "{element_type} {shape:?} window {window}: {} passes",
            plan.dispatch_count()
        );
        assert_outputs_equal(&input.split(&split).unwrap(), &actual, &context);
    }
}

#[test]
fn two_dimensional_grids_past_the_workgroup_limit() {
    let Some(gpu) = gpu("two_dimensional_grids_past_the_workgroup_limit") else {
        return;
    };
    let mut rng = Rng::new(28);
    // 100,003 words are 12,501 invocations, 49 workgroups: with at most 10
    // per dimension they need a 2-D grid (5 x 10); with at most 3, several
    // passes of 3 x 3 grids.
    let input = random_tensor(&mut rng, ElementType::Uint8, &[400_012]);
    let split = ResolvedSplit::new(&[400_012], 0, vec![200_001, 200_011], true).unwrap();
    let expected = input.split(&split).unwrap();
    let limits = PlanLimits {
        max_compute_workgroups_per_dimension: 3,
        ..*gpu.limits()
    };
    let plan = SplitPlan::new(&split, ElementType::Uint8, &limits, &gather()).unwrap();
    assert!(plan.dispatch_count() > 1);
    let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
    assert_outputs_equal(&expected, &actual, "3 x 3 grids");
    let limits = PlanLimits {
        max_compute_workgroups_per_dimension: 10,
        ..*gpu.limits()
    };
    // Blocked (lavapipe's: eight words an invocation): one 2-D grid.
    let blocked = PlanOptions::default()
        .strategy(PlanStrategy::Auto(CostModel::LAVAPIPE))
        .in_compute_pass();
    let plan = SplitPlan::new(&split, ElementType::Uint8, &limits, &blocked).unwrap();
    assert_eq!(plan.dispatch_count(), 1);
    let [x, y] = plan.passes()[0].workgroups;
    assert!(y > 1 && x <= 10 && y <= 10, "grid {x} x {y}");
    let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
    assert_outputs_equal(&expected, &actual, "a 2-D grid, blocked");
    // Striped (a GPU's: a word an invocation): 2-D grids in several passes.
    let plan = SplitPlan::new(&split, ElementType::Uint8, &limits, &gather()).unwrap();
    assert!(plan.dispatch_count() > 1);
    for pass in plan.passes() {
        let [x, y] = pass.workgroups;
        assert!(x <= 10 && y <= 10, "grid {x} x {y}");
    }
    assert!(
        u64::from(x) * u64::from(y) * 256
            < u64::from(plan.passes()[0].invocations) + u64::from(y) * 256
    );
    let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
    assert_outputs_equal(&input.split(&split).unwrap(), &actual, "2-D grid");
}

#[test]
fn a_tensor_above_the_binding_limit() {
    let Some(gpu) = gpu("a_tensor_above_the_binding_limit") else {
        return;
    };
    // Planned with an explicit 128 MiB binding limit (WebGPU's default and
    // lavapipe's), so the test means the same on GPUs that bind more.
    let limits = PlanLimits {
        max_storage_buffer_binding_size: 128 << 20,
        ..*gpu.limits()
    };
    // 144 MiB of u32, split unevenly on the last axis so runs are not
    // vec4-aligned.
    let rows = 4608;
    let cols = 8192;
    let bytes = rows * cols * 4;
    assert!(bytes as u64 > limits.max_storage_buffer_binding_size);
    let mut rng = Rng::new(29);
    let data: Vec<u32> = (0..rows * cols).map(|_| rng.next_u64() as u32).collect();
    let input = HostTensor::from_slice(&[rows, cols], &data).unwrap();
    let split = ResolvedSplit::new(&[rows, cols], 1, vec![4095, 1, 4096], true).unwrap();
    let plan = SplitPlan::new(&split, ElementType::Uint32, &limits, &gather()).unwrap();
    assert!(plan.dispatch_count() > 1);
    let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
    let expected = input.split(&split).unwrap();
    assert_outputs_equal(&expected, &actual, "144 MiB gather");
    // The default strategy (copies for these long aligned runs), and axis 0,
    // where every output is one contiguous range.
    let auto = PlanOptions::default();
    let plan = SplitPlan::new(&split, ElementType::Uint32, &limits, &auto).unwrap();
    let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
    assert_outputs_equal(&expected, &actual, "144 MiB default plan");
    let split = ResolvedSplit::new(&[rows, cols], 0, vec![1, rows - 1], true).unwrap();
    let plan = SplitPlan::new(&split, ElementType::Uint32, &limits, &auto).unwrap();
    let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
    let expected = input.split(&split).unwrap();
    assert_outputs_equal(&expected, &actual, "144 MiB axis 0");
}

#[test]
fn the_async_api_matches_the_blocking_one() {
    let Some(gpu) = gpu("the_async_api_matches_the_blocking_one") else {
        return;
    };
    let mut rng = Rng::new(31);
    let input = random_tensor(&mut rng, ElementType::BFloat16, &[5, 12]);
    let op: Operator = OnnxSplit::new(18, 3).axis(1).num_outputs(3).into();
    let blocking = common::round_trip(gpu).split(&op, &input).unwrap();
    let asynchronous =
        pollster::block_on(common::round_trip(gpu).split_async(&op, &input)).unwrap();
    assert_eq!(blocking, asynchronous);
    assert_outputs_equal(&op.split_on_host(&input).unwrap(), &blocking, "async");
}

/// A runtime spawns the async forms on a multi-threaded executor
/// (`tokio::spawn` needs `Send` futures): checked at compile time, for
/// every move's round trip and the calibration.
#[test]
fn the_async_forms_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let Some(gpu) = gpu("the_async_forms_futures_are_send") else {
        return;
    };
    let round_trip = common::round_trip(gpu);
    let input = HostTensor::from_slice(&[2, 4], &[0f32; 8]).unwrap();
    let op: Operator = OnnxSplit::new(13, 2).axis(1).into();
    let split = op.resolve(input.shape()).unwrap();
    let plan = gpu.plan(&split, ElementType::Float).unwrap();
    let concat: wgpu_split::ConcatOperator = wgpu_split::OnnxConcat::new(13).axis(1).into();
    let inverse = wgpu_split::ResolvedConcat::inverse_of(&split).unwrap();
    let concat_plan = gpu.plan(&inverse, ElementType::Float).unwrap();
    let refs = [&input];
    assert_send(&round_trip.split_async(&op, &input));
    assert_send(&round_trip.run_async(&split, &input));
    assert_send(&round_trip.run_plan_async(&plan, &input));
    assert_send(&round_trip.concat_async(&concat, &refs));
    assert_send(&round_trip.run_async(&inverse, &refs));
    assert_send(&round_trip.run_plan_async(&concat_plan, &refs));
    assert_send(&wgpu_split::gpu::Calibration::measure_async(gpu));
    assert_send(&wgpu_split::gpu::GpuContext::request_default());
    // And as a runtime spawns it: on tokio, a poller driving the device.
    let _poller = wgpu_split::gpu::Poller::new(gpu.device());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let want = op.split_on_host(&input).unwrap();
    let task = runtime.spawn(async move {
        wgpu_split::gpu::RoundTrip::new(gpu)
            .split_async(&op, &input)
            .await
    });
    assert_eq!(runtime.block_on(task).unwrap().unwrap(), want);
}

#[test]
fn the_splitter_is_send_and_sync_and_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<wgpu_split::gpu::GpuSplitter>();
    let Some(gpu) = gpu("the_splitter_is_send_and_sync_and_shared_across_threads") else {
        return;
    };
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng::new(100 + t);
                for _ in 0..5 {
                    let input = random_tensor(&mut rng, ElementType::Int16, &[9, 13]);
                    let lengths = rng.lengths(13, 3);
                    let split = ResolvedSplit::new(&[9, 13], 1, lengths, true).unwrap();
                    check(gpu, &input, &split, "thread");
                }
            });
        }
    });
}

fn problem() -> impl Strategy<Value = (usize, Vec<usize>, usize, usize, u64)> {
    (
        0..ElementType::ALL.len(),
        prop::collection::vec(0usize..9, 1..=6),
        any::<u64>(),
    )
        .prop_flat_map(|(t, shape, seed)| {
            let rank = shape.len();
            (Just(t), Just(shape), 0..rank, 1usize..7, Just(seed))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_problems_match_the_host_path((t, shape, axis, count, seed) in problem()) {
        let Some(gpu) = gpu("random_problems_match_the_host_path") else { return Ok(()) };
        let element_type = ElementType::ALL[t];
        prop_assume!(element_type != ElementType::String);
        let mut rng = Rng::new(seed);
        let lengths = rng.lengths(shape[axis], count);
        let input = random_tensor(&mut rng, element_type, &shape);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let actual = common::round_trip(gpu).run(&split, &input).unwrap();
        prop_assert_eq!(naive_split(&input, &split), actual);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Widths 2 to 128 bits with odd run lengths and phases through the
    /// funnel (or vec4 where the runs happen to align).
    #[test]
    fn random_funnel_problems_match_the_host_path(t in 0..7usize, count in 1usize..6, seed in any::<u64>()) {
        let Some(gpu) = gpu("random_funnel_problems_match_the_host_path") else { return Ok(()) };
        let element_type = common::one_type_per_width()[t];
        let mut rng = Rng::new(seed);
        let split = common::funnel_split(&mut rng, element_type, count);
        let input = random_tensor(&mut rng, element_type, split.input_shape());
        prop_assert_ne!(check_gather_plans(gpu, &input, &split), Kernel::Words);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Widths 2 to 128 bits with odd run lengths and phases through the
    /// generated row-stream kernels (or vec4 where the runs happen to align).
    #[test]
    fn random_row_stream_problems_match_the_host_path(t in 0..7usize, count in 1usize..6, seed in any::<u64>()) {
        let Some(gpu) = gpu("random_row_stream_problems_match_the_host_path") else { return Ok(()) };
        let element_type = common::one_type_per_width()[t];
        let mut rng = Rng::new(seed);
        let split = common::funnel_split(&mut rng, element_type, count);
        let input = random_tensor(&mut rng, element_type, split.input_shape());
        let options = PlanOptions::default().strategy(PlanStrategy::Auto(common::streams_first()));
        let kernel = check_plans_with(gpu, &input, &split, options);
        prop_assert!(
            [common::ROW_STREAMS, common::ROW_COPIES, common::VEC4_TABLE].contains(&kernel),
            "{kernel:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Widths 2 to 128 bits with short odd runs through the generated
    /// row-block kernels (or another kernel where a block grows too large).
    #[test]
    fn random_row_block_problems_match_the_host_path(t in 0..7usize, count in 1usize..6, seed in any::<u64>()) {
        let Some(gpu) = gpu("random_row_block_problems_match_the_host_path") else { return Ok(()) };
        let element_type = common::one_type_per_width()[t];
        let mut rng = Rng::new(seed);
        let split = common::row_block_split(&mut rng, element_type, count);
        let input = random_tensor(&mut rng, element_type, split.input_shape());
        check_gather_plans(gpu, &input, &split);
    }
}

#[test]
fn onnx_node_tests_pass_on_the_gpu() {
    let Some(gpu) = gpu("onnx_node_tests_pass_on_the_gpu") else {
        return;
    };
    use wgpu_split::onnx::node_test::{Summary, run_directories_with};
    for (name, count) in [("onnx-node", 31), ("onnx-extra", 79)] {
        let root = common::repo_root().join("tests/data").join(name);
        // Every directory: the splits' and the concats'.
        let mut dirs: Vec<_> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        let mut out = Vec::new();
        // Strings have no GPU layout; they go to the host path, as a runtime would.
        let execute = |op: &Operator, data: &HostTensor| match data.element_type() {
            ElementType::String => op.split_on_host(data),
            _ => common::round_trip(gpu).split(op, data),
        };
        let concat = |op: &wgpu_split::ConcatOperator, inputs: &[&HostTensor]| match inputs
            .iter()
            .any(|t| t.element_type() == ElementType::String)
        {
            true => op.concat_on_host(inputs),
            false => common::round_trip(gpu).concat(op, inputs),
        };
        let summary = run_directories_with(&dirs, execute, concat, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            summary,
            Summary {
                passed: count,
                failed: 0
            },
            "{text}"
        );
    }
}

#[test]
fn every_strategy_gives_the_same_bytes_on_the_gpu() {
    let Some(gpu) = gpu("every_strategy_gives_the_same_bytes_on_the_gpu") else {
        return;
    };
    let mut rng = Rng::new(32);
    for (t, shape, axis, lengths) in [
        (ElementType::Float, vec![64, 40], 1, vec![8, 32]),
        (ElementType::Float, vec![64, 40], 0, vec![16, 48]),
        (ElementType::Uint8, vec![8, 64], 1, vec![4, 60]),
        (ElementType::Int16, vec![3, 5, 8], 2, vec![2, 6]),
    ] {
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        let expected = input.split(&split).unwrap();
        for strategy in [
            PlanStrategy::Gather,
            PlanStrategy::GatherPerOutput,
            PlanStrategy::Copy,
            PlanStrategy::Auto(Default::default()),
        ] {
            for outputs in [Placement::Separate, Placement::Arena] {
                let options = PlanOptions::default().strategy(strategy).placement(outputs);
                let plan = gpu.plan_with(&split, t, &options).unwrap();
                let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
                let context = format!("{t} {shape:?} {strategy:?} {outputs:?}");
                assert_outputs_equal(&expected, &actual, &context);
            }
        }
    }
}
