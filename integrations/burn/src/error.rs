//! The integration's error: the core crate's [`wgpu_split::Error`] plus
//! what can go wrong between burn and the split or concat (another device,
//! a dtype with no bit layout of its own, inputs of different dtypes,
//! burn's runtime refusing a buffer).

use burn::tensor::DType;

/// Everything a burn split can report instead of a wrong result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BurnSplitError {
    /// The split itself: the call's or operator's arguments, the plan, the
    /// buffers ([`wgpu_split::Error`]).
    #[error(transparent)]
    Split(#[from] wgpu_split::Error),
    /// The tensor lives on another device than the splitter's.
    #[error("the tensor is on device {tensor}, the splitter was built for {splitter}")]
    OtherDevice {
        /// The tensor's device.
        tensor: String,
        /// The splitter's device.
        splitter: String,
    },
    /// The tensor is not on burn's wgpu backend (or is an autodiff tensor).
    #[error("not a tensor of burn's wgpu backend: {detail}")]
    NotWgpu {
        /// What burn said.
        detail: String,
    },
    /// A dtype whose elements are not independent bit fields (quantized
    /// blocks carry their scales apart from the values).
    #[error("burn dtype {dtype:?} cannot be split bit-exactly here: {why}")]
    UnsupportedDType {
        /// The tensor's dtype.
        dtype: DType,
        /// Why not.
        why: &'static str,
    },
    /// Concat inputs of different dtypes (burn's `cat` and `stack` take
    /// one dtype; a cast is not a copy).
    #[error(
        "input {index} has dtype {dtype:?}, but input {reference} has {expected:?}; a concat's inputs must have one dtype"
    )]
    DTypeMismatch {
        /// The offending input's position.
        index: usize,
        /// Its dtype.
        dtype: DType,
        /// The position of the input it is compared with (the first).
        reference: usize,
        /// That input's dtype.
        expected: DType,
    },
    /// The caller asked for outputs of another rank than the split (or
    /// concat) makes.
    #[error("the call makes outputs of rank {actual}; it was asked for rank {asked}")]
    OutputRank {
        /// The rank the call's type asked for.
        asked: usize,
        /// The rank of the outputs.
        actual: usize,
    },
    /// burn's runtime refused (a buffer it cannot hand out, a failed flush).
    #[error("burn's runtime: {detail}")]
    Runtime {
        /// What cubecl said.
        detail: String,
    },
}

impl From<wgpu_split::ResolveError> for BurnSplitError {
    fn from(e: wgpu_split::ResolveError) -> Self {
        BurnSplitError::Split(e.into())
    }
}

impl From<wgpu_split::error::FrameworkError> for BurnSplitError {
    fn from(e: wgpu_split::error::FrameworkError) -> Self {
        BurnSplitError::Split(e.into())
    }
}

impl From<wgpu_split::error::PlanError> for BurnSplitError {
    fn from(e: wgpu_split::error::PlanError) -> Self {
        BurnSplitError::Split(e.into())
    }
}

impl From<wgpu_split::ConcatError> for BurnSplitError {
    fn from(e: wgpu_split::ConcatError) -> Self {
        BurnSplitError::Split(e.into())
    }
}

/// Result alias of the integration.
pub type Result<T, E = BurnSplitError> = std::result::Result<T, E>;
