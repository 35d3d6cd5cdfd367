//! Permuted splits and concats on the GPU adapter at hand: every element type under
//! random factorings and permutations, attention heads and transposes, bit
//! for bit the host path's (`HostTensor::split_permuted`), the bytes past
//! each output up to its last word zero and nothing outside the regions
//! written; outputs packed in one buffer dealt into dispatches whose
//! bindings do not alias; and misuse refused, typed, before wgpu sees it.

mod common;

use common::{Rng, concat_undoing, gpu, random_move, random_tensor, read_buffer, refused};
use wgpu::util::DeviceExt;
use wgpu_split::error::EncodeError;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::{BufferRole, LaneOrder, PermutedConcatPlan, PermutedPlan, PlanLimits};
use wgpu_split::{
    ElementType, Error, HostTensor, PermutedConcat, PermutedSplit, PieceMove, ResolvedSplit,
};

/// Bytes every buffer starts filled with, to see what was written.
const GUARD: u8 = 0xA5;

fn buffer(gpu: &GpuSplitter, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("permuted test"),
            contents: bytes,
            usage: usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        })
}

/// Runs `split` of `input` on the GPU with each output at `offsets[i]` of
/// one buffer of `size` bytes (or each in a buffer of its own), and checks
/// it against the host path: outputs exact, the word tail zero, every
/// other byte untouched.
fn check(
    gpu: &GpuSplitter,
    input: &HostTensor,
    split: &PermutedSplit,
    packed: Option<(&[u64], u64)>,
    context: &str,
) {
    for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
        let plan = gpu.plan(split, input.element_type()).unwrap().lanes(lanes);
        check_plan(
            gpu,
            input,
            &plan,
            packed,
            &format!("{context}, {lanes:?} lanes"),
        );
    }
}

/// [`check`] with one plan.
fn check_plan(
    gpu: &GpuSplitter,
    input: &HostTensor,
    plan: &PermutedPlan,
    packed: Option<(&[u64], u64)>,
    context: &str,
) {
    let split = plan.split();
    let expected = input.split_permuted(split).unwrap();
    let mut src = input.as_bytes().unwrap().to_vec();
    src.resize(src.len().next_multiple_of(4) + 8, GUARD);
    let source = buffer(gpu, &src, wgpu::BufferUsages::STORAGE);
    let sizes: Vec<u64> = (0..split.output_count())
        .map(|i| plan.output_region_bytes(i))
        .collect();
    let storage = wgpu::BufferUsages::STORAGE;
    let (buffers, offsets): (Vec<wgpu::Buffer>, Vec<u64>) = match packed {
        Some((offsets, size)) => (
            vec![buffer(gpu, &vec![GUARD; size as usize], storage)],
            offsets.to_vec(),
        ),
        None => (
            sizes
                .iter()
                .map(|&s| buffer(gpu, &vec![GUARD; s as usize + 12], storage))
                .collect(),
            vec![0; sizes.len()],
        ),
    };
    let region = |i: usize| {
        let b = if buffers.len() == 1 {
            &buffers[0]
        } else {
            &buffers[i]
        };
        BufferRegion::new(b, offsets[i], sizes[i])
    };
    let regions: Vec<BufferRegion<'_>> = (0..sizes.len()).map(region).collect();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(
        &mut encoder,
        plan,
        BufferRegion::new(&source, 0, plan.input_bytes()),
        &regions,
    )
    .unwrap_or_else(|e| panic!("{context}: {e}"));
    gpu.queue().submit([encoder.finish()]);
    let contents: Vec<Vec<u8>> = buffers.iter().map(|b| read_buffer(gpu, b)).collect();
    let mut owned: Vec<Vec<bool>> = contents.iter().map(|c| vec![false; c.len()]).collect();
    for (i, e) in expected.iter().enumerate() {
        let k = if buffers.len() == 1 { 0 } else { i };
        let at = offsets[i] as usize;
        let bytes = e.as_bytes().unwrap();
        let got = &contents[k][at..at + sizes[i] as usize];
        assert_eq!(
            &got[..bytes.len()],
            bytes,
            "{context}: output {i} {:?}",
            e.shape()
        );
        // Sub-byte outputs: the last byte's bits past the output are zero
        // on the host too; the word's bytes past it are zero.
        assert!(
            got[bytes.len()..].iter().all(|&b| b == 0),
            "{context}: output {i} tail"
        );
        owned[k][at..at + sizes[i] as usize].fill(true);
    }
    for (k, c) in contents.iter().enumerate() {
        let stray = c
            .iter()
            .zip(&owned[k])
            .position(|(&b, &o)| !o && b != GUARD);
        assert_eq!(
            stray, None,
            "{context}: buffer {k} written outside the regions"
        );
    }
}

/// A random split of a random rank-`rank` shape, each output moved by a
/// random factoring and permutation (`None` when a move is refused: past
/// the kernels' rank, or merged across strides).
fn random_permuted(rng: &mut Rng, rank: usize) -> Option<(Vec<usize>, PermutedSplit)> {
    random_permuted_of(rng, rank, 1)
}

/// [`random_permuted`] with each dimension up to `scale` times longer.
fn random_permuted_of(
    rng: &mut Rng,
    rank: usize,
    scale: usize,
) -> Option<(Vec<usize>, PermutedSplit)> {
    let axis = rng.below(rank);
    let shape: Vec<usize> = (0..rank)
        .map(|d| rng.below(if d == axis { 9 } else { 5 } * scale) + 1)
        .collect();
    let count = rng.below(3) + 1;
    let split = ResolvedSplit::new(&shape, axis, rng.lengths(shape[axis], count), true).unwrap();
    let moves = split
        .output_shapes()
        .iter()
        .map(|p| random_move(rng, p))
        .collect();
    Some((shape, PermutedSplit::new(split, moves).ok()?))
}

#[test]
fn every_gpu_type_random_moves_match_the_host() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(3939);
    let mut cases = 0;
    for t in ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
    {
        for rank in 1..=4 {
            for _ in 0..3 {
                let Some((shape, permuted)) = random_permuted(&mut rng, rank) else {
                    continue;
                };
                let input = random_tensor(&mut rng, t, &shape);
                check(
                    gpu,
                    &input,
                    &permuted,
                    None,
                    &format!("{t} {shape:?} {:?}", permuted.moves()),
                );
                cases += 1;
            }
        }
    }
    assert!(cases >= 200, "{cases} cases");
}

#[test]
fn attention_heads_and_a_detection_head() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(7);
    // GPT-2's QKV (small), grouped-query QKV, and heads of odd f16 widths
    // (whole words only in pairs), in f16, bf16, f32 and u8.
    for (t, shape, widths, d) in [
        (ElementType::Float16, vec![2, 16, 3 * 4 * 8], vec![32; 3], 8),
        (ElementType::BFloat16, vec![3, 10, 6 * 4], vec![16, 4, 4], 4),
        (ElementType::Float16, vec![2, 5, 3 * 3], vec![3; 3], 3),
        (ElementType::Float, vec![1, 7, 4 * 6], vec![12, 6, 6], 6),
        (ElementType::Uint8, vec![2, 9, 3 * 2 * 5], vec![10; 3], 5),
    ] {
        let qkv = PermutedSplit::split_heads(&shape, &widths, d).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        check(
            gpu,
            &input,
            &qkv,
            None,
            &format!("{t} {shape:?} heads of {d}"),
        );
    }
    // YOLOv8's distribution head: [1, 144, A] into 64 boxes as [1, 16, 4, A]
    // and 80 classes kept.
    let split = ResolvedSplit::new(&[1, 144, 33], 1, vec![64, 80], true).unwrap();
    let moves = vec![
        wgpu_split::PieceMove::new(vec![1, 4, 16, 33], vec![0, 2, 1, 3]),
        wgpu_split::PieceMove::keep(&[1, 80, 33]),
    ];
    let dfl = PermutedSplit::new(split, moves).unwrap();
    let input = random_tensor(&mut rng, ElementType::Float, &[1, 144, 33]);
    let plan = gpu.plan(&dfl, ElementType::Float).unwrap();
    assert!(!plan.copies_output(0) && plan.copies_output(1));
    check(gpu, &input, &dfl, None, "yolo dfl");
    // An input without COPY_SRC, outputs without COPY_DST: the kernel
    // moves the kept piece.
    let made = |bytes: &[u8], usage| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("no copies"),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE | usage,
            })
    };
    let source = made(input.as_bytes().unwrap(), wgpu::BufferUsages::empty());
    let outs: Vec<wgpu::Buffer> = (0..2)
        .map(|i| {
            let guard = vec![GUARD; plan.output_region_bytes(i) as usize];
            made(&guard, wgpu::BufferUsages::COPY_SRC)
        })
        .collect();
    let regions: Vec<BufferRegion<'_>> = outs.iter().map(BufferRegion::whole).collect();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(&mut encoder, &plan, BufferRegion::whole(&source), &regions)
        .unwrap();
    gpu.queue().submit([encoder.finish()]);
    // Read back through a copy of each into a readable buffer.
    let expected = input.split_permuted(&dfl).unwrap();
    for (i, out) in outs.iter().enumerate() {
        let readable = buffer(
            gpu,
            &vec![0; out.size() as usize],
            wgpu::BufferUsages::empty(),
        );
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(out, 0, &readable, 0, out.size());
        gpu.queue().submit([encoder.finish()]);
        let got = read_buffer(gpu, &readable);
        assert_eq!(
            &got[..],
            expected[i].as_bytes().unwrap(),
            "kernel-moved output {i}"
        );
    }
}

#[test]
fn transposes_of_the_fastest_axis_move_through_tiles_on_gpus() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(4040);
    // layout_cdla's [1, 32, 7600] as (0, 2, 1) (short), attention's K as
    // [B, H, D, S], and a piece whose reads merge two axes; sides that are
    // not multiples of 32 and batches around the tiles.
    let cases = [
        (
            vec![1, 40, 300],
            1,
            vec![40],
            vec![PieceMove::new(vec![1, 40, 300], vec![0, 2, 1])],
        ),
        (
            vec![2, 40, 3 * 2 * 32],
            2,
            vec![64, 64, 64],
            vec![PieceMove::new(vec![2, 40, 2, 32], vec![0, 2, 3, 1]); 3],
        ),
        (
            vec![2, 48, 100],
            1,
            vec![16, 32],
            vec![
                PieceMove::new(vec![2, 16, 100], vec![0, 2, 1]),
                PieceMove::new(vec![2, 32, 10, 10], vec![0, 2, 3, 1]),
            ],
        ),
    ];
    for t in [
        ElementType::Float,
        ElementType::Double,
        ElementType::Complex128,
        // Packed: every output row here is whole words.
        ElementType::Float16,
        ElementType::BFloat16,
        ElementType::Uint8,
        ElementType::Int4,
    ] {
        for (shape, axis, lengths, moves) in &cases {
            let split = ResolvedSplit::new(shape, *axis, lengths.clone(), true).unwrap();
            let permuted = PermutedSplit::new(split, moves.clone()).unwrap();
            let plan = gpu.plan(&permuted, t).unwrap().lanes(LaneOrder::Striped);
            for i in 0..permuted.output_count() {
                assert!(plan.moves_through_tiles(i), "{t} {shape:?} output {i}");
                assert!(
                    !plan
                        .clone()
                        .lanes(LaneOrder::Blocked)
                        .moves_through_tiles(i)
                );
            }
            let input = random_tensor(&mut rng, t, shape);
            let context = format!("{t} {shape:?} {moves:?}");
            check(gpu, &input, &permuted, None, &context);
            // Packed: regions at whole elements from their bindings
            // (tiles), and 4 bytes off them (the gather, for 8- and
            // 16-byte elements).
            let sizes: Vec<u64> = (0..permuted.output_count())
                .map(|i| plan.output_region_bytes(i))
                .collect();
            for skew in [0u64, 4] {
                let mut offsets = Vec::new();
                let mut at = 16 + skew;
                for s in &sizes {
                    offsets.push(at);
                    at += s.next_multiple_of(16) + 16;
                }
                check(
                    gpu,
                    &input,
                    &permuted,
                    Some((&offsets, at + 16)),
                    &format!("{context}, packed +{skew}"),
                );
            }
            // The mirror: the pieces transposed back and joined.
            let concat = concat_undoing(&permuted);
            let concat_plan = gpu.plan(&concat, t).unwrap().lanes(LaneOrder::Striped);
            // (int4 rows of 300 or 100 elements are not whole words: the
            // gather joins those.)
            for i in 0..concat.input_shapes().len() {
                let rows = *concat.output_shape().last().unwrap();
                let whole = (rows * t.bit_width().unwrap() as usize).is_multiple_of(32);
                assert_eq!(
                    concat_plan.moves_through_tiles(i),
                    whole,
                    "{t} {shape:?} concat input {i}"
                );
            }
            let inputs = input.split_permuted(&permuted).unwrap();
            for shared in [false, true] {
                check_concat(gpu, &inputs, &concat, shared, &format!("{context}, concat"));
            }
        }
    }
    // Narrow transposes, and packed elements whose output rows are not
    // whole words, stay with the gather.
    let narrow = PermutedSplit::new(
        ResolvedSplit::new(&[1, 8, 300], 1, vec![8], true).unwrap(),
        vec![PieceMove::new(vec![1, 8, 300], vec![0, 2, 1])],
    )
    .unwrap();
    assert!(
        !gpu.plan(&narrow, ElementType::Float)
            .unwrap()
            .lanes(LaneOrder::Striped)
            .moves_through_tiles(0)
    );
    // f16 rows of 33 elements: a word would straddle two rows.
    let half = PermutedSplit::new(
        ResolvedSplit::new(&[1, 33, 300], 1, vec![33], true).unwrap(),
        vec![PieceMove::new(vec![1, 33, 300], vec![0, 2, 1])],
    )
    .unwrap();
    assert!(
        !gpu.plan(&half, ElementType::Float16)
            .unwrap()
            .lanes(LaneOrder::Striped)
            .moves_through_tiles(0)
    );
}

/// `split` of `input` with the input and every output in one buffer (as
/// a runtime's pooled page holds them), each at its own 256-byte-aligned
/// offset; and the concat that undoes it with its inputs and output in
/// one buffer, the first input given twice (one region bound by two
/// slots). Exact, and nothing else in the buffer written.
fn check_in_one_buffer(
    gpu: &GpuSplitter,
    input: &HostTensor,
    split: &PermutedSplit,
    context: &str,
) {
    let storage = wgpu::BufferUsages::STORAGE;
    let page = |n: u64| n.next_multiple_of(256) + 256;
    for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
        let context = format!("{context}, {lanes:?} lanes");
        let plan = gpu.plan(split, input.element_type()).unwrap().lanes(lanes);
        let src = input.as_bytes().unwrap();
        let mut offsets = vec![page(src.len() as u64)];
        for i in 0..split.output_count() {
            offsets.push(offsets[i] + page(plan.output_region_bytes(i)));
        }
        let mut bytes = vec![GUARD; *offsets.last().unwrap() as usize];
        bytes[..src.len()].copy_from_slice(src);
        let one = buffer(gpu, &bytes, storage);
        let regions: Vec<BufferRegion<'_>> = (0..split.output_count())
            .map(|i| BufferRegion::new(&one, offsets[i], plan.output_region_bytes(i)))
            .collect();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(
            &mut encoder,
            &plan,
            BufferRegion::new(&one, 0, plan.input_bytes()),
            &regions,
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
        gpu.queue().submit([encoder.finish()]);
        let got = read_buffer(gpu, &one);
        let expected = input.split_permuted(split).unwrap();
        let mut want = bytes.clone();
        for (i, e) in expected.iter().enumerate() {
            let at = offsets[i] as usize;
            let size = plan.output_region_bytes(i) as usize;
            want[at..at + size].fill(0);
            want[at..at + e.as_bytes().unwrap().len()].copy_from_slice(e.as_bytes().unwrap());
        }
        assert!(got == want, "{context}: split within one buffer");

        // The concat back, from the outputs where they lie, into a region
        // of the same buffer; the first output read twice.
        let concat = concat_undoing(split);
        let twice = PermutedConcat::new(
            &[concat.input_shapes(), &concat.input_shapes()[..1]].concat(),
            [concat.moves(), &concat.moves()[..1]].concat(),
            split.split().axis(),
        );
        for concat in [Some(concat), twice.ok()].into_iter().flatten() {
            let plan = gpu
                .plan(&concat, input.element_type())
                .unwrap()
                .lanes(lanes);
            let out_at = *offsets.last().unwrap();
            let mut bytes = got.clone();
            bytes.resize((out_at + page(plan.output_region_bytes())) as usize, GUARD);
            let one = buffer(gpu, &bytes, storage);
            let inputs: Vec<BufferRegion<'_>> = (0..concat.input_shapes().len())
                .map(|k| {
                    let i = k % split.output_count();
                    BufferRegion::new(&one, offsets[i], plan.input_bytes(k))
                })
                .collect();
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            gpu.encode(
                &mut encoder,
                &plan,
                &inputs,
                BufferRegion::new(&one, out_at, plan.output_region_bytes()),
            )
            .unwrap_or_else(|e| panic!("{context}: concat: {e}"));
            gpu.queue().submit([encoder.finish()]);
            let after = read_buffer(gpu, &one);
            let pieces: Vec<HostTensor> = (0..concat.input_shapes().len())
                .map(|k| expected[k % split.output_count()].clone())
                .collect();
            let refs: Vec<&HostTensor> = pieces.iter().collect();
            let joined = HostTensor::concat_permuted(&refs, &concat).unwrap();
            let mut want = bytes.clone();
            let at = out_at as usize;
            let size = plan.output_region_bytes() as usize;
            want[at..at + size].fill(0);
            let j = joined.as_bytes().unwrap();
            want[at..at + j.len()].copy_from_slice(j);
            assert!(
                after == want,
                "{context}: concat of {} inputs within one buffer",
                concat.input_shapes().len()
            );
        }
    }
}

#[test]
fn moves_within_one_buffer_bind_what_they_read_writable() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(12);
    // Heads (the gather), a transpose of the fastest axis in f32 and f64
    // (tiles on striped lanes), and sub-word heads (elements ORed in).
    let heads = PermutedSplit::split_heads(&[2, 6, 3 * 2 * 4], &[8; 3], 4).unwrap();
    let transpose = PermutedSplit::new(
        ResolvedSplit::new(&[1, 40, 48], 1, vec![16, 24], true).unwrap(),
        vec![
            PieceMove::new(vec![1, 16, 48], vec![0, 2, 1]),
            PieceMove::new(vec![1, 24, 48], vec![0, 2, 1]),
        ],
    )
    .unwrap();
    let nibbles = PermutedSplit::split_heads(&[1, 5, 2 * 3 * 3], &[9, 9], 3).unwrap();
    for (t, split, shape) in [
        (ElementType::Float16, &heads, vec![2, 6, 24]),
        (ElementType::Float, &transpose, vec![1, 40, 48]),
        (ElementType::Double, &transpose, vec![1, 40, 48]),
        (ElementType::Int4, &nibbles, vec![1, 5, 18]),
    ] {
        let input = random_tensor(&mut rng, t, &shape);
        check_in_one_buffer(gpu, &input, split, &format!("{t} {shape:?}"));
    }
}

#[test]
fn outputs_packed_in_one_buffer_are_dealt_into_dispatches_that_do_not_alias() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(11);
    // Twelve heads of a [2, 3, 12 * 2] f16 tensor, each output 24 bytes,
    // packed 4 bytes apart (bindings start at offsets aligned down to the
    // device's alignment, so neighbours alias as bindings) and 8 apart.
    let qkv = PermutedSplit::split_heads(&[2, 3, 12 * 2], &[2; 12], 2).unwrap();
    let input = random_tensor(&mut rng, ElementType::Float16, &[2, 3, 24]);
    for gap in [0u64, 4, 20] {
        let offsets: Vec<u64> = (0..12).map(|i| i * (24 + gap) + 8).collect();
        let size = offsets[11] + 24 + 16;
        check(
            gpu,
            &input,
            &qkv,
            Some((&offsets, size)),
            &format!("packed, gap {gap}"),
        );
    }
}

#[test]
fn misuse_is_refused_before_wgpu_sees_it() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let qkv = PermutedSplit::split_heads(&[2, 4, 12], &[4, 4, 4], 2).unwrap();
    // WebGPU's limits (bindings aligned to 256), so that the test means the
    // same on any device.
    let plan = PermutedPlan::new(&qkv, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT).unwrap();
    let storage = wgpu::BufferUsages::STORAGE;
    let input = buffer(gpu, &[0; 384 + 8], storage);
    let out = |size: usize| buffer(gpu, &vec![0; size], storage);
    let outs = [out(128), out(128), out(128)];
    let whole: Vec<BufferRegion<'_>> = outs.iter().map(BufferRegion::whole).collect();
    let src = BufferRegion::new(&input, 0, 384);
    let encode = |regions: &[BufferRegion<'_>], src: BufferRegion<'_>| {
        refused(gpu, |encoder| {
            gpu.encode(encoder, &plan, src, regions).unwrap_err()
        })
    };
    let e = encode(&whole[..2], src);
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::RegionCount {
                expected: 3,
                actual: 2
            })
        ),
        "{e}"
    );
    let small = out(64);
    let e = encode(&[whole[0], BufferRegion::whole(&small), whole[2]], src);
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::Output(1),
                size: 64,
                needed: 128,
                ..
            })
        ),
        "{e}"
    );
    let e = encode(
        &[whole[0], whole[1], BufferRegion::new(&outs[2], 2, 126)],
        src,
    );
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::MisalignedOffset {
                which: BufferRole::Output(2),
                ..
            })
        ),
        "{e}"
    );
    let no_storage = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 128,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let e = encode(&[BufferRegion::whole(&no_storage), whole[1], whole[2]], src);
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::MissingUsage {
                which: BufferRole::Output(0),
                ..
            })
        ),
        "{e}"
    );
    let shared = out(256);
    let e = encode(
        &[
            BufferRegion::new(&shared, 0, 128),
            BufferRegion::new(&shared, 124, 128),
            whole[2],
        ],
        src,
    );
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::OverlappingRegions {
                first: 0,
                second: 1
            })
        ),
        "{e}"
    );
    let e = encode(&whole, BufferRegion::new(&input, 0, 256));
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::Input,
                ..
            })
        ),
        "{e}"
    );
    // An output whose region follows the input's in the input's buffer,
    // but whose binding (from the offset aligned down) overlaps it.
    let both = out(4 + 384 + 4 + 128);
    let e = encode(
        &[BufferRegion::new(&both, 392, 128), whole[1], whole[2]],
        BufferRegion::new(&both, 4, 384),
    );
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::InputSharesBuffer {
                which: BufferRole::Output(0),
                ..
            })
        ),
        "{e}"
    );
    // A plan for limits this device does not allow.
    let big = PlanLimits {
        max_storage_buffers_per_shader_stage: 1000,
        ..*gpu.limits()
    };
    let foreign = PermutedPlan::new(&qkv, ElementType::Float, &big).unwrap();
    let e = refused(gpu, |encoder| {
        gpu.encode(encoder, &foreign, src, &whole).unwrap_err()
    });
    assert!(e.to_string().contains("does not allow"), "{e}");
    // Strings have no GPU layout.
    let e = gpu.plan(&qkv, ElementType::String).unwrap_err();
    assert!(e.to_string().contains("host path"), "{e}");
}

/// Runs `concat` of `inputs` on the GPU (each input in a buffer of its
/// own, or all in one when `shared`) into an output region at 8 bytes of a
/// guarded buffer, and checks it against the host path.
fn check_concat(
    gpu: &GpuSplitter,
    inputs: &[HostTensor],
    concat: &PermutedConcat,
    shared: bool,
    context: &str,
) {
    for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
        let plan = gpu
            .plan(concat, inputs[0].element_type())
            .unwrap()
            .lanes(lanes);
        check_concat_plan(
            gpu,
            inputs,
            &plan,
            shared,
            &format!("{context}, {lanes:?} lanes"),
        );
    }
}

/// [`check_concat`] with one plan.
fn check_concat_plan(
    gpu: &GpuSplitter,
    inputs: &[HostTensor],
    plan: &PermutedConcatPlan,
    shared: bool,
    context: &str,
) {
    let concat = plan.concat();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let expected = HostTensor::concat_permuted(&refs, concat).unwrap();
    let storage = wgpu::BufferUsages::STORAGE;
    let padded = |h: &HostTensor| {
        let mut b = h.as_bytes().unwrap().to_vec();
        b.resize(b.len().next_multiple_of(4), GUARD);
        b
    };
    let (buffers, offsets): (Vec<wgpu::Buffer>, Vec<u64>) = if shared {
        let mut all = vec![GUARD; 4];
        let mut offsets = Vec::new();
        for h in inputs {
            offsets.push(all.len() as u64);
            all.extend(padded(h));
        }
        all.resize(all.len() + 4, GUARD);
        (vec![buffer(gpu, &all, storage)], offsets)
    } else {
        let mut bufs = Vec::new();
        for h in inputs {
            let mut b = padded(h);
            b.resize(b.len() + 4, GUARD);
            bufs.push(buffer(gpu, &b, storage));
        }
        (bufs, vec![0; inputs.len()])
    };
    let regions: Vec<BufferRegion<'_>> = (0..inputs.len())
        .map(|i| {
            let b = if shared { &buffers[0] } else { &buffers[i] };
            BufferRegion::new(b, offsets[i], plan.input_bytes(i))
        })
        .collect();
    let size = plan.output_region_bytes();
    // At 16 bytes (whole vec4s where the shape allows) and at 8 (words).
    for at in [16usize, 8] {
        let out = buffer(gpu, &vec![GUARD; size as usize + 32], storage);
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(
            &mut encoder,
            plan,
            &regions,
            BufferRegion::new(&out, at as u64, size),
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
        gpu.queue().submit([encoder.finish()]);
        let got = read_buffer(gpu, &out);
        let bytes = expected.as_bytes().unwrap();
        let end = at + size as usize;
        assert_eq!(
            &got[at..at + bytes.len()],
            bytes,
            "{context} at {at}: output {:?}",
            expected.shape()
        );
        assert!(
            got[at + bytes.len()..end].iter().all(|&b| b == 0),
            "{context} at {at}: tail"
        );
        assert!(
            got[..at].iter().chain(&got[end..]).all(|&b| b == GUARD),
            "{context} at {at}: written outside"
        );
    }
}

#[test]
fn every_gpu_type_random_concats_match_the_host() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(4242);
    let mut cases = 0;
    for t in ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
    {
        for rank in 1..=4 {
            for k in 0..3 {
                let Some((shape, permuted)) = random_permuted(&mut rng, rank) else {
                    continue;
                };
                let concat = concat_undoing(&permuted);
                let whole = random_tensor(&mut rng, t, &shape);
                let inputs = whole.split_permuted(&permuted).unwrap();
                check_concat(
                    gpu,
                    &inputs,
                    &concat,
                    k == 1,
                    &format!("{t} {shape:?} {:?}", permuted.moves()),
                );
                cases += 1;
            }
        }
    }
    assert!(cases >= 200, "{cases} cases");
}

#[test]
fn heads_merged_back() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(5);
    for (t, shapes) in [
        (ElementType::Float16, vec![vec![2, 4, 16, 8]; 3]),
        (
            ElementType::BFloat16,
            vec![vec![3, 4, 10, 4], vec![3, 1, 10, 4], vec![3, 1, 10, 4]],
        ),
        // Heads of 3 f16: runs of 6 bytes, ORed into shared words.
        (ElementType::Float16, vec![vec![2, 3, 5, 3]; 2]),
        (ElementType::Int4, vec![vec![1, 2, 7, 3]; 3]),
    ] {
        let merge = PermutedConcat::merge_heads(&shapes).unwrap();
        let inputs: Vec<HostTensor> = shapes
            .iter()
            .map(|s| random_tensor(&mut rng, t, s))
            .collect();
        check_concat(gpu, &inputs, &merge, false, &format!("{t} {shapes:?}"));
    }
}

#[test]
fn concat_misuse_is_refused_before_wgpu_sees_it() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let merge = PermutedConcat::merge_heads(&[[1, 2, 4, 4], [1, 2, 4, 4]]).unwrap();
    let plan =
        PermutedConcatPlan::new(&merge, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT).unwrap();
    let storage = wgpu::BufferUsages::STORAGE;
    let a = buffer(gpu, &[0; 128], storage);
    let out = buffer(gpu, &[0; 256], storage);
    let inputs = [BufferRegion::whole(&a), BufferRegion::whole(&a)];
    let e = refused(gpu, |encoder| {
        gpu.encode(encoder, &plan, &inputs[..1], BufferRegion::whole(&out))
            .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::RegionCount {
                expected: 2,
                actual: 1
            })
        ),
        "{e}"
    );
    let e = refused(gpu, |encoder| {
        gpu.encode(encoder, &plan, &inputs, BufferRegion::new(&out, 0, 200))
            .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::ConcatOutput,
                needed: 256,
                ..
            })
        ),
        "{e}"
    );
    // An input in the output's buffer whose binding (aligned down to 256)
    // overlaps the output's.
    let both = buffer(gpu, &[0; 512], storage);
    let e = refused(gpu, |encoder| {
        gpu.encode(
            encoder,
            &plan,
            &[BufferRegion::whole(&a), BufferRegion::new(&both, 264, 128)],
            BufferRegion::new(&both, 4, 256),
        )
        .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::InputSharesBuffer {
                which: BufferRole::ConcatInput(1),
                ..
            })
        ),
        "{e}"
    );
}

#[test]
fn moves_past_one_binding_run_in_windows() {
    use wgpu_split::error::PlanError;
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    // A 4 KiB binding: GPT-2-like heads of a 48 KiB f32 projection move in
    // windows (each head's rows cut so that a window holds their source),
    // in both lane orders, each output in its own buffer or all in one.
    let limits = common::tiny(4096, 65535);
    let qkv = PermutedSplit::split_heads(&[2, 64, 96], &[32; 3], 8).unwrap();
    let mut rng = Rng::new(4096);
    for t in [ElementType::Float, ElementType::Float16, ElementType::Uint8] {
        let input = random_tensor(&mut rng, t, &[2, 64, 96]);
        for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
            let plan = PermutedPlan::new(&qkv, t, &limits).unwrap().lanes(lanes);
            assert!(plan.is_windowed() == (plan.input_bytes() > 3840), "{t}");
            let size: u64 = (0..3).map(|i| plan.output_region_bytes(i) + 256).sum();
            let offsets: Vec<u64> = (0..3)
                .scan(4u64, |at, i| {
                    let here = *at;
                    *at += plan.output_region_bytes(i) + 256;
                    Some(here)
                })
                .collect();
            for packed in [None, Some((&offsets[..], size + 4))] {
                let context = format!("{t} {lanes:?} packed {}", packed.is_some());
                check_plan(gpu, &input, &plan, packed, &context);
            }
        }
    }
    // Random moves of every type, windows of 1 KiB.
    let small = common::tiny(1024, 65535);
    let mut windowed = 0;
    for t in ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
    {
        for rank in 2..=4 {
            let Some((shape, permuted)) = random_permuted_of(&mut rng, rank, 4) else {
                continue;
            };
            let input = random_tensor(&mut rng, t, &shape);
            match PermutedPlan::new(&permuted, t, &small) {
                Ok(plan) => {
                    windowed += usize::from(plan.is_windowed());
                    for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
                        let context = format!("{t} {shape:?} {:?} {lanes:?}", permuted.moves());
                        check_plan(gpu, &input, &plan.clone().lanes(lanes), None, &context);
                    }
                }
                // Only a view whose single rows overflow a window.
                Err(e) => assert!(matches!(e, PlanError::PermutedTooLarge { .. }), "{e}"),
            }
        }
    }
    assert!(windowed >= 10, "{windowed} windowed moves");
    // And back: the heads merged (a concat whose output is past one
    // binding), and random concats undoing random moves, each input in
    // its own buffer or in the output's.
    let merge = PermutedConcat::merge_heads(&qkv.output_shapes()).unwrap();
    for t in [ElementType::Float, ElementType::Float16, ElementType::Uint8] {
        let input = random_tensor(&mut rng, t, &[2, 64, 96]);
        let heads = input.split_permuted(&qkv).unwrap();
        let plan = PermutedConcatPlan::new(&merge, t, &limits).unwrap();
        assert!(
            plan.is_windowed() == (plan.output_region_bytes() > 3840),
            "{t}"
        );
        for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
            for shared in [false, true] {
                let context = format!("merge {t} {lanes:?} shared {shared}");
                check_concat_plan(gpu, &heads, &plan.clone().lanes(lanes), shared, &context);
            }
        }
    }
    let mut windowed = 0;
    for t in ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
    {
        for rank in 2..=4 {
            let Some((shape, permuted)) = random_permuted_of(&mut rng, rank, 4) else {
                continue;
            };
            let input = random_tensor(&mut rng, t, &shape);
            let pieces = input.split_permuted(&permuted).unwrap();
            let concat = common::concat_undoing(&permuted);
            match PermutedConcatPlan::new(&concat, t, &small) {
                Ok(plan) => {
                    windowed += usize::from(plan.is_windowed());
                    for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
                        let context = format!("concat {t} {shape:?} {lanes:?}");
                        check_concat_plan(
                            gpu,
                            &pieces,
                            &plan.clone().lanes(lanes),
                            false,
                            &context,
                        );
                    }
                }
                Err(e) => assert!(matches!(e, PlanError::PermutedTooLarge { .. }), "{e}"),
            }
        }
    }
    assert!(windowed >= 10, "{windowed} windowed concats");
    // Past the buffers themselves the split is refused too.
    let e = PermutedPlan::new(&qkv, ElementType::Float, &common::tiny(1 << 20, 65535))
        .map(|_| ())
        .and_then(|()| {
            let mut limits = common::tiny(4096, 65535);
            limits.max_buffer_size = 40 << 10;
            PermutedPlan::new(&qkv, ElementType::Float, &limits).map(|_| ())
        })
        .unwrap_err();
    assert!(
        matches!(
            e,
            PlanError::PermutedTooLarge {
                what: "input",
                bytes: 49152,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn prepared_moves_record_inside_the_callers_pass() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    let mut rng = Rng::new(21);
    let t = ElementType::Float16;
    let qkv = PermutedSplit::split_heads(&[2, 6, 3 * 2 * 4], &[8; 3], 4).unwrap();
    let x = random_tensor(&mut rng, t, &[2, 6, 24]);
    let heads = x.split_permuted(&qkv).unwrap();
    let plan = gpu.plan(&qkv, t).unwrap();
    let storage = wgpu::BufferUsages::STORAGE;
    let input = buffer(gpu, x.as_bytes().unwrap(), storage);
    let outs: Vec<wgpu::Buffer> = (0..3)
        .map(|i| {
            buffer(
                gpu,
                &vec![GUARD; plan.output_region_bytes(i) as usize],
                storage,
            )
        })
        .collect();
    let regions: Vec<BufferRegion<'_>> = outs.iter().map(BufferRegion::whole).collect();
    let split = gpu
        .prepare(&plan, BufferRegion::whole(&input), &regions)
        .unwrap();
    // And back: the heads merged into a tensor, a concat whose pieces are
    // elements of 16 bits in runs of 4 (words: no zeroing pass).
    let merge = PermutedConcat::merge_heads(&qkv.output_shapes()).unwrap();
    let cat_plan = gpu.plan(&merge, t).unwrap();
    let back = buffer(
        gpu,
        &vec![GUARD; cat_plan.output_region_bytes() as usize],
        storage,
    );
    let cat = gpu
        .prepare(&cat_plan, &regions, BufferRegion::whole(&back))
        .unwrap();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        split.record(&mut pass);
        cat.record(&mut pass);
    }
    gpu.queue().submit([encoder.finish()]);
    for (i, h) in heads.iter().enumerate() {
        assert_eq!(
            read_buffer(gpu, &outs[i]),
            h.as_bytes().unwrap(),
            "head {i}"
        );
    }
    assert_eq!(read_buffer(gpu, &back), x.as_bytes().unwrap());
    // Sub-word heads (int4, 3 a head): the zeroing dispatch comes first in
    // the caller's pass too.
    let shapes = [[1, 2, 7, 3]; 2];
    let merge = PermutedConcat::merge_heads(&shapes).unwrap();
    let cat_plan = gpu.plan(&merge, ElementType::Int4).unwrap();
    assert!(cat_plan.zeroes_output());
    let pieces: Vec<HostTensor> = shapes
        .iter()
        .map(|s| random_tensor(&mut rng, ElementType::Int4, s))
        .collect();
    let refs: Vec<&HostTensor> = pieces.iter().collect();
    let expected = HostTensor::concat_permuted(&refs, &merge).unwrap();
    let inputs: Vec<wgpu::Buffer> = pieces
        .iter()
        .map(|p| {
            let mut b = p.as_bytes().unwrap().to_vec();
            b.resize(b.len().next_multiple_of(4), GUARD);
            buffer(gpu, &b, storage)
        })
        .collect();
    let regions: Vec<BufferRegion<'_>> = (0..2)
        .map(|i| BufferRegion::new(&inputs[i], 0, cat_plan.input_bytes(i)))
        .collect();
    let out = buffer(
        gpu,
        &vec![GUARD; cat_plan.output_region_bytes() as usize],
        storage,
    );
    let cat = gpu
        .prepare(&cat_plan, &regions, BufferRegion::whole(&out))
        .unwrap();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        cat.record(&mut pass);
    }
    gpu.queue().submit([encoder.finish()]);
    let got = read_buffer(gpu, &out);
    let want = expected.as_bytes().unwrap();
    assert_eq!(&got[..want.len()], want);
    assert!(got[want.len()..].iter().all(|&b| b == 0));
}

/// A device that takes few workgroups a dimension: every permuted dispatch
/// laid out over many rows by the one grid every dispatch uses (tight: the
/// shaders skip the invocations past their work), splits and concats of
/// gathers and tiles exact.
#[test]
fn dispatches_over_many_rows_are_exact() {
    let Some(gpu) = gpu("dispatches_over_many_rows_are_exact") else {
        return;
    };
    let limits = PlanLimits {
        max_compute_workgroups_per_dimension: 3,
        ..*gpu.limits()
    };
    let mut rng = Rng::new(77);
    // Heads through the gather, and transposes of the fastest axis through
    // tiles, each of more than 3 workgroups (and at most 3 x 3, the most a
    // plan for these limits takes).
    // (Heads of 3 elements: runs of 3 words, moved a word an invocation.)
    let heads = PermutedSplit::split_heads(&[1, 64, 3 * 2 * 3], &[6; 3], 3).unwrap();
    let transpose = PermutedSplit::new(
        ResolvedSplit::new(&[48, 48], 1, vec![16, 32], true).unwrap(),
        vec![
            PieceMove::new(vec![48, 16], vec![1, 0]),
            PieceMove::new(vec![48, 32], vec![1, 0]),
        ],
    )
    .unwrap();
    for (name, split) in [("heads", &heads), ("tiles", &transpose)] {
        for t in [ElementType::Float, ElementType::Uint32] {
            let plan = PermutedPlan::new(split, t, &limits).unwrap();
            // What the encode lays out: more than one row, none past 3.
            let region = common::permuted_layouts::region;
            let outputs: Vec<_> = (0..split.output_count())
                .map(|i| region(1 + i, 1 << 20, 0, plan.output_region_bytes(i)))
                .collect();
            let recording = plan
                .recording(&region(0, 1 << 20, 0, plan.input_bytes()), &outputs)
                .unwrap();
            let grids: Vec<[u32; 3]> = recording
                .commands
                .iter()
                .filter_map(|c| match c {
                    wgpu_split::plan::internals::RecordedCommand::Dispatch {
                        workgroups, ..
                    } => Some(*workgroups),
                    _ => None,
                })
                .collect();
            assert!(grids.iter().any(|g| g[1] > 1), "{name}: {grids:?}");
            assert!(
                grids.iter().all(|g| g[0] <= 3 && g[1] <= 3),
                "{name}: {grids:?}"
            );
            let input = random_tensor(&mut rng, t, split.split().input_shape());
            check_plan(
                gpu,
                &input,
                &plan,
                None,
                &format!("{name} {t:?}, 3 workgroups a row"),
            );
            let concat = concat_undoing(split);
            let plan = PermutedConcatPlan::new(&concat, t, &limits).unwrap();
            let pieces = input.split_permuted(split).unwrap();
            check_concat_plan(
                gpu,
                &pieces,
                &plan,
                false,
                &format!("{name} {t:?} concat, 3 a row"),
            );
        }
    }
}

#[test]
fn a_gqa_projection_past_webgpus_binding_moves_at_full_size() {
    let Some(gpu) = gpu("permuted_gpu") else {
        return;
    };
    // Llama-3-8B's fused QKV ([S, 6,144] f16: 32 query heads, 8 key and 8
    // value heads of 128) at 11,000 tokens: 135 MB, past WebGPU's default
    // binding (128 MiB): split into heads and merged back in windows on
    // the device, under WebGPU's default limits.
    let limits = wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT;
    let shape = [1, 11_000, 6144];
    let qkv = PermutedSplit::split_heads(&shape, &[4096, 1024, 1024], 128).unwrap();
    let t = ElementType::Float16;
    let input = random_tensor(&mut Rng::new(8), t, &shape);
    let plan = PermutedPlan::new(&qkv, t, &limits).unwrap();
    assert!(plan.input_bytes() > limits.max_storage_buffer_binding_size && plan.is_windowed());
    check_plan(gpu, &input, &plan, None, "GQA QKV split");
    let heads = input.split_permuted(&qkv).unwrap();
    let merge = PermutedConcat::merge_heads(&qkv.output_shapes()).unwrap();
    let back = PermutedConcatPlan::new(&merge, t, &limits).unwrap();
    assert!(back.is_windowed());
    check_concat_plan(gpu, &heads, &back, false, "GQA heads merged");
}
