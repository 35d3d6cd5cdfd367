//! The crate's error: one enum of small enums, one per layer, each beside
//! the code that raises it. `?` converts any of them into [`Error`]; match
//! on the layer's enum for the details. This module sits above the layers:
//! it names their enums, and only the top layers (`gpu`, `host`, `onnx`)
//! return [`Error`]. Every message names what was wrong
//! (the operator, the axis, the dimension and the values; the buffer and
//! the bytes).

pub use crate::gpu::error::DeviceError;
pub use crate::onnx::error::OnnxError;
pub use crate::plan::error::{EncodeError, PlanError, PlanMismatch};
pub use crate::semantics::concat::error::ConcatError;
pub use crate::semantics::error::ResolveError;
pub use crate::semantics::frameworks::error::FrameworkError;
pub use crate::semantics::permuted::error::PermuteError;
pub use crate::tensor::error::TensorError;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `wgpu-split`, by layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operator node that does not resolve against its input shape.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// A concat that does not resolve against its inputs' shapes, or
    /// tensors that do not fit the concat they are given to.
    #[error(transparent)]
    Concat(#[from] ConcatError),
    /// A framework split call whose arguments its framework refuses.
    #[error(transparent)]
    Framework(#[from] FrameworkError),
    /// A permuted split or concat (outputs reshaped and permuted) that does
    /// not resolve.
    #[error(transparent)]
    Permute(#[from] PermuteError),
    /// A host tensor whose data does not match its type and shape.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// An ONNX file, model or tensor that cannot be read.
    #[error(transparent)]
    Onnx(#[from] OnnxError),
    /// A split that cannot be planned for the device.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Caller buffers that the plan cannot be recorded with.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// What the device or wgpu reported.
    #[error(transparent)]
    Device(#[from] DeviceError),
}
