//! [`Poller`]: drives a native device's callbacks from a thread of its own.
//!
//! wgpu's rule: on native backends, `map_async` callbacks (and with them
//! [`crate::gpu::RoundTrip::split_async`]) complete only inside
//! `Device::poll`; a future awaiting them never resolves while nobody polls.
//! Runtimes usually poll in their own loop; the `Poller` is for those that
//! do not. On the web the browser drives callbacks and no poller is needed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Polls a device on a background thread until dropped, so that futures
/// waiting for the GPU (such as `split_async`) complete without blocking
/// their executor.
///
/// # Examples
///
/// ```no_run
/// # use wgpu_split::gpu::{GpuContext, Poller, RoundTrip};
/// # use wgpu_split::{HostTensor, OnnxSplit};
/// let ctx = GpuContext::new_default()?;
/// let splitter = ctx.splitter()?;
/// let _poller = Poller::new(&ctx.device);
/// let input = HostTensor::from_slice(&[2, 4], &[0f32; 8])?;
/// let op = OnnxSplit::new(13, 2).axis(1).into();
/// // Any executor; the GPU work completes while it runs other tasks.
/// let outputs = pollster::block_on(RoundTrip::new(&splitter).split_async(&op, &input))?;
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug)]
pub struct Poller {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// How long the thread sleeps between polls while work is in flight. Each
/// poll returns at once: a poll that waited for the GPU would hold the
/// crate's lock against its own reads of mapped memory that long
/// (`scope::poll`), and an async read would wait for it.
const BUSY: Duration = Duration::from_micros(200);
/// How long the thread sleeps when nothing is in flight.
const IDLE: Duration = Duration::from_millis(1);

impl Poller {
    /// Starts polling `device` (a clone of the handle is kept).
    pub fn new(device: &wgpu::Device) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (device, flag) = (device.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("wgpu-split poller".to_string())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let polled = super::scope::poll(&device, wgpu::PollType::Poll);
                    // Nothing in flight, or a lost device (whose pending
                    // callbacks have already been called with errors).
                    if polled.as_ref().is_ok_and(|s| s.is_queue_empty()) || polled.is_err() {
                        std::thread::sleep(IDLE);
                    } else {
                        std::thread::sleep(BUSY);
                    }
                }
            })
            .ok();
        Poller { stop, thread }
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
