//! The planner, without a GPU: output layouts, kernels, dispatch counts,
//! windows and grids within the limits, and every plan run through the CPU
//! emulator of the encode contract (bindings at the caller's offsets, the
//! table bit by bit) against the host path, with sentinels around every
//! region.

mod common;

use common::emulator::{Layout, check_emulated};
use common::{
    FUNNEL_TABLE, ROW_BLOCKS, ROW_COPIES, ROW_STREAMS, ROW_WORDS, Rng, VEC4_TABLE, WORDS,
    random_tensor, runs, tiny,
};
use proptest::prelude::*;
use wgpu_split::error::{EncodeError, PlanError};
use wgpu_split::plan::internals::{
    BoundPlan, MAX_GROUP_MODULES, Pass, PlainRegion, SlotBinding, WORKGROUP_SIZE,
};
use wgpu_split::plan::internals::{GeneratedLayout, RowCopies};
use wgpu_split::plan::{
    CostModel, Form, Kernel, LaneOrder, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
    Usages,
};
use wgpu_split::{ElementType, HostTensor, OnnxSplitToSequence, ResolvedSplit};

/// Static properties of a plan: windows, grids, tables and the output
/// layout within the limits.
fn check_structure(plan: &SplitPlan, context: &str) {
    let limits = plan.limits();
    let window = limits.max_storage_buffer_binding_size.min(1 << 28);
    let align = u64::from(limits.min_storage_buffer_offset_alignment);
    for pass in plan.passes() {
        let windows = std::iter::once(&pass.src_window_bytes)
            .chain(pass.dst_windows.iter().map(|w| &w.bytes));
        for w in windows {
            assert!(
                w.end - w.start <= window - align
                    && w.start % align == 0
                    && (w.end - w.start) % 4 == 0,
                "{context}: window {w:?}"
            );
        }
        assert!(pass.src_window_bytes.end <= plan.input_binding_bytes());
        for w in &pass.dst_windows {
            assert!(w.bytes.end <= plan.destination_bytes(w.destination).next_multiple_of(16));
        }
        assert!(pass.dst_windows.len() as u32 <= limits.destinations_per_dispatch());
        assert_eq!(pass.table_bytes.start % align, 0);
        let [x, y] = pass.workgroups;
        let max = limits.max_compute_workgroups_per_dimension;
        assert!(x <= max && y <= max, "{context}: grid {x} x {y}");
        let groups = u64::from(pass.invocations).div_ceil(u64::from(WORKGROUP_SIZE));
        assert!(
            u64::from(x) * u64::from(y) >= groups,
            "{context}: grid covers the work"
        );
        assert!(
            u64::from(x) * u64::from(y) < groups + u64::from(y),
            "{context}: grid is tight"
        );
    }
    if plan.placement() == Placement::Arena {
        let mut end = 0;
        for o in plan.outputs() {
            assert_eq!(o.arena_offset_bytes % align, 0);
            assert!(o.arena_offset_bytes >= end, "slots do not overlap");
            end = o.arena_offset_bytes + o.region_bytes;
        }
        assert!(plan.arena_bytes() >= end && plan.arena_bytes().is_multiple_of(4));
    }
}

/// Structure, then the emulated encode in every caller layout (the input
/// in the destinations' page for plans without copies).
fn check_plan(plan: &SplitPlan, input: &HostTensor, split: &ResolvedSplit, context: &str) {
    check_structure(plan, context);
    let mut rng = Rng::new(split.output_count() as u64);
    let with_input = (plan.copy_count() == 0).then_some(Layout::WithInput);
    for layout in [Layout::OwnBuffers, Layout::Pooled]
        .into_iter()
        .chain(with_input)
    {
        check_emulated(
            plan,
            input,
            split,
            layout,
            &mut rng,
            &format!("{context} {layout:?}"),
        );
    }
}

fn options(strategy: Strategy, outputs: Placement) -> PlanOptions {
    PlanOptions::default().strategy(strategy).placement(outputs)
}

/// The kernels lavapipe's model (blocked lanes) plans for a compute pass,
/// in both placements.
fn blocked_kernels(
    split: &ResolvedSplit,
    t: ElementType,
    limits: &PlanLimits,
) -> [(Kernel, Form); 2] {
    [Placement::Separate, Placement::Arena].map(|placement| {
        let options = PlanOptions::default()
            .strategy(Strategy::Auto(CostModel::LAVAPIPE))
            .in_compute_pass()
            .placement(placement);
        runs(&SplitPlan::new(split, t, limits, &options).unwrap())
    })
}

/// The pure-gather plan, in both placements.
fn gather_plans(split: &ResolvedSplit, t: ElementType, limits: &PlanLimits) -> [SplitPlan; 2] {
    plans_with(split, t, limits, Strategy::Gather)
}

/// The plans of `strategy`, in both placements.
fn plans_with(
    split: &ResolvedSplit,
    t: ElementType,
    limits: &PlanLimits,
    strategy: Strategy,
) -> [SplitPlan; 2] {
    plans_of(split, t, limits, PlanOptions::default().strategy(strategy))
}

/// The plans of `options`, in both placements.
fn plans_of(
    split: &ResolvedSplit,
    t: ElementType,
    limits: &PlanLimits,
    options: PlanOptions,
) -> [SplitPlan; 2] {
    [Placement::Separate, Placement::Arena]
        .map(|o| SplitPlan::new(split, t, limits, &options.placement(o)).unwrap())
}

#[test]
fn one_dispatch_under_the_limits() {
    let mut rng = Rng::new(41);
    for limits in [PlanLimits::LAVAPIPE, PlanLimits::WEBGPU_DEFAULT] {
        for element_type in [
            ElementType::Int2,
            ElementType::Int4,
            ElementType::Uint8,
            ElementType::Float16,
            ElementType::Float,
            ElementType::Complex128,
        ] {
            for shape in [vec![7], vec![3, 5, 7], vec![64, 64], vec![2, 3, 4, 5, 6, 1]] {
                for axis in 0..shape.len() {
                    let count = 1 + rng.below(4);
                    let lengths = rng.lengths(shape[axis], count);
                    let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
                    let input = random_tensor(&mut rng, element_type, &shape);
                    for plan in gather_plans(&split, element_type, &limits) {
                        let nonempty = plan.outputs().iter().any(|s| s.len_bytes > 0);
                        assert_eq!(plan.dispatch_count(), usize::from(nonempty));
                        let context = format!("{element_type} {shape:?} axis {axis}");
                        check_plan(&plan, &input, &split, &context);
                    }
                }
            }
        }
    }
}

#[test]
fn arena_slots_are_aligned_for_direct_binding() {
    let split = ResolvedSplit::new(&[3, 10], 1, vec![1, 2, 7], true).unwrap();
    let [separate, arena] = gather_plans(&split, ElementType::Int4, &PlanLimits::WEBGPU_DEFAULT);
    let offsets: Vec<u64> = arena
        .outputs()
        .iter()
        .map(|s| s.arena_offset_bytes)
        .collect();
    assert_eq!(offsets, [0, 256, 512]);
    let lens: Vec<u64> = arena.outputs().iter().map(|s| s.len_bytes).collect();
    assert_eq!(lens, [2, 3, 11]); // 3, 6 and 21 nibbles
    // Each region holds the output rounded up to the word the split writes.
    let regions: Vec<u64> = arena.outputs().iter().map(|s| s.region_bytes).collect();
    assert_eq!(regions, [4, 4, 12]);
    assert_eq!(arena.arena_bytes(), 524);
    assert_eq!(arena.outputs()[1].arena_range(), 256..259);
    // Separate destinations need no arena; the regions are the same.
    assert_eq!(separate.arena_bytes(), 0);
    assert_eq!(separate.destination_bytes(2), 12);
}

#[test]
fn the_kernel_is_the_widest_that_divides_everything() {
    let kernel = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        gather_plans(&split, t, &PlanLimits::LAVAPIPE).map(|p| runs(&p))
    };
    let both = |k| [k, k];
    assert_eq!(
        kernel(&[4096, 4096], 0, vec![1024; 4], ElementType::Float),
        both(ROW_COPIES)
    );
    assert_eq!(
        kernel(&[4096, 4096], 1, vec![1024; 4], ElementType::Float),
        both(ROW_COPIES)
    );
    // Runs of 4 and 2 floats: two rows make whole vec4s of everything.
    assert_eq!(
        kernel(&[8, 6], 1, vec![4, 2], ElementType::Float),
        both(ROW_BLOCKS)
    );
    // Rows of 6 words cut 4 and 2 in 7 rows: no whole vec4s; row words (a
    // word a lane on GPUs, a stretch on lavapipe, where it calibrates at
    // twice the word kernel's rate).
    assert_eq!(
        kernel(&[7, 6], 1, vec![4, 2], ElementType::Float),
        both(ROW_WORDS)
    );
    let split = ResolvedSplit::new(&[7, 6], 1, vec![4, 2], true).unwrap();
    let blocked = blocked_kernels(&split, ElementType::Float, &PlanLimits::LAVAPIPE);
    assert_eq!(blocked, both(ROW_WORDS));
    assert_eq!(
        kernel(&[8, 32], 1, vec![16, 16], ElementType::Uint8),
        both(ROW_COPIES)
    );
    assert_eq!(
        kernel(&[8, 33], 1, vec![16, 17], ElementType::Uint8),
        both(WORDS)
    );
    // One row (outer = 1): only the runs and offsets matter (whole words:
    // row words on GPUs, words on lavapipe).
    assert_eq!(
        kernel(&[1, 36], 1, vec![33, 3], ElementType::Float),
        both(ROW_WORDS)
    );
    let split = ResolvedSplit::new(&[1, 36], 1, vec![33, 3], true).unwrap();
    let blocked = blocked_kernels(&split, ElementType::Float, &PlanLimits::LAVAPIPE);
    assert_eq!(blocked, both(ROW_WORDS));
    // One vec4 beside eight: with blocked lanes most row-copy lanes would
    // idle on the short output, so the table-driven vec4 kernel takes it
    // on lavapipe; striped, every lane copies one vec4 of the row's runs,
    // and row copies take it.
    assert_eq!(
        kernel(&[1, 36], 1, vec![4, 32], ElementType::Float),
        both(ROW_COPIES)
    );
    let split = ResolvedSplit::new(&[1, 36], 1, vec![4, 32], true).unwrap();
    let blocked = blocked_kernels(&split, ElementType::Float, &PlanLimits::LAVAPIPE);
    assert_eq!(blocked, both(VEC4_TABLE));
    // Past 32 outputs the table-driven vec4 kernel takes an arena; separate
    // destinations take row copies in groups, a dispatch each (lavapipe
    // binds 31 destinations per dispatch: two groups, two modules).
    assert_eq!(
        kernel(&[2, 160], 1, vec![4; 40], ElementType::Float),
        [ROW_COPIES, VEC4_TABLE]
    );
}

#[test]
fn runs_of_128_bits_and_more_at_any_offset_take_row_streams_or_the_funnel() {
    let kernel = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        gather_plans(&split, t, &PlanLimits::WEBGPU_DEFAULT).map(|p| runs(&p))
    };
    let both = |k| [k, k];
    // The split_bench cases: rows of 4097 bytes, runs of 500 bytes of int4;
    // a detection head of 5 and 80 floats per 85-float row. Every model
    // ranks the generated row streams first; the table-driven funnel moves
    // them where asked for (and where one dispatch cannot hold them all).
    assert_eq!(
        kernel(&[4096, 4097], 1, vec![2048, 2049], ElementType::Uint8),
        both(ROW_STREAMS)
    );
    assert_eq!(
        kernel(&[4096, 4099], 1, vec![1000, 1000, 2099], ElementType::Int4),
        both(ROW_STREAMS)
    );
    // Whole words of short rows: on GPUs row blocks, staged in a loop (4
    // rows of 85 words a block: every load and store a warp's consecutive
    // vec4s), on lavapipe row streams.
    assert_eq!(
        kernel(&[8400, 85], 1, vec![5, 80], ElementType::Float),
        both(ROW_BLOCKS)
    );
    let split = ResolvedSplit::new(&[8400, 85], 1, vec![5, 80], true).unwrap();
    let blocked = blocked_kernels(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT);
    assert_eq!(blocked, both(ROW_STREAMS));
    let funnel = |shape: &[usize], lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, 1, lengths, true).unwrap();
        plans_of(
            &split,
            t,
            &PlanLimits::WEBGPU_DEFAULT,
            common::funnel_first(),
        )
        .map(|p| runs(&p))
    };
    assert_eq!(
        funnel(&[4096, 4099], vec![1000, 1000, 2099], ElementType::Int4),
        both(FUNNEL_TABLE)
    );
    assert_eq!(
        funnel(&[8400, 85], vec![5, 80], ElementType::Float),
        both(FUNNEL_TABLE)
    );
    // Rows of 84 floats are 21 vec4s: [4, 80] is aligned: striped row
    // copies, one vec4 a lane; blocked, the vec4 kernel (30 % of row
    // copies' steps would idle).
    assert_eq!(
        kernel(&[8400, 84], 1, vec![4, 80], ElementType::Float),
        both(ROW_COPIES)
    );
    let split = ResolvedSplit::new(&[8400, 84], 1, vec![4, 80], true).unwrap();
    let blocked = blocked_kernels(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT);
    assert_eq!(blocked, both(VEC4_TABLE));
    // A run shorter than 128 bits of whole words: on GPUs row blocks staged
    // in a loop where the rows divide into blocks of whole vec4s (4 rows
    // of 84 words), else row words; on lavapipe row streams gather it word
    // by word, and with outputs of a partial vec4, row words.
    for (shape, lengths, on_gpus, on_lavapipe) in [
        ([8400, 84], vec![3, 81], ROW_BLOCKS, ROW_STREAMS),
        ([8401, 84], vec![3, 81], ROW_WORDS, ROW_WORDS),
        ([3, 41], vec![20, 21], ROW_WORDS, ROW_WORDS),
    ] {
        assert_eq!(
            kernel(&shape, 1, lengths.clone(), ElementType::Float),
            both(on_gpus)
        );
        let split = ResolvedSplit::new(&shape, 1, lengths, true).unwrap();
        let blocked = blocked_kernels(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT);
        assert_eq!(blocked, both(on_lavapipe), "{shape:?}");
    }
    assert_eq!(
        kernel(&[2, 41], 1, vec![8, 33], ElementType::Float),
        both(ROW_WORDS)
    );
    // Funnel plans move 16-byte units: offsets are multiples of 16.
    let split = ResolvedSplit::new(&[4096, 4097], 1, vec![2048, 2049], true).unwrap();
    let [plan, _] = gather_plans(&split, ElementType::Uint8, &PlanLimits::WEBGPU_DEFAULT);
    assert_eq!(plan.offset_alignment_bytes(), 16);
    // An output cut into chunks (past the binding limit) takes words.
    let [plan, _] = gather_plans(&split, ElementType::Uint8, &tiny(1 << 20, 1 << 16));
    assert!(plan.dispatch_count() > 2);
    assert_eq!(runs(&plan), WORDS);
}

/// Splits from `generate` for every width and 1 to 5 outputs, planned for
/// WebGPU's and lavapipe's limits in both placements, run through the
/// emulator; returns how many plans took `kernel` (of 140).
fn plans_of_every_width(
    generate: common::SplitGenerator,
    kernel: (Kernel, Form),
    seed: u64,
) -> usize {
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    plans_of_every_width_with(generate, (kernel, gather), seed)
}

/// [`plans_of_every_width`] planned with `options`.
fn plans_of_every_width_with(
    generate: common::SplitGenerator,
    (kernel, options): ((Kernel, Form), PlanOptions),
    seed: u64,
) -> usize {
    let mut rng = Rng::new(seed);
    let mut taken = 0;
    for t in common::one_type_per_width() {
        for count in 1..6 {
            let split = generate(&mut rng, t, count);
            let input = random_tensor(&mut rng, t, split.input_shape());
            for limits in [PlanLimits::WEBGPU_DEFAULT, PlanLimits::LAVAPIPE] {
                for plan in plans_of(&split, t, &limits, options) {
                    taken += usize::from(runs(&plan) == kernel);
                    check_plan(&plan, &input, &split, &format!("{t} {split:?}"));
                }
            }
        }
    }
    taken
}

#[test]
fn funnel_plans_of_every_width_are_exact() {
    // The rest have runs that happen to be vec4-aligned.
    let options = common::funnel_first();
    let funnels = plans_of_every_width_with(common::funnel_split, (FUNNEL_TABLE, options), 77);
    assert!(funnels >= 100, "{funnels} of 140 plans took the funnel");
}

#[test]
fn row_stream_plans_of_every_width_are_exact() {
    let options = PlanOptions::default().strategy(Strategy::Auto(common::streams_first()));
    let streams = plans_of_every_width_with(common::funnel_split, (ROW_STREAMS, options), 82);
    assert!(streams >= 100, "{streams} of 140 plans took row streams");
}

#[test]
fn long_unaligned_runs_take_row_streams_on_lavapipe() {
    // u8 [64, 4097] split [2048, 2049]: 128 whole vec4s per row in each
    // output, 16 invocations per row of 8 vec4s each; output 1's rows
    // straddle vec4s.
    let split = ResolvedSplit::new(&[64, 4097], 1, vec![2048, 2049], true).unwrap();
    let auto = Strategy::Auto(CostModel::LAVAPIPE);
    for plan in plans_with(&split, ElementType::Uint8, &PlanLimits::LAVAPIPE, auto) {
        assert_eq!(runs(&plan), ROW_STREAMS);
        let Some(GeneratedLayout::RowStreams(rs)) = plan.generated_layouts().first().copied()
        else {
            panic!("a row-stream plan")
        };
        assert_eq!((rs.block_bits, rs.per_row), (4097 * 8, 16));
        let vec4s: Vec<u32> = rs.outputs.iter().map(|o| o.vec4s).collect();
        assert_eq!(vec4s, [8, 8]);
        assert_eq!(plan.passes()[0].invocations, 64 * 16);
        assert_eq!(plan.dispatch_count(), 1);
    }
    // So does the conservative model (generated kernels rank first).
    let [plan, _] = gather_plans(&split, ElementType::Uint8, &PlanLimits::LAVAPIPE);
    assert_eq!(runs(&plan), ROW_STREAMS);
    // Rows of partial vec4s in total (the input is not whole vec4s): not
    // row streams.
    let split = ResolvedSplit::new(&[3, 4097], 1, vec![2048, 2049], true).unwrap();
    let [plan, _] = plans_with(&split, ElementType::Uint8, &PlanLimits::LAVAPIPE, auto);
    assert_ne!(runs(&plan), ROW_STREAMS);
}

#[test]
fn short_runs_take_row_blocks() {
    let plans = |shape: &[usize], lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, 1, lengths, true).unwrap();
        gather_plans(&split, t, &PlanLimits::WEBGPU_DEFAULT)
    };
    // f16 [N, 6] split [1, 2, 3]: 8 rows (96 bits each) make 6 vec4s of
    // input and 1, 2 and 3 vec4s of the outputs.
    let [separate, arena] = plans(&[4096, 6], vec![1, 2, 3], ElementType::Float16);
    for plan in [&separate, &arena] {
        assert_eq!(runs(plan), ROW_BLOCKS);
        let Some(GeneratedLayout::RowBlocks(rb)) = plan.generated_layouts().first().copied() else {
            panic!("a row-block plan")
        };
        assert_eq!((rb.rows, rb.src_vec4s), (8, 6));
        let vec4s: Vec<usize> = rb.outputs.iter().map(|o| o.words.len() / 4).collect();
        assert_eq!(vec4s, [1, 2, 3]);
        // Striped: workgroups of 256 lanes stage 42 blocks of 6 vec4s each.
        assert_eq!((rb.lanes, rb.tile), (LaneOrder::Striped, 42));
        assert_eq!(plan.passes()[0].invocations, 512u32.div_ceil(42) * 256);
        assert_eq!(plan.offset_alignment_bytes(), 16);
    }
    // Blocks past 64 words: staged in a loop on GPUs (f32 rows of 67
    // words, 4 rows a block, 7 blocks a tile), other kernels where each
    // lane walks a block in registers (lavapipe).
    let [looped, _] = plans(&[4096, 67], vec![1, 66], ElementType::Float);
    assert_eq!(runs(&looped), ROW_BLOCKS);
    let Some(GeneratedLayout::RowBlocks(rb)) = looped.generated_layouts().first().copied() else {
        panic!("a row-block plan")
    };
    assert!(rb.is_looped());
    assert_eq!((rb.rows, rb.src_vec4s, rb.tile), (4, 67, 7));
    assert_eq!(looped.passes()[0].invocations, 1024u32.div_ceil(7) * 256);
    let wide = ResolvedSplit::new(&[4096, 67], 1, vec![1, 66], true).unwrap();
    let blocked = blocked_kernels(&wide, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT);
    assert!(blocked.iter().all(|&k| k != ROW_BLOCKS), "{blocked:?}");
    // Rows that do not fill whole blocks, a per-output baseline: other
    // kernels.
    assert_ne!(
        runs(&plans(&[4095, 6], vec![1, 2, 3], ElementType::Float16)[0]),
        ROW_BLOCKS
    );
    let split = ResolvedSplit::new(&[4096, 6], 1, vec![1, 2, 3], true).unwrap();
    let per_output = options(Strategy::GatherPerOutput, Placement::Separate);
    let plan = SplitPlan::new(
        &split,
        ElementType::Float16,
        &PlanLimits::WEBGPU_DEFAULT,
        &per_output,
    )
    .unwrap();
    assert_ne!(runs(&plan), ROW_BLOCKS);
    // More outputs than one dispatch binds (7 on WebGPU): row blocks in
    // groups, a dispatch and a module each; one dispatch in an arena.
    let split = ResolvedSplit::new(&[128, 8], 1, vec![1; 8], true).unwrap();
    let [separate, arena] = gather_plans(&split, ElementType::Float16, &PlanLimits::WEBGPU_DEFAULT);
    assert_eq!(
        (runs(&separate), separate.dispatch_count()),
        (ROW_BLOCKS, 2)
    );
    assert_eq!((runs(&arena), arena.dispatch_count()), (ROW_BLOCKS, 1));
}

#[test]
fn row_block_plans_of_every_width_are_exact() {
    // The rest have blocks past 64 words (wide elements, long rows).
    let rows = plans_of_every_width(common::row_block_split, ROW_BLOCKS, 80);
    assert!(rows >= 100, "{rows} of 140 plans took row blocks");
}

#[test]
fn multi_pass_plans_cover_every_bit_once() {
    let mut rng = Rng::new(42);
    for (element_type, shape, axis, lengths, window) in [
        (ElementType::Float, vec![64, 100], 1, vec![30, 70], 4096),
        (
            ElementType::Uint8,
            vec![3, 9001],
            1,
            vec![4500, 1, 4500],
            2048,
        ),
        (ElementType::Uint8, vec![6, 2001], 1, vec![1001, 1000], 4096),
        (ElementType::Int4, vec![5, 3001], 1, vec![1501, 1500], 2048),
        (
            ElementType::Uint2,
            vec![3, 30001],
            1,
            vec![15001, 15000],
            2048,
        ),
        (ElementType::Float, vec![40000], 0, vec![10000, 30000], 4096),
    ] {
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let input = random_tensor(&mut rng, element_type, &shape);
        for plan in gather_plans(&split, element_type, &tiny(window, 65535)) {
            assert!(plan.dispatch_count() > 1);
            check_plan(&plan, &input, &split, &format!("{element_type} {shape:?}"));
        }
    }
}

#[test]
fn grids_stay_within_the_workgroup_limit() {
    let split = ResolvedSplit::new(&[400_012], 0, vec![200_001, 200_011], true).unwrap();
    let input = random_tensor(&mut Rng::new(43), ElementType::Uint8, &[400_012]);
    for max in [3, 10, 65535] {
        let limits = tiny(128 << 20, max);
        // Striped (one word an invocation): passes as the grid allows.
        for plan in gather_plans(&split, ElementType::Uint8, &limits) {
            check_plan(&plan, &input, &split, &format!("max {max}"));
            let grids = plan.passes().iter().map(|p| p.workgroups);
            assert!(grids.clone().all(|[x, y]| x <= max && y <= max));
            if max == 10 {
                assert!(grids.clone().any(|[_, y]| y > 1), "a 2-D grid");
            }
        }
        // Blocked (eight words an invocation): one dispatch at 10.
        let lavapipe = Strategy::Auto(CostModel::LAVAPIPE);
        for plan in plans_with(&split, ElementType::Uint8, &limits, lavapipe) {
            check_plan(&plan, &input, &split, &format!("blocked, max {max}"));
            if max == 10 {
                assert_eq!(plan.dispatch_count(), 1);
                assert!(plan.passes()[0].workgroups[1] > 1, "a 2-D grid");
            }
        }
    }
}

/// Dispatches for `outputs` one-element outputs (SplitToSequence of a
/// [outputs, 2] f32 tensor), each into its own destination.
fn dispatches_for(outputs: usize, limits: &PlanLimits) -> usize {
    let split = OnnxSplitToSequence::new(11).resolve(&[outputs, 2]).unwrap();
    let options = options(Strategy::Gather, Placement::Separate);
    SplitPlan::new(&split, ElementType::Float, limits, &options)
        .unwrap()
        .dispatch_count()
}

#[test]
fn dispatch_counts_follow_the_storage_buffer_limit() {
    // WebGPU's 8 storage buffers: the input and 7 destinations (the table
    // is a uniform buffer).
    assert_eq!(PlanLimits::WEBGPU_DEFAULT.destinations_per_dispatch(), 7);
    assert_eq!(PlanLimits::LAVAPIPE.destinations_per_dispatch(), 31);
    for (outputs, webgpu, lavapipe) in [
        (3, 1, 1),
        (8, 2, 1),
        (1000, 143, 33),
        (100_000, 14_286, 3_226),
    ] {
        assert_eq!(
            dispatches_for(outputs, &PlanLimits::WEBGPU_DEFAULT),
            webgpu,
            "{outputs}"
        );
        assert_eq!(
            dispatches_for(outputs, &PlanLimits::LAVAPIPE),
            lavapipe,
            "{outputs}"
        );
    }
    // The arena binds one destination: one dispatch for any count.
    let split = OnnxSplitToSequence::new(11).resolve(&[100_000, 2]).unwrap();
    let arena = SplitPlan::new(
        &split,
        ElementType::Float,
        &PlanLimits::LAVAPIPE,
        &options(Strategy::Gather, Placement::Arena),
    )
    .unwrap();
    assert_eq!(arena.dispatch_count(), 1);
    assert_eq!(arena.table().len(), 16 + 48 * 100_000);
}

#[test]
fn many_outputs_into_many_regions_are_exact() {
    let mut rng = Rng::new(47);
    let split = OnnxSplitToSequence::new(11).resolve(&[1000, 3]).unwrap();
    let input = random_tensor(&mut rng, ElementType::Float16, &[1000, 3]);
    let plan = SplitPlan::new(
        &split,
        ElementType::Float16,
        &PlanLimits::WEBGPU_DEFAULT,
        &options(Strategy::Gather, Placement::Separate),
    )
    .unwrap();
    assert_eq!(plan.dispatch_count(), 143);
    check_plan(&plan, &input, &split, "1000 outputs");
}

/// The row-copy layout of a pass (panics for any other).
fn row_copies_of(pass: &Pass) -> &RowCopies {
    match &pass.layout {
        Some(GeneratedLayout::RowCopies(rc)) => rc,
        other => panic!("a row-copy pass, not {other:?}"),
    }
}

#[test]
fn separate_destinations_past_one_dispatch_take_row_copies_in_groups() {
    let mut rng = Rng::new(53);
    let webgpu = &PlanLimits::WEBGPU_DEFAULT;
    // Blocked lanes (lavapipe's), whose modules compile the run starts in.
    let blocked = PlanOptions::default()
        .strategy(Strategy::Auto(CostModel::LAVAPIPE))
        .in_compute_pass();
    let plan_of = |split: &ResolvedSplit, placement| {
        SplitPlan::new(
            split,
            ElementType::Float,
            webgpu,
            &blocked.placement(placement),
        )
        .unwrap()
    };
    // Striped lanes (a GPU's) read run starts from the table: groups of one
    // shape share a module wherever their windows start.
    let striped_of = |split: &ResolvedSplit, t| {
        let options = options(Strategy::Gather, Placement::Separate);
        SplitPlan::new(split, t, webgpu, &options).unwrap()
    };
    // Eight attention heads: a group of 7 and one of 1, two modules. The
    // second pass binds the input from its head's start (7 x 2 KiB, a
    // multiple of 256 bytes), so its run starts at vec4 0 of its window.
    let heads = ResolvedSplit::new(&[16, 4096], 1, vec![512; 8], true).unwrap();
    let plan = plan_of(&heads, Placement::Separate);
    assert_eq!(runs(&plan), ROW_COPIES);
    assert_eq!(plan.dispatch_count(), 2);
    assert_eq!(plan.generated_layouts().len(), 2);
    let [first, last] = [&plan.passes()[0], &plan.passes()[1]];
    assert_eq!((first.dst_windows.len(), last.dst_windows.len()), (7, 1));
    assert_eq!(first.src_window_bytes.start, 0);
    assert_eq!(last.src_window_bytes, 7 * 2048..16 * 4096 * 4);
    assert_eq!(row_copies_of(last).outputs[0].src_unit, 0);
    let starts: Vec<u32> = row_copies_of(first)
        .outputs
        .iter()
        .map(|o| o.src_unit)
        .collect();
    assert_eq!(starts, [0, 128, 256, 384, 512, 640, 768]);
    assert_eq!(
        (plan.pass_shader(0).slots(), plan.pass_shader(1).slots()),
        (7, 1)
    );
    let input = random_tensor(&mut rng, ElementType::Float, &[16, 4096]);
    check_plan(&plan, &input, &heads, "8 heads");
    // An arena binds one destination: one dispatch, one module.
    let arena = plan_of(&heads, Placement::Arena);
    assert_eq!((runs(&arena), arena.dispatch_count()), (ROW_COPIES, 1));
    check_plan(&arena, &input, &heads, "8 heads, arena");
    // 64 outputs of 128 bytes: groups start 896 bytes apart, so at 0 or 128
    // bytes into their aligned windows; with the last group of one, three
    // modules for ten dispatches.
    let columns = ResolvedSplit::new(&[8, 2048], 1, vec![32; 64], true).unwrap();
    let plan = plan_of(&columns, Placement::Separate);
    assert_eq!(runs(&plan), ROW_COPIES);
    assert_eq!(
        (plan.dispatch_count(), plan.generated_layouts().len()),
        (10, 3)
    );
    assert_eq!(plan.shaders().len(), 3);
    let input = random_tensor(&mut rng, ElementType::Float, &[8, 2048]);
    check_plan(&plan, &input, &columns, "64 columns");
    let striped = striped_of(&columns, ElementType::Float);
    assert_eq!(
        (
            runs(&striped),
            striped.dispatch_count(),
            striped.shaders().len()
        ),
        (ROW_COPIES, 10, 2)
    );
    check_plan(&striped, &input, &columns, "64 columns, striped");
    // SplitToSequence into 100 rows of 256 bytes: 15 dispatches, 2 modules.
    let rows = OnnxSplitToSequence::new(11).resolve(&[100, 64]).unwrap();
    let plan = plan_of(&rows, Placement::Separate);
    assert_eq!(runs(&plan), ROW_COPIES);
    assert_eq!(
        (plan.dispatch_count(), plan.generated_layouts().len()),
        (15, 2)
    );
    let input = random_tensor(&mut rng, ElementType::Float, &[100, 64]);
    check_plan(&plan, &input, &rows, "100 rows");
    // 100,000 rows of 256 bytes: 14,286 dispatches of two modules, planned
    // in time linear in the outputs (0.05 s in a debug build).
    let many = OnnxSplitToSequence::new(11)
        .resolve(&[100_000, 64])
        .unwrap();
    let plan = plan_of(&many, Placement::Separate);
    assert_eq!((runs(&plan), plan.dispatch_count()), (ROW_COPIES, 14_286));
    assert_eq!(plan.shaders().len(), 2);
    // Runs at byte offsets (u8 rows of 4,097 bytes into 9): row streams in
    // groups too, the second group's run starts counted from its window
    // (the 8th run starts at byte 3,185 of a row; its window at 3,072).
    let bytes =
        ResolvedSplit::new(&[16, 4097], 1, [vec![455; 8], vec![457]].concat(), true).unwrap();
    let plan = SplitPlan::new(&bytes, ElementType::Uint8, webgpu, &blocked).unwrap();
    assert_eq!((runs(&plan), plan.dispatch_count()), (ROW_STREAMS, 2));
    let striped = striped_of(&bytes, ElementType::Uint8);
    assert_eq!((runs(&striped), striped.dispatch_count()), (ROW_STREAMS, 2));
    let input = random_tensor(&mut rng, ElementType::Uint8, &[16, 4097]);
    check_plan(&striped, &input, &bytes, "9 runs at byte offsets, striped");
    let Some(GeneratedLayout::RowStreams(second)) = &plan.passes()[1].layout else {
        panic!("a row-stream pass")
    };
    assert_eq!(second.outputs[0].src_bit, (3185 - 3072) * 8);
    assert_eq!(plan.passes()[1].src_window_bytes.start, 3072);
    let input = random_tensor(&mut rng, ElementType::Uint8, &[16, 4097]);
    check_plan(&plan, &input, &bytes, "9 runs at byte offsets");
    // Short rows unbound into 8 and 12 columns: row blocks in groups, each
    // group reading whole blocks from the input's start.
    for (t, shape, count) in [
        (ElementType::Float, [64, 8], 8),
        (ElementType::Float16, [64, 12], 12),
    ] {
        let columns = ResolvedSplit::new(&shape, 1, vec![1; count], true).unwrap();
        let plan = SplitPlan::new(
            &columns,
            t,
            webgpu,
            &options(Strategy::Gather, Placement::Separate),
        )
        .unwrap();
        assert_eq!((runs(&plan), plan.dispatch_count()), (ROW_BLOCKS, 2));
        assert_eq!(plan.shaders().len(), 2);
        assert!(plan.passes().iter().all(|p| p.src_window_bytes.start == 0));
        let input = random_tensor(&mut rng, t, &shape);
        check_plan(&plan, &input, &columns, &format!("{t} {shape:?} unbound"));
    }
    // Forty outputs of one vec4 start their groups at six offsets into
    // their windows: six modules, past MAX_GROUP_MODULES, so the
    // table-driven vec4 kernel (one module) moves them.
    let narrow = ResolvedSplit::new(&[2, 160], 1, vec![4; 40], true).unwrap();
    let plan = plan_of(&narrow, Placement::Separate);
    const { assert!(MAX_GROUP_MODULES < 6) };
    assert_eq!((runs(&plan), plan.dispatch_count()), (VEC4_TABLE, 6));
    assert_eq!(plan.shaders().len(), 1);
}

#[test]
fn plans_for_a_compute_pass_gather_everything_with_the_models_kernel() {
    // f32 [64, 256] into four: copyable runs, which Auto may copy.
    let split = ResolvedSplit::new(&[64, 256], 1, vec![64; 4], true).unwrap();
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let plan = |options: &PlanOptions| {
        SplitPlan::new(&split, ElementType::Float, &limits, options).unwrap()
    };
    // A model whose copies are free copies everything; for a pass, nothing.
    let mut copies_free = CostModel::LAVAPIPE;
    copies_free.copy_command_seconds = 0.0;
    copies_free.host_copy_seconds = 0.0;
    copies_free.copy_bytes_per_second = 1e15;
    let auto = PlanOptions::default().strategy(Strategy::Auto(copies_free));
    assert_eq!(plan(&auto).dispatch_count(), 0);
    let in_pass = plan(&auto.in_compute_pass());
    assert_eq!(in_pass.copy_count(), 0);
    // The kernel follows the model: f32 rows of 130 words split in two fit
    // several kernels chosen by rate; a model that rates one far above the
    // others gets it.
    let odd = ResolvedSplit::new(&[256, 130], 1, vec![65, 65], true).unwrap();
    let odd_plan =
        |options: &PlanOptions| SplitPlan::new(&odd, ElementType::Float, &limits, options);
    // (Candidates under the model's own lanes: row blocks take these rows
    // only staged, as a GPU's striped lanes do.)
    let candidates: Vec<Kernel> = [Kernel::Funnel, Kernel::RowBlocks, Kernel::RowWords]
        .into_iter()
        .filter(|&k| odd_plan(&auto.in_compute_pass().kernel(k)).is_ok())
        .collect();
    assert!(candidates.len() >= 2, "{candidates:?}");
    for &favourite in &candidates {
        let mut model = copies_free;
        for other in Kernel::ALL {
            model.gather_bytes_per_second.set(other, 1e6);
        }
        model.gather_bytes_per_second.set(favourite, 1e12);
        let options = PlanOptions::default()
            .strategy(Strategy::Auto(model))
            .in_compute_pass();
        assert_eq!(odd_plan(&options).unwrap().kernel(), favourite);
    }
    // Copies cannot go into a pass.
    let copy = PlanOptions::default()
        .strategy(Strategy::Copy)
        .in_compute_pass();
    assert_eq!(
        SplitPlan::new(&split, ElementType::Float, &limits, &copy).unwrap_err(),
        PlanError::CopiesInComputePass
    );
}

#[test]
fn plans_past_the_device_are_errors() {
    let split = ResolvedSplit::new(&[4], 0, vec![4], true).unwrap();
    let gather = options(Strategy::Gather, Placement::Arena);
    assert_eq!(
        SplitPlan::new(&split, ElementType::String, &PlanLimits::LAVAPIPE, &gather),
        Err(PlanError::NotOnGpu {
            element_type: ElementType::String
        })
    );
    let huge = ResolvedSplit::new(&[1 << 40], 0, vec![1 << 40], true).unwrap();
    assert!(matches!(
        SplitPlan::new(&huge, ElementType::Float, &PlanLimits::LAVAPIPE, &gather),
        Err(PlanError::TooLargeForDevice { what: "input", .. })
    ));
    // The input fits, but 1,000 outputs padded to 256 bytes each do not.
    let many = OnnxSplitToSequence::new(11).resolve(&[1000]).unwrap();
    let limits = PlanLimits {
        max_buffer_size: 64 << 10,
        ..PlanLimits::WEBGPU_DEFAULT
    };
    assert!(matches!(
        SplitPlan::new(&many, ElementType::Uint8, &limits, &gather),
        Err(PlanError::TooLargeForDevice { what: "arena", .. })
    ));
    // Separate destinations need no arena.
    let separate = options(Strategy::Gather, Placement::Separate);
    assert!(SplitPlan::new(&many, ElementType::Uint8, &limits, &separate).is_ok());
}

#[test]
fn limits_a_device_allows() {
    let device = PlanLimits::LAVAPIPE;
    assert!(PlanLimits::WEBGPU_DEFAULT.fits_within(&device));
    assert!(tiny(4096, 7).fits_within(&device));
    assert!(!device.fits_within(&PlanLimits::WEBGPU_DEFAULT));
    let odd = PlanLimits {
        min_storage_buffer_offset_alignment: 48,
        ..device
    };
    assert!(!odd.fits_within(&device));
    let more_buffers = PlanLimits {
        max_storage_buffers_per_shader_stage: 33,
        ..device
    };
    assert!(!more_buffers.fits_within(&device));
}

/// `plan` bound to an input at `input_offset` and destinations at `offsets`,
/// each in a buffer of its own just large enough.
fn bind_at<'a>(
    plan: &'a SplitPlan,
    input_offset: u64,
    offsets: &[u64],
) -> Result<BoundPlan<'a>, EncodeError> {
    let everything = Usages {
        storage: true,
        copy_src: true,
        copy_dst: true,
    };
    let region = |buffer, offset, size| PlainRegion {
        buffer,
        buffer_size: offset + size,
        usages: everything,
        offset,
        size,
    };
    let input = region(0, input_offset, plan.input_binding_bytes());
    let destinations: Vec<PlainRegion> = offsets
        .iter()
        .enumerate()
        .map(|(i, &offset)| region(i + 1, offset, plan.destination_bytes(i)))
        .collect();
    plan.bind(&input, &destinations)
}

#[test]
fn offsets_need_only_word_alignment_and_never_change_the_table() {
    let split = ResolvedSplit::new(&[6, 10], 1, vec![3, 7], true).unwrap();
    let [separate, _] = gather_plans(&split, ElementType::Uint8, &PlanLimits::WEBGPU_DEFAULT);
    assert_eq!(separate.offset_alignment_bytes(), 4);
    // Every offset binds the plan's own table (one upload per plan): the
    // shift below the alignment is the binding's length less the window.
    for (input, outputs) in [(0, [256, 512]), (20, [4, 36]), (36, [260, 1020])] {
        let bound = bind_at(&separate, input, &outputs).unwrap();
        assert!(matches!(bound.table(), std::borrow::Cow::Borrowed(_)));
        assert_eq!(&*bound.table(), separate.table());
        let d = &bound.dispatches[0];
        assert_eq!(d.src.start, 0, "bound from the aligned-down offset");
        assert_eq!(d.src.end, input + separate.input_binding_bytes());
        for (slot, &offset) in outputs.iter().enumerate() {
            let SlotBinding::Destination { bytes, .. } = &d.dst[slot] else {
                panic!("slot {slot} binds its output");
            };
            assert_eq!(bytes.start, offset / 256 * 256);
            assert_eq!(bytes.end, offset + separate.destination_bytes(slot));
        }
    }
    // A vec4 plan needs 16-byte offsets; a word plan 4-byte ones.
    let e = bind_at(&separate, 2, &[0, 64]).unwrap_err();
    assert!(
        matches!(e, EncodeError::MisalignedOffset { alignment: 4, .. }),
        "{e}"
    );
    let split = ResolvedSplit::new(&[4, 16], 1, vec![8, 8], true).unwrap();
    let [vec4, _] = gather_plans(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT);
    assert_eq!(runs(&vec4), ROW_COPIES);
    let e = bind_at(&vec4, 16, &[4, 64]).unwrap_err();
    assert!(
        matches!(e, EncodeError::MisalignedOffset { alignment: 16, .. }),
        "{e}"
    );
    let e = bind_at(&vec4, 16, &[0]).unwrap_err();
    assert!(
        matches!(
            e,
            EncodeError::RegionCount {
                expected: 2,
                actual: 1
            }
        ),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_plans_with_small_windows_match_the_host_path(
        t in 0..ElementType::ALL.len(),
        shape in prop::collection::vec(1usize..40, 1..=4),
        axis_seed in any::<usize>(),
        count in 1usize..9,
        window_kib in 1u64..6,
        max_groups in 1u32..5,
        arena in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let element_type = ElementType::ALL[t];
        prop_assume!(element_type != ElementType::String);
        let axis = axis_seed % shape.len();
        let mut rng = Rng::new(seed);
        let lengths = rng.lengths(shape[axis], count);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let outputs = if arena { Placement::Arena } else { Placement::Separate };
        let limits = tiny(window_kib * 1024, max_groups);
        let plan = SplitPlan::new(&split, element_type, &limits, &options(Strategy::Gather, outputs)).unwrap();
        let input = random_tensor(&mut rng, element_type, &shape);
        check_plan(&plan, &input, &split, "random");
    }
}

/// One split from `generate` (element type of width index `t`), planned in
/// one placement and run through the emulator.
fn check_generated(
    generate: common::SplitGenerator,
    t: usize,
    count: usize,
    arena: bool,
    seed: u64,
) {
    check_generated_with(generate, Strategy::Gather, (t, count, arena, seed));
}

/// [`check_generated`] planned with `strategy`.
fn check_generated_with(
    generate: common::SplitGenerator,
    strategy: Strategy,
    (t, count, arena, seed): (usize, usize, bool, u64),
) {
    let element_type = common::one_type_per_width()[t];
    let mut rng = Rng::new(seed);
    let split = generate(&mut rng, element_type, count);
    let outputs = if arena {
        Placement::Arena
    } else {
        Placement::Separate
    };
    let options = options(strategy, outputs);
    let plan = SplitPlan::new(&split, element_type, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
    let input = random_tensor(&mut rng, element_type, split.input_shape());
    check_plan(
        &plan,
        &input,
        &split,
        &format!("{element_type} {split:?} {:?}", runs(&plan)),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Widths 2 to 128 bits, odd run lengths and phases, both placements,
    /// through the funnel kernel's table in the emulator.
    #[test]
    fn random_funnel_plans_match_the_host_path(
        t in 0..7usize, count in 1usize..7, arena in any::<bool>(), seed in any::<u64>(),
    ) {
        check_generated(common::funnel_split, t, count, arena, seed);
    }

    /// Widths 2 to 128 bits, odd run lengths and phases, both placements,
    /// through the row-stream kernel's arithmetic in the emulator.
    #[test]
    fn random_row_stream_plans_match_the_host_path(
        t in 0..7usize, count in 1usize..7, arena in any::<bool>(), seed in any::<u64>(),
    ) {
        check_generated_with(common::funnel_split, Strategy::Auto(common::streams_first()), (t, count, arena, seed));
    }

    /// Widths 2 to 128 bits, short odd runs, both placements, through the
    /// row-block layout's pieces in the emulator.
    #[test]
    fn random_row_block_plans_match_the_host_path(
        t in 0..7usize, count in 1usize..7, arena in any::<bool>(), seed in any::<u64>(),
    ) {
        check_generated(common::row_block_split, t, count, arena, seed);
    }
}

#[test]
fn strategies_move_the_same_bits() {
    let mut rng = Rng::new(44);
    let limits = PlanLimits::LAVAPIPE;
    for (t, shape, axis, lengths) in [
        (ElementType::Float, vec![64, 40], 1, vec![8, 32]),
        (ElementType::Float, vec![64, 40], 0, vec![16, 48]),
        (ElementType::Uint8, vec![8, 64], 1, vec![4, 60]),
        (ElementType::Int4, vec![4, 64], 1, vec![8, 56]),
        (ElementType::Complex128, vec![3, 5, 2], 1, vec![0, 5]),
    ] {
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        for strategy in [
            Strategy::Gather,
            Strategy::GatherPerOutput,
            Strategy::Copy,
            Strategy::Auto(CostModel::LAVAPIPE),
        ] {
            for outputs in [Placement::Separate, Placement::Arena] {
                let plan = SplitPlan::new(&split, t, &limits, &options(strategy, outputs)).unwrap();
                check_plan(
                    &plan,
                    &input,
                    &split,
                    &format!("{t} {shape:?} {strategy:?}"),
                );
                let nonempty = plan.outputs().iter().filter(|s| s.len_bytes > 0).count();
                match strategy {
                    Strategy::Gather => assert_eq!(plan.dispatch_count(), 1),
                    Strategy::GatherPerOutput => assert_eq!(plan.dispatch_count(), nonempty),
                    Strategy::Copy => {
                        assert_eq!((plan.dispatch_count(), plan.copies().len()), (0, nonempty))
                    }
                    _ => assert!(plan.dispatch_count() <= 1),
                }
            }
        }
    }
}

#[test]
fn usages_follow_what_the_plan_records() {
    let split = ResolvedSplit::new(&[64, 40], 1, vec![8, 32], true).unwrap();
    let plan = |strategy| {
        SplitPlan::new(
            &split,
            ElementType::Float,
            &PlanLimits::LAVAPIPE,
            &options(strategy, Placement::Separate),
        )
        .unwrap()
    };
    let storage = Usages {
        storage: true,
        ..Usages::NONE
    };
    let gather = plan(Strategy::Gather);
    assert_eq!(gather.input_usages(), storage);
    assert_eq!(gather.output_usages(1), storage);
    let copy = plan(Strategy::Copy);
    assert_eq!(copy.input_usages().to_string(), "COPY_SRC");
    assert_eq!(copy.output_usages(0).to_string(), "COPY_DST");
    // An empty output needs nothing.
    let split = ResolvedSplit::new(&[4, 8], 1, vec![0, 8], true).unwrap();
    let p = SplitPlan::new(
        &split,
        ElementType::Float,
        &PlanLimits::LAVAPIPE,
        &PlanOptions::default(),
    )
    .unwrap();
    assert!(p.output_usages(0).is_empty());
    assert_eq!(p.destination_bytes(0), 0);
}

#[test]
fn copy_needs_four_byte_runs() {
    let split = ResolvedSplit::new(&[4, 6], 1, vec![1, 5], true).unwrap();
    let e = SplitPlan::new(
        &split,
        ElementType::Uint8,
        &PlanLimits::LAVAPIPE,
        &options(Strategy::Copy, Placement::Separate),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            PlanError::NotCopyable {
                output: 0,
                run_bits: 8,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn the_cost_model_copies_long_runs_and_gathers_short_ones() {
    let auto = Strategy::Auto(CostModel::LAVAPIPE);
    let plan = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        SplitPlan::new(
            &split,
            t,
            &PlanLimits::LAVAPIPE,
            &options(auto, Placement::Separate),
        )
        .unwrap()
    };
    // Axis 0 of a large tensor: one long copy per output, no dispatch.
    let p = plan(&[4096, 4096], 0, vec![1024; 4], ElementType::Float);
    assert_eq!((p.dispatch_count(), p.copy_count()), (0, 4));
    // Middle axis: 64 rows of 256 KiB runs per output, still copies.
    let p = plan(&[64, 1024, 256], 1, vec![256; 4], ElementType::Float);
    assert_eq!((p.dispatch_count(), p.copy_count()), (0, 256));
    // Sub-word runs cannot be copied.
    let p = plan(&[1 << 20, 6], 1, vec![1, 2, 3], ElementType::Float16);
    assert_eq!((p.dispatch_count(), p.copy_count()), (1, 0));
    // Many tiny aligned runs: the gather dispatch is cheaper than 2^20 commands.
    let p = plan(&[1 << 20, 8], 1, vec![4, 4], ElementType::Float);
    assert_eq!((p.dispatch_count(), p.copy_count()), (1, 0));
}

#[test]
fn views_are_offered_where_outputs_are_contiguous_and_bindable() {
    let limits = PlanLimits::LAVAPIPE; // 32-byte alignment
    let views = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        SplitPlan::new(&split, t, &limits, &PlanOptions::default())
            .unwrap()
            .input_views()
    };
    assert_eq!(
        views(&[8, 4], 0, vec![2, 6], ElementType::Float),
        Some(vec![0..32, 32..128])
    );
    assert_eq!(
        views(&[1, 16], 1, vec![8, 8], ElementType::Float),
        Some(vec![0..32, 32..64])
    );
    // Offsets that are not bindable, and splits along a later axis.
    assert_eq!(views(&[8, 4], 0, vec![1, 7], ElementType::Float), None);
    assert_eq!(views(&[8, 4], 1, vec![2, 2], ElementType::Float), None);
    // A sequence along axis 0 of 8-float rows.
    let split = OnnxSplitToSequence::new(11).resolve(&[3, 8]).unwrap();
    let v = SplitPlan::new(&split, ElementType::Float, &limits, &PlanOptions::default())
        .unwrap()
        .input_views();
    assert_eq!(v, Some(vec![0..32, 32..64, 64..96]));
}
