//! `lanes_bench`: each generated kernel with its blocked lanes (each
//! invocation a stretch of its own, what lavapipe runs fastest) against its
//! striped lanes (consecutive invocations on consecutive units, what a GPU
//! should run fastest), timed on the adapter at hand.
//!
//! ```text
//! cargo run --release --example lanes_bench -- [--quick] [--runs N] [--json PATH]
//! ```
//!
//! For every split_bench case and every generated kernel that moves it
//! (forced, for a compute pass, into buffers of their own, with the
//! adapter's limits and its class model's kernel ranks), and for every
//! concat case and every generated kernel that moves concats only (the
//! concat-words kernel), both lane orders
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
use wgpu_split::plan::{ConcatPlan, Kernel, LaneOrder, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, HostTensor, ResolvedConcat, ResolvedSplit};

type Failure = Box<dyn std::error::Error>;

fn main() -> Result<(), Failure> {
    let mut quick = false;
    let mut runs = 15;
    let mut json: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--runs" => runs = args.next().ok_or("--runs needs a value")?.parse()?,
            "--json" => json = Some(args.next().ok_or("--json needs a path")?),
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
    let mut rows = Vec::new();
    // `same`: the kernel lays lanes one way whatever the order asked for
    // (both plans are one plan; the ratio is the timer's noise).
    let mut row = |case: &str, kernel: Kernel, r: [f64; 3], same: bool| {
        let note = if same {
            "  (one lane order: the same plan)"
        } else {
            ""
        };
        println!(
            "{:<28} {:<12} {:>12.2} {:>12.2} {:>16.2}{note}",
            case,
            kernel.name(),
            r[0],
            r[1],
            r[2]
        );
        rows.push(serde_json::json!({
            "case": case, "kernel": kernel.name(), "blocked_gbps": r[0],
            "striped_gbps": r[1], "striped_over_blocked": r[2], "same_plan": same,
        }));
    };
    let generated = || Kernel::ALL.into_iter().filter(|k| k.is_generated());
    for case in cases::suite(quick) {
        let split = case.op.resolve(&case.shape)?;
        for kernel in generated() {
            let [Some(blocked), Some(striped)] = [LaneOrder::Blocked, LaneOrder::Striped]
                .map(|lanes| plan_of(&splitter, &split, case.element_type, kernel, lanes))
            else {
                continue;
            };
            let pair = split_pair(&splitter, &split, case.element_type, [&blocked, &striped])?;
            row(
                case.name,
                kernel,
                time_pair(&timer, &pair, runs),
                blocked == striped,
            );
        }
    }
    for case in cases::concat_suite(quick) {
        let Some(concat) = case.concat()? else {
            continue;
        };
        for kernel in generated().filter(|k| k.moves_concats() && !k.moves_splits()) {
            let [Some(blocked), Some(striped)] = [LaneOrder::Blocked, LaneOrder::Striped]
                .map(|lanes| concat_plan_of(&splitter, &concat, case.element_type, kernel, lanes))
            else {
                continue;
            };
            let pair = concat_pair(&splitter, &concat, case.element_type, [&blocked, &striped])?;
            row(
                case.name,
                kernel,
                time_pair(&timer, &pair, runs),
                blocked == striped,
            );
        }
    }
    if let Some(path) = json {
        let doc = serde_json::json!({ "adapter": ctx.describe(), "runs": runs, "quick": quick, "rows": rows });
        std::fs::write(&path, serde_json::to_string_pretty(&doc)?)?;
        println!("wrote {path}");
    }
    Ok(())
}

/// The options that force `kernel`'s per-layout form with `lanes`, for a compute pass, the
/// adapter's model ranking otherwise; `None` where the splitter's strategy
/// carries no model.
fn forced(splitter: &GpuSplitter, kernel: Kernel, lanes: LaneOrder) -> Option<PlanOptions> {
    let Strategy::Auto(model) = *splitter.strategy() else {
        return None;
    };
    let model = wgpu_split::plan::CostModel { lanes, ..model };
    Some(
        PlanOptions::default()
            .strategy(Strategy::Auto(model))
            .in_compute_pass()
            .kernel(kernel)
            .form(wgpu_split::plan::Form::PerLayout),
    )
}

/// `split` with `kernel` forced with `lanes`; `None` where it does not move it.
fn plan_of(
    splitter: &GpuSplitter,
    split: &ResolvedSplit,
    t: ElementType,
    kernel: Kernel,
    lanes: LaneOrder,
) -> Option<SplitPlan> {
    splitter
        .plan_with(split, t, &forced(splitter, kernel, lanes)?)
        .ok()
}

/// `concat` with `kernel` forced with `lanes`; `None` where it does not move it.
fn concat_plan_of(
    splitter: &GpuSplitter,
    concat: &ResolvedConcat,
    t: ElementType,
    kernel: Kernel,
    lanes: LaneOrder,
) -> Option<ConcatPlan> {
    splitter
        .plan_with(concat, t, &forced(splitter, kernel, lanes)?)
        .ok()
}

/// What a timed run records into the encoder.
type Record<'a> = Box<dyn Fn(&mut wgpu::CommandEncoder) + 'a>;

/// One prepared plan and the buffers it binds.
struct Prepared {
    prepared: PreparedSplit,
    _buffers: (wgpu::Buffer, Vec<wgpu::Buffer>),
}

/// Two plans of one move, prepared on buffers of their own, and the bytes
/// it moves.
struct Pair {
    prepared: Vec<Prepared>,
    moved: u64,
}

/// Each split plan checked against the host path, then prepared.
fn split_pair(
    splitter: &GpuSplitter,
    split: &ResolvedSplit,
    t: ElementType,
    plans: [&SplitPlan; 2],
) -> Result<Pair, Failure> {
    let input = measure::random_tensor(split, t)?;
    let expected = input.split(split)?;
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
    Ok(Pair {
        prepared,
        moved: moved_bytes(&input, &expected),
    })
}

/// Each concat plan checked against the host path, then prepared.
fn concat_pair(
    splitter: &GpuSplitter,
    concat: &ResolvedConcat,
    t: ElementType,
    plans: [&ConcatPlan; 2],
) -> Result<Pair, Failure> {
    let joined = measure::random_tensor(concat.mirror(), t)?;
    let inputs = joined.split(concat.mirror())?;
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let expected = HostTensor::concat(&refs, concat)?;
    let mut prepared = Vec::new();
    for plan in plans {
        let actual = RoundTrip::new(splitter).run_plan(plan, &refs)?;
        if actual != expected {
            return Err(
                format!("{:?}: the output differs from the host path", plan.kernel()).into(),
            );
        }
        let round_trip = RoundTrip::new(splitter);
        let buffers = (inputs.iter())
            .map(|i| round_trip.create_input(i.as_bytes()?))
            .collect::<Result<Vec<_>, _>>()?;
        let output =
            round_trip.create_input(&vec![0; plan.requirements().output_region_bytes as usize])?;
        let regions: Vec<BufferRegion> = buffers.iter().map(BufferRegion::whole).collect();
        let p = splitter.prepare(plan, &regions, BufferRegion::whole(&output))?;
        prepared.push(Prepared {
            prepared: p,
            _buffers: (output, buffers),
        });
    }
    Ok(Pair {
        prepared,
        moved: moved_bytes(&expected, &inputs),
    })
}

/// The bytes a move between `whole` and its `parts` counts (the larger side).
fn moved_bytes(whole: &HostTensor, parts: &[HostTensor]) -> u64 {
    let bytes = |t: &HostTensor| t.as_bytes().map_or(0, |b| b.len() as u64);
    parts.iter().map(bytes).sum::<u64>().max(bytes(whole))
}

/// Median GB/s of each prepared plan and the median per-round ratio of the
/// second to the first, timed in alternating rounds.
fn time_pair(timer: &GpuTimer, pair: &Pair, runs: usize) -> [f64; 3] {
    let records: Vec<Record<'_>> = pair
        .prepared
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
    // The device at its working clocks before the rounds (see
    // `GpuTimer::hold_clocks`).
    timer.hold_clocks(&records[0], 0.1);
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
    let gbs = |s: &Vec<f64>| 2.0 * pair.moved as f64 / median(s.clone()) / 1e9;
    [gbs(&seconds[0]), gbs(&seconds[1]), median(ratios)]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
