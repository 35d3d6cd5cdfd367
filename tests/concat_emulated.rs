//! Concat plans in the CPU emulator of the encode contract
//! (`common::emulator`): the mirror split run backwards, the tensor
//! written from the pieces by every kernel that moves concats (vec4,
//! words, row copies, row words as the split's moves reversed; the
//! concat-words kernel from its layout), every binding and write checked
//! against WebGPU's rules and the caller's regions, the output against
//! `HostTensor::concat`. Random concats of every element width under every
//! strategy and kernel, both placements and every layout (buffers of their
//! own, pooled and packed pages, the output's page, inputs sharing one
//! region); windows of 1 KiB that force many passes; 100,000 inputs 16
//! bytes apart in one page taking the dispatches the plan announces.

mod common;

use common::emulator::{ConcatLayout, check_emulated_concat};
use common::{Rng, one_type_per_width, random_tensor, tiny};
use wgpu_split::error::PlanError;
use wgpu_split::plan::{ConcatPlan, CostModel, PlanLimits, PlanOptions, Strategy};
use wgpu_split::{ElementType, HostTensor, OnnxSplitToSequence, ResolvedConcat};

/// The options a concat is planned with: the class models' choices, the
/// strategies, every kernel forced; each in both placements.
fn every_option() -> Vec<(String, PlanOptions)> {
    let mut options: Vec<(String, PlanOptions)> = [
        ("lavapipe", Strategy::Auto(CostModel::LAVAPIPE)),
        ("discrete", Strategy::Auto(CostModel::DISCRETE_GPU)),
        ("gather", Strategy::Gather),
        ("per_output", Strategy::GatherPerOutput),
        ("copy", Strategy::Copy),
    ]
    .into_iter()
    .map(|(name, s)| (name.to_string(), PlanOptions::default().strategy(s)))
    .collect();
    for forced in common::kernel_forms() {
        let options_of = common::forced(PlanOptions::default().strategy(Strategy::Gather), forced);
        options.push((format!("{forced:?}"), options_of));
    }
    let arena = wgpu_split::plan::Placement::Arena;
    let arenas: Vec<_> = options
        .iter()
        .map(|(n, o)| (format!("{n} arena"), o.placement(arena)))
        .collect();
    options.extend(arenas);
    options
}

/// The plan of `concat` with `options`, or `None` where the options cannot
/// move it (a kernel that does not fit, copies of runs that are not
/// words, a tensor past one window for the concat-words kernel).
fn plan_of(
    concat: &ResolvedConcat,
    t: ElementType,
    limits: &PlanLimits,
    options: &PlanOptions,
    context: &str,
) -> Option<ConcatPlan> {
    match ConcatPlan::new(concat, t, limits, options) {
        Ok(plan) => Some(plan),
        Err(
            PlanError::KernelDoesNotFit { .. }
            | PlanError::NotCopyable { .. }
            | PlanError::PerOutputConcatOfSubWords,
        ) => None,
        // Only an output near a window's size or past it (a window less
        // three alignments holds the concat-words kernel's output),
        // however many pieces (past one module's or one dispatch's, the
        // kernel's groups read their places from the table).
        Err(PlanError::ConcatTooLargeForOneWindow {
            output_bytes,
            window_bytes,
        }) if output_bytes + 1024 > window_bytes => None,
        Err(e) => panic!("{context}: {e}"),
    }
}

/// The layouts `plan` is run in: every one, the output's page only
/// without copies (a copy cannot stay in one buffer).
fn layouts(plan: &ConcatPlan) -> Vec<ConcatLayout> {
    let mut layouts = vec![
        ConcatLayout::OwnBuffers,
        ConcatLayout::Pooled,
        ConcatLayout::Packed(4),
        ConcatLayout::Packed(16),
        ConcatLayout::Aliased,
    ];
    if plan.copy_count() == 0 {
        layouts.push(ConcatLayout::WithOutput);
    }
    layouts
}

/// A random concat: rank 1 to 3, 1 to 6 inputs along a random axis (empty
/// ones included), half the inputs of the shape before them (one tensor
/// given twice, where the aliased layout shares their region).
fn random_concat(rng: &mut Rng) -> (ResolvedConcat, Vec<Vec<usize>>) {
    let count = 1 + rng.below(6);
    concat_of(rng, count)
}

/// [`random_concat`] of `count` inputs.
fn concat_of(rng: &mut Rng, count: usize) -> (ResolvedConcat, Vec<Vec<usize>>) {
    let rank = 1 + rng.below(3);
    let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below(10)).collect();
    let axis = rng.below(rank);
    let mut shapes: Vec<Vec<usize>> = Vec::new();
    for k in 0..count {
        let mut s = shape.clone();
        s[axis] = match k {
            _ if k > 0 && rng.below(2) == 0 => shapes[k - 1][axis],
            _ => rng.below(40),
        };
        shapes.push(s);
    }
    (ResolvedConcat::new(&shapes, axis).unwrap(), shapes)
}

/// Inputs of `shapes`, those of one shape (the aliased layout shares
/// their region) equal.
fn inputs_of(rng: &mut Rng, t: ElementType, shapes: &[Vec<usize>]) -> Vec<HostTensor> {
    let mut inputs: Vec<HostTensor> = Vec::new();
    for s in shapes {
        let same = inputs.iter().find(|x| x.shape() == s.as_slice()).cloned();
        inputs.push(same.unwrap_or_else(|| random_tensor(rng, t, s)));
    }
    inputs
}

#[test]
fn random_concats_of_every_width_are_exact_in_the_emulator() {
    let mut rng = Rng::new(3131);
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let options = every_option();
    let types = one_type_per_width();
    let (mut runs, mut kernels) = (0, std::collections::BTreeMap::new());
    for case in 0..120 {
        let t = types[case % types.len()];
        let (concat, shapes) = random_concat(&mut rng);
        let inputs = inputs_of(&mut rng, t, &shapes);
        for (name, o) in &options {
            let context = format!("case {case}: {t} {shapes:?} axis {}, {name}", concat.axis());
            let Some(plan) = plan_of(&concat, t, &limits, o, &context) else {
                continue;
            };
            for layout in layouts(&plan) {
                let context = format!("{context}, {layout:?}");
                check_emulated_concat(&plan, &concat, &inputs, layout, &mut rng, &context);
                runs += 1;
            }
            if plan.dispatch_count() > 0 {
                *kernels.entry((plan.kernel(), plan.form())).or_insert(0) += 1;
            }
        }
    }
    eprintln!("{runs} emulated concats exact; plans per kernel: {kernels:?}");
    for kernel in [
        common::WORDS,
        common::VEC4_TABLE,
        common::ROW_COPIES,
        common::ROW_WORDS,
        common::ROW_BLOCKS,
        common::CONCAT_WORDS,
    ] {
        assert!(
            kernels.get(&kernel).is_some_and(|&n| n >= 20),
            "{kernel:?} ran in too few plans: {kernels:?}"
        );
    }
    assert!(runs > 5000, "{runs}");
}

/// A concat whose word-aligned pieces a model of cheap copy commands
/// copies beside sub-word pieces that only a kernel of the whole layout
/// moves: the copies give way to one gather. A model of the H200's
/// figures (a copy command 1.6 µs, a dispatch 8.4 µs, the concat-words
/// kernel at 0.086 of a vec4 copy) copies them; before, no kernel took the
/// rest and the plan failed as a concat past one window.
#[test]
fn copies_beside_a_gather_no_kernel_moves_give_way_to_one_gather() {
    let shapes = vec![vec![36, 3], vec![8, 3], vec![21, 3], vec![16, 3]];
    let concat = ResolvedConcat::new(&shapes, 0).unwrap();
    let t = ElementType::Float16;
    let mut rng = Rng::new(45);
    let inputs = inputs_of(&mut rng, t, &shapes);
    // The discrete class's bandwidth with the H200's shares net of its
    // dispatch (docs/PERFORMANCE.md) and its fixed costs.
    let mut h200 = CostModel {
        copy_bytes_per_second: 0.184 * 300e9,
        copy_command_seconds: 1.6e-6,
        dispatch_seconds: 8.4e-6,
        ..CostModel::DISCRETE_GPU
    };
    for (kernel, share) in [
        ("words", 0.337),
        ("funnel", 0.736),
        ("row_words", 0.466),
        ("row_blocks", 0.641),
        ("concat_words", 0.086),
    ] {
        let kernel = wgpu_split::plan::Kernel::from_name(kernel).unwrap();
        h200.gather_bytes_per_second.set(kernel, share * 300e9);
    }
    for model in [
        h200,
        CostModel::DISCRETE_GPU,
        CostModel::INTEGRATED_GPU,
        CostModel::CONSERVATIVE,
        CostModel::LAVAPIPE,
    ] {
        let options = PlanOptions::default().strategy(Strategy::Auto(model));
        let plan = ConcatPlan::new(&concat, t, &PlanLimits::WEBGPU_DEFAULT, &options)
            .unwrap_or_else(|e| panic!("{model:?}: {e}"));
        for layout in layouts(&plan) {
            let context = format!("{model:?}, {layout:?}");
            check_emulated_concat(&plan, &concat, &inputs, layout, &mut rng, &context);
        }
    }
}

/// More inputs than a dispatch binds under WebGPU's limits (8 to 40),
/// staged through the scratch (the inputs into it, then one pass into the
/// output), encoded and in a compute pass, every width, every layout.
#[test]
fn staged_concats_of_every_width_are_exact_in_the_emulator() {
    let mut rng = Rng::new(3838);
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let types = one_type_per_width();
    let staged = PlanOptions::default().staging(true);
    let (mut runs, mut plans) = (0, 0);
    for case in 0..60 {
        let t = types[case % types.len()];
        let count = 8 + rng.below(33);
        let (concat, shapes) = concat_of(&mut rng, count);
        let inputs = inputs_of(&mut rng, t, &shapes);
        for (name, o) in [
            ("staged", staged),
            ("staged in a pass", staged.in_compute_pass()),
        ] {
            let context = format!("case {case}: {t} {shapes:?} axis {}, {name}", concat.axis());
            let Some(plan) = plan_of(&concat, t, &limits, &o, &context) else {
                continue;
            };
            if !plan.is_staged() {
                continue; // at most 7 inputs take part
            }
            plans += 1;
            let needs = plan.requirements();
            assert_eq!(
                needs.scratch_bytes,
                plan.mirror().scratch_bytes(),
                "{context}"
            );
            if o.compute_pass {
                assert_eq!(needs.copies, 0, "{context}");
            }
            for layout in layouts(&plan) {
                let context = format!("{context}, {layout:?}");
                check_emulated_concat(&plan, &concat, &inputs, layout, &mut rng, &context);
                runs += 1;
            }
        }
    }
    eprintln!("{runs} emulated staged concats exact, {plans} plans");
    assert!(plans >= 80, "{plans} staged plans");
}

/// Windows of 1 KiB (256 bytes of room past the alignments) and 2
/// workgroups a dimension: the concats take many passes, groups of inputs
/// (past a dispatch's 7 slots) and 2-D grids; the concat-words kernel's
/// tensor past one window is a typed error.
#[test]
fn multi_pass_concats_are_exact_in_the_emulator() {
    let mut rng = Rng::new(1024);
    let limits = tiny(1024, 2);
    let options = every_option();
    let (mut plans, mut multi, mut too_large) = (0, 0, 0);
    let many: Vec<Vec<usize>> = (0..20).map(|k| vec![3, 1 + k % 7]).collect();
    // Many pieces on axis 0: each group's window ends where its pieces do.
    let stacked: Vec<Vec<usize>> = (0..20).map(|k| vec![1 + 5 * (k % 7), 3]).collect();
    let fixed = [
        vec![vec![6, 5], vec![6, 1], vec![6, 7]],
        vec![vec![3, 70], vec![3, 33]],
        vec![vec![40, 9], vec![24, 9]],
        vec![vec![2, 30, 8], vec![2, 50, 8], vec![2, 1, 8]],
        vec![vec![64, 12]; 4],
        many,
        stacked,
    ];
    let axes = [1, 1, 0, 1, 1, 1, 0];
    for (shapes, axis) in fixed.iter().zip(axes) {
        let concat = ResolvedConcat::new(shapes, axis).unwrap();
        for t in one_type_per_width() {
            let inputs = inputs_of(&mut rng, t, shapes);
            let gather = PlanOptions::default().strategy(Strategy::Gather);
            if let Err(PlanError::ConcatTooLargeForOneWindow { output_bytes, .. }) =
                ConcatPlan::new(&concat, t, &limits, &gather)
            {
                assert!(output_bytes > 256, "{shapes:?} {t}");
                too_large += 1;
            }
            for (name, o) in &options {
                let context = format!("{t} {shapes:?} axis {axis}, {name}");
                let Some(plan) = plan_of(&concat, t, &limits, o, &context) else {
                    continue;
                };
                plans += 1;
                multi += usize::from(plan.dispatch_count() > 1);
                for layout in layouts(&plan) {
                    let context = format!("{context}, {layout:?}");
                    let dispatches =
                        check_emulated_concat(&plan, &concat, &inputs, layout, &mut rng, &context);
                    assert!(dispatches >= plan.dispatch_count(), "{context}");
                }
            }
        }
    }
    eprintln!("{plans} plans, {multi} of several dispatches, {too_large} concats past one window");
    assert!(multi > 100 && too_large > 0, "{multi} {too_large}");
}

/// 100,000 one-byte inputs (the stack that undoes a SplitToSequence of
/// 100,000 bytes), packed 16 bytes apart in one page: the pieces are read
/// only, so their bindings may overlap and the encode records exactly the
/// dispatches the plan announces (`requirements().dispatches`), one per
/// group of a dispatch's slots; the output is the host concat's.
#[test]
fn a_hundred_thousand_inputs_16_bytes_apart_take_the_announced_dispatches() {
    let mut rng = Rng::new(100);
    let split = OnnxSplitToSequence::new(11).resolve(&[100_000]).unwrap();
    let concat = ResolvedConcat::inverse_of(&split).unwrap();
    let t = ElementType::Uint8;
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let plan = ConcatPlan::new(&concat, t, &limits, &PlanOptions::default()).unwrap();
    let needs = plan.requirements();
    let slots = limits.destinations_per_dispatch() as usize;
    eprintln!(
        "{:?}: {} dispatches, {} copies, {} slots",
        plan.kernel(),
        needs.dispatches,
        needs.copies,
        slots
    );
    assert_eq!(needs.dispatches, 100_000usize.div_ceil(slots));
    let inputs: Vec<HostTensor> = concat
        .input_shapes()
        .iter()
        .map(|s| random_tensor(&mut rng, t, s))
        .collect();
    let layout = ConcatLayout::Packed(16);
    let dispatches = check_emulated_concat(&plan, &concat, &inputs, layout, &mut rng, "100,000");
    assert_eq!(dispatches, needs.dispatches, "the announced dispatches");
}

/// One dispatch per piece (`Strategy::GatherPerOutput`, a benchmark's
/// baseline) cannot join runs that are not whole words, which one dispatch
/// assembles from every piece: a typed error that says so, not the window
/// error (f16 [64, 31] into columns is 4 KiB, far inside any window);
/// whole-word pieces are joined one dispatch each.
#[test]
fn a_per_piece_concat_of_sub_word_runs_is_a_typed_error() {
    let per_piece = PlanOptions::default().strategy(Strategy::GatherPerOutput);
    let columns = |t| {
        let split = wgpu_split::ResolvedSplit::new(&[64, 31], 1, vec![1; 31], true).unwrap();
        (ResolvedConcat::inverse_of(&split).unwrap(), t)
    };
    let (concat, t) = columns(ElementType::Float16);
    assert_eq!(
        ConcatPlan::new(&concat, t, &PlanLimits::WEBGPU_DEFAULT, &per_piece).unwrap_err(),
        PlanError::PerOutputConcatOfSubWords
    );
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    assert!(ConcatPlan::new(&concat, t, &PlanLimits::WEBGPU_DEFAULT, &gather).is_ok());
    let (concat, t) = columns(ElementType::Float);
    let plan = ConcatPlan::new(&concat, t, &PlanLimits::WEBGPU_DEFAULT, &per_piece).unwrap();
    assert_eq!(plan.mirror().dispatch_count(), 31);
}
