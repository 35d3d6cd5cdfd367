//! Calibration at run time: the device's copy rate, every kernel's rate and
//! the fixed costs, measured in about a second, as a [`CostModel`] a
//! runtime can store and plan with, and whether each figure can be trusted.

use super::blocking::{Wait, block_on};
pub use super::calibration_timer::Timing;
use super::calibration_timer::{Measured, QUICK_RUNS, RUNS, Record, Timer};
use super::region::BufferRegion;
use super::round_trip::RoundTrip;
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{
    CostModel, Direction, Kernel, KernelRates, Placement, PlanError, PlanOptions, SplitPlan,
    Strategy,
};
use crate::semantics::{ResolvedConcat, ResolvedSplit};

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

/// What [`Calibration::measure`] measured: the model, how it was timed, and the
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
    /// 20 quanta of the timer even with its probe
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
/// One calibration problem: a split planned into an arena, with its
/// buffers.
struct Probe {
    plan: SplitPlan,
    input: wgpu::Buffer,
    arena: wgpu::Buffer,
}

impl Probe {
    /// `split` planned as `options` say, into an arena, with its buffers;
    /// with `concat`, the concat that mirrors it, from the arena (a kernel
    /// that moves concats only is timed on one).
    fn new(
        splitter: &GpuSplitter,
        split: &ResolvedSplit,
        element_type: ElementType,
        options: PlanOptions,
        concat: bool,
    ) -> Result<Probe> {
        let options = options.placement(Placement::Arena);
        let plan = if concat {
            let concat = ResolvedConcat::inverse_of(split).ok_or(PlanError::Internal {
                detail: "a kernel's probe split has no concat mirror".to_string(),
            })?;
            let plan = splitter.plan_with(&concat, element_type, &options)?;
            plan.mirror().clone()
        } else {
            splitter.plan_with(split, element_type, &options)?
        };
        let buffers = RoundTrip::new(splitter);
        Ok(Probe {
            input: buffers.create_input(&vec![0x5A; plan.input_binding_bytes() as usize])?,
            arena: buffers.create_destinations(&plan)?.remove(0),
            plan,
        })
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

/// Every kernel forced on the split its spec names as its probe (a
/// concat-only kernel on the concat that mirrors it).
fn kernel_probes(splitter: &GpuSplitter) -> Result<Vec<(Kernel, Probe)>> {
    Kernel::ALL
        .into_iter()
        .map(|kernel| {
            let p = kernel.spec().probe;
            let split = p.resolve();
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .kernel(kernel);
            let concat = !kernel.spec().directions.contains(&Direction::Split);
            Ok((
                kernel,
                Probe::new(splitter, &split, p.element_type, options, concat)?,
            ))
        })
        .collect()
}

/// Times a round runs each of the copy probes (the big copy and the many
/// copies: about 1 and 3 ms on lavapipe, against 5-20 ms for a kernel's):
/// their figures decide copy against kernel, and sampled across the whole
/// calibration they do not follow one disturbed stretch of it. With one
/// sample in each of 3 rounds, something else on the host once read
/// lavapipe's copy bandwidth as 20.0 GB/s against 36-39 measured at every
/// other start, and the plan chose kernels at half the copies' speed
/// (issue 41). (The one-word dispatch is sampled once a round: on
/// lavapipe it reads anywhere from 0 to 60 us, so more samples only
/// report it unsteady.)
const COPY_SAMPLES: usize = 4;

/// Every probe timed in the same rounds (`Timer::measure_all`), the first
/// `copies` of them [`COPY_SAMPLES`] times a round.
async fn measure_probes(
    splitter: &GpuSplitter,
    timer: &Timer<'_>,
    probes: &[&Probe],
    copies: usize,
) -> Result<Vec<Measured>> {
    let records: Vec<Box<Record<'_>>> = probes
        .iter()
        .map(|&p| Box::new(move |e: &mut wgpu::CommandEncoder| p.record(splitter, e)) as Box<_>)
        .collect();
    let refs: Vec<&Record<'_>> = records.iter().map(|r| r.as_ref()).collect();
    let samples: Vec<usize> = (0..probes.len())
        .map(|i| if i < copies { COPY_SAMPLES } else { 1 })
        .collect();
    timer.measure_all(&refs, &samples).await
}

impl Figure {
    /// Every figure calibration measures.
    fn all() -> impl Iterator<Item = Figure> {
        [Figure::CopyBandwidth, Figure::CopyCommand, Figure::Dispatch]
            .into_iter()
            .chain(Kernel::ALL.into_iter().map(Figure::Gather))
    }

    /// The figure in `model`, as seconds of its probe's kind (a rate is
    /// inverted): lower is faster.
    fn cost_in(self, model: &CostModel) -> f64 {
        match self {
            Figure::CopyBandwidth => 1.0 / model.copy_bytes_per_second,
            Figure::CopyCommand => model.copy_command_seconds,
            Figure::Gather(kernel) => 1.0 / model.gather_bytes_per_second.get(kernel),
            Figure::Dispatch => model.dispatch_seconds,
        }
    }

    /// Sets the figure in `model` to its value in `from` (a figure that
    /// could not be measured keeps the class's value this way).
    fn take(self, model: &mut CostModel, from: &CostModel) {
        match self {
            Figure::CopyBandwidth => model.copy_bytes_per_second = from.copy_bytes_per_second,
            Figure::CopyCommand => model.copy_command_seconds = from.copy_command_seconds,
            Figure::Gather(kernel) => model
                .gather_bytes_per_second
                .set(kernel, from.gather_bytes_per_second.get(kernel)),
            Figure::Dispatch => model.dispatch_seconds = from.dispatch_seconds,
        }
    }
}

impl Calibration {
    /// The two calibrations of one device as one: each figure the faster
    /// of its steady readings (other work only ever adds time), unsteady
    /// only when neither read it steadily; the rest (timing, host costs,
    /// resolution) this one's.
    fn faster_figures(mut self, other: &Calibration) -> Calibration {
        let steady_in = |c: &Calibration, f: Figure| !c.unsteady.contains(&f);
        let mut unsteady = Vec::new();
        for figure in Figure::all() {
            match (steady_in(&self, figure), steady_in(other, figure)) {
                (true, true) if figure.cost_in(&other.model) < figure.cost_in(&self.model) => {
                    figure.take(&mut self.model, &other.model);
                }
                (false, true) => figure.take(&mut self.model, &other.model),
                (false, false) => unsteady.push(figure),
                _ => {}
            }
        }
        self.unsteady = unsteady;
        self
    }
}

/// The host's seconds to record one copy command and one dispatch, from
/// the host times of the big copy, the many copies and the one-word
/// dispatch (`measured`, in that order; `copies` commands in the first two):
/// the many copies less the big copy, per extra command; the dispatch less
/// the big copy, plus one command. A difference that noise puts at or below
/// zero keeps the class's figure, and so does a build without a clock (the
/// web).
fn host_costs(measured: &[Measured], big: u64, many: u64, class: &CostModel) -> (f64, f64) {
    let host = |i: usize| measured[i].host_seconds;
    let (Some(big_copy), Some(many_copies), Some(one_word)) = (host(0), host(1), host(2)) else {
        return (class.host_copy_seconds, class.host_dispatch_seconds);
    };
    let extra = many.saturating_sub(big).max(1) as f64;
    let copy = (many_copies - big_copy) / extra;
    let copy = if copy > 0.0 {
        copy
    } else {
        class.host_copy_seconds
    };
    let dispatch = one_word - big_copy + copy * big as f64;
    let dispatch = if dispatch > 0.0 {
        dispatch
    } else {
        class.host_dispatch_seconds
    };
    (copy, dispatch)
}

impl Calibration {
    /// Measures `splitter`'s device as a [`CostModel`] in about a second
    /// (blocking; the device is polled for the calibration's own submissions
    /// only): a 16 MiB copy (bandwidth), 4,096 copies of 1 KiB (the fixed cost
    /// of a command), each kernel on the split its module names as its probe
    /// (16 MiB or so, the kernel forced), and a one-word dispatch (its fixed
    /// cost), each over 9 runs, in rounds that run every probe once, so that
    /// the figures compared are measured in the same minutes of the device.
    /// Every probe's buffers are held meanwhile: about 190 MiB of device
    /// memory, freed on return. Timestamp queries are used when the device has
    /// them, else wall time ([`Timing`]). Work other threads submit meanwhile
    /// only adds time: each figure is the low end of its runs, and a figure
    /// whose runs disagree by more than 2x is reported as
    /// [`Calibration::unsteady`] rather than trusted. The host's time to
    /// record a copy command and a dispatch comes from the same runs (from the
    /// encoder's creation to `submit` returning; [`CostModel::host_seconds`]).
    /// The load factors are not measured (that needs a busy machine): they are
    /// those of the device's class.
    ///
    /// Store a trusted model and plan with it:
    /// `splitter.with_strategy(Strategy::Auto(model))`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{Calibration, GpuContext};
    /// use wgpu_split::plan::Strategy;
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let splitter = match Calibration::measure(&splitter)?.trusted() {
    ///     Some(model) => splitter.with_strategy(Strategy::Auto(model)),
    ///     None => splitter, // busy: keep the class's model, try again later
    /// };
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device fails or is lost;
    /// on the web [`crate::error::DeviceError::BlocksOnTheWeb`] (await
    /// [`Calibration::measure_async`] there).
    pub fn measure(splitter: &GpuSplitter) -> Result<Calibration> {
        let step = calibrate_runs(splitter, RUNS, Wait::Poll);
        block_on("Calibration::measure", "Calibration::measure_async", step)
    }

    /// Async form of [`Calibration::measure`]: it never blocks, awaiting
    /// each probe's callbacks (on native backends someone must poll the
    /// device meanwhile: the caller's loop, or a [`crate::gpu::Poller`]; on
    /// the web the browser calls back). On the web it needs the device's
    /// timestamp queries (`wgpu::Features::TIMESTAMP_QUERY`, WebGPU's
    /// `timestamp-query`: the crate reads no clock there), and the host's
    /// costs per command ([`CostModel::host_seconds`]) stay the class's.
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device fails or is lost;
    /// [`crate::error::DeviceError::NoTimer`] on the web without timestamp
    /// queries.
    pub async fn measure_async(splitter: &GpuSplitter) -> Result<Calibration> {
        calibrate_runs(splitter, RUNS, Wait::Await).await
    }
}

/// The short calibration a splitter made on a software adapter runs
/// ([`crate::gpu::GpuSplitter::new`]): [`QUICK_RUNS`] timed runs per figure
/// and, when a copy or kernel figure read unsteadily (something else ran
/// on the host's cores meanwhile), once more, each figure then the faster
/// of its steady readings: a calibration disturbed for part of its third
/// of a second would otherwise leave the plan that figure of another
/// machine (the class's). The dispatch figure does not call for it: its
/// one-word probe sits at the edge of lavapipe's timestamps (it reads
/// anywhere from 0 to 60 us) and is as often unsteady the second time.
pub(super) fn calibrate_at_start(splitter: &GpuSplitter) -> Result<Calibration> {
    let quick = || calibrate_runs(splitter, QUICK_RUNS, Wait::Poll);
    let first = block_on("GpuSplitter::new", "Calibration::measure_async", quick())?;
    if first.unsteady.iter().all(|&f| f == Figure::Dispatch) {
        return Ok(first);
    }
    let second = block_on("GpuSplitter::new", "Calibration::measure_async", quick())?;
    Ok(first.faster_figures(&second))
}

/// [`Calibration::measure`] with `runs` timed runs per figure, each waited
/// for as `wait` says.
async fn calibrate_runs(splitter: &GpuSplitter, runs: usize, wait: Wait) -> Result<Calibration> {
    let mut timer = Timer::new(splitter, runs, wait)?;
    let f32_t = ElementType::Float;
    let tiny = ResolvedSplit::new(&[2, 2], 1, vec![1, 1], true)?;
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let one_word = Probe::new(splitter, &tiny, f32_t, gather, false)?;
    timer
        .measure_resolution(&|e| one_word.record(splitter, e))
        .await?;
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    let words = 4 << 20; // 16 MiB of f32
    let whole = ResolvedSplit::new(&[words], 0, vec![words], true)?;
    let big_copy = Probe::new(splitter, &whole, f32_t, copy, false)?;
    let rows = ResolvedSplit::new(&[2048, 512], 1, vec![256, 256], true)?;
    let many = Probe::new(splitter, &rows, f32_t, copy, false)?;
    let kernels = kernel_probes(splitter)?;
    let probes: Vec<&Probe> = [&big_copy, &many, &one_word]
        .into_iter()
        .chain(kernels.iter().map(|(_, p)| p))
        .collect();
    let measured = measure_probes(splitter, &timer, &probes, 2).await?;
    let mut unsteady = Vec::new();
    let mut steady = |figure, m: Measured| {
        if !m.steady {
            unsteady.push(figure);
        }
        m.seconds
    };
    let t_copy = steady(Figure::CopyBandwidth, measured[0]);
    let copy_bw = 2.0 * (words * 4) as f64 / t_copy;
    let many_copies = Measured {
        steady: measured[1].steady && measured[0].steady,
        ..measured[1]
    };
    let t_many = steady(Figure::CopyCommand, many_copies);
    let commands = many.plan.copy_count() as f64;
    let command = ((t_many - 2.0 * (2048 * 512 * 4) as f64 / copy_bw) / commands).max(0.0);
    let dispatch = steady(Figure::Dispatch, measured[2]);
    let mut rates = KernelRates::ZERO;
    for ((kernel, probe), &m) in kernels.iter().zip(&measured[3..]) {
        let seconds = steady(Figure::Gather(*kernel), m);
        rates.set(*kernel, 2.0 * probe.plan.input_bytes() as f64 / seconds);
    }
    let class = CostModel::for_class(crate::plan::DeviceClass::of_adapter(
        &splitter.device().adapter_info(),
    ));
    let (host_copy, host_dispatch) = host_costs(
        &measured[..3],
        big_copy.plan.copy_count(),
        many.plan.copy_count(),
        &class,
    );
    let mut model = CostModel {
        copy_bytes_per_second: copy_bw,
        copy_command_seconds: command,
        gather_bytes_per_second: rates,
        dispatch_seconds: dispatch,
        host_copy_seconds: host_copy,
        host_dispatch_seconds: host_dispatch,
        ..class
    };
    for figure in &unsteady {
        figure.take(&mut model, &class);
    }
    Ok(Calibration {
        model,
        timing: timer.timing(),
        unsteady,
        resolution_seconds: timer.resolution(),
    })
}

#[cfg(test)]
mod tests {
    use super::{Calibration, CostModel, Figure, Measured, Timing, host_costs};
    use crate::plan::Kernel;

    #[test]
    fn a_second_calibration_fills_unsteady_figures_and_each_keeps_its_faster_reading() {
        let class = CostModel::LAVAPIPE;
        // Any kernel's figure (the table names them).
        let kernel = Kernel::ALL[0];
        let calibration = |copy: f64, vec4: f64, unsteady: Vec<Figure>| {
            let mut model = class;
            model.copy_bytes_per_second = copy;
            model.gather_bytes_per_second.set(kernel, vec4);
            for figure in &unsteady {
                figure.take(&mut model, &class);
            }
            Calibration {
                model,
                timing: Timing::Timestamps,
                unsteady,
                resolution_seconds: 1e-9,
            }
        };
        // The first read the copy unsteadily (a disturbed stretch): the
        // second's steady copy is taken; both read the vec4 kernel
        // steadily: the faster is kept.
        let first = calibration(20e9, 3e9, vec![Figure::CopyBandwidth]);
        let second = calibration(38e9, 2.5e9, vec![]);
        let merged = first.faster_figures(&second);
        assert_eq!(merged.model.copy_bytes_per_second, 38e9);
        assert_eq!(merged.model.gather_bytes_per_second.get(kernel), 3e9);
        assert!(merged.unsteady.is_empty());
        // Read unsteadily both times: the class's figure, still unsteady;
        // a steady reading is never replaced by an unsteady faster one.
        let first = calibration(20e9, 3e9, vec![Figure::CopyBandwidth]);
        let second = calibration(
            50e9,
            9e9,
            vec![Figure::CopyBandwidth, Figure::Gather(kernel)],
        );
        let merged = first.faster_figures(&second);
        assert_eq!(
            merged.model.copy_bytes_per_second,
            class.copy_bytes_per_second
        );
        assert_eq!(merged.unsteady, vec![Figure::CopyBandwidth]);
        assert_eq!(merged.model.gather_bytes_per_second.get(kernel), 3e9);
    }

    fn host(seconds: f64) -> Measured {
        Measured {
            seconds: 1e-3,
            steady: true,
            host_seconds: Some(seconds),
        }
    }

    #[test]
    fn host_costs_are_differences_per_extra_command_or_the_class_figures() {
        let class = CostModel::LAVAPIPE;
        // A submission costs 50 µs; each copy 0.4 µs, a dispatch 2 µs.
        let (base, copy, dispatch) = (50e-6, 0.4e-6, 2e-6);
        let measured = [
            host(base + copy),
            host(base + 4096.0 * copy),
            host(base + dispatch),
        ];
        let (c, d) = host_costs(&measured, 1, 4096, &class);
        assert!(
            (c - copy).abs() < 1e-12 && (d - dispatch).abs() < 1e-12,
            "{c} {d}"
        );
        // Noise that puts a difference at or below zero keeps the class's.
        let noisy = [host(60e-6), host(50e-6), host(10e-6)];
        assert_eq!(
            host_costs(&noisy, 1, 4096, &class),
            (class.host_copy_seconds, class.host_dispatch_seconds)
        );
        // No clock (the web): the class's.
        let unclocked = [host(1.0), host(2.0), host(3.0)].map(|m| Measured {
            host_seconds: None,
            ..m
        });
        assert_eq!(
            host_costs(&unclocked, 1, 4096, &class),
            (class.host_copy_seconds, class.host_dispatch_seconds)
        );
    }
}
