//! Encodes whose caller offsets move (a growing cache, a ring of page
//! slices) against encodes at fixed offsets: the same plan (for WebGPU's
//! default limits: bindings start on 256 bytes), the input in one page and
//! the three outputs in another, each region at an offset that is not a
//! multiple of the binding alignment and, for the moving kind, moved
//! independently at every encode (a pseudo-random multiple of 16 bytes).
//! Also prints the resident memory over 100,000 submitted encodes of each
//! kind and what the splitter caches.
//!
//! `cargo bench --bench moving_offsets`

use criterion::{Criterion, criterion_group, criterion_main};
use wgpu_split::gpu::{BufferRegion, CachePolicy, GpuContext, GpuSplitter, RoundTrip};
use wgpu_split::plan::{PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, OnnxSplit};

/// Bytes between regions in the page: room for any shift below it.
const SLOT_BYTES: u64 = 64 << 10;

fn resident_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1 << 20) as f64
}

/// Four shifts (input, three outputs) in [0, 4096), multiples of 16, from
/// a linear congruential sequence: the same sequence every run.
fn shifts(state: &mut u64) -> [u64; 4] {
    std::array::from_fn(|_| {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 40) % 256 * 16
    })
}

/// The input's page and the outputs' page.
type Pages = [wgpu::Buffer; 2];

/// Records the split with the input and outputs at `16 + shift` in their
/// slots of their pages.
fn encode(
    splitter: &GpuSplitter,
    plan: &SplitPlan,
    pages: &Pages,
    shift: [u64; 4],
) -> wgpu::CommandEncoder {
    let at = |slot: u64| 16 + slot * SLOT_BYTES + shift[slot as usize];
    let input = BufferRegion::new(&pages[0], at(0), plan.input_binding_bytes());
    let outputs: Vec<BufferRegion> = (1..4)
        .map(|slot| {
            BufferRegion::new(
                &pages[1],
                at(slot),
                plan.destination_bytes(slot as usize - 1),
            )
        })
        .collect();
    let mut encoder = splitter
        .device()
        .create_command_encoder(&Default::default());
    splitter
        .encode(&mut encoder, plan, input, &outputs)
        .unwrap();
    encoder
}

/// Resident memory over 100,000 submitted encodes at fixed or moving
/// offsets, after 20,000 that let wgpu's own pools reach their size.
fn resident_growth(splitter: &GpuSplitter, plan: &SplitPlan, pages: &Pages, moving: bool) {
    let mut state = 1;
    let fixed = shifts(&mut state);
    let mut before = resident_mib();
    for k in 0..120_000u64 {
        if k == 20_000 {
            before = resident_mib();
        }
        let shift = if moving { shifts(&mut state) } else { fixed };
        let encoder = encode(splitter, plan, pages, shift);
        splitter.queue().submit([encoder.finish()]);
        if k % 1000 == 999 {
            splitter
                .device()
                .poll(wgpu::PollType::wait_indefinitely())
                .unwrap();
        }
    }
    let after = resident_mib();
    println!(
        "{} offsets, 100,000 encodes: resident {before:.1} -> {after:.1} MiB ({:+.1} MiB); cached table bytes {}",
        if moving { "moving" } else { "fixed" },
        after - before,
        splitter.cache().usage().table_bytes
    );
}

fn bench(c: &mut Criterion) {
    let ctx =
        GpuContext::new_default().expect("a GPU adapter (apt-get install -y mesa-vulkan-drivers)");
    // The QKV split of f16 [4, 64, 96] into three: one dispatch.
    let split = OnnxSplit::new(18, 3)
        .axis(-1)
        .num_outputs(3)
        .resolve(&[4, 64, 96])
        .unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = SplitPlan::new(
        &split,
        ElementType::Float16,
        &PlanLimits::WEBGPU_DEFAULT,
        &gather,
    )
    .unwrap();
    for (name, policy) in [
        ("cache_default", CachePolicy::default()),
        ("cache_none", CachePolicy::default().table_bytes(0)),
    ] {
        let splitter = ctx.splitter().unwrap().with_cache_policy(policy);
        let page = || {
            RoundTrip::new(&splitter)
                .create_input(&vec![0u8; (4 * SLOT_BYTES) as usize])
                .unwrap()
        };
        let pages: Pages = [page(), page()];
        let mut group = c.benchmark_group(format!("encode_{name}"));
        let mut state = 1;
        let fixed = shifts(&mut state);
        group.bench_function("fixed_offsets", |b| {
            b.iter(|| drop(encode(&splitter, &plan, &pages, fixed)))
        });
        group.bench_function("moving_offsets", |b| {
            b.iter(|| drop(encode(&splitter, &plan, &pages, shifts(&mut state))))
        });
        group.finish();
        println!("{name}:");
        resident_growth(&splitter, &plan, &pages, false);
        resident_growth(&splitter, &plan, &pages, true);
        let before = resident_mib();
        splitter.cache().clear();
        splitter
            .device()
            .poll(wgpu::PollType::wait_indefinitely())
            .unwrap();
        println!(
            "cache cleared: resident {before:.1} -> {:.1} MiB; {:?}",
            resident_mib(),
            splitter.cache().usage()
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
