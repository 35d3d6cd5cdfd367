//! `lanes_bench`: each generated kernel with its blocked lanes (each
//! invocation a stretch of its own, what lavapipe runs fastest) against its
//! striped lanes (consecutive invocations on consecutive units, what a GPU
//! should run fastest), timed on the adapter at hand.
//!
//! ```text
//! cargo run --release --example lanes_bench -- [--quick] [--runs N]
//! ```
//!
//! For every split_bench case and every generated kernel that moves it
//! (forced, for a compute pass, into buffers of their own, with the
//! adapter's limits and its class model's kernel ranks), both lane orders
//! are planned, checked byte for byte against the host path, then timed in
//! alternating rounds (timestamp queries where the adapter has them);
//! the table gives each order's median GB/s (bytes read + written) and the
//! median of the per-round ratios striped / blocked. On lavapipe blocked
//! wins; the first thing a GPU should confirm is that striped does
//! (`docs/DEVICE.md`, "What to measure on a GPU").

#[path = "split_bench/cases.rs"]
#[allow(dead_code)]
mod cases;
#[path = "split_bench/gpu_timer.rs"]
mod gpu_timer;
#[path = "access_trace/measure.rs"]
#[allow(dead_code)]
mod measure;

use gpu_timer::GpuTimer;
use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter, PreparedSplit, RoundTrip};
use wgpu_split::plan::{Kernel, LaneOrder, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit, host};

type Failure = Box<dyn std::error::Error>;

fn main() -> Result<(), Failure> {
    let mut quick = false;
    let mut runs = 15;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--runs" => runs = args.next().ok_or("--runs needs a value")?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let ctx = GpuContext::new_default()?;
    let splitter = ctx.splitter()?;
    let timer = GpuTimer::new(&ctx.device, &ctx.queue);
    println!("adapter: {}", ctx.describe());
    println!(
        "timing: {}, median of {runs} alternating rounds",
        timer.kind()
    );
    println!(
        "{:<28} {:<12} {:>12} {:>12} {:>16}",
        "case", "kernel", "blocked GB/s", "striped GB/s", "striped/blocked"
    );
    for case in cases::suite(quick) {
        let split = case.op.resolve(&case.shape)?;
        for kernel in Kernel::ALL.into_iter().filter(|k| k.is_generated()) {
            let [Some(blocked), Some(striped)] = [LaneOrder::Blocked, LaneOrder::Striped]
                .map(|lanes| plan_of(&splitter, &split, case.element_type, kernel, lanes))
            else {
                continue;
            };
            let row = time_pair(
                &splitter,
                &timer,
                &split,
                case.element_type,
                [&blocked, &striped],
                runs,
            )?;
            println!(
                "{:<28} {:<12} {:>12.2} {:>12.2} {:>16.2}",
                case.name,
                kernel.name(),
                row[0],
                row[1],
                row[2]
            );
        }
    }
    Ok(())
}

/// `kernel` forced with `lanes`, for a compute pass, the adapter's model
/// ranking otherwise; `None` where it does not move the split.
fn plan_of(
    splitter: &GpuSplitter,
    split: &ResolvedSplit,
    t: ElementType,
    kernel: Kernel,
    lanes: LaneOrder,
) -> Option<SplitPlan> {
    let Strategy::Auto(model) = *splitter.strategy() else {
        return None;
    };
    let model = wgpu_split::plan::CostModel { lanes, ..model };
    let options = PlanOptions::default()
        .strategy(Strategy::Auto(model))
        .in_compute_pass()
        .kernel(kernel);
    splitter.plan_with(split, t, &options).ok()
}

/// What a timed run records into the encoder.
type Record<'a> = Box<dyn Fn(&mut wgpu::CommandEncoder) + 'a>;

/// One prepared plan and the buffers it binds.
struct Prepared {
    prepared: PreparedSplit,
    _buffers: (wgpu::Buffer, Vec<wgpu::Buffer>),
}

/// Median GB/s of each plan and the median per-round ratio of the second
/// to the first, each checked against the host path first.
fn time_pair(
    splitter: &GpuSplitter,
    timer: &GpuTimer,
    split: &ResolvedSplit,
    t: ElementType,
    plans: [&SplitPlan; 2],
    runs: usize,
) -> Result<[f64; 3], Failure> {
    let input = measure::random_tensor(split, t)?;
    let expected = host::split(&input, split)?;
    let moved: u64 = expected
        .iter()
        .map(|e| e.as_bytes().map_or(0, |b| b.len() as u64))
        .sum::<u64>()
        .max(input.as_bytes()?.len() as u64);
    let mut prepared = Vec::new();
    for plan in plans {
        let actual = RoundTrip::new(splitter).run_plan(plan, &input)?;
        if actual != expected {
            return Err(
                format!("{:?}: an output differs from the host path", plan.kernel()).into(),
            );
        }
        let round_trip = RoundTrip::new(splitter);
        let input_buffer = round_trip.create_input(input.as_bytes()?)?;
        let outputs = round_trip.create_destinations(plan)?;
        let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
        let p = splitter.prepare(plan, BufferRegion::whole(&input_buffer), &regions)?;
        prepared.push(Prepared {
            prepared: p,
            _buffers: (input_buffer, outputs),
        });
    }
    let records: Vec<Record<'_>> = prepared
        .iter()
        .map(|p| {
            Box::new(move |encoder: &mut wgpu::CommandEncoder| {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                p.prepared.record(&mut pass);
            }) as Record<'_>
        })
        .collect();
    for record in &records {
        timer.warm_up(record);
    }
    let (mut seconds, mut ratios) = ([Vec::new(), Vec::new()], Vec::new());
    for round in 0..runs {
        // Alternate which runs first, so that neither always follows the other.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut times = [0.0; 2];
        for i in order {
            times[i] = timer.once(&records[i]).0;
        }
        seconds[0].push(times[0]);
        seconds[1].push(times[1]);
        ratios.push(times[0] / times[1]);
    }
    let gbs = |s: &Vec<f64>| 2.0 * moved as f64 / median(s.clone()) / 1e9;
    Ok([gbs(&seconds[0]), gbs(&seconds[1]), median(ratios)])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
