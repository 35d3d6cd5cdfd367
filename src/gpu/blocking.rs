//! The blocking forms' one way to wait, and the web's refusal of it.
//!
//! Each blocking form of the crate ([`crate::gpu::GpuContext::new_default`],
//! the [`crate::gpu::RoundTrip`] calls without `_async`,
//! [`crate::gpu::Calibration::measure`]) is its async twin run to the end
//! on the calling thread, with [`Wait::Poll`]: the crate polls the device
//! for its own submissions before it awaits their callbacks, so the
//! future is ready by the time it is awaited and nothing parks for long.
//!
//! On the web (`wasm32`) nothing may block: the browser resolves WebGPU's
//! promises (adapter, device, `mapAsync`, error scopes) only once control
//! returns to its event loop, so a thread that parks waiting for one waits
//! forever, and `Device::poll` returns at once without driving anything.
//! There every blocking form returns [`DeviceError::BlocksOnTheWeb`] naming
//! its async twin, before it does any work.

use std::future::Future;

#[cfg(target_arch = "wasm32")]
use super::error::DeviceError;
use crate::error::Result;

/// Who drives the callbacks an async step awaits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// The blocking forms (native only): the crate polls the device until
    /// the step's submission is done, bounded by
    /// [`crate::gpu::RoundTrip::READBACK_TIMEOUT`], before it awaits.
    Poll,
    /// The async forms: the callbacks come from whoever drives the device
    /// (the caller's polling loop or a [`crate::gpu::Poller`] on native,
    /// the browser on the web); the crate only awaits.
    Await,
}

/// `step`, a blocking form's async twin run with [`Wait::Poll`], run to
/// the end on this thread; on the web [`DeviceError::BlocksOnTheWeb`]
/// (`call` names the blocking form, `instead` its async twin), `step`
/// never polled.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on<T>(
    _call: &'static str,
    _instead: &'static str,
    step: impl Future<Output = Result<T>>,
) -> Result<T> {
    pollster::block_on(step)
}

/// See the native form: on the web nothing may block.
#[cfg(target_arch = "wasm32")]
pub(crate) fn block_on<T>(
    call: &'static str,
    instead: &'static str,
    step: impl Future<Output = Result<T>>,
) -> Result<T> {
    drop(step);
    Err(DeviceError::BlocksOnTheWeb { call, instead }.into())
}

/// Seconds since `start`, where this build has a clock: not on the web,
/// where `std::time::Instant::now` panics ("time not implemented on this
/// platform") and the crate takes no dependency to reach the browser's.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopwatch(std::time::Instant);

/// On the web: no clock; every reading is `None`.
#[cfg(target_arch = "wasm32")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopwatch;

impl Stopwatch {
    /// A stopwatch started now.
    pub(crate) fn start() -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        return Stopwatch(std::time::Instant::now());
        #[cfg(target_arch = "wasm32")]
        return Stopwatch;
    }

    /// Seconds since [`Stopwatch::start`]; `None` without a clock.
    pub(crate) fn seconds(&self) -> Option<f64> {
        #[cfg(not(target_arch = "wasm32"))]
        return Some(self.0.elapsed().as_secs_f64());
        #[cfg(target_arch = "wasm32")]
        return None;
    }
}

#[cfg(test)]
mod tests {
    use super::{Stopwatch, block_on};

    #[test]
    fn natively_a_blocking_form_runs_its_twin_and_the_clock_reads() {
        assert_eq!(block_on("a", "b", async { Ok(7) }).unwrap(), 7);
        assert!(Stopwatch::start().seconds().unwrap() >= 0.0);
    }
}
