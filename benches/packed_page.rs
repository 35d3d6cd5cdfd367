//! One encode of 100,000 outputs packed 16 bytes apart in one page, planned
//! for WebGPU's default limits (256-byte binding alignment, 7 destinations
//! a dispatch), as a runtime's pool packs them: every output's binding
//! overlaps its neighbours'. Prints what the plan announces and what an
//! encode records (dispatches, table bytes), then times one encode (checks,
//! table, bind groups and recording) and one encode submitted and waited
//! for.
//!
//! - u8 [100,000] SplitToSequence: the words kernel, whose entries are
//!   regrouped into the planned 14,286 dispatches. (Before issue 33 each
//!   pass was split: 89,286 dispatches and a 53 MB table built and uploaded
//!   per encode, 1.7-2.2 s an encode and 9-11 s on lavapipe to run.)
//! - f32 [100,000, 4]: one vec4 row per output, row copies in groups of 7
//!   whose passes are split (a generated module cannot take other groups'
//!   entries).
//!
//! `cargo bench --bench packed_page`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter, RoundTrip};
use wgpu_split::plan::{PlanLimits, PlanOptions, SplitPlan};
use wgpu_split::{ElementType, OnnxSplitToSequence};

/// Regions 16 bytes apart in one page for every destination of `plan`.
fn packed<'a>(plan: &SplitPlan, page: &'a wgpu::Buffer) -> Vec<BufferRegion<'a>> {
    let mut end = 0;
    (0..plan.destination_count())
        .map(|i| {
            let start = u64::next_multiple_of(end, 16);
            end = start + plan.destination_bytes(i);
            BufferRegion::new(page, start, plan.destination_bytes(i))
        })
        .collect()
}

fn page_bytes(plan: &SplitPlan) -> u64 {
    (0..plan.destination_count())
        .map(|i| plan.destination_bytes(i).next_multiple_of(16))
        .sum::<u64>()
        .max(16)
}

fn bench(c: &mut Criterion) {
    let ctx =
        GpuContext::new_default().expect("a GPU adapter (apt-get install -y mesa-vulkan-drivers)");
    let splitter = GpuSplitter::new(&ctx.device, &ctx.queue).unwrap();
    let mut group = c.benchmark_group("packed_page");
    for (name, shape, t) in [
        ("words_u8_100000", vec![100_000], ElementType::Uint8),
        (
            "row_copies_f32_100000x4",
            vec![100_000, 4],
            ElementType::Float,
        ),
    ] {
        let split = OnnxSplitToSequence::new(11).resolve(&shape).unwrap();
        let plan = SplitPlan::new(
            &split,
            t,
            &PlanLimits::WEBGPU_DEFAULT,
            &PlanOptions::default(),
        )
        .unwrap();
        let input = RoundTrip::new(&splitter)
            .create_input(&vec![7u8; plan.input_bytes() as usize])
            .unwrap();
        let page = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("packed page"),
            size: page_bytes(&plan),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let regions = packed(&plan, &page);
        let source = BufferRegion::whole(&input);
        let figures = splitter.counts(&plan, source, &regions).unwrap();
        println!(
            "{name}: {} kernel; the plan announces {} dispatches and a {}-byte table, \
             an encode records {} dispatches and a {}-byte table",
            plan.runs(),
            plan.dispatch_count(),
            plan.table().len(),
            figures.dispatches,
            figures.table_bytes
        );
        let encode = || {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            splitter
                .encode(&mut encoder, &plan, source, &regions)
                .unwrap();
            encoder
        };
        group.bench_function(BenchmarkId::new("encode", name), |b| b.iter(encode));
        group.bench_function(BenchmarkId::new("encode_submit_wait", name), |b| {
            b.iter(|| {
                ctx.queue.submit([encode().finish()]);
                ctx.device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .unwrap();
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(10).measurement_time(std::time::Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
