//! Host-side cost of a split: resolve + plan, and encode with a cached
//! pipeline, for 2, 16 and 1000 outputs. Target: under 10 µs for 16 outputs.
//!
//! `cargo bench --bench plan_encode`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wgpu_split::gpu::{BufferRegion, GpuContext};
use wgpu_split::plan::{SplitPlan, Strategy};
use wgpu_split::{ElementType, OnnxSplit, Operator};

fn bench(c: &mut Criterion) {
    let ctx =
        GpuContext::new_default().expect("a GPU adapter (apt-get install -y mesa-vulkan-drivers)");
    let splitter = ctx.splitter().unwrap();
    let mut group = c.benchmark_group("host_cost");
    for outputs in [2usize, 16, 1000] {
        // f16 [64, outputs * 6] split on the last axis into equal parts: one
        // gather dispatch.
        let shape = [64, outputs * 6];
        let op: Operator = OnnxSplit::new(18, outputs)
            .axis(1)
            .num_outputs(outputs as i64)
            .into();
        group.bench_with_input(
            BenchmarkId::new("resolve_and_plan", outputs),
            &outputs,
            |b, _| {
                b.iter(|| {
                    let split = op.resolve(&shape).unwrap();
                    splitter.plan(&split, ElementType::Float16).unwrap()
                })
            },
        );
        let split = op.resolve(&shape).unwrap();
        let plan = SplitPlan::with_strategy(
            &split,
            ElementType::Float16,
            splitter.plan_limits(),
            &Strategy::Gather,
        )
        .unwrap();
        let input = splitter
            .create_input(&vec![0u8; plan.input_binding_bytes() as usize])
            .unwrap();
        let arena = splitter.create_arena(&plan).unwrap();
        group.bench_with_input(BenchmarkId::new("encode", outputs), &outputs, |b, _| {
            b.iter(|| {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                splitter
                    .encode(
                        &mut encoder,
                        &plan,
                        BufferRegion::whole(&input),
                        BufferRegion::whole(&arena),
                    )
                    .unwrap();
                encoder
            })
        });
        group.bench_with_input(
            BenchmarkId::new("resolve_plan_encode", outputs),
            &outputs,
            |b, _| {
                b.iter(|| {
                    let split = op.resolve(&shape).unwrap();
                    let plan = splitter.plan(&split, ElementType::Float16).unwrap();
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    splitter
                        .encode(
                            &mut encoder,
                            &plan,
                            BufferRegion::whole(&input),
                            BufferRegion::whole(&arena),
                        )
                        .unwrap();
                    encoder
                })
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
