//! Permuted moves' recordings run by the CPU emulator
//! (`common/emulator/permuted.rs`): every GPU element type under random
//! factorings and permutations, attention heads and transposes of the
//! fastest axis (tiles), split and concatenated back, in both lane orders
//! and three layouts (buffers of their own, one packed page, the single
//! side's page); exact against the host path, nothing written outside the
//! regions, every binding and access within WebGPU's rules.

mod common;

use common::emulator::permuted::Memory;
use common::permuted_layouts::{LAYOUTS, layout};
use common::{Rng, concat_undoing, random_move, random_tensor};
use wgpu_split::plan::internals::{PlainRegion, RecordedCommand as Command};
use wgpu_split::plan::{LaneOrder, PermutedConcatPlan, PermutedPlan, PlanLimits};
use wgpu_split::{ElementType, HostTensor, PermutedSplit, PieceMove, ResolvedSplit};

const SENTINEL: u8 = 0xA5;

/// Sentinel-filled memory for `recording`'s buffers, `held` bytes placed.
fn memory(
    recording: &wgpu_split::plan::internals::Recording,
    held: &[(&PlainRegion, &[u8])],
) -> Vec<Vec<u8>> {
    let mut buffers: Vec<Vec<u8>> = recording
        .buffers
        .iter()
        .map(|b| vec![SENTINEL; b.size.next_multiple_of(4) as usize])
        .collect();
    for (r, bytes) in held {
        let at = r.offset as usize;
        buffers[r.buffer][at..at + bytes.len()].copy_from_slice(bytes);
    }
    buffers
}

/// Emulates `split` of `input` and the concat back, in both lane orders
/// and every layout; returns how many recordings moved through tiles.
fn check(input: &HostTensor, split: &PermutedSplit, context: &str) -> usize {
    let t = input.element_type();
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let outputs = input.split_permuted(split).unwrap();
    let concat = concat_undoing(split);
    let mut tiled = 0;
    for lanes in [LaneOrder::Blocked, LaneOrder::Striped] {
        let plan = PermutedPlan::new(split, t, &limits).unwrap().lanes(lanes);
        let concat_plan = PermutedConcatPlan::new(&concat, t, &limits)
            .unwrap()
            .lanes(lanes);
        for l in LAYOUTS {
            let context = format!("{context}, {lanes:?}, layout {l}");
            tiled += usize::from(emulate_split(&plan, input, &outputs, l, &context));
            emulate_concat(&concat_plan, &outputs, l, &context);
        }
    }
    tiled
}

/// Every storage binding of `recording` within `limits`' binding size.
fn within_bindings(
    recording: &wgpu_split::plan::internals::Recording,
    limits: &PlanLimits,
    context: &str,
) {
    let most = limits.max_storage_buffer_binding_size;
    let params = recording.buffers.len() - 2;
    for command in &recording.commands {
        if let Command::Dispatch { bindings, .. } = command {
            for b in bindings.iter().filter(|b| b.buffer != params) {
                assert!(b.size <= most, "{context}: binding of {} bytes", b.size);
            }
        }
    }
}

/// Emulates `concat_plan` joining `outputs` from their places in layout
/// `l`: exact, nothing else written, every storage binding within the
/// plan's limit.
fn emulate_concat(
    concat_plan: &PermutedConcatPlan,
    outputs: &[HostTensor],
    l: &str,
    context: &str,
) {
    let sizes: Vec<u64> = (0..outputs.len())
        .map(|i| concat_plan.input_bytes(i))
        .collect();
    let (single, each) = layout(l, concat_plan.output_region_bytes(), &sizes);
    let recording = concat_plan
        .recording(&each, &single)
        .unwrap_or_else(|e| panic!("{context}: concat: {e}"));
    within_bindings(&recording, concat_plan.limits(), context);
    let held: Vec<(&PlainRegion, &[u8])> = each
        .iter()
        .zip(outputs)
        .map(|(e, o)| (e, o.as_bytes().unwrap()))
        .collect();
    let before = memory(&recording, &held);
    let mut want = before.clone();
    let at = single.offset as usize;
    want[single.buffer][at..at + single.size as usize].fill(0);
    // The host path's concat (the input's bits past its last
    // element are not the concat's: they come out zero).
    let refs: Vec<&HostTensor> = outputs.iter().collect();
    let joined = HostTensor::concat_permuted(&refs, concat_plan.concat()).unwrap();
    let bytes = joined.as_bytes().unwrap();
    want[single.buffer][at..at + bytes.len()].copy_from_slice(bytes);
    let mut m = Memory {
        buffers: before,
        writable: vec![(single.buffer, single.offset..single.offset + single.size)],
    };
    m.run(&recording);
    let callers = recording.buffers.len() - 2;
    assert!(m.buffers[..callers] == want[..callers], "{context}: concat");
}

/// Emulates `plan` moving `input` into `outputs`' places in layout `l`:
/// exact, nothing else written, every storage binding within the plan's
/// limit. True when a dispatch moved through tiles.
fn emulate_split(
    plan: &PermutedPlan,
    input: &HostTensor,
    outputs: &[HostTensor],
    l: &str,
    context: &str,
) -> bool {
    let split = plan.split();
    let sizes: Vec<u64> = (0..split.output_count())
        .map(|i| plan.output_region_bytes(i))
        .collect();
    let (single, each) = layout(l, plan.input_bytes(), &sizes);
    let recording = plan
        .recording(&single, &each)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    within_bindings(&recording, plan.limits(), context);
    let tiled = recording
        .modules
        .iter()
        .any(|m| m.wgsl.contains("const RECORD: u32 = 36u;"));
    let before = memory(&recording, &[(&single, input.as_bytes().unwrap())]);
    let mut want = before.clone();
    for (e, o) in each.iter().zip(outputs) {
        let at = e.offset as usize;
        want[e.buffer][at..at + e.size as usize].fill(0);
        let bytes = o.as_bytes().unwrap();
        want[e.buffer][at..at + bytes.len()].copy_from_slice(bytes);
    }
    let mut m = Memory {
        buffers: before,
        writable: each
            .iter()
            .map(|e| (e.buffer, e.offset..e.offset + e.size))
            .collect(),
    };
    m.run(&recording);
    let callers = recording.buffers.len() - 2;
    assert!(m.buffers[..callers] == want[..callers], "{context}: split");
    tiled
}

#[test]
fn moves_past_one_binding_emulate_exactly_in_windows() {
    // Windows of 2 KiB and 1 KiB (bindings at multiples of 256): every GPU
    // type, random moves of tensors of a few KiB, each layout (the input
    // and its outputs in one page among them).
    let mut rng = Rng::new(2048);
    let mut windowed = 0;
    for t in ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
    {
        for rank in [2, 3, 3, 4, 4] {
            let axis = rng.below(rank);
            let shape: Vec<usize> = (0..rank)
                .map(|d| rng.below(if d == axis { 36 } else { 12 }) + 1)
                .collect();
            let count = rng.below(3) + 1;
            let split =
                ResolvedSplit::new(&shape, axis, rng.lengths(shape[axis], count), true).unwrap();
            let moves = split
                .output_shapes()
                .iter()
                .map(|p| random_move(&mut rng, p))
                .collect();
            let Ok(permuted) = PermutedSplit::new(split, moves) else {
                continue;
            };
            let input = random_tensor(&mut rng, t, &shape);
            let outputs = input.split_permuted(&permuted).unwrap();
            for window in [2048, 1024] {
                let limits = PlanLimits {
                    max_storage_buffer_binding_size: window,
                    ..PlanLimits::WEBGPU_DEFAULT
                };
                let Ok(plan) = PermutedPlan::new(&permuted, t, &limits) else {
                    continue;
                };
                windowed += usize::from(plan.is_windowed());
                let concat = concat_undoing(&permuted);
                let concat_plan = PermutedConcatPlan::new(&concat, t, &limits).unwrap();
                windowed += usize::from(concat_plan.is_windowed());
                for lanes in [LaneOrder::Blocked, LaneOrder::Striped] {
                    for l in LAYOUTS {
                        let context = format!(
                            "{t} {shape:?} {:?} window {window} {lanes:?} layout {l}",
                            permuted.moves()
                        );
                        emulate_split(&plan.clone().lanes(lanes), &input, &outputs, l, &context);
                        let joined = concat_plan.clone().lanes(lanes);
                        emulate_concat(&joined, &outputs, l, &format!("{context}: concat"));
                    }
                }
            }
        }
    }
    assert!(windowed >= 120, "{windowed} windowed plans");
}

#[test]
fn random_moves_of_every_gpu_type_emulate_exactly() {
    let mut rng = Rng::new(3977);
    let mut cases = 0;
    for t in ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
    {
        for rank in 1..=4 {
            for _ in 0..2 {
                let axis = rng.below(rank);
                let shape: Vec<usize> = (0..rank)
                    .map(|d| rng.below(if d == axis { 9 } else { 5 }) + 1)
                    .collect();
                let count = rng.below(3) + 1;
                let split = ResolvedSplit::new(&shape, axis, rng.lengths(shape[axis], count), true)
                    .unwrap();
                let moves = split
                    .output_shapes()
                    .iter()
                    .map(|p| random_move(&mut rng, p))
                    .collect();
                let Ok(permuted) = PermutedSplit::new(split, moves) else {
                    continue;
                };
                let input = random_tensor(&mut rng, t, &shape);
                check(
                    &input,
                    &permuted,
                    &format!("{t} {shape:?} {:?}", permuted.moves()),
                );
                cases += 1;
            }
        }
    }
    assert!(cases >= 100, "{cases} cases");
}

#[test]
fn heads_and_transposes_through_tiles_emulate_exactly() {
    let mut rng = Rng::new(39);
    let mut tiled = 0;
    let transpose = |rows: usize, cols: usize| {
        PermutedSplit::new(
            ResolvedSplit::new(&[2, rows + 8, cols], 1, vec![8, rows], true).unwrap(),
            vec![
                PieceMove::keep(&[2, 8, cols]),
                PieceMove::new(vec![2, rows, cols], vec![0, 2, 1]),
            ],
        )
        .unwrap()
    };
    for (t, split) in [
        (
            ElementType::Float16,
            PermutedSplit::split_heads(&[2, 8, 3 * 2 * 8], &[16; 3], 8).unwrap(),
        ),
        (
            ElementType::Int4,
            PermutedSplit::split_heads(&[1, 5, 3 * 2 * 3], &[6; 3], 3).unwrap(),
        ),
        (ElementType::Float, transpose(40, 33)),
        (ElementType::Double, transpose(17, 64)),
        (ElementType::Complex128, transpose(32, 20)),
        (ElementType::Float16, transpose(40, 34)),
        (ElementType::Uint8, transpose(24, 64)),
        (ElementType::Int4, transpose(16, 40)),
    ] {
        let shape = split.split().input_shape().to_vec();
        let input = random_tensor(&mut rng, t, &shape);
        tiled += check(&input, &split, &format!("{t} {shape:?}"));
    }
    assert!(tiled > 0, "no recording moved through tiles");
}
