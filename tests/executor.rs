//! The async path never blocks its executor: `split_async` submits and
//! awaits wgpu's callback, driven by a `Poller` (wgpu's rule on native: only
//! `Device::poll` delivers callbacks). The tests run one at a time (they time
//! the GPU, which the others would slow down).

mod common;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use common::{Rng, gpu, random_tensor};
use wgpu_split::error::DeviceError;
use wgpu_split::gpu::{GpuContext, Poller};
use wgpu_split::{ElementType, Error, HostTensor, OnnxSplit};

/// One test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A split big enough to take tens of milliseconds on lavapipe.
fn big_problem() -> (wgpu_split::Operator, HostTensor) {
    let mut rng = Rng::new(9);
    let input = random_tensor(&mut rng, ElementType::Uint8, &[4096, 4099]);
    let op = OnnxSplit::new(13, 2)
        .axis(1)
        .split_input(wgpu_split::ParamTensor::int64_1d(&[2049, 2050]))
        .into();
    (op, input)
}

#[test]
fn split_async_does_not_block_its_executor() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(gpu) = gpu("split_async_does_not_block_its_executor") else {
        return;
    };
    let _poller = Poller::new(gpu.device());
    let (op, input) = big_problem();
    // Once blocking first, so that compiling the kernel (host work in the
    // first poll) is not part of what the ticker measures.
    let blocking = Instant::now();
    common::round_trip(gpu).split(&op, &input).unwrap();
    let blocking = blocking.elapsed();
    // GPU work queued ahead of the split, about twice as long as the whole
    // blocking split took: on a fast GPU the split's own device time is
    // microseconds beside its upload and copy out (an H200: 9.1 of 9.7 ms
    // inside the polls, all of it host work), and the test must tell
    // waiting for the GPU inside a poll from doing host work there. Not
    // where the driver's submit itself waits for earlier work (lavapipe
    // runs a submission's commands before `vkQueueSubmit` returns): there
    // any submit would wait, and the split's own GPU time, tens of
    // milliseconds, is the gap.
    let busy = BusyWork::new(gpu.device());
    let copy = busy.time_one_copy(gpu.queue());
    let copies = (2.0 * blocking.as_secs_f64() / copy.as_secs_f64()).ceil() as u32;
    let copies = copies.clamp(1, 500);
    let queued_ahead = !busy.submit_waits(gpu.queue(), copy);
    if queued_ahead {
        busy.queue(gpu.queue(), copies);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (ticks, during, outputs) = runtime.block_on(async {
        let count = Arc::new(AtomicU32::new(0));
        let counter = count.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(1)).await;
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        let started = Instant::now();
        let timed = PollTimed::new(common::round_trip(gpu).split_async(&op, &input));
        let (outputs, inside, polls) = timed.await;
        let during = started.elapsed();
        ticker.abort();
        (
            count.load(Ordering::Relaxed),
            during,
            (outputs, inside, polls),
        )
    });
    let (outputs, inside, polls) = outputs;
    assert_eq!(outputs.unwrap(), op.split_on_host(&input).unwrap());
    println!(
        "async split of {during:?}: {polls} polls, {inside:?} inside them; a 1 ms ticker on the same thread ran {ticks} times"
    );
    // A future that blocks inside poll is done in one poll that takes the
    // whole split, and the ticker never runs. Here the first poll uploads
    // and submits and the last copies the outputs out (host work); the
    // GPU's work, the queued copies and the split, runs between polls,
    // with the executor free. Shares of one run, so a busy machine slows both sides
    // alike (a rate of ticks did not hold on a busy CI machine: 1 tick in
    // 11.6 ms).
    let outside = during.saturating_sub(inside);
    println!(
        "queued ahead: {} copies of {copy:?} (the blocking split took {blocking:?})",
        if queued_ahead { copies } else { 0 }
    );
    assert!(polls >= 2, "done in {polls} poll");
    assert!(
        outside.as_secs_f64() >= 0.2 * during.as_secs_f64(),
        "the executor was free for {outside:?} of {during:?}"
    );
    assert!(ticks >= 1, "the ticker never ran in {during:?}");
}

/// Copies between two 64 MiB buffers: GPU work that takes a known time.
struct BusyWork {
    device: wgpu::Device,
    from: wgpu::Buffer,
    to: wgpu::Buffer,
}

impl BusyWork {
    const BYTES: u64 = 64 << 20;

    fn new(device: &wgpu::Device) -> Self {
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("busy work"),
                size: Self::BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        BusyWork {
            device: device.clone(),
            from: buffer(wgpu::BufferUsages::COPY_SRC),
            to: buffer(wgpu::BufferUsages::COPY_DST),
        }
    }

    /// Submits `count` copies, each in a command buffer of its own.
    fn queue(&self, queue: &wgpu::Queue, count: u32) {
        let device = &self.device;
        queue.submit((0..count).map(|_| {
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&self.from, 0, &self.to, 0, Self::BYTES);
            encoder.finish()
        }));
    }

    /// True when a submission waits for the work queued before it: an
    /// empty submit behind copies that take 20 times `copy` returned after
    /// more than half of their time.
    fn submit_waits(&self, queue: &wgpu::Queue, copy: Duration) -> bool {
        self.queue(queue, 20);
        let started = Instant::now();
        queue.submit([]);
        let waited = started.elapsed();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .unwrap();
        waited > copy * 10
    }

    /// How long one copy takes, submitted and waited for (the fastest of
    /// three, after a warm-up).
    fn time_one_copy(&self, queue: &wgpu::Queue) -> Duration {
        let device = &self.device;
        let mut fastest = Duration::MAX;
        for _ in 0..4 {
            let started = Instant::now();
            self.queue(queue, 1);
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
            fastest = fastest.min(started.elapsed());
        }
        fastest.max(Duration::from_micros(1))
    }
}

/// A future's output with the time spent inside its polls and their number.
struct PollTimed<F> {
    inner: std::pin::Pin<Box<F>>,
    inside: Duration,
    polls: u32,
}

impl<F: Future> PollTimed<F> {
    fn new(inner: F) -> Self {
        PollTimed {
            inner: Box::pin(inner),
            inside: Duration::ZERO,
            polls: 0,
        }
    }
}

impl<F: Future> Future for PollTimed<F> {
    type Output = (F::Output, Duration, u32);

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let started = Instant::now();
        let polled = self.inner.as_mut().poll(cx);
        let took = started.elapsed();
        self.inside += took;
        self.polls += 1;
        polled.map(|output| (output, self.inside, self.polls))
    }
}

#[test]
fn two_async_splits_are_in_flight_together() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(gpu) = gpu("two_async_splits_are_in_flight_together") else {
        return;
    };
    let (op, input) = big_problem();
    let mut first = pin!(common::round_trip(gpu).split_async(&op, &input));
    let mut second = pin!(common::round_trip(gpu).split_async(&op, &input));
    let mut cx = Context::from_waker(Waker::noop());
    // No poller yet: each future submits its work and waits, without
    // blocking, for the GPU; both are then in flight at once.
    assert!(
        first.as_mut().poll(&mut cx).is_pending(),
        "submitted, not done"
    );
    assert!(
        second.as_mut().poll(&mut cx).is_pending(),
        "submitted, not done"
    );
    let poller = Poller::new(gpu.device());
    let started = Instant::now();
    let (mut a, mut b) = (None, None);
    while a.is_none() || b.is_none() {
        if a.is_none()
            && let Poll::Ready(r) = first.as_mut().poll(&mut cx)
        {
            a = Some(r);
        }
        if b.is_none()
            && let Poll::Ready(r) = second.as_mut().poll(&mut cx)
        {
            b = Some(r);
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never completed"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(poller);
    let expected = op.split_on_host(&input).unwrap();
    assert_eq!(a.unwrap().unwrap(), expected);
    assert_eq!(b.unwrap().unwrap(), expected);
}

#[test]
fn a_lost_device_ends_the_future_with_an_error_not_a_hang() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if gpu("a_lost_device_ends_the_future_with_an_error_not_a_hang").is_none() {
        return;
    }
    let ctx = GpuContext::new_default().unwrap();
    let splitter = ctx.splitter().unwrap();
    let (op, input) = big_problem();
    let _poller = Poller::new(&ctx.device);
    let mut future = pin!(common::round_trip(&splitter).split_async(&op, &input));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(future.as_mut().poll(&mut cx).is_pending());
    ctx.device.destroy();
    let started = Instant::now();
    let result = loop {
        if let Poll::Ready(r) = future.as_mut().poll(&mut cx) {
            break r;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the future hung after the device was lost"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    // The work may have finished before the loss; if not, a typed error.
    if let Err(e) = result {
        assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    }
    println!(
        "lost device: the future ended after {:?}",
        started.elapsed()
    );
}
