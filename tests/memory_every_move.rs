//! The contract's memory clauses for every move alike: 10,000 encodes of
//! distinct shapes through one splitter (2,500 each of a split, a concat,
//! a permuted split and a permuted concat, each planned fresh) keep
//! resident memory flat (the caches full, the last 6,000 encodes grow it
//! by less than 8 MiB), the cached tables within `CachePolicy::table_bytes`
//! and the generated pipelines within `CachePolicy::generated_pipelines`; the last of each move is exact.
//! Alone in its test binary, so that resident memory is this test's.

mod common;

use common::{Rng, gpu, random_tensor, read_buffer, resident_bytes, wait_idle};
use wgpu_split::gpu::{BufferRegion, CachePolicy, GpuSplitter};
use wgpu_split::{
    ElementType, HostTensor, PermutedConcat, PermutedSplit, ResolvedConcat, ResolvedSplit,
};

const PER_MOVE: usize = 2_500;
/// Shapes of each move after which resident memory is measured.
const WARM: usize = 1_000;
/// The cache's bound on tables.
const TABLES: u64 = 2 << 20;
/// Encodes recorded into one command encoder before it is submitted.
const BATCH: usize = 50;
/// Where regions start in the buffers: a multiple of every device's
/// storage offset alignment.
const STEP: u64 = 256;
/// Bytes of each side's buffer: every move's regions fit.
const SIDE: u64 = 1 << 20;

/// The four moves of shape `k` (each of the 2,500 distinct).
fn shapes(k: usize) -> (usize, usize) {
    (1 + k % 50, 1 + k / 50)
}

/// Regions of `sizes` bytes laid at `STEP`s in `buffer`.
fn regions<'a>(buffer: &'a wgpu::Buffer, sizes: &[u64]) -> Vec<BufferRegion<'a>> {
    let mut at = 0;
    sizes
        .iter()
        .map(|&size| {
            let region = BufferRegion::new(buffer, at, size);
            at = (at + size).next_multiple_of(STEP);
            assert!(at <= SIDE);
            region
        })
        .collect()
}

fn side(gpu: &GpuSplitter) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: SIDE,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Encodes move `which` of shape `k`, reading `source` and writing
/// `target`; with `check`, uploads a random input first, submits and
/// compares every output byte with the host path.
fn encode_one(
    gpu: &GpuSplitter,
    encoder: &mut wgpu::CommandEncoder,
    which: usize,
    k: usize,
    (source, target): (&wgpu::Buffer, &wgpu::Buffer),
    check: Option<&mut Rng>,
) {
    let (rows, width) = shapes(k);
    let t = [ElementType::Float, ElementType::Uint8, ElementType::Float16][k % 3];
    let upload = |rng: Option<&mut Rng>, shapes: &[Vec<usize>], sizes: &[u64]| {
        let rng = rng?;
        let tensors: Vec<HostTensor> = shapes.iter().map(|s| random_tensor(rng, t, s)).collect();
        for (tensor, r) in tensors.iter().zip(regions(source, sizes)) {
            let mut bytes = tensor.as_bytes().unwrap().to_vec();
            bytes.resize(bytes.len().next_multiple_of(4), 0);
            gpu.queue().write_buffer(source, r.offset, &bytes);
        }
        Some(tensors)
    };
    let wanted: Option<(Vec<HostTensor>, Vec<u64>)> = match which {
        0 => {
            let split =
                ResolvedSplit::new(&[rows, 3 * width], 1, vec![width, 2 * width], true).unwrap();
            let plan = gpu.plan(&split, t).unwrap();
            let input = [plan.input_shape().to_vec()];
            let bytes = [plan.requirements().input_bytes];
            let outputs: Vec<u64> = (0..2).map(|i| plan.destination_bytes(i)).collect();
            let tensors = upload(check, &input, &bytes);
            let input = regions(source, &bytes)[0];
            gpu.encode(encoder, &plan, input, &regions(target, &outputs))
                .unwrap();
            tensors.map(|t| (t[0].split(&split).unwrap(), outputs))
        }
        1 => {
            let shapes = [vec![rows, width], vec![rows, 2 * width]];
            let concat = ResolvedConcat::new(&shapes, 1).unwrap();
            let plan = gpu.plan(&concat, t).unwrap();
            let needs = plan.requirements();
            let inputs: Vec<u64> = needs.inputs.iter().map(|n| n.bytes).collect();
            let tensors = upload(check, &shapes, &inputs);
            let output = [needs.output_region_bytes];
            let out = regions(target, &output)[0];
            gpu.encode(encoder, &plan, &regions(source, &inputs), out)
                .unwrap();
            tensors.map(|t| {
                let refs: Vec<&HostTensor> = t.iter().collect();
                (
                    vec![HostTensor::concat(&refs, &concat).unwrap()],
                    output.to_vec(),
                )
            })
        }
        2 => {
            let head = 2 * width;
            let split =
                PermutedSplit::split_heads(&[1, rows, 6 * head], &[2 * head; 3], head).unwrap();
            let plan = gpu.plan(&split, t).unwrap();
            let input = [split.split().input_shape().to_vec()];
            let bytes = [plan.input_bytes()];
            let outputs: Vec<u64> = (0..3).map(|i| plan.output_region_bytes(i)).collect();
            let tensors = upload(check, &input, &bytes);
            let input = regions(source, &bytes)[0];
            gpu.encode(encoder, &plan, input, &regions(target, &outputs))
                .unwrap();
            tensors.map(|t| (t[0].split_permuted(&split).unwrap(), outputs))
        }
        _ => {
            let shapes = [vec![1, 2, rows, width], vec![1, 1, rows, width]];
            let merge = PermutedConcat::merge_heads(&shapes).unwrap();
            let plan = gpu.plan(&merge, t).unwrap();
            let inputs: Vec<u64> = (0..2).map(|i| plan.input_bytes(i)).collect();
            let tensors = upload(check, &shapes, &inputs);
            let output = [plan.output_region_bytes()];
            let out = regions(target, &output)[0];
            gpu.encode(encoder, &plan, &regions(source, &inputs), out)
                .unwrap();
            tensors.map(|t| {
                let refs: Vec<&HostTensor> = t.iter().collect();
                (
                    vec![HostTensor::concat_permuted(&refs, &merge).unwrap()],
                    output.to_vec(),
                )
            })
        }
    };
    let Some((want, sizes)) = wanted else {
        return;
    };
    let finished = std::mem::replace(
        encoder,
        gpu.device().create_command_encoder(&Default::default()),
    );
    gpu.queue().submit([finished.finish()]);
    let got = read_buffer(gpu, target);
    for ((w, r), i) in want.iter().zip(regions(target, &sizes)).zip(0..) {
        let w = w.as_bytes().unwrap();
        let at = r.offset as usize;
        assert_eq!(
            &got[at..at + w.len()],
            w,
            "move {which}, shape {k}, output {i}"
        );
    }
}

#[test]
fn memory_stays_flat_over_10000_encodes_of_distinct_shapes_of_every_move() {
    let Some(gpu) = gpu("memory_stays_flat_over_10000_encodes_of_distinct_shapes_of_every_move")
    else {
        return;
    };
    let kept = CachePolicy::default().generated_pipelines as usize;
    // Tables of 2 MiB at most: the cache is full within the first tenth.
    let policy = CachePolicy::default().table_bytes(TABLES);
    let splitter = GpuSplitter::new(gpu.device(), gpu.queue())
        .unwrap()
        .with_cache_policy(policy);
    let (source, target) = (side(&splitter), side(&splitter));
    let mut rng = Rng::new(10_000);
    let mut encoder = splitter
        .device()
        .create_command_encoder(&Default::default());
    let mut start = 0;
    for k in 0..PER_MOVE {
        for which in 0..4 {
            let check = (k == PER_MOVE - 1).then_some(&mut rng);
            encode_one(&splitter, &mut encoder, which, k, (&source, &target), check);
        }
        assert!(
            splitter.cache().usage().generated_pipelines <= kept,
            "shape {k}"
        );
        if k % BATCH == BATCH - 1 {
            let finished = std::mem::replace(
                &mut encoder,
                splitter
                    .device()
                    .create_command_encoder(&Default::default()),
            );
            splitter.queue().submit([finished.finish()]);
            wait_idle(&splitter);
        }
        // Past the first 1,000 shapes: every cache at its bound, the
        // allocator warm.
        if k == WARM {
            assert!(splitter.cache().usage().table_bytes > TABLES / 2);
            start = resident_bytes();
        }
    }
    let grown = resident_bytes().saturating_sub(start);
    let usage = splitter.cache().usage();
    println!(
        "{} encodes of distinct shapes after the first {}: resident memory grew {} KiB; \
         cache {usage:?}",
        4 * (PER_MOVE - WARM),
        4 * WARM,
        grown >> 10
    );
    assert!(usage.table_bytes <= TABLES);
    assert!(grown < 8 << 20, "resident memory grew {} MiB", grown >> 20);
}
