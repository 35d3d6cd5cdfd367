//! A device destroyed on another thread in the middle of a split: every
//! wgpu call the crate makes that reports to the device (creating buffers,
//! pipelines and bind groups, recording, `finish`, `submit`, `map_async`,
//! `unmap`) runs inside error scopes, so the split ends with a typed
//! `DeviceError` (or, destroyed too late to matter, with exact outputs),
//! never with a panic or an error that reaches the uncaptured-error
//! handler (wgpu's default handler panics; here one records every error).
//!
//! Two ways of choosing the moment: at every step, deterministically (a
//! logger counts wgpu-core's API calls on the splitting thread, and at the
//! chosen one asks another thread to destroy the device and waits for it),
//! and after random delays spread over a split. Each run has a device of
//! its own (about 30 ms on lavapipe).

mod common;

use std::cell::RefCell;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Rng;
use wgpu_split::error::DeviceError;
use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter, Poller, RoundTrip};
use wgpu_split::{ElementType, Error, HostTensor, OnnxSplit, Operator, ResolvedSplit};

/// How long a step waits for the other thread to destroy the device. A
/// step that wgpu logs while holding a lock `destroy` needs lets it finish
/// only once the step goes on: the destruction then lands just after.
const DESTROY_WAIT: Duration = Duration::from_millis(200);

/// How long one split may take before the test fails (a split that never
/// ends is a failure too).
const SPLIT_TIMEOUT: Duration = Duration::from_secs(60);

/// A step being watched on this thread: how many wgpu-core API calls have
/// been seen, the one to destroy the device at, and the channels to the
/// destroying thread.
struct Watch {
    seen: usize,
    at: Option<usize>,
    destroy: Sender<()>,
    destroyed: Receiver<()>,
    /// The call the device was destroyed at, and whether the destruction
    /// finished before it went on.
    hit: Option<(String, bool)>,
}

thread_local! {
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
}

/// Counts wgpu-core's API calls (its trace lines such as
/// `Buffer::unmap Id(..)`) on a thread being watched; ignores everything
/// else.
struct Steps;

impl log::Log for Steps {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with("wgpu_core")
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        // Only the watched thread formats anything.
        let _ = WATCH.try_with(|watch| {
            let Ok(mut watch) = watch.try_borrow_mut() else {
                return;
            };
            let Some(w) = watch.as_mut() else {
                return;
            };
            let text = record.args().to_string();
            if !is_api_call(&text) {
                return;
            }
            if w.at == Some(w.seen) {
                let _ = w.destroy.send(());
                let in_time = w.destroyed.recv_timeout(DESTROY_WAIT).is_ok();
                let call = text.split_whitespace().next().unwrap_or("").to_string();
                w.hit = Some((call, in_time));
            }
            w.seen += 1;
        });
    }

    fn flush(&self) {}
}

/// wgpu-core's API trace lines start with `Type::method`.
fn is_api_call(text: &str) -> bool {
    let head = text.split([' ', '(']).next().unwrap_or("");
    let mut parts = head.split("::");
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(t), Some(m), None)
            if t.starts_with(|c: char| c.is_ascii_uppercase()) && !m.is_empty()
    )
}

fn install_logger() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        static STEPS: Steps = Steps;
        log::set_logger(&STEPS).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Trace);
    });
}

/// What one run saw.
#[derive(Debug, Default)]
struct Outcome {
    /// The split's result: `None` when it finished with exact outputs, else
    /// the typed error.
    error: Option<Error>,
    /// The API call the device was destroyed at (deterministic runs) and
    /// whether the destruction finished before that call went on.
    hit: Option<(String, bool)>,
    /// API calls the split made on its thread.
    calls: usize,
    /// How long the split took.
    took: Duration,
}

/// One way to split: the convenience path, async (polled by a `Poller`)
/// or blocking, or a runtime's path (a splitter made now, warm-up, buffers,
/// figures, prepare, encode into its own encoder and submit inside its own
/// error scope).
#[derive(Debug, Clone, Copy)]
enum Path {
    Async,
    Blocking,
    Runtime,
}

/// The problem every run splits: f32 [256, 1024] (1 MiB, so that the
/// upload and the copy out take a while) into three outputs on axis 1.
struct Problem {
    op: Operator,
    split: ResolvedSplit,
    input: HostTensor,
    expected: Vec<HostTensor>,
}

impl Problem {
    fn new() -> Problem {
        Problem::with_rows(256)
    }

    /// The same split of `rows` rows (4 KiB each).
    fn with_rows(rows: usize) -> Problem {
        let mut rng = Rng::new(404);
        let op: Operator = OnnxSplit::new(13, 3)
            .axis(1)
            .split_input(wgpu_split::ParamTensor::int64_1d(&[256, 512, 256]))
            .into();
        let input = common::random_tensor(&mut rng, ElementType::Float, &[rows, 1024]);
        let split = op.resolve(input.shape()).unwrap();
        let expected = input.split(&split).unwrap();
        Problem {
            op,
            split,
            input,
            expected,
        }
    }
}

/// Runs `path` on `problem` on `splitter`, checking Ok outputs against the
/// host path.
fn split_once(splitter: &GpuSplitter, problem: &Problem, path: Path) -> Result<(), Error> {
    let outputs = match path {
        Path::Async => {
            let _poller = Poller::new(splitter.device());
            pollster::block_on(RoundTrip::new(splitter).split_async(&problem.op, &problem.input))?
        }
        Path::Blocking => RoundTrip::new(splitter).split(&problem.op, &problem.input)?,
        Path::Runtime => return runtime_split(splitter, problem),
    };
    assert_eq!(
        outputs, problem.expected,
        "outputs that come back are exact"
    );
    Ok(())
}

/// A runtime's path: the library calls only (its own submit runs inside
/// its own error scope, as a runtime's would); outputs are not read back.
fn runtime_split(splitter: &GpuSplitter, problem: &Problem) -> Result<(), Error> {
    let splitter = &GpuSplitter::new(splitter.device(), splitter.queue())?;
    let plan = splitter.plan_with(
        &problem.split,
        ElementType::Float,
        &wgpu_split::plan::PlanOptions::default().in_compute_pass(),
    )?;
    splitter.cache().warm_up(&plan)?;
    let round_trip = RoundTrip::new(splitter);
    let input = round_trip.create_input(problem.input.as_bytes()?)?;
    let outputs = round_trip.create_destinations(&plan)?;
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    splitter.counts(&plan, BufferRegion::whole(&input), &regions)?;
    let prepared = splitter.prepare(&plan, BufferRegion::whole(&input), &regions)?;
    let device = splitter.device();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut encoder = device.create_command_encoder(&Default::default());
    splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)?;
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        prepared.record(&mut pass);
    }
    splitter.queue().submit([encoder.finish()]);
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(DeviceError::Gpu {
            detail: e.to_string(),
        }
        .into()),
        None => Ok(()),
    }
}

/// A new device on the test adapter (found once: enumerating adapters
/// from several threads at once upsets EGL).
fn fresh_device() -> (wgpu::Device, wgpu::Queue) {
    static ADAPTER: std::sync::OnceLock<wgpu::Adapter> = std::sync::OnceLock::new();
    let adapter = ADAPTER.get_or_init(|| GpuContext::new_default().unwrap().adapter);
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("wgpu-split device-loss run"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .unwrap()
}

/// One run on a device of its own: the device is destroyed by another
/// thread at API call `at` of the split (deterministic), or `after` a delay
/// from its start (or as it ends, if sooner); every error wgpu reports
/// outside a scope is recorded in `uncaptured`.
fn run(
    problem: &Arc<Problem>,
    path: Path,
    at: Option<usize>,
    after: Option<Duration>,
    uncaptured: &Arc<Mutex<Vec<String>>>,
) -> Outcome {
    let (device, queue) = fresh_device();
    let seen = uncaptured.clone();
    device.on_uncaptured_error(Arc::new(move |e| {
        seen.lock().unwrap().push(e.to_string());
    }));
    let splitter = GpuSplitter::new(&device, &queue).unwrap();
    let (destroy, asked) = channel::<()>();
    let (destroyed_tx, destroyed) = channel::<()>();
    // The other thread: destroys when asked, or after the delay (or when
    // the split ends and drops its end of the channel, if sooner).
    let killer = std::thread::spawn(move || {
        let destroy_now = match after {
            Some(delay) => {
                let _ = asked.recv_timeout(delay);
                true
            }
            None => asked.recv().is_ok(),
        };
        if destroy_now {
            // wgpu marks the device invalid at once and releases its
            // resources (every buffer destroyed) at the next poll, which the
            // split's own waits and its `Poller` make. This thread does not
            // poll: a poll here would race the split's read of its mapped
            // staging buffer, and wgpu 30 frees mapped memory under a live
            // view (gfx-rs/wgpu#10256, docs/lab/mapped_view_destroy.rs: a
            // SIGSEGV on GL), a race no library can close.
            device.destroy();
            let _ = destroyed_tx.send(());
        }
    });
    let (done, result) = channel();
    let problem = problem.clone();
    let splitting = std::thread::spawn(move || {
        WATCH.with(|w| {
            *w.borrow_mut() = Some(Watch {
                seen: 0,
                at,
                destroy,
                destroyed,
                hit: None,
            })
        });
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            split_once(&splitter, &problem, path)
        }));
        let took = started.elapsed();
        let watch = WATCH.with(|w| w.borrow_mut().take());
        let (hit, calls) = watch.map_or((None, 0), |w| (w.hit, w.seen));
        let _ = done.send((outcome.map_err(|_| ()), hit, calls, took));
    });
    let (outcome, hit, calls, took) = result
        .recv_timeout(SPLIT_TIMEOUT)
        .unwrap_or_else(|_| panic!("{path:?}: the split did not end ({at:?}, {after:?})"));
    splitting.join().unwrap();
    killer.join().unwrap();
    let error = match outcome {
        Err(()) => panic!("{path:?}: the split panicked ({at:?}, {after:?})"),
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
    };
    Outcome {
        error,
        hit,
        calls,
        took,
    }
}

/// Every error a run ended with is the device's, typed.
fn check_typed(outcome: &Outcome, context: &str) {
    if let Some(e) = &outcome.error {
        assert!(
            matches!(
                e,
                Error::Device(DeviceError::Gpu { .. } | DeviceError::BufferMapped { .. })
            ),
            "{context}: {e:?}"
        );
    }
}

#[test]
fn a_device_destroyed_at_every_step_of_a_split_gives_typed_errors() {
    if common::gpu("a_device_destroyed_at_every_step_of_a_split_gives_typed_errors").is_none() {
        return;
    }
    install_logger();
    let problem = Arc::new(Problem::new());
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let mut report = Vec::new();
    for path in [Path::Async, Path::Blocking, Path::Runtime] {
        // A clean run counts the steps.
        let clean = run(&problem, path, None, None, &uncaptured);
        assert!(clean.error.is_none(), "{path:?}: {:?}", clean.error);
        assert!(clean.calls > 10, "{path:?}: {} API calls seen", clean.calls);
        let (mut typed, mut late) = (0, 0);
        let mut calls = std::collections::BTreeSet::new();
        for at in 0..clean.calls {
            let outcome = run(&problem, path, Some(at), None, &uncaptured);
            let context = format!("{path:?} destroyed at call {at} {:?}", outcome.hit);
            check_typed(&outcome, &context);
            typed += usize::from(outcome.error.is_some());
            let (call, in_time) = outcome.hit.expect("the chosen call was reached");
            late += usize::from(!in_time);
            calls.insert(call);
        }
        report.push(format!(
            "{path:?}: {} steps ({} kinds of call), {typed} typed errors, {late} destroyed just after their step",
            clean.calls,
            calls.len()
        ));
        // Destroyed at the first call, nothing can succeed.
        let first = run(&problem, path, Some(0), None, &uncaptured);
        assert!(first.error.is_some(), "{path:?}");
    }
    let uncaptured = uncaptured.lock().unwrap();
    println!(
        "{}; {} uncaptured errors; {:.1} s",
        report.join("; "),
        uncaptured.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(uncaptured.is_empty(), "uncaptured: {uncaptured:?}");
}

#[test]
fn a_device_destroyed_after_random_delays_gives_typed_errors() {
    if common::gpu("a_device_destroyed_after_random_delays_gives_typed_errors").is_none() {
        return;
    }
    install_logger();
    let problem = Arc::new(Problem::new());
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let mut rng = Rng::new(405);
    let mut report = Vec::new();
    for (path, runs) in [(Path::Async, 200), (Path::Blocking, 100)] {
        // How long a split takes here, so that delays spread over it.
        let clean = run(&problem, path, None, None, &uncaptured);
        assert!(clean.error.is_none(), "{path:?}: {:?}", clean.error);
        let span = clean.took.as_micros() as usize * 5 / 4;
        let (mut typed, mut exact) = (0, 0);
        for i in 0..runs {
            let delay = Duration::from_micros(rng.below(span + 1) as u64);
            let outcome = run(&problem, path, None, Some(delay), &uncaptured);
            check_typed(&outcome, &format!("{path:?} run {i} after {delay:?}"));
            typed += usize::from(outcome.error.is_some());
            exact += usize::from(outcome.error.is_none());
        }
        assert!(typed > 0, "{path:?}: no run saw the destruction");
        report.push(format!(
            "{path:?}: {runs} runs over {span} µs, {typed} typed errors, {exact} exact"
        ));
    }
    let uncaptured = uncaptured.lock().unwrap();
    println!(
        "{}; {} uncaptured errors; {:.1} s",
        report.join("; "),
        uncaptured.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(uncaptured.is_empty(), "uncaptured: {uncaptured:?}");
}

/// The crate's `Poller` polls while the split copies its outputs out of a
/// mapped staging buffer; a device destroyed meanwhile is released at the
/// poller's next poll, which must wait for the copy (wgpu 30 frees mapped
/// memory under a live view: without the crate's lock this dies of SIGSEGV
/// on GL). 32 MiB outputs make the copy long enough to be hit.
#[test]
fn a_device_destroyed_while_outputs_are_copied_out_gives_typed_errors() {
    if common::gpu("a_device_destroyed_while_outputs_are_copied_out_gives_typed_errors").is_none() {
        return;
    }
    let problem = Arc::new(Problem::with_rows(8192));
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    let clean = run(&problem, Path::Async, None, None, &uncaptured);
    assert!(clean.error.is_none(), "{:?}", clean.error);
    let span = clean.took.as_micros() as usize;
    let mut rng = Rng::new(406);
    let (mut typed, mut exact) = (0, 0);
    for i in 0..40 {
        // The second half of the split: the wait and the copy out.
        let delay = Duration::from_micros((span / 2 + rng.below(span / 2 + 1)) as u64);
        let outcome = run(&problem, Path::Async, None, Some(delay), &uncaptured);
        check_typed(&outcome, &format!("run {i} after {delay:?}"));
        typed += usize::from(outcome.error.is_some());
        exact += usize::from(outcome.error.is_none());
    }
    println!("40 runs over {span} µs: {typed} typed errors, {exact} exact");
    let uncaptured = uncaptured.lock().unwrap();
    assert!(uncaptured.is_empty(), "uncaptured: {uncaptured:?}");
}
