//! GPU execution: a [`GpuSplitter`] owns the compiled gather shader and
//! records a planned split into the caller's command encoder
//! ([`GpuSplitter::encode`]) or compute pass ([`GpuSplitter::prepare`]),
//! reading the caller's input region and writing each output into the
//! caller's region for it (or one arena). It submits nothing and reads
//! nothing back; [`GpuSplitter::split`] is the convenience path that does.

mod cache;
mod calibrate;
mod context;
mod device_class;
mod dispatch;
mod kernels;
#[cfg(not(target_arch = "wasm32"))]
mod poller;
mod prepared;
mod probe;
mod readback;
mod region;
mod resources;
mod scope;
mod splitter;

pub use cache::CachePolicy;
pub use context::GpuContext;
pub use device_class::device_class;
pub use kernels::{plan_shader_source, shader_source};
#[cfg(not(target_arch = "wasm32"))]
pub use poller::Poller;
pub use prepared::PreparedSplit;
pub use readback::READBACK_TIMEOUT;
pub use region::BufferRegion;
pub use splitter::GpuSplitter;
