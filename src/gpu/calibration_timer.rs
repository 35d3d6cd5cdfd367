//! The clock calibration runs on: timestamp queries around the work when
//! the device has them, else the wall time of a submission less that of an
//! empty one; its resolution, measured, and the repeats that lift short
//! probes above it; the estimate of a figure from its runs.
//!
//! Every step is async: the blocking [`crate::gpu::Calibration::measure`]
//! polls the device for each submission before awaiting it
//! ([`Wait::Poll`]); [`crate::gpu::Calibration::measure_async`] only awaits
//! ([`Wait::Await`]: the browser, or the caller's polling, calls back). On
//! the web the crate reads no clock: it times with timestamp queries only,
//! and the host's costs per command stay the class's.

use super::blocking::{Stopwatch, Wait};
use super::error::DeviceError;
use super::scope::{map_read, poll, read_mapped_async, scoped};
use super::splitter::GpuSplitter;
use crate::error::Result;

/// Measurements per figure, after one warm-up ([`crate::gpu::Calibration::measure`]).
pub(super) const RUNS: usize = 9;

/// Measurements per figure of the short calibration a splitter made on a
/// software adapter runs ([`crate::gpu::GpuSplitter::new`]).
pub(super) const QUICK_RUNS: usize = 3;

/// Every figure is timed over at least this many of the timer's quanta
/// (WebGPU quantises timestamps: about 65 µs was measured on wasm, so a
/// 5 µs dispatch reads as 0 or 65 µs).
pub(super) const QUANTA_PER_FIGURE: f64 = 20.0;

/// Most times a probe is repeated in one timed submission to lift it above
/// the timer's resolution.
pub(super) const MAX_REPEATS: usize = 256;

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

/// A figure's estimate from its runs, `per_round` of them a round: the
/// lowest but one round's worth (with one a round, the second lowest: the
/// lowest, not trusted alone, may be a freak; with more, the same rank
/// among the rounds, so that a figure sampled several times a round is
/// not estimated lower than one sampled once), and whether the middle run
/// agrees with it within 2x.
fn estimate(mut times: Vec<f64>, per_round: usize) -> (f64, bool) {
    times.sort_by(f64::total_cmp);
    let low = times[per_round.max(1).min(times.len() - 1)];
    (low, times[times.len() / 2] <= 2.0 * low)
}

/// The order a timed round runs its records in, record `i` `samples[i]`
/// times: in as many passes as the most sampled record needs, each pass
/// running the records sampled that often and its share of the ones
/// sampled once. A record's samples are thus spread over the round, with
/// other records' work between them, rather than run back to back on the
/// caches the previous one left warm.
fn round_order(samples: &[usize]) -> Vec<usize> {
    let passes = samples.iter().copied().max().unwrap_or(1).max(1);
    let once: Vec<usize> = (0..samples.len()).filter(|&i| samples[i] <= 1).collect();
    (0..passes)
        .flat_map(|pass| {
            let share = &once[pass * once.len() / passes..(pass + 1) * once.len() / passes];
            (0..samples.len())
                .filter(move |&i| samples[i] > pass && samples[i] > 1)
                .chain(share.iter().copied())
        })
        .collect()
}

/// Work a figure times: it records its commands into the encoder. Shared
/// across threads on native targets, so that the calibration's future is
/// `Send` (wgpu's handles are not `Send` on the web).
#[cfg(not(target_arch = "wasm32"))]
pub(super) type Record<'a> = dyn Fn(&mut wgpu::CommandEncoder) -> Result<()> + Send + Sync + 'a;

/// Work a figure times: it records its commands into the encoder.
#[cfg(target_arch = "wasm32")]
pub(super) type Record<'a> = dyn Fn(&mut wgpu::CommandEncoder) -> Result<()> + 'a;

/// A measured time and whether its runs were steady.
#[derive(Debug, Clone, Copy)]
pub(super) struct Measured {
    pub(super) seconds: f64,
    pub(super) steady: bool,
    /// Host seconds from the encoder's creation to `submit` returning
    /// (recording, finish, submit) with the record recorded once: the low
    /// end of the runs; `None` without a clock (the web).
    pub(super) host_seconds: Option<f64>,
}

/// Where the timestamps are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamps {
    /// Commands of the encoder around the work
    /// (`TIMESTAMP_QUERY_INSIDE_ENCODERS`, native only).
    InEncoder,
    /// An empty compute pass's beginning before the work and another's end
    /// after it (`TIMESTAMP_QUERY` alone: WebGPU's `timestamp-query`).
    AroundPasses,
}

/// Times recorded work: timestamp queries around it when the device has
/// them, else the wall time of submit + wait less that of an empty submit
/// just before.
pub(super) struct Timer<'a> {
    splitter: &'a GpuSplitter,
    queries: Option<(Stamps, wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    /// Seconds: [`Timer::measure_resolution`] sets it.
    resolution: f64,
    /// Timed runs per figure ([`RUNS`] or [`QUICK_RUNS`]).
    runs: usize,
    /// Who drives the callbacks each run awaits.
    wait: Wait,
}

impl<'a> Timer<'a> {
    /// A timer of `runs` timed runs per figure, whose runs wait as `wait`
    /// says.
    ///
    /// # Errors
    ///
    /// [`DeviceError::NoTimer`] on the web when the device has no timestamp
    /// queries (the web gives the crate no clock).
    pub(super) fn new(splitter: &'a GpuSplitter, runs: usize, wait: Wait) -> Result<Self> {
        let device = splitter.device();
        let features = device.features();
        let stamps = if features.contains(
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
        ) {
            Some(Stamps::InEncoder)
        } else if features.contains(wgpu::Features::TIMESTAMP_QUERY) {
            Some(Stamps::AroundPasses)
        } else if Stopwatch::start().seconds().is_none() {
            return Err(DeviceError::NoTimer.into());
        } else {
            None
        };
        let queries = if let Some(stamps) = stamps {
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
                    stamps,
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
            runs,
            wait,
        })
    }

    /// Measures the timer's resolution with `tiny` (a one-word dispatch)
    /// repeated 1, 2, 4, ... 64 times; under the wall clock, the spread of
    /// empty submissions.
    pub(super) async fn measure_resolution(&mut self, tiny: &Record<'_>) -> Result<()> {
        self.resolution = if self.queries.is_some() {
            let mut durations = Vec::new();
            for k in (0..7).map(|i| 1usize << i) {
                durations.push(self.once(&|e| (0..k).try_for_each(|_| tiny(e))).await?.0);
            }
            let tick = f64::from(self.splitter.queue().get_timestamp_period()) * 1e-9;
            resolution_from(&durations, tick)
        } else {
            let mut empties = Vec::with_capacity(self.runs);
            for _ in 0..self.runs {
                empties.push(self.once(&|_| Ok(())).await?.0);
            }
            empties.sort_by(f64::total_cmp);
            (empties[self.runs / 2] - empties[0]).max(1e-6)
        };
        Ok(())
    }

    /// The resolution [`Timer::measure_resolution`] found (0 before).
    pub(super) fn resolution(&self) -> f64 {
        self.resolution
    }

    pub(super) fn timing(&self) -> Timing {
        if self.queries.is_some() {
            Timing::Timestamps
        } else {
            Timing::WallClock
        }
    }

    /// Seconds of each of `records` over the timer's runs after a warm-up
    /// ([`estimate`]), the runs interleaved: round `r` runs every record
    /// once, so figures that are compared (one kernel against another)
    /// see the same slow and fast minutes of the device (lavapipe's rates
    /// swing 2x between minutes: measured one after the other, a kernel
    /// 1.45x faster than another on the same split was once calibrated
    /// slower). A record too short for the timer is repeated in one
    /// submission ([`repeats_for`]) and its figure divided; one that even
    /// [`MAX_REPEATS`] cannot lift is unsteady. Under the wall clock each
    /// run is paired with an empty submission just before it and counts
    /// the difference; the figure is steady only if the empty submissions
    /// themselves are (their middle within half the figure of their low
    /// end): on a queue that other work keeps full, every submission waits
    /// behind it by a varying amount, and the figure cannot be told from
    /// that wait.
    ///
    /// Record `i` is timed `samples[i]` times a round (at least once):
    /// cheap probes timed several times a round are sampled across the
    /// whole calibration, so a disturbance of part of it (another process
    /// on the host's memory for a tenth of a second) cannot decide their
    /// figure, at little cost.
    pub(super) async fn measure_all(
        &self,
        records: &[&Record<'_>],
        samples: &[usize],
    ) -> Result<Vec<Measured>> {
        let samples: Vec<usize> = (0..records.len())
            .map(|i| samples.get(i).copied().unwrap_or(1).max(1))
            .collect();
        let mut measured = self
            .rounds(records, &vec![1; records.len()], &samples)
            .await?;
        // Records too short for the timer: (index, repeats).
        let mut short = Vec::new();
        for (i, m) in measured.iter_mut().enumerate() {
            match repeats_for(m.seconds, self.resolution) {
                None => m.steady = false,
                Some(1) => {}
                Some(k) => short.push((i, k)),
            }
        }
        let short_records: Vec<&Record<'_>> = short.iter().map(|&(i, _)| records[i]).collect();
        let ks: Vec<usize> = short.iter().map(|&(_, k)| k).collect();
        let short_samples: Vec<usize> = short.iter().map(|&(i, _)| samples[i]).collect();
        let repeated = self.rounds(&short_records, &ks, &short_samples).await?;
        for (&(i, k), m) in short.iter().zip(repeated) {
            // The host time stays that of one record per submission.
            measured[i].seconds = m.seconds / k as f64;
            measured[i].steady = m.steady && m.seconds >= QUANTA_PER_FIGURE * self.resolution;
        }
        Ok(measured)
    }

    /// One warm-up round and the timer's timed rounds of `records`, record
    /// `i` recorded `repeats[i]` times per run and run `samples[i]` times
    /// per timed round.
    async fn rounds(
        &self,
        records: &[&Record<'_>],
        repeats: &[usize],
        samples: &[usize],
    ) -> Result<Vec<Measured>> {
        let wall_clock = self.queries.is_none();
        let mut runs = vec![Vec::with_capacity(self.runs); records.len()];
        let mut empties = vec![Vec::with_capacity(self.runs); records.len()];
        let mut hosts = vec![Vec::with_capacity(self.runs); records.len()];
        let warm_up: Vec<usize> = (0..records.len()).collect();
        let timed = round_order(samples);
        for run in 0..=self.runs {
            for &i in if run == 0 { &warm_up } else { &timed } {
                let (record, k) = (records[i], repeats[i]);
                let empty = if wall_clock {
                    self.once(&|_| Ok(())).await?.0
                } else {
                    0.0
                };
                let (work, host) = self.once(&|e| (0..k).try_for_each(|_| record(e))).await?;
                if run > 0 {
                    runs[i].push((work - empty).max(1e-9));
                    empties[i].push(empty);
                    hosts[i].extend(host);
                }
            }
        }
        Ok(runs
            .into_iter()
            .zip(empties)
            .zip(hosts)
            .zip(samples)
            .map(|(((runs, mut empties), hosts), &per_round)| {
                let (seconds, mut steady) = estimate(runs, per_round);
                if wall_clock {
                    let (low, _) = estimate(empties.clone(), per_round);
                    empties.sort_by(f64::total_cmp);
                    steady &= empties[empties.len() / 2] - low <= 0.5 * seconds;
                }
                Measured {
                    seconds,
                    steady,
                    host_seconds: (!hosts.is_empty()).then(|| estimate(hosts, per_round).0),
                }
            })
            .collect())
    }

    /// Device seconds of one run of `record` (timestamps, else wall time
    /// of submit and wait) and host seconds from the encoder's creation to
    /// `submit` returning where there is a clock (the timestamp commands
    /// are recorded either way when the device has them).
    async fn once(&self, record: &Record<'_>) -> Result<(f64, Option<f64>)> {
        let device = self.splitter.device();
        let (index, started, host) = scoped(device, "timing a calibration probe", || {
            let recording = Stopwatch::start();
            let mut encoder = device.create_command_encoder(&Default::default());
            match &self.queries {
                Some((Stamps::InEncoder, set, ..)) => {
                    encoder.write_timestamp(set, 0);
                    record(&mut encoder)?;
                    encoder.write_timestamp(set, 1);
                }
                Some((Stamps::AroundPasses, set, ..)) => {
                    stamp_pass(&mut encoder, set, Some(0), None);
                    record(&mut encoder)?;
                    stamp_pass(&mut encoder, set, None, Some(1));
                }
                None => record(&mut encoder)?,
            }
            if let Some((_, set, resolve, readback)) = &self.queries {
                encoder.resolve_query_set(set, 0..2, resolve, 0);
                encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, 16);
            }
            let started = Stopwatch::start();
            let index = self.splitter.queue().submit([encoder.finish()]);
            Ok::<_, crate::Error>((index, started, recording.seconds()))
        })??;
        let Some((_, _, _, readback)) = &self.queries else {
            self.done(index).await?;
            // Only a build with a clock times by the wall (`Timer::new`).
            return Ok((started.seconds().unwrap_or(0.0), host));
        };
        let (sender, mapped) = futures_intrusive::channel::shared::oneshot_channel();
        map_read(device, readback, "reading timestamps", move |result| {
            // The receiver only goes away if the calibration was dropped.
            let _ = sender.send(result);
        })?;
        self.done(index).await?;
        let mapped = mapped.receive().await.ok_or_else(|| DeviceError::Gpu {
            detail: "reading timestamps: the map callback was dropped".to_string(),
        })?;
        mapped.map_err(|e| DeviceError::Gpu {
            detail: format!("reading timestamps: {e}"),
        })?;
        let stamps = read_mapped_async(device, readback, "reading timestamps").await?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&stamps);
        let period = f64::from(self.splitter.queue().get_timestamp_period());
        Ok((
            ticks[1].saturating_sub(ticks[0]) as f64 * period * 1e-9,
            host,
        ))
    }

    /// Submission `index` done: polled for alone with [`Wait::Poll`] (on a
    /// queue other threads keep feeding, waiting for every submission would
    /// wait for theirs too); with [`Wait::Await`], the queue's
    /// work-done callback awaited.
    async fn done(&self, index: wgpu::SubmissionIndex) -> Result<()> {
        let device = self.splitter.device();
        if self.wait == Wait::Poll {
            poll(
                device,
                wgpu::PollType::Wait {
                    submission_index: Some(index),
                    timeout: Some(super::readback::READBACK_TIMEOUT),
                },
            )
            .map_err(|e| DeviceError::Gpu {
                detail: format!("calibrating: {e}"),
            })?;
            return Ok(());
        }
        let (sender, done) = futures_intrusive::channel::shared::oneshot_channel();
        scoped(device, "waiting for a calibration probe", || {
            self.splitter.queue().on_submitted_work_done(move || {
                let _ = sender.send(());
            })
        })?;
        done.receive().await.ok_or_else(|| DeviceError::Gpu {
            detail: "calibrating: the work-done callback was dropped".to_string(),
        })?;
        Ok(())
    }
}

/// An empty compute pass that writes timestamp `beginning` as it begins
/// and `end` as it ends.
fn stamp_pass(
    encoder: &mut wgpu::CommandEncoder,
    set: &wgpu::QuerySet,
    beginning: Option<u32>,
    end: Option<u32>,
) {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some("wgpu-split calibration timestamp"),
        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: beginning,
            end_of_pass_write_index: end,
        }),
    });
}

#[cfg(test)]
mod tests {
    use super::{MAX_REPEATS, estimate, repeats_for, resolution_from, round_order};

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
    fn a_round_spreads_the_samples_of_cheap_records_between_the_others() {
        // Three cheap records four times a round, six kernels once.
        let samples = [4, 4, 4, 1, 1, 1, 1, 1, 1];
        assert_eq!(
            round_order(&samples),
            [0, 1, 2, 3, 0, 1, 2, 4, 5, 0, 1, 2, 6, 0, 1, 2, 7, 8]
        );
        // Once each: the records in order.
        assert_eq!(round_order(&[1, 1, 1]), [0, 1, 2]);
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
        assert_eq!(estimate(idle, 1), (1.0, true));
        // Busy now and then: outliers above do not move the estimate.
        let spiky = vec![1.0, 40.0, 1.1, 1.05, 25.0, 1.2, 1.0, 30.0, 1.1];
        assert_eq!(estimate(spiky, 1), (1.0, true));
        // Busy most of the time: the middle run is far above the low end.
        let busy = vec![1.0, 40.0, 1.1, 9.0, 25.0, 12.0, 8.0, 30.0, 3.5];
        assert_eq!(estimate(busy, 1), (1.1, false));
        // Three a round over three rounds: the rank skips a round's worth,
        // and a disturbed stretch of the calibration (two slow rounds of
        // three) does not decide the figure.
        let disturbed_stretch = vec![2.0, 2.1, 1.9, 2.2, 1.0, 2.05, 1.02, 1.05, 1.01];
        assert_eq!(estimate(disturbed_stretch, 3), (1.05, true));
        let three_rounds_of_one = vec![2.0, 2.1, 1.0];
        assert_eq!(estimate(three_rounds_of_one, 1), (2.0, true));
    }
}
