//! Windows, not just lengths: outputs that are empty, overlap, or leave
//! parts of the axis unread (as framework calls such as `tensor_split` and
//! `narrow` give them), through every kernel and both placements, of every
//! element width (2 to 128 bits): the CPU emulator of the encode and the GPU
//! byte-identical to the host path and the naive oracle.

mod common;

use std::collections::BTreeMap;

use common::emulator::{Layout, check_emulated};
use common::{Rng, assert_outputs_equal, gpu, naive_split, one_type_per_width, random_tensor};
use wgpu_split::error::PlanError;
use wgpu_split::plan::{Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, Error, ResolvedSplit};

/// Random windows over `dim`: each empty, or of a length in `lengths` at any
/// start that fits; then one copied (an overlap) and, where possible, a gap
/// left unread.
fn windows(rng: &mut Rng, dim: usize, lengths: std::ops::Range<usize>) -> Vec<(usize, usize)> {
    let count = 2 + rng.below(4);
    let mut windows: Vec<(usize, usize)> = (0..count)
        .map(|_| {
            if rng.below(6) == 0 {
                return (rng.below(dim + 1), 0);
            }
            let len = (lengths.start + rng.below(lengths.len())).min(dim);
            (rng.below(dim - len + 1), len)
        })
        .collect();
    let twin = windows[rng.below(windows.len())];
    windows.push(twin);
    windows
}

/// Splits of three shapes for element type `t`: 128-bit aligned runs,
/// long runs at any bit offset in whole vec4s, and short runs in rows that
/// make whole vec4 blocks: between them every kernel finds work.
fn window_splits(rng: &mut Rng, t: ElementType) -> Vec<(&'static str, ResolvedSplit)> {
    let width = t.bit_width().expect("a GPU type") as usize;
    let mut splits = Vec::new();
    for _ in 0..3 {
        let inner = (128 / width).max(1);
        let aligned = windows(rng, 12, 1..6);
        splits.push((
            "aligned",
            ResolvedSplit::from_windows(&[4, 12, inner], 1, aligned, true),
        ));
        let shortest = 128usize.div_ceil(width);
        let dim = 3 * shortest + 5;
        let outer = 128 / gcd(128, width);
        let long = windows(rng, dim, shortest..dim);
        splits.push((
            "long",
            ResolvedSplit::from_windows(&[outer, dim], 1, long, true),
        ));
        let short = windows(rng, 7, 1..4);
        splits.push((
            "short",
            ResolvedSplit::from_windows(&[128, 7], 1, short, true),
        ));
    }
    splits
        .into_iter()
        .map(|(name, split)| (name, split.expect("windows inside the dimension")))
        .collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Every (split, kernel, placement) a kernel can move, planned with that
/// kernel forced under `limits`, with `check` run on each; returns how many
/// plans each (kernel, placement) had.
fn for_every_kernel(
    rng: &mut Rng,
    t: ElementType,
    limits: &PlanLimits,
    mut check: impl FnMut(&ResolvedSplit, &SplitPlan, &str),
) -> BTreeMap<(Kernel, Placement), usize> {
    let mut covered = BTreeMap::new();
    for (name, split) in window_splits(rng, t) {
        for kernel in Kernel::ALL {
            for placement in [Placement::Separate, Placement::Arena] {
                let options = PlanOptions::default()
                    .strategy(Strategy::Gather)
                    .kernel(kernel)
                    .placement(placement);
                match SplitPlan::new(&split, t, limits, &options) {
                    Ok(plan) => {
                        assert_eq!(plan.kernel(), kernel);
                        let context = format!(
                            "{t} {name} {:?} {kernel} {placement:?}",
                            split.windows().collect::<Vec<_>>()
                        );
                        check(&split, &plan, &context);
                        *covered.entry((kernel, placement)).or_insert(0) += 1;
                    }
                    Err(PlanError::KernelDoesNotFit { .. }) => {}
                    Err(e) => panic!("{t} {name}: {e}"),
                }
            }
        }
    }
    covered
}

/// Each kernel and placement moved some windows of every width.
fn assert_every_kernel_covered(t: ElementType, covered: &BTreeMap<(Kernel, Placement), usize>) {
    for kernel in Kernel::ALL.into_iter().filter(|k| k.moves_splits()) {
        for placement in [Placement::Separate, Placement::Arena] {
            assert!(
                covered.get(&(kernel, placement)).copied().unwrap_or(0) > 0,
                "{t}: no windows took {kernel} {placement:?}: {covered:?}"
            );
        }
    }
}

#[test]
fn the_host_path_matches_the_naive_oracle_on_windows() {
    let mut rng = Rng::new(91);
    for t in ElementType::ALL {
        if t.bit_width().is_none() {
            continue;
        }
        for (name, split) in window_splits(&mut rng, t) {
            let input = random_tensor(&mut rng, t, split.input_shape());
            let expected = naive_split(&input, &split);
            assert_outputs_equal(
                &expected,
                &input.split(&split).unwrap(),
                &format!("{t} {name}"),
            );
        }
    }
    // Strings too.
    let split =
        ResolvedSplit::from_windows(&[5, 2], 0, vec![(0, 3), (3, 0), (1, 4)], true).unwrap();
    let input = random_tensor(&mut rng, ElementType::String, &[5, 2]);
    assert_outputs_equal(
        &naive_split(&input, &split),
        &input.split(&split).unwrap(),
        "strings",
    );
}

#[test]
fn every_kernel_and_placement_move_windows_of_every_width_in_the_emulator() {
    let mut rng = Rng::new(92);
    for t in one_type_per_width() {
        let covered = for_every_kernel(
            &mut rng,
            t,
            &PlanLimits::WEBGPU_DEFAULT,
            |split, plan, context| {
                let input = random_tensor(&mut Rng::new(1), t, split.input_shape());
                let with_input = (plan.copy_count() == 0).then_some(Layout::WithInput);
                for layout in [Layout::OwnBuffers, Layout::Pooled]
                    .into_iter()
                    .chain(with_input)
                {
                    check_emulated(plan, &input, split, layout, &mut Rng::new(2), context);
                }
            },
        );
        assert_every_kernel_covered(t, &covered);
    }
}

#[test]
fn every_kernel_and_placement_move_windows_of_every_width_on_the_gpu() {
    let Some(gpu) = gpu("every_kernel_and_placement_move_windows_of_every_width_on_the_gpu") else {
        return;
    };
    let mut rng = Rng::new(93);
    for t in one_type_per_width() {
        let covered = for_every_kernel(&mut rng, t, gpu.limits(), |split, plan, context| {
            let input = random_tensor(&mut Rng::new(3), t, split.input_shape());
            let actual = common::round_trip(gpu).run_plan(plan, &input).unwrap();
            assert_outputs_equal(&input.split(split).unwrap(), &actual, context);
        });
        assert_every_kernel_covered(t, &covered);
    }
}

#[test]
fn framework_calls_split_on_the_gpu_as_their_frameworks_do() {
    let Some(gpu) = gpu("framework_calls_split_on_the_gpu_as_their_frameworks_do") else {
        return;
    };
    use wgpu_split::frameworks::{Burn, Candle, Numpy, Torch};
    let shape = [6, 5, 8];
    let mut rng = Rng::new(94);
    let input = random_tensor(&mut rng, ElementType::Float16, &shape);
    for split in [
        Torch::chunk(&shape, 4, 1).unwrap(),
        Torch::split(&shape, 3, -1).unwrap(),
        Torch::tensor_split(&shape, &[3, 1], 1).unwrap(),
        Torch::unbind(&shape, 0).unwrap(),
        Torch::narrow(&shape, 2, -5, 3).unwrap(),
        Numpy::array_split(&shape, 4, 2).unwrap(),
        Candle::chunk(&shape, 4, 1).unwrap(),
        Burn::chunk(&shape, 4, 1).unwrap(),
    ] {
        let actual = common::round_trip(gpu).run(&split, &input).unwrap();
        assert_outputs_equal(
            &naive_split(&input, &split),
            &actual,
            &format!("{:?}", split.windows().collect::<Vec<_>>()),
        );
    }
    // A framework error is the crate's error too.
    let e: Error = Torch::chunk(&shape, 0, 0).unwrap_err().into();
    assert!(e.to_string().starts_with("torch.chunk"), "{e}");
}

#[test]
fn contiguous_operators_plan_as_before() {
    // The ONNX and OpenVINO operators resolve to contiguous windows.
    use wgpu_split::{OnnxSplit, OpenVinoSplit, ParamTensor};
    let split = OnnxSplit::new(18, 3)
        .axis(1)
        .num_outputs(3)
        .resolve(&[4, 10])
        .unwrap();
    assert!(split.is_contiguous());
    assert_eq!(split.starts(), &[0, 4, 8]);
    let split = OpenVinoSplit::new(ParamTensor::int64_scalar(0), 2)
        .resolve(&[4, 2])
        .unwrap();
    assert!(split.is_contiguous());
    // Windows with a gap or an overlap are not.
    let gap = ResolvedSplit::from_windows(&[10], 0, vec![(0, 3), (5, 5)], true).unwrap();
    assert!(!gap.is_contiguous());
    assert!(ResolvedSplit::from_windows(&[10], 0, vec![(8, 3)], true).is_err());
}
