//! One splitter, five verbs, every move: a resolved split and concat, a
//! permuted split and concat each planned (`plan`, `plan_with`), counted,
//! encoded, prepared for the caller's pass, warmed up and round-tripped
//! through the same generic calls, every byte against the host path. The
//! contract's clauses for each move are in their own rooms
//! (`tests/buffer_checks.rs`, `tests/caches.rs`, `tests/encode_buffers.rs`).

mod common;

use common::{Rng, gpu, random_tensor, read_buffer, round_trip};
use wgpu_split::error::{EncodeError, PlanError};
use wgpu_split::gpu::{BufferRegion, GpuSplitter, Move, MovePlan};
use wgpu_split::plan::{Placement, PlanOptions};
use wgpu_split::{
    ElementType, Error, HostTensor, PermutedConcat, PermutedSplit, PieceMove, ResolvedConcat,
    ResolvedSplit,
};

const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

fn buffer(gpu: &GpuSplitter, bytes: &[u8], size: u64) -> wgpu::Buffer {
    let size = size.max(bytes.len() as u64).next_multiple_of(4).max(4);
    let b = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: USAGE,
        mapped_at_creation: false,
    });
    gpu.queue().write_buffer(&b, 0, &{
        let mut padded = bytes.to_vec();
        padded.resize(padded.len().next_multiple_of(4), 0);
        padded
    });
    b
}

fn read(gpu: &GpuSplitter, b: &wgpu::Buffer, bytes: usize) -> Vec<u8> {
    read_buffer(gpu, b)[..bytes].to_vec()
}

/// A split's regions: the input's buffer, each output's buffer.
fn split_buffers(
    gpu: &GpuSplitter,
    input: &HostTensor,
    sizes: &[u64],
) -> (wgpu::Buffer, Vec<wgpu::Buffer>) {
    let source = buffer(gpu, input.as_bytes().unwrap(), 0);
    let outputs = sizes.iter().map(|&s| buffer(gpu, &[], s)).collect();
    (source, outputs)
}

/// Runs a split-shaped plan through `encode` and `prepare`, and checks
/// `counts` against what `prepare` made.
fn check_split_verbs<P>(
    gpu: &GpuSplitter,
    plan: &P,
    in_pass: &P,
    input: &HostTensor,
    sizes: &[u64],
    want: &[HostTensor],
) where
    P: 'static
        + for<'a> MovePlan<Input<'a> = BufferRegion<'a>, Output<'a> = &'a [BufferRegion<'a>]>,
{
    for (verb, plan) in [("encode", plan), ("prepare", in_pass)] {
        let (source, outputs) = split_buffers(gpu, input, sizes);
        let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
        let counts = gpu
            .counts(plan, BufferRegion::whole(&source), &regions)
            .unwrap();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        if verb == "encode" {
            gpu.encode(&mut encoder, plan, BufferRegion::whole(&source), &regions)
                .unwrap();
        } else {
            let prepared = gpu
                .prepare(plan, BufferRegion::whole(&source), &regions)
                .unwrap();
            assert_eq!(prepared.counts(), counts, "counts known before preparing");
            let mut pass = encoder.begin_compute_pass(&Default::default());
            prepared.record(&mut pass);
        }
        gpu.queue().submit([encoder.finish()]);
        for (i, w) in want.iter().enumerate() {
            let got = read(gpu, &outputs[i], w.as_bytes().unwrap().len());
            assert_eq!(got, w.as_bytes().unwrap(), "{verb}: output {i}");
        }
    }
}

/// The same for a concat-shaped plan.
fn check_concat_verbs<P>(
    gpu: &GpuSplitter,
    plan: &P,
    in_pass: &P,
    inputs: &[HostTensor],
    size: u64,
    want: &HostTensor,
) where
    P: 'static
        + for<'a> MovePlan<Input<'a> = &'a [BufferRegion<'a>], Output<'a> = BufferRegion<'a>>,
{
    for (verb, plan) in [("encode", plan), ("prepare", in_pass)] {
        let sources: Vec<wgpu::Buffer> = inputs
            .iter()
            .map(|t| buffer(gpu, t.as_bytes().unwrap(), 0))
            .collect();
        let output = buffer(gpu, &[], size);
        let regions: Vec<BufferRegion> = sources.iter().map(BufferRegion::whole).collect();
        let counts = gpu
            .counts(plan, &regions, BufferRegion::whole(&output))
            .unwrap();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        if verb == "encode" {
            gpu.encode(&mut encoder, plan, &regions, BufferRegion::whole(&output))
                .unwrap();
        } else {
            let prepared = gpu
                .prepare(plan, &regions, BufferRegion::whole(&output))
                .unwrap();
            assert_eq!(prepared.counts(), counts, "counts known before preparing");
            let mut pass = encoder.begin_compute_pass(&Default::default());
            prepared.record(&mut pass);
        }
        gpu.queue().submit([encoder.finish()]);
        let got = read(gpu, &output, want.as_bytes().unwrap().len());
        assert_eq!(got, want.as_bytes().unwrap(), "{verb}");
    }
}

/// `what` planned with default options and for the caller's pass, warmed
/// up, both plans through `plan` and `plan_with`.
fn plans<M: Move>(gpu: &GpuSplitter, what: &M, t: ElementType) -> (M::Plan, M::Plan) {
    let plan = gpu.plan(what, t).unwrap();
    let in_pass = PlanOptions::default().in_compute_pass();
    let for_pass = gpu.plan_with(what, t, &in_pass).unwrap();
    gpu.cache().warm_up(&plan).unwrap();
    gpu.cache().warm_up(&for_pass).unwrap();
    (plan, for_pass)
}

#[test]
fn every_move_takes_the_same_five_verbs_and_round_trips() {
    let Some(gpu) = gpu("every_move_takes_the_same_five_verbs_and_round_trips") else {
        return;
    };
    let mut rng = Rng::new(54);
    for t in [
        ElementType::Float16,
        ElementType::Uint8,
        ElementType::Int4,
        ElementType::Float,
    ] {
        // A resolved split and its concat.
        let input = random_tensor(&mut rng, t, &[6, 5, 12]);
        let split = ResolvedSplit::new(&[6, 5, 12], 2, vec![3, 8, 1], true).unwrap();
        let want = input.split(&split).unwrap();
        let (plan, for_pass) = plans(gpu, &split, t);
        let sizes: Vec<u64> = (0..3).map(|i| plan.destination_bytes(i)).collect();
        check_split_verbs(gpu, &plan, &for_pass, &input, &sizes, &want);
        assert_eq!(round_trip(gpu).run(&split, &input).unwrap(), want, "{t:?}");
        assert_eq!(round_trip(gpu).run_plan(&plan, &input).unwrap(), want);
        let concat = ResolvedConcat::inverse_of(&split).unwrap();
        let (plan, for_pass) = plans(gpu, &concat, t);
        let bytes = plan.requirements().output_region_bytes;
        check_concat_verbs(gpu, &plan, &for_pass, &want, bytes, &input);
        let refs: Vec<&HostTensor> = want.iter().collect();
        assert_eq!(round_trip(gpu).run(&concat, &refs).unwrap(), input);
        assert_eq!(round_trip(gpu).run_plan(&plan, &refs).unwrap(), input);

        // A permuted split (heads, a transposed piece and a kept one) and
        // the heads' merge.
        let heads = common::heads_and_a_kept_piece();
        let want = input.split_permuted(&heads).unwrap();
        let (plan, for_pass) = plans(gpu, &heads, t);
        assert!(!for_pass.copies_output(1), "no copy command in a pass");
        let sizes: Vec<u64> = (0..2).map(|i| plan.output_region_bytes(i)).collect();
        check_split_verbs(gpu, &plan, &for_pass, &input, &sizes, &want);
        assert_eq!(round_trip(gpu).run(&heads, &input).unwrap(), want, "{t:?}");
        assert_eq!(round_trip(gpu).run_plan(&plan, &input).unwrap(), want);
        let q = random_tensor(&mut rng, t, &[2, 3, 7, 4]);
        let k = random_tensor(&mut rng, t, &[2, 1, 7, 4]);
        let merge = PermutedConcat::merge_heads(&[q.shape(), k.shape()]).unwrap();
        let want = HostTensor::concat_permuted(&[&q, &k], &merge).unwrap();
        let (plan, for_pass) = plans(gpu, &merge, t);
        let pieces = [q.clone(), k.clone()];
        let bytes = plan.output_region_bytes();
        check_concat_verbs(gpu, &plan, &for_pass, &pieces, bytes, &want);
        assert_eq!(round_trip(gpu).run(&merge, &[&q, &k]).unwrap(), want);
        assert_eq!(round_trip(gpu).run_plan(&plan, &[&q, &k]).unwrap(), want);
    }
}

/// A permuted move takes the options it has: lanes (a strategy) and the
/// compute pass; an arena or a kernel is a typed error of `plan_with`; a
/// plan with copy commands is refused by `prepare` as a split's is.
#[test]
fn permuted_moves_take_their_options_and_refuse_the_others() {
    let Some(gpu) = gpu("permuted_moves_take_their_options_and_refuse_the_others") else {
        return;
    };
    let t = ElementType::Float;
    let heads = PermutedSplit::new(
        ResolvedSplit::new(&[3, 8], 0, vec![2, 1], true).unwrap(),
        vec![
            PieceMove::new(vec![2, 2, 4], vec![1, 0, 2]),
            PieceMove::keep(&[1, 8]),
        ],
    )
    .unwrap();
    let arena = PlanOptions::default().placement(Placement::Arena);
    assert_eq!(
        gpu.plan_with(&heads, t, &arena).unwrap_err(),
        PlanError::NotForThisMove {
            option: "placement",
            what: "a permuted move"
        }
    );
    let merge = PermutedConcat::merge_heads(&[[1, 2, 3, 4]]).unwrap();
    let kernel = PlanOptions::default().kernel(wgpu_split::plan::Kernel::Vec4);
    assert!(matches!(
        gpu.plan_with(&merge, t, &kernel).unwrap_err(),
        PlanError::NotForThisMove {
            option: "kernel",
            ..
        }
    ));
    let plan = gpu.plan(&heads, t).unwrap();
    assert!(plan.copies_output(1));
    let input = HostTensor::from_slice(&[3, 8], &[1f32; 24]).unwrap();
    let (source, outputs) = split_buffers(gpu, &input, &[64, 32]);
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    let counts = gpu
        .counts(&plan, BufferRegion::whole(&source), &regions)
        .unwrap();
    assert_eq!((counts.copies, counts.dispatches), (1, 1));
    assert_eq!(
        gpu.prepare(&plan, BufferRegion::whole(&source), &regions)
            .unwrap_err(),
        Error::Encode(EncodeError::CopiesInComputePass { copies: 1 })
    );
}
