//! [`FrameworkError`]: why a framework's split call does not apply to a
//! shape. Each names the call (`torch.split`, `numpy.array_split`, ...) and
//! the values, as the framework itself would refuse them.

use crate::semantics::error::ResolveError;

/// Why a framework split call is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameworkError {
    /// The dimension is outside `[-rank, rank - 1]` (always for rank 0).
    #[error("{call}: dimension {dim} is out of range for a rank-{rank} tensor")]
    DimOutOfRange {
        /// The call.
        call: &'static str,
        /// The dimension as given.
        dim: i64,
        /// The tensor's rank.
        rank: usize,
    },
    /// A chunk count below 1.
    #[error("{call}: chunks must be at least 1, got {chunks}")]
    ChunksNotPositive {
        /// The call.
        call: &'static str,
        /// The count given.
        chunks: i64,
    },
    /// A negative split size.
    #[error("{call}: split_size must be non-negative, got {split_size}")]
    SplitSizeNegative {
        /// The call.
        call: &'static str,
        /// The size given.
        split_size: i64,
    },
    /// A split size of 0 on a dimension that is not empty.
    #[error(
        "{call}: split_size can only be 0 if dimension size is 0, got 0 on a dimension of {dim_size}"
    )]
    SplitSizeZero {
        /// The call.
        call: &'static str,
        /// The dimension's size.
        dim_size: usize,
    },
    /// A negative entry in a list of sizes.
    #[error("{call}: size {} at position {index} of {sizes:?} is negative", sizes[*index])]
    SizeNegative {
        /// The call.
        call: &'static str,
        /// The sizes given.
        sizes: Vec<i64>,
        /// The first negative one.
        index: usize,
    },
    /// Sizes that do not sum to the dimension's size.
    #[error("{call}: sizes {sizes:?} sum to {sum}, but the dimension has size {dim_size}")]
    SizesSum {
        /// The call.
        call: &'static str,
        /// The sizes given.
        sizes: Vec<i64>,
        /// Their sum.
        sum: i128,
        /// The dimension's size.
        dim_size: usize,
    },
    /// A section count below 1.
    #[error("{call}: the number of sections must be at least 1, got {sections}")]
    SectionsNotPositive {
        /// The call.
        call: &'static str,
        /// The count given.
        sections: i64,
    },
    /// `numpy.split` into sections that do not divide the dimension.
    #[error(
        "{call}: a dimension of {dim_size} does not split into {sections} equal sections (array split does not result in an equal division)"
    )]
    UnequalDivision {
        /// The call.
        call: &'static str,
        /// The count given.
        sections: i64,
        /// The dimension's size.
        dim_size: usize,
    },
    /// A negative narrow length.
    #[error("{call}: length must be non-negative, got {length}")]
    LengthNegative {
        /// The call.
        call: &'static str,
        /// The length given.
        length: i64,
    },
    /// A narrow start outside `[-size, size]`.
    #[error("{call}: start {start} is out of range for a dimension of {dim_size}")]
    StartOutOfRange {
        /// The call.
        call: &'static str,
        /// The start given.
        start: i64,
        /// The dimension's size.
        dim_size: usize,
    },
    /// A narrow window that ends past the dimension.
    #[error("{call}: start ({start}) + length ({length}) exceeds dimension size ({dim_size})")]
    PastEnd {
        /// The call.
        call: &'static str,
        /// The start, wrapped.
        start: i64,
        /// The length.
        length: i64,
        /// The dimension's size.
        dim_size: usize,
    },
    /// The shape itself cannot be split (its element count overflows, or
    /// too many outputs).
    #[error(transparent)]
    Shape(#[from] ResolveError),
}
