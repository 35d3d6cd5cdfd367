//! [`ConcatError`]: why a concat does not resolve against its inputs'
//! shapes, or why tensors do not fit the concat they are given to. Every
//! message names the operator or call, the input, the axis and the values.

use crate::element::ElementType;
use crate::op::{OpId, OpKind};

/// Why a concat (an operator, a framework call or a direct concat) does not
/// resolve, or why tensors do not match the concat they are run with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConcatError {
    /// The operator has no version at the requested opset.
    #[error("{kind}: opset {opset} does not define this operator")]
    UnsupportedOpset {
        /// The operator family.
        kind: OpKind,
        /// The opset that was asked for.
        opset: i64,
    },
    /// The required attribute `axis` is absent.
    #[error("{op}: attribute axis is required")]
    MissingAxis {
        /// The operator.
        op: OpId,
    },
    /// `ConcatFromSequence`'s `new_axis` is neither 0 nor 1.
    #[error("{op}: new_axis = {new_axis}, but it must be 0 (concatenate) or 1 (stack)")]
    NewAxisOutOfRange {
        /// The operator.
        op: OpId,
        /// The attribute value.
        new_axis: i64,
    },
    /// Nothing to concatenate: no inputs, an empty sequence or an empty list.
    #[error("{op}: there are no inputs to concatenate (at least one is required)")]
    NoInputs {
        /// The operator or call.
        op: OpId,
    },
    /// More inputs than this crate will plan (the mirror split would have
    /// more outputs than [`crate::ResolvedSplit::MAX_OUTPUTS`]).
    #[error("{op}: {inputs} inputs, more than the limit of {limit}")]
    TooManyInputs {
        /// The operator or call.
        op: OpId,
        /// The input count.
        inputs: usize,
        /// [`crate::ResolvedSplit::MAX_OUTPUTS`].
        limit: usize,
    },
    /// A rank-0 input where concatenation needs an axis (stacking takes scalars).
    #[error(
        "{op}: input {index} is a scalar (rank 0), which cannot be concatenated: concatenation needs an axis"
    )]
    ScalarInput {
        /// The operator or call.
        op: OpId,
        /// The input's position.
        index: usize,
    },
    /// The axis is outside the range the operator accepts for the inputs' rank.
    #[error("{op}: axis {axis} is out of range for rank-{rank} inputs (valid: {min}..={max})")]
    AxisOutOfRange {
        /// The operator or call.
        op: OpId,
        /// The axis as given.
        axis: i64,
        /// The rank of the inputs (of the reference input).
        rank: usize,
        /// The smallest valid axis.
        min: i64,
        /// The largest valid axis.
        max: i64,
    },
    /// An input whose rank differs from the reference input's.
    #[error(
        "{op}: input {index} has rank {rank}, but input {reference} has rank {expected}; all inputs must have the same rank"
    )]
    RankMismatch {
        /// The operator or call.
        op: OpId,
        /// The offending input's position.
        index: usize,
        /// Its rank.
        rank: usize,
        /// The position of the input it is compared with (the first one
        /// that takes part).
        reference: usize,
        /// That input's rank.
        expected: usize,
    },
    /// An input whose size differs from the reference input's on a
    /// dimension other than the concatenation axis.
    #[error(
        "{op}: input {index} has size {size} on dimension {dim}, but input {reference} has {expected}; only axis {axis} may differ"
    )]
    DimMismatch {
        /// The operator or call.
        op: OpId,
        /// The normalised concatenation axis.
        axis: usize,
        /// The offending input's position.
        index: usize,
        /// The dimension that differs.
        dim: usize,
        /// The offending input's size there.
        size: usize,
        /// The position of the input it is compared with.
        reference: usize,
        /// That input's size there.
        expected: usize,
    },
    /// Stacked inputs whose shapes differ.
    #[error(
        "{op}: input {index} has shape {shape:?}, but input {reference} has shape {expected:?}; stacked inputs must have equal shapes"
    )]
    UnequalShapes {
        /// The operator or call.
        op: OpId,
        /// The offending input's position.
        index: usize,
        /// Its shape.
        shape: Vec<usize>,
        /// The position of the input it is compared with.
        reference: usize,
        /// That input's shape.
        expected: Vec<usize>,
    },
    /// An input shape whose element count does not fit in `usize`.
    #[error("{op}: input {index} has shape {shape:?}, more elements than fit in memory addressing")]
    InputOverflow {
        /// The operator or call.
        op: OpId,
        /// The input's position.
        index: usize,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// The output would have more elements (or a longer axis) than fit in `usize`.
    #[error("{op}: the output shape {shape:?} has more elements than fit in memory addressing")]
    OutputOverflow {
        /// The operator or call.
        op: OpId,
        /// The output shape, computed without overflow.
        shape: Vec<u128>,
    },
    /// A different number of tensors than the concat was resolved for.
    #[error("the concat was resolved for {expected} inputs, but {actual} were given")]
    InputCountMismatch {
        /// The resolved input count.
        expected: usize,
        /// The tensors given.
        actual: usize,
    },
    /// A tensor whose shape is not the one the concat was resolved for.
    #[error(
        "input {index}: the concat was resolved for shape {expected:?}, but the tensor has shape {actual:?}"
    )]
    InputShapeMismatch {
        /// The input's position.
        index: usize,
        /// The resolved shape.
        expected: Vec<usize>,
        /// The tensor's shape.
        actual: Vec<usize>,
    },
    /// Inputs of different element types (type promotion is not a copy:
    /// every input that takes part must have the first one's type).
    #[error(
        "input {index} has element type {element_type}, but input {reference} has {expected}; all inputs must have the same element type"
    )]
    ElementTypeMismatch {
        /// The offending input's position.
        index: usize,
        /// Its element type.
        element_type: ElementType,
        /// The position of the first input that takes part.
        reference: usize,
        /// That input's element type.
        expected: ElementType,
    },
}
