//! Calibration at run time: the device's copy rate, every kernel's rate and
//! the fixed costs, measured in about a second, as a [`CostModel`] a
//! runtime can store and plan with, and whether each figure can be trusted.

use std::time::Instant;

use super::device_class::device_class;
use super::error::DeviceError;
use super::region::BufferRegion;
use super::round_trip::RoundTrip;
use super::scope::scoped;
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{CostModel, Kernel, KernelRates, Placement, PlanOptions, SplitPlan, Strategy};
use crate::semantics::ResolvedSplit;

/// Measurements per figure, after one warm-up.
const RUNS: usize = 9;

/// Every figure is timed over at least this many of the timer's quanta
/// (WebGPU quantises timestamps: about 65 µs was measured on wasm, so a
/// 5 µs dispatch reads as 0 or 65 µs).
const QUANTA_PER_FIGURE: f64 = 20.0;

/// Most times a probe is repeated in one timed submission to lift it above
/// the timer's resolution.
const MAX_REPEATS: usize = 256;

/// How many times to repeat work that measured `seconds` once so that a
/// run spans [`QUANTA_PER_FIGURE`] quanta of `resolution`: 1 when it does
/// already, [`MAX_REPEATS`] when it read as nothing, `None` when even that
/// many cannot.
fn repeats_for(seconds: f64, resolution: f64) -> Option<usize> {
    let needed = QUANTA_PER_FIGURE * resolution;
    if seconds >= needed {
        return Some(1);
    }
    if seconds <= 0.0 {
        return Some(MAX_REPEATS);
    }
    let k = (needed / seconds).ceil() as usize;
    (k <= MAX_REPEATS).then_some(k)
}

/// A timer's resolution from the durations it gave tiny work of growing
/// size. A quantised timer reads some of them as nothing and every other
/// one as a whole number of quanta: the smallest reading is its quantum. A
/// fine timer reads work of growing size as growing durations: its tick is
/// its resolution. A timer that read everything as nothing resolves none of
/// it (1 s: every figure is then reported unsteady).
fn resolution_from(durations: &[f64], tick: f64) -> f64 {
    let nonzero: Vec<f64> = durations.iter().copied().filter(|&d| d > 0.0).collect();
    let Some(quantum) = nonzero.iter().copied().reduce(f64::min) else {
        return 1.0;
    };
    let whole = |d: f64| ((d / quantum) - (d / quantum).round()).abs() < 0.01;
    let quantised = nonzero.len() < durations.len() || nonzero.iter().all(|&d| whole(d));
    if quantised { quantum.max(tick) } else { tick }
}

/// One figure of a [`CostModel`] that calibration measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// [`CostModel::copy_bytes_per_second`].
    CopyBandwidth,
    /// [`CostModel::copy_command_seconds`].
    CopyCommand,
    /// A kernel's rate in [`CostModel::gather_bytes_per_second`].
    Gather(Kernel),
    /// [`CostModel::dispatch_seconds`].
    Dispatch,
}

/// How calibration timed the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Timestamp queries around the work: what the GPU spent on it.
    Timestamps,
    /// The wall time of a submission and its wait, less that of an empty
    /// one (devices without timestamp queries, as on the web): anything
    /// else the device runs meanwhile is counted too.
    WallClock,
}

/// What [`calibrate`] measured: the model, how it was timed, and the
/// figures it could not measure steadily.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The measured model. Each figure is the low end of its runs (other
    /// work on the device only ever adds time); the unsteady figures and
    /// the load factors are those of the device's class.
    pub model: CostModel,
    /// How the runs were timed.
    pub timing: Timing,
    /// Figures that could not be measured: their runs disagreed by more
    /// than 2x (the middle run more than twice the low end) or, under the
    /// wall clock, the wait behind other work varied by more than half the
    /// figure (the device was busy), or the figure stayed below
    /// [`QUANTA_PER_FIGURE`] (20) quanta of the timer even with its probe
    /// repeated 256 times. [`Calibration::model`] holds the class's value
    /// for them.
    pub unsteady: Vec<Figure>,
    /// The timer's resolution as measured (a quantised timer's quantum, a
    /// fine one's tick; under the wall clock, the spread of empty
    /// submissions). Every trusted figure was timed over at least 20 of
    /// them: short probes are repeated within one submission as needed.
    pub resolution_seconds: f64,
}

impl Calibration {
    /// The model when every figure was measured steadily; `None` when the
    /// device was too busy to tell (plan with the class's model then, and
    /// calibrate again when the device is idle).
    pub fn trusted(&self) -> Option<CostModel> {
        self.unsteady.is_empty().then_some(self.model)
    }
}

/// A figure's estimate from its runs: the second lowest (the lowest, not
/// trusted alone, may be a freak), and whether the middle run agrees with
/// it within 2x.
fn estimate(mut times: Vec<f64>) -> (f64, bool) {
    times.sort_by(f64::total_cmp);
    let low = times[1.min(times.len() - 1)];
    (low, times[times.len() / 2] <= 2.0 * low)
}

/// A measured time and whether its runs were steady.
#[derive(Debug, Clone, Copy)]
struct Measured {
    seconds: f64,
    steady: bool,
}

/// Times recorded work: timestamp queries around it when the device has
/// them, else the wall time of submit + wait less that of an empty submit
/// just before.
struct Timer<'a> {
    splitter: &'a GpuSplitter,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    /// Seconds: [`Timer::measure_resolution`] sets it.
    resolution: f64,
}

impl<'a> Timer<'a> {
    fn new(splitter: &'a GpuSplitter) -> Result<Self> {
        let device = splitter.device();
        let needed =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let queries = if device.features().contains(needed) {
            Some(scoped(device, "creating timestamp queries", || {
                let buffer = |usage| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("wgpu-split calibration timestamps"),
                        size: 16,
                        usage,
                        mapped_at_creation: false,
                    })
                };
                (
                    device.create_query_set(&wgpu::QuerySetDescriptor {
                        label: Some("wgpu-split calibration"),
                        ty: wgpu::QueryType::Timestamp,
                        count: 2,
                    }),
                    buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
                    buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
                )
            })?)
        } else {
            None
        };
        Ok(Timer {
            splitter,
            queries,
            resolution: 0.0,
        })
    }

    /// Measures the timer's resolution with `tiny` (a one-word dispatch)
    /// repeated 1, 2, 4, ... 64 times; under the wall clock, the spread of
    /// empty submissions.
    fn measure_resolution(
        &mut self,
        tiny: &dyn Fn(&mut wgpu::CommandEncoder) -> Result<()>,
    ) -> Result<()> {
        self.resolution = if self.queries.is_some() {
            let mut durations = Vec::new();
            for k in (0..7).map(|i| 1usize << i) {
                durations.push(self.once(&|e| (0..k).try_for_each(|_| tiny(e)))?);
            }
            let tick = f64::from(self.splitter.queue().get_timestamp_period()) * 1e-9;
            resolution_from(&durations, tick)
        } else {
            let mut empties = (0..RUNS)
                .map(|_| self.once(&|_| Ok(())))
                .collect::<Result<Vec<f64>>>()?;
            empties.sort_by(f64::total_cmp);
            (empties[RUNS / 2] - empties[0]).max(1e-6)
        };
        Ok(())
    }

    fn timing(&self) -> Timing {
        if self.queries.is_some() {
            Timing::Timestamps
        } else {
            Timing::WallClock
        }
    }

    /// Seconds of `record` over [`RUNS`] runs after a warm-up
    /// ([`estimate`]). Under the wall clock each run is paired with an
    /// empty submission just before it and counts the difference; the
    /// figure is steady only if the empty submissions themselves are (their
    /// middle within half the figure of their low end): on a queue that
    /// other work keeps full, every submission waits behind it by a
    /// varying amount, and the figure cannot be told from that wait.
    fn measure(
        &self,
        record: &dyn Fn(&mut wgpu::CommandEncoder) -> Result<()>,
    ) -> Result<Measured> {
        let once = self.measure_repeated(record, 1)?;
        let Some(k) = repeats_for(once.seconds, self.resolution) else {
            return Ok(Measured {
                steady: false,
                ..once
            });
        };
        if k == 1 {
            return Ok(once);
        }
        let repeated = self.measure_repeated(record, k)?;
        Ok(Measured {
            seconds: repeated.seconds / k as f64,
            steady: repeated.steady && repeated.seconds >= QUANTA_PER_FIGURE * self.resolution,
        })
    }

    /// [`Timer::measure`] of `record` recorded `repeats` times per run.
    fn measure_repeated(
        &self,
        record: &dyn Fn(&mut wgpu::CommandEncoder) -> Result<()>,
        repeats: usize,
    ) -> Result<Measured> {
        let record = |e: &mut wgpu::CommandEncoder| (0..repeats).try_for_each(|_| record(e));
        let wall_clock = self.queries.is_none();
        let mut runs = Vec::with_capacity(RUNS);
        let mut empties = Vec::with_capacity(RUNS);
        for run in 0..=RUNS {
            let empty = if wall_clock {
                self.once(&|_| Ok(()))?
            } else {
                0.0
            };
            let work = self.once(&record)?;
            if run > 0 {
                runs.push((work - empty).max(1e-9));
                empties.push(empty);
            }
        }
        let (seconds, mut steady) = estimate(runs);
        if wall_clock {
            let (low, _) = estimate(empties.clone());
            empties.sort_by(f64::total_cmp);
            steady &= empties[RUNS / 2] - low <= 0.5 * seconds;
        }
        Ok(Measured { seconds, steady })
    }

    fn once(&self, record: &dyn Fn(&mut wgpu::CommandEncoder) -> Result<()>) -> Result<f64> {
        let device = self.splitter.device();
        let mut encoder = device.create_command_encoder(&Default::default());
        if let Some((set, resolve, _)) = &self.queries {
            encoder.write_timestamp(set, 0);
            record(&mut encoder)?;
            encoder.write_timestamp(set, 1);
            encoder.resolve_query_set(set, 0..2, resolve, 0);
        } else {
            record(&mut encoder)?;
        }
        if let Some((_, resolve, readback)) = &self.queries {
            encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, 16);
        }
        let started = Instant::now();
        let index = self.splitter.queue().submit([encoder.finish()]);
        self.wait(index.clone())?;
        let wall = started.elapsed().as_secs_f64();
        let Some((_, _, readback)) = &self.queries else {
            return Ok(wall);
        };
        readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.wait(index)?;
        let ticks: Vec<u64> =
            bytemuck::pod_collect_to_vec(&readback.slice(..).get_mapped_range().map_err(|e| {
                DeviceError::Gpu {
                    detail: format!("reading timestamps: {e}"),
                }
            })?);
        readback.unmap();
        let period = f64::from(self.splitter.queue().get_timestamp_period());
        Ok(ticks[1].saturating_sub(ticks[0]) as f64 * period * 1e-9)
    }

    /// Waits for submission `index` alone: on a queue other threads keep
    /// feeding, waiting for every submission would wait for theirs too.
    fn wait(&self, index: wgpu::SubmissionIndex) -> Result<()> {
        self.splitter
            .device()
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(super::READBACK_TIMEOUT),
            })
            .map(|_| ())
            .map_err(|e| {
                DeviceError::Gpu {
                    detail: format!("calibrating: {e}"),
                }
                .into()
            })
    }
}

/// One calibration problem: a split planned into an arena, with its
/// buffers.
struct Probe {
    plan: SplitPlan,
    input: wgpu::Buffer,
    arena: wgpu::Buffer,
}

impl Probe {
    /// `split` planned as `options` say, into an arena, with its buffers.
    fn new(
        splitter: &GpuSplitter,
        split: &ResolvedSplit,
        element_type: ElementType,
        options: PlanOptions,
    ) -> Result<Probe> {
        let options = options.placement(Placement::Arena);
        let plan = splitter.plan_with(split, element_type, &options)?;
        let buffers = RoundTrip::new(splitter);
        Ok(Probe {
            input: buffers.create_input(&vec![0x5A; plan.input_binding_bytes() as usize])?,
            arena: buffers.create_destinations(&plan)?.remove(0),
            plan,
        })
    }

    fn time(&self, splitter: &GpuSplitter, timer: &Timer<'_>) -> Result<Measured> {
        timer.measure(&|encoder| self.record(splitter, encoder))
    }

    fn record(&self, splitter: &GpuSplitter, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        splitter.encode(
            encoder,
            &self.plan,
            BufferRegion::whole(&self.input),
            &[BufferRegion::whole(&self.arena)],
        )
    }
}

/// Measures `splitter`'s device as a [`CostModel`] in about a second
/// (blocking; the device is polled for the calibration's own submissions
/// only): a 16 MiB copy (bandwidth), 4,096 copies of 1 KiB (the fixed cost
/// of a command), each kernel on the split its module names as its probe
/// (16 MiB or so, the kernel forced), and a one-word dispatch (its fixed
/// cost), each over 9 runs. Timestamp queries are used when the device has
/// them, else wall time ([`Timing`]). Work other threads submit meanwhile
/// only adds time: each figure is the low end of its runs, and a figure
/// whose runs disagree by more than 2x is reported as
/// [`Calibration::unsteady`] rather than trusted. The load factors are
/// not measured (that needs a busy machine): they are those of the
/// device's class.
///
/// Store a trusted model and plan with it:
/// `splitter.with_strategy(Strategy::Auto(model))`.
///
/// # Examples
///
/// ```no_run
/// use wgpu_split::gpu::{GpuContext, calibrate};
/// use wgpu_split::plan::Strategy;
///
/// let ctx = GpuContext::new_default()?;
/// let splitter = ctx.splitter()?;
/// let splitter = match calibrate(&splitter)?.trusted() {
///     Some(model) => splitter.with_strategy(Strategy::Auto(model)),
///     None => splitter, // busy: keep the class's model, try again later
/// };
/// # Ok::<(), wgpu_split::Error>(())
/// ```
///
/// # Errors
///
/// [`DeviceError::Gpu`] when the device fails or is lost.
pub fn calibrate(splitter: &GpuSplitter) -> Result<Calibration> {
    let mut timer = Timer::new(splitter)?;
    let f32_t = ElementType::Float;
    let tiny = ResolvedSplit::new(&[2, 2], 1, vec![1, 1], true)?;
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let one_word = Probe::new(splitter, &tiny, f32_t, gather)?;
    timer.measure_resolution(&|e| one_word.record(splitter, e))?;
    let mut unsteady = Vec::new();
    let mut steady = |figure, m: Measured| {
        if !m.steady {
            unsteady.push(figure);
        }
        m.seconds
    };
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    let words = 4 << 20; // 16 MiB of f32
    let whole = ResolvedSplit::new(&[words], 0, vec![words], true)?;
    let big_copy = Probe::new(splitter, &whole, f32_t, copy)?.time(splitter, &timer)?;
    let t_copy = steady(Figure::CopyBandwidth, big_copy);
    let copy_bw = 2.0 * (words * 4) as f64 / t_copy;
    let rows = ResolvedSplit::new(&[2048, 512], 1, vec![256, 256], true)?;
    let many = Probe::new(splitter, &rows, f32_t, copy)?;
    let many_copies = many.time(splitter, &timer)?;
    let t_many = steady(
        Figure::CopyCommand,
        Measured {
            steady: many_copies.steady && big_copy.steady,
            ..many_copies
        },
    );
    let commands = many.plan.copy_count() as f64;
    let command = ((t_many - 2.0 * (2048 * 512 * 4) as f64 / copy_bw) / commands).max(0.0);
    let mut rates = KernelRates::ZERO;
    for kernel in Kernel::ALL {
        let p = kernel.spec().probe;
        let split = ResolvedSplit::new(p.shape, p.axis, p.lengths.to_vec(), true)?;
        let options = PlanOptions::default()
            .strategy(Strategy::Gather)
            .kernel(kernel);
        let probe = Probe::new(splitter, &split, p.element_type, options)?;
        let seconds = steady(Figure::Gather(kernel), probe.time(splitter, &timer)?);
        rates.set(kernel, 2.0 * probe.plan.input_bytes() as f64 / seconds);
    }
    let dispatch = steady(Figure::Dispatch, one_word.time(splitter, &timer)?);
    let class = CostModel::for_class(device_class(&splitter.device().adapter_info()));
    let mut model = CostModel {
        copy_bytes_per_second: copy_bw,
        copy_command_seconds: command,
        gather_bytes_per_second: rates,
        dispatch_seconds: dispatch,
        ..class
    };
    // What could not be measured stays the class's.
    for figure in &unsteady {
        match *figure {
            Figure::CopyBandwidth => model.copy_bytes_per_second = class.copy_bytes_per_second,
            Figure::CopyCommand => model.copy_command_seconds = class.copy_command_seconds,
            Figure::Gather(kernel) => model
                .gather_bytes_per_second
                .set(kernel, class.gather_bytes_per_second.get(kernel)),
            Figure::Dispatch => model.dispatch_seconds = class.dispatch_seconds,
        }
    }
    Ok(Calibration {
        model,
        timing: timer.timing(),
        unsteady,
        resolution_seconds: timer.resolution,
    })
}

#[cfg(test)]
mod tests {
    use super::{MAX_REPEATS, estimate, repeats_for, resolution_from};

    #[test]
    fn short_work_is_repeated_until_it_spans_twenty_quanta() {
        let q = 65e-6; // WebGPU's quantised timestamps, as measured on wasm
        // A quantised timer reads a 5 µs dispatch as 0 or one quantum.
        let quantise = |t: f64| (t / q).floor() * q;
        let dispatch = 5e-6;
        let k = repeats_for(quantise(dispatch), q).unwrap();
        assert_eq!(k, MAX_REPEATS);
        let estimate = quantise(k as f64 * dispatch) / k as f64;
        assert!((estimate - dispatch).abs() < 0.05 * dispatch, "{estimate}");
        // A 100 µs copy reads as one quantum: repeated 20 times.
        let k = repeats_for(quantise(100e-6), q).unwrap();
        assert_eq!(k, 20);
        assert!((quantise(k as f64 * 100e-6) / k as f64 - 100e-6).abs() < 0.05 * 100e-6);
        // Long work is timed once; work too short for 256 repeats to lift
        // it above 20 quanta cannot be measured.
        assert_eq!(repeats_for(5e-3, q), Some(1));
        assert_eq!(repeats_for(1e-9, q), None);
        // A fine timer repeats nothing above a microsecond.
        assert_eq!(repeats_for(2e-6, 1e-9), Some(1));
    }

    #[test]
    fn the_resolution_is_a_quantised_timers_quantum_or_a_fine_timers_tick() {
        // Quantised: the tiny work reads 0 until it crosses a quantum, and
        // whole quanta after.
        let q = 65e-6;
        assert_eq!(
            resolution_from(&[0.0, 0.0, q, q, 2.0 * q, 4.0 * q], 1e-9),
            q
        );
        assert_eq!(resolution_from(&[q, q, 2.0 * q, 4.0 * q, 8.0 * q], 1e-9), q);
        // Fine (lavapipe: 1, 2, 4 ... one-word dispatches): the tick.
        let lavapipe = [172e-6, 301e-6, 590e-6, 1193e-6, 2370e-6];
        assert_eq!(resolution_from(&lavapipe, 1e-9), 1e-9);
        // Nothing seen at all: nothing can be measured.
        assert_eq!(resolution_from(&[0.0, 0.0], 1e-9), 1.0);
    }

    #[test]
    fn the_estimate_is_the_low_end_and_steady_when_the_middle_agrees() {
        // Idle: runs agree; the estimate is the second lowest.
        let idle = vec![1.1, 1.0, 1.2, 1.05, 1.3, 1.15, 1.0, 1.25, 1.1];
        assert_eq!(estimate(idle), (1.0, true));
        // Busy now and then: outliers above do not move the estimate.
        let spiky = vec![1.0, 40.0, 1.1, 1.05, 25.0, 1.2, 1.0, 30.0, 1.1];
        assert_eq!(estimate(spiky), (1.0, true));
        // Busy most of the time: the middle run is far above the low end.
        let busy = vec![1.0, 40.0, 1.1, 9.0, 25.0, 12.0, 8.0, 30.0, 3.5];
        assert_eq!(estimate(busy), (1.1, false));
    }
}
