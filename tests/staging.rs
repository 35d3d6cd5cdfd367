//! Staged plans (the planner, without a GPU): where separate destinations
//! take several dispatches, the split into the scratch arena and the arena
//! into the destinations. Which plans stage, what they announce, and every
//! staged plan run through the CPU emulator against the host path, in every
//! caller layout, for every element width.

mod common;

use common::emulator::{Layout, check_emulated};
use common::{Rng, one_type_per_width, random_tensor};
use wgpu_split::plan::{
    CostModel, Form, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use wgpu_split::{ElementType, OnnxSplit, OnnxSplitToSequence, ResolvedSplit};

const WEBGPU: PlanLimits = PlanLimits::WEBGPU_DEFAULT;

fn columns(shape: &[usize], axis: i64) -> ResolvedSplit {
    let n = shape[axis as usize];
    OnnxSplit::new(18, n)
        .axis(axis)
        .num_outputs(n as i64)
        .resolve(shape)
        .unwrap()
}

fn lengths(shape: &[usize], axis: i64, lengths: &[i64]) -> ResolvedSplit {
    OnnxSplit::new(11, lengths.len())
        .axis(axis)
        .split_attribute(lengths)
        .resolve(shape)
        .unwrap()
}

fn plan(split: &ResolvedSplit, t: ElementType, options: &PlanOptions) -> SplitPlan {
    SplitPlan::new(split, t, &WEBGPU, options).unwrap()
}

fn staged(split: &ResolvedSplit, t: ElementType) -> SplitPlan {
    plan(split, t, &PlanOptions::default().staging(true))
}

/// The staged plan's structure, then its emulated encode in every caller
/// layout against the host path.
fn check_staged(plan: &SplitPlan, split: &ResolvedSplit, seed: u64, context: &str) {
    assert!(plan.is_staged(), "{context}: staged");
    let (stage, unstage) = plan.staged_plans().unwrap();
    assert_eq!(stage.placement(), Placement::Arena, "{context}");
    assert_eq!(unstage.placement(), Placement::Separate, "{context}");
    assert_eq!(plan.scratch_bytes(), stage.arena_bytes(), "{context}");
    assert_eq!(unstage.input_bytes(), plan.scratch_bytes(), "{context}");
    assert_eq!(
        plan.dispatch_count(),
        stage.dispatch_count() + unstage.dispatch_count(),
        "{context}"
    );
    assert_eq!(plan.copy_count(), unstage.copy_count(), "{context}");
    assert_eq!(
        stage.copy_count(),
        0,
        "{context}: the stage only dispatches"
    );
    assert!(plan.passes().is_empty() && plan.table().is_empty());
    // The unstage reads each output's range of the scratch once: its
    // passes' source windows do not overlap but at their aligned ends.
    let mut windows: Vec<_> = unstage
        .passes()
        .iter()
        .map(|p| p.src_window_bytes.clone())
        .collect();
    windows.sort_by_key(|w| w.start);
    let align = WEBGPU.min_storage_buffer_offset_alignment as u64;
    for pair in windows.windows(2) {
        assert!(
            pair[1].start + align > pair[0].end,
            "{context}: unstage windows {pair:?} re-read the scratch"
        );
    }
    let needs = plan.requirements();
    assert_eq!(needs.scratch_bytes, plan.scratch_bytes(), "{context}");
    assert_eq!(needs.dispatches, plan.dispatch_count(), "{context}");
    assert_eq!(needs.copies, plan.copy_count(), "{context}");
    assert_eq!(needs.destinations.len(), plan.outputs().len(), "{context}");
    assert!(needs.input_usages.storage && !needs.input_usages.copy_src);
    let t = plan.element_type();
    let mut rng = Rng::new(seed);
    let input = random_tensor(&mut rng, t, split.input_shape());
    for layout in [Layout::OwnBuffers, Layout::Pooled, Layout::WithInput] {
        check_emulated(
            plan,
            &input,
            split,
            layout,
            &mut rng,
            &format!("{context} {layout:?}"),
        );
    }
}

#[test]
fn the_issues_columns_stage_exactly() {
    for (shape, t) in [
        (vec![512, 31], ElementType::Float16),
        (vec![2048, 64], ElementType::Float16),
        (vec![4096, 31], ElementType::Float),
        (vec![64, 40], ElementType::Uint8),
    ] {
        let split = columns(&shape, 1);
        let plan = staged(&split, t);
        check_staged(&plan, &split, 7, &format!("{t} {shape:?}"));
        // One pass into the scratch reads the input once.
        let (stage, _) = plan.staged_plans().unwrap();
        assert_eq!(stage.dispatch_count(), 1, "{t} {shape:?}");
    }
}

#[test]
fn staged_plans_of_every_width_are_exact() {
    let mut rng = Rng::new(38);
    let mut staged = 0;
    for t in one_type_per_width() {
        for case in 0..6 {
            // Rows of odd lengths cut into 9 to 40 pieces of 0-5 elements.
            let count = 9 + rng.below(32);
            let dim = count * (1 + rng.below(4)) + rng.below(3);
            let outer = 1 + rng.below(70);
            let inner = [1, 1, 3][rng.below(3)];
            let shape = vec![outer, dim, inner];
            let lens: Vec<i64> = rng
                .lengths(dim, count)
                .into_iter()
                .map(|l| l as i64)
                .collect();
            let split = lengths(&shape, 1, &lens);
            for options in [
                PlanOptions::default().staging(true),
                PlanOptions::default().staging(true).in_compute_pass(),
                PlanOptions::default()
                    .staging(true)
                    .strategy(Strategy::Gather),
            ] {
                let plan = plan(&split, t, &options);
                let context = format!("{t} {shape:?} {lens:?} case {case} {options:?}");
                if options.compute_pass || options.strategy == Some(Strategy::Gather) {
                    assert_eq!(plan.copy_count(), 0, "{context}: dispatches only");
                }
                if plan.is_staged() {
                    staged += 1;
                    check_staged(&plan, &split, case as u64, &context);
                } else {
                    // Only where one dispatch binds every gathered output.
                    let shapes = split.output_shapes();
                    let live = shapes.iter().filter(|s| s.iter().product::<usize>() > 0);
                    assert!(live.count() <= 7, "{context}: not staged");
                }
            }
        }
    }
    assert!(staged >= 7 * 6 * 3 * 3 / 4, "{staged} staged plans");
}

/// 2^20 rows of 31 one-element columns of f16: 62 MB, five dispatches of
/// 7 destinations under WebGPU's limits.
fn wide_columns() -> ResolvedSplit {
    columns(&[1 << 20, 31], 1)
}

#[test]
fn the_models_stage_narrow_pieces_past_one_dispatch() {
    let split = wide_columns();
    for model in [
        CostModel::DISCRETE_GPU,
        CostModel::INTEGRATED_GPU,
        CostModel::CONSERVATIVE,
    ] {
        let auto = PlanOptions::default().strategy(Strategy::Auto(model));
        let chosen = plan(&split, ElementType::Float16, &auto);
        assert!(chosen.is_staged(), "{model:?}");
        let reread = plan(&split, ElementType::Float16, &auto.staging(false));
        assert!(!reread.is_staged() && reread.dispatch_count() >= 5);
        assert!(model.traffic_seconds(&chosen) < model.traffic_seconds(&reread));
        // And in the caller's compute pass, with dispatches only.
        let in_pass = plan(&split, ElementType::Float16, &auto.in_compute_pass());
        assert!(
            in_pass.is_staged() && in_pass.copy_count() == 0,
            "{model:?}"
        );
    }
    // Lavapipe's lanes walk long stretches through the host's caches: its
    // model does not price re-read rows as sectors, and keeps its plans.
    let lavapipe = PlanOptions::default().strategy(Strategy::Auto(CostModel::LAVAPIPE));
    assert!(!plan(&split, ElementType::Float16, &lavapipe).is_staged());
}

#[test]
fn plans_that_read_disjoint_ranges_do_not_stage() {
    // Rows of 16 KiB into buffers of their own: each dispatch reads its own
    // rows, so staging would only add a pass.
    let rows = OnnxSplitToSequence::new(11).resolve(&[1000, 4096]).unwrap();
    // Eight wide pieces of every row: each dispatch loads only its pieces.
    let halves = lengths(&[4096, 8 * 1024], 1, &[1024; 8]);
    for model in [CostModel::DISCRETE_GPU, CostModel::LAVAPIPE] {
        let auto = PlanOptions::default().strategy(Strategy::Auto(model));
        for split in [&rows, &halves] {
            let plan = plan(split, ElementType::Float, &auto);
            assert!(!plan.is_staged(), "{model:?} {:?}", split.input_shape());
        }
    }
}

#[test]
fn what_does_not_stage() {
    let split = columns(&[512, 31], 1);
    let t = ElementType::Float16;
    // An arena and one dispatch per output never stage.
    let arena = PlanOptions::default()
        .staging(true)
        .placement(Placement::Arena);
    assert!(!plan(&split, t, &arena).is_staged());
    let per_output = PlanOptions::default()
        .staging(true)
        .strategy(Strategy::GatherPerOutput);
    assert!(!plan(&split, t, &per_output).is_staged());
    // Seven outputs fit one dispatch under WebGPU's limits.
    let seven = columns(&[512, 7], 1);
    assert!(!staged(&seven, t).is_staged());
    // A forced kernel stages only when staging is asked too, and then
    // moves the stage.
    let words = PlanOptions::default().kernel(Kernel::Words);
    assert!(!plan(&split, t, &words).is_staged());
    let forced = plan(&split, t, &words.staging(true));
    assert_eq!(forced.staged_plans().unwrap().0.kernel(), Kernel::Words);
    check_staged(&forced, &split, 3, "forced words");
    // The unstage is table-driven.
    assert_eq!(forced.staged_plans().unwrap().1.form(), Form::Table);
}
