//! GPU execution: a [`GpuSplitter`] owns the compiled gather shader and
//! records a planned split into the caller's command encoder, reading the
//! caller's input buffer and writing the caller's arena buffer. It submits
//! nothing and reads nothing back; [`GpuSplitter::split`] is the convenience
//! path that does.

mod cache;
mod context;
mod kernels;
mod readback;
mod region;
mod scope;
mod splitter;

pub use context::GpuContext;
pub use kernels::shader_source;
pub use readback::READBACK_TIMEOUT;
pub use region::BufferRegion;
pub use splitter::GpuSplitter;
