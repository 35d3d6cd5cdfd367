//! GPU execution: a [`GpuSplitter`] compiles the kernels and records a
//! planned split into the caller's command encoder
//! ([`GpuSplitter::encode`]) or compute pass ([`GpuSplitter::prepare`]),
//! reading the caller's input region and writing each output into the
//! caller's region for it (or one arena). It submits nothing and reads
//! nothing back; [`RoundTrip`] is the convenience path that does, and
//! [`Calibration::measure`] measures the device's [`crate::plan::CostModel`].

mod blocking;
mod cache;
mod calibrate;
mod calibration_timer;
mod checks;
mod concat_round_trip;
mod context;
mod device_class;
mod dispatch;
pub(crate) mod error;
mod moves;
mod permuted;
mod permuted_round_trip;
mod pipelines;
#[cfg(not(target_arch = "wasm32"))]
mod poller;
mod prepared;
mod readback;
mod region;
mod resources;
mod round_trip;
mod scope;
mod splitter;
mod splitter_cache;
mod start;
#[cfg(feature = "analysis")]
pub mod trace;

pub use cache::{CachePolicy, CacheUsage};
pub use calibrate::{Calibration, Figure, Timing};
pub use context::GpuContext;
pub use moves::{Move, MovePlan};
#[cfg(not(target_arch = "wasm32"))]
pub use poller::Poller;
pub use prepared::{EncodeCounts, PreparedSplit};
pub use region::BufferRegion;
pub use round_trip::{HostInput, RoundTrip};
pub use splitter::{GpuSplitter, ModelOrigin};
pub use splitter_cache::SplitterCache;
