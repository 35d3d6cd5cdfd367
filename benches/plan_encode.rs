//! Host-side cost of a split: resolve + plan, and encode with compiled
//! pipelines, for 2, 16 and 1000 outputs, each into a buffer of its own.
//! Target: under 10 µs for 16 outputs. And the encode of a permuted split
//! (attention's QKV heads) beside a split of the same bytes into the same
//! outputs: target within 1.5x of it.
//!
//! `cargo bench --bench plan_encode`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter, RoundTrip};
use wgpu_split::plan::{PlanOptions, Strategy};
use wgpu_split::{ElementType, OnnxSplit, Operator, PermutedSplit, ResolvedSplit};

fn bench(c: &mut Criterion) {
    let ctx =
        GpuContext::new_default().expect("a GPU adapter (apt-get install -y mesa-vulkan-drivers)");
    let splitter = ctx.splitter().unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let mut group = c.benchmark_group("host_cost");
    for outputs in [2usize, 16, 1000] {
        // f16 [64, outputs * 6] split on the last axis into equal parts:
        // gather dispatches only.
        let shape = [64, outputs * 6];
        let op: Operator = OnnxSplit::new(18, outputs)
            .axis(1)
            .num_outputs(outputs as i64)
            .into();
        let plan_of = |split: &wgpu_split::ResolvedSplit| {
            splitter
                .plan_with(split, ElementType::Float16, &gather)
                .unwrap()
        };
        group.bench_with_input(
            BenchmarkId::new("resolve_and_plan", outputs),
            &outputs,
            |b, _| b.iter(|| plan_of(&op.resolve(&shape).unwrap())),
        );
        let plan = plan_of(&op.resolve(&shape).unwrap());
        let buffers = RoundTrip::new(&splitter);
        let input = buffers
            .create_input(&vec![0u8; plan.input_binding_bytes() as usize])
            .unwrap();
        let buffers = buffers.create_destinations(&plan).unwrap();
        let regions: Vec<BufferRegion> = buffers.iter().map(BufferRegion::whole).collect();
        let encode = |plan: &wgpu_split::plan::SplitPlan| {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            splitter
                .encode(&mut encoder, plan, BufferRegion::whole(&input), &regions)
                .unwrap();
            encoder
        };
        group.bench_with_input(BenchmarkId::new("encode", outputs), &outputs, |b, _| {
            b.iter(|| encode(&plan))
        });
        group.bench_with_input(
            BenchmarkId::new("resolve_plan_encode", outputs),
            &outputs,
            |b, _| b.iter(|| encode(&plan_of(&op.resolve(&shape).unwrap()))),
        );
    }
    group.finish();
    permuted_beside_split(c, &ctx, &splitter);
}

/// f16 [1, 128, 3 * 8 * 64] into Q, K and V: a split on the last axis, and
/// the same split with each piece's heads moved ahead of the sequence.
fn permuted_beside_split(c: &mut Criterion, ctx: &GpuContext, splitter: &GpuSplitter) {
    let t = ElementType::Float16;
    let shape = [1, 128, 3 * 8 * 64];
    let split = ResolvedSplit::new(&shape, 2, vec![8 * 64; 3], true).unwrap();
    let heads = PermutedSplit::split_heads(&shape, &[8 * 64; 3], 64).unwrap();
    let plain = splitter.plan(&split, t).unwrap();
    let permuted = splitter.plan(&heads, t).unwrap();
    let buffers = RoundTrip::new(splitter);
    let input = buffers
        .create_input(&vec![0u8; plain.input_binding_bytes() as usize])
        .unwrap();
    let outputs = buffers.create_destinations(&plain).unwrap();
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    let mut group = c.benchmark_group("encode_qkv");
    group.bench_function("split", |b| {
        b.iter(|| {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            splitter
                .encode(&mut encoder, &plain, BufferRegion::whole(&input), &regions)
                .unwrap();
            encoder
        })
    });
    group.bench_function("permuted_split", |b| {
        b.iter(|| {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            splitter
                .encode(
                    &mut encoder,
                    &permuted,
                    BufferRegion::whole(&input),
                    &regions,
                )
                .unwrap();
            encoder
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
