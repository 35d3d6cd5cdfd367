//! [`ResolveError`]: why an operator node does not resolve against an input
//! shape. Every message names the operator, the axis, the dimension and
//! the offending values.

use crate::element::ElementType;
use crate::op::{OpId, OpKind};

/// Why a split does not resolve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The operator has no version at the requested opset.
    #[error("{kind}: opset {opset} does not define this operator")]
    UnsupportedOpset {
        /// The operator family.
        kind: OpKind,
        /// The opset that was asked for.
        opset: i64,
    },
    /// An attribute or input was given that this operator version does not have.
    #[error("{op}: {what} does not exist in this operator version")]
    NotInOpset {
        /// The operator.
        op: OpId,
        /// The attribute or input, e.g. `"attribute split"`.
        what: &'static str,
    },
    /// Two sources of the same information were given where only one is allowed.
    #[error("{op}: {first} and {second} are both given; at most one is allowed")]
    ConflictingParameters {
        /// The operator.
        op: OpId,
        /// The first source.
        first: &'static str,
        /// The second source.
        second: &'static str,
    },
    /// The node declares no outputs.
    #[error("{op}: the node declares no outputs")]
    NoOutputs {
        /// The operator.
        op: OpId,
    },
    /// `axis` is outside `[-rank, rank-1]` (always the case for rank 0).
    #[error(
        "{op}: axis {axis} is out of range for a rank-{rank} input (valid: -rank..=rank-1; a rank-0 input cannot be split)"
    )]
    AxisOutOfRange {
        /// The operator.
        op: OpId,
        /// The axis as given.
        axis: i128,
        /// The input rank.
        rank: usize,
    },
    /// A parameter tensor (lengths or axis) has the wrong shape.
    #[error("{op}: {param} has shape {dims:?}, expected {expected}")]
    ParamShape {
        /// The operator.
        op: OpId,
        /// Which parameter.
        param: &'static str,
        /// Its shape.
        dims: Vec<usize>,
        /// What was expected, in words.
        expected: &'static str,
    },
    /// A parameter tensor has an element type the operator does not accept.
    #[error("{op}: {param} has element type {element_type}, expected {expected}")]
    ParamType {
        /// The operator.
        op: OpId,
        /// Which parameter.
        param: &'static str,
        /// Its element type.
        element_type: ElementType,
        /// What was expected, in words.
        expected: &'static str,
    },
    /// A floating-point length is not a whole number in the int64 range.
    #[error("{op}: {param}[{index}] = {value} is not a whole number in the int64 range")]
    NonWholeLength {
        /// The operator.
        op: OpId,
        /// Which parameter.
        param: &'static str,
        /// Position of the value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A tensor's element type cannot carry operator parameters.
    #[error("a tensor of element type {element_type} cannot carry split lengths or an axis")]
    NonNumericParam {
        /// The element type.
        element_type: ElementType,
    },
    /// A length is below the smallest allowed value (0, or -1 for VariadicSplit).
    #[error("{op}: length {} at position {index} of {lengths:?} is below {minimum} (axis {axis}, dimension {dim})", lengths[*index])]
    LengthBelowMinimum {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// All lengths as given.
        lengths: Vec<i128>,
        /// Position of the offending length.
        index: usize,
        /// The smallest allowed value.
        minimum: i128,
    },
    /// More than one `-1` in VariadicSplit lengths.
    #[error("{op}: {lengths:?} holds more than one -1 (axis {axis}, dimension {dim})")]
    MultipleInferredLengths {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// All lengths as given.
        lengths: Vec<i128>,
    },
    /// Lengths do not sum to the dimension (or, with a `-1`, exceed it).
    #[error("{op}: lengths {lengths:?} sum to {sum}, but axis {axis} has dimension {dim}{}", if *inferred { " (the -1 would resolve to a negative length)" } else { "" })]
    LengthSumMismatch {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// All lengths as given.
        lengths: Vec<i128>,
        /// Sum of the given lengths (without the `-1`).
        sum: i128,
        /// Whether a `-1` was present.
        inferred: bool,
    },
    /// The number of lengths differs from the node's output count.
    #[error("{op}: {} lengths {lengths:?} given for {outputs} outputs (axis {axis}, dimension {dim})", lengths.len())]
    LengthCountMismatch {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// All lengths as given.
        lengths: Vec<i128>,
        /// The node's output count.
        outputs: usize,
    },
    /// An empty length list where the operator requires at least one.
    #[error("{op}: the split lengths are empty (axis {axis}, dimension {dim})")]
    EmptyLengths {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
    },
    /// An equal split whose part count does not divide the dimension.
    #[error("{op}: dimension {dim} on axis {axis} is not evenly splittable into {parts} parts")]
    NotEvenlySplittable {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// The number of parts asked for.
        parts: u64,
    },
    /// A part-count attribute (`num_outputs`, `num_splits`) is out of its range.
    #[error(
        "{op}: {attribute} = {value} is out of range: it must be {rule} (axis {axis}, dimension {dim})"
    )]
    PartCountOutOfRange {
        /// The operator.
        op: OpId,
        /// The attribute name.
        attribute: &'static str,
        /// Its value.
        value: i64,
        /// The rule, in words.
        rule: &'static str,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
    },
    /// Split-18 `num_outputs` whose last chunk would be empty or negative.
    #[error(
        "{op}: num_outputs = {num_outputs} on dimension {dim} (axis {axis}) gives chunks of {chunk} and a last chunk of {last}, which must be at least 1"
    )]
    EmptyLastChunk {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// The attribute value.
        num_outputs: i64,
        /// `ceil(dim / num_outputs)`.
        chunk: u64,
        /// `dim - chunk * (num_outputs - 1)`.
        last: i128,
    },
    /// The node declares more outputs than `num_outputs` produces.
    #[error("{op}: the node declares {outputs} outputs but num_outputs is {num_outputs}")]
    MoreOutputsThanNumOutputs {
        /// The operator.
        op: OpId,
        /// The attribute value.
        num_outputs: i64,
        /// The node's output count.
        outputs: usize,
    },
    /// SplitToSequence scalar `split` below 1.
    #[error("{op}: scalar split = {split} must be at least 1 (axis {axis}, dimension {dim})")]
    InvalidScalarSplit {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// The scalar value.
        split: i128,
    },
    /// onnxruntime-compatible SplitToSequence shapes drop the axis of chunks
    /// longer than 1.
    #[error(
        "{op} (onnxruntime shapes): keepdims = 0 with a scalar split drops the axis, which needs chunks of length 1, but a chunk has length {chunk} (axis {axis}, dimension {dim})"
    )]
    CannotDropAxis {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// The first chunk length that is not 1.
        chunk: usize,
    },
    /// More outputs than this crate will plan.
    #[error("{op}: {outputs} outputs requested, more than the limit of {limit}")]
    TooManyOutputs {
        /// The operator.
        op: OpId,
        /// The requested count.
        outputs: u128,
        /// [`crate::ResolvedSplit::MAX_OUTPUTS`].
        limit: usize,
    },
    /// The element count of a shape does not fit in `usize`.
    #[error("shape {shape:?} has more elements than fit in memory addressing")]
    ShapeOverflow {
        /// The shape.
        shape: Vec<u64>,
    },
    /// The lengths torch's legacy ONNX exporter writes for `torch.chunk`
    /// with dynamic sizes: `chunks - 1` lengths of `ceil(dim / chunks)` and
    /// a negative last one. ONNX forbids negative lengths; torch itself
    /// returns fewer pieces.
    #[error(
        "{op}: lengths {lengths:?} on dimension {dim} (axis {axis}) are what torch's legacy ONNX exporter writes for torch.chunk into {chunks}, with a negative last length, which ONNX forbids; split with wgpu_split::frameworks::Torch::chunk, which gives torch's {torch_lengths:?}"
    )]
    LegacyChunk {
        /// The operator.
        op: OpId,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
        /// The lengths as given.
        lengths: Vec<i128>,
        /// The chunk count they were written for.
        chunks: usize,
        /// What `torch.chunk` gives.
        torch_lengths: Vec<usize>,
    },
    /// A window that reaches past the dimension.
    #[error("window {index} [{start}, {start} + {length}) lies past dimension {dim} (axis {axis})")]
    WindowOutOfRange {
        /// The window's position.
        index: usize,
        /// Its start.
        start: usize,
        /// Its length.
        length: usize,
        /// The normalised axis.
        axis: usize,
        /// The dimension on the axis.
        dim: usize,
    },
    /// A parameter tensor's value count does not match its shape.
    #[error("a parameter tensor of shape {dims:?} needs {expected} values, got {actual}")]
    ParamValueCount {
        /// Its shape.
        dims: Vec<usize>,
        /// Values the shape holds.
        expected: u128,
        /// Values given.
        actual: usize,
    },
    /// The tensor's shape is not the one the split was resolved for.
    #[error("the split was resolved for shape {expected:?}, but the tensor has shape {actual:?}")]
    ShapeMismatch {
        /// The resolved input shape.
        expected: Vec<usize>,
        /// The tensor's shape.
        actual: Vec<usize>,
    },
}
