//! The crate's one error type. Every rejection is a variant with structured
//! fields, so callers can match on what went wrong and messages can name the
//! operator, the axis, the dimension and the offending values.

use std::path::PathBuf;

use crate::element::ElementType;
use crate::op::{OpId, OpKind};

/// Which of an encode's buffers an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BufferRole {
    /// The input tensor.
    Input,
    /// The arena of an arena plan.
    Arena,
    /// The destination region of output `n`.
    Output(usize),
    /// A readback buffer.
    Staging,
}

impl std::fmt::Display for BufferRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferRole::Input => f.write_str("input"),
            BufferRole::Arena => f.write_str("arena"),
            BufferRole::Output(n) => write!(f, "output {n}"),
            BufferRole::Staging => f.write_str("staging"),
        }
    }
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `wgpu-split`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- operator semantics -------------------------------------------------
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
        /// [`crate::MAX_OUTPUTS`].
        limit: usize,
    },
    /// The element count of a shape does not fit in `usize`.
    #[error("shape {shape:?} has more elements than fit in memory addressing")]
    ShapeOverflow {
        /// The shape.
        shape: Vec<u64>,
    },

    // ---- tensors ------------------------------------------------------------
    /// A tensor element type code that is not known.
    #[error("unknown ONNX element type code {code}")]
    UnknownElementType {
        /// The code.
        code: i32,
    },
    /// The data given for a tensor does not match its shape and type.
    #[error("{element_type} tensor of shape {shape:?} needs {expected} {unit}, got {actual}")]
    DataLength {
        /// The element type.
        element_type: ElementType,
        /// The shape.
        shape: Vec<u64>,
        /// What the shape requires.
        expected: u128,
        /// What was given.
        actual: usize,
        /// `"bytes"`, `"strings"` or `"values"`.
        unit: &'static str,
    },
    /// A typed accessor or constructor was used with the wrong element type.
    #[error("expected a {expected} tensor, got {actual}")]
    ElementTypeMismatch {
        /// The type the call needs.
        expected: ElementType,
        /// The tensor's type.
        actual: ElementType,
    },
    /// Strings have no fixed width, so a string tensor has no packed bytes.
    #[error(
        "{element_type} elements have no fixed width, so the tensor has no packed bytes (use its byte strings)"
    )]
    NoPackedBytes {
        /// The element type (string).
        element_type: ElementType,
    },
    /// The tensor's shape is not the one the split was resolved for.
    #[error("the split was resolved for shape {expected:?}, but the tensor has shape {actual:?}")]
    ShapeMismatch {
        /// The resolved input shape.
        expected: Vec<usize>,
        /// The tensor's shape.
        actual: Vec<usize>,
    },

    // ---- ONNX files -----------------------------------------------------------
    /// A file could not be read.
    #[error("cannot read {path}: {detail}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error kind.
        kind: std::io::ErrorKind,
        /// The system's message.
        detail: String,
    },
    /// Bytes that are not a valid protobuf message of the expected kind.
    #[error("cannot decode {message}: {detail}")]
    ProtobufDecode {
        /// The message type, e.g. `"ModelProto"`.
        message: &'static str,
        /// The decoder's message.
        detail: String,
    },
    /// A well-formed protobuf that is not a model this crate can run.
    #[error("unsupported or malformed ONNX model: {detail}")]
    MalformedModel {
        /// What is wrong.
        detail: String,
    },
    /// The model's node is not one of the supported split operators.
    #[error("unsupported operator {domain}::{op_type} (supported: Split, SplitToSequence)")]
    UnsupportedOperator {
        /// The node's domain (empty for the default ONNX domain).
        domain: String,
        /// The node's operator type.
        op_type: String,
    },
    /// A `TensorProto` that cannot be turned into a tensor.
    #[error("tensor {name:?}: {detail}")]
    MalformedTensor {
        /// The tensor's name.
        name: String,
        /// What is wrong.
        detail: String,
    },
    // ---- GPU planning and execution -------------------------------------------
    /// The element type has no fixed-width GPU layout (strings).
    #[error("{element_type} tensors have no GPU layout; use the host path")]
    NotOnGpu {
        /// The element type.
        element_type: ElementType,
    },
    /// A tensor or arena larger than a GPU buffer may be.
    #[error("the {what} needs {bytes} bytes, more than the device's max_buffer_size of {max}")]
    TooLargeForDevice {
        /// `"input"` or `"arena"`.
        what: &'static str,
        /// Bytes needed.
        bytes: u128,
        /// The device limit.
        max: u64,
    },
    /// [`crate::plan::Strategy::Copy`] on an output whose runs are not 4-byte aligned.
    #[error(
        "output {output} cannot be moved with copy commands: runs of {run_bits} bits at bit offset {offset_bits} are not 4-byte aligned"
    )]
    NotCopyable {
        /// The output.
        output: usize,
        /// Bits per run.
        run_bits: u64,
        /// Bit offset of the run in its block.
        offset_bits: u64,
    },
    /// A caller's region is smaller than the split needs.
    #[error("the {which} region has {size} bytes, but {needed} are needed ({why})")]
    BufferTooSmall {
        /// Which region.
        which: BufferRole,
        /// The region's size.
        size: u64,
        /// Bytes needed.
        needed: u64,
        /// Why that many, e.g. `"18 bytes rounded up to the 4-byte word the split writes"`.
        why: String,
    },
    /// A region that does not lie inside its buffer.
    #[error(
        "the {which} region [{offset}, {offset} + {size}) does not lie inside its buffer of {buffer_size} bytes"
    )]
    RegionOutsideBuffer {
        /// Which region.
        which: BufferRole,
        /// The region's offset.
        offset: u64,
        /// The region's size (or the bytes the split binds from the offset).
        size: u64,
        /// The buffer's size.
        buffer_size: u64,
    },
    /// A caller's buffer lacks a usage flag the plan needs.
    #[error("the {which} buffer lacks usage {missing}: {why}")]
    MissingUsage {
        /// Which buffer.
        which: BufferRole,
        /// The missing flags, e.g. `"STORAGE"`.
        missing: String,
        /// Why the plan needs them and what fixes it.
        why: String,
    },
    /// A region offset the plan cannot use.
    #[error("the {which} offset {offset} is not a multiple of {alignment} ({why})")]
    MisalignedOffset {
        /// Which region.
        which: BufferRole,
        /// The offset given.
        offset: u64,
        /// The required alignment.
        alignment: u64,
        /// Why, e.g. `"this plan moves 16-byte units"`.
        why: &'static str,
    },
    /// Two destination regions share bytes.
    #[error("the regions of outputs {first} and {second} overlap in one buffer")]
    OverlappingRegions {
        /// The output whose region starts first.
        first: usize,
        /// The other output.
        second: usize,
    },
    /// The input shares a buffer with a destination.
    #[error(
        "the input and the {which} region are in the same buffer; wgpu cannot read and write one buffer in the same dispatch or copy (copy the input, or use another buffer)"
    )]
    InputSharesBuffer {
        /// The destination that shares the input's buffer.
        which: BufferRole,
    },
    /// The number of destination regions is not the plan's output count.
    #[error("{actual} destination regions given for a plan of {expected} outputs")]
    RegionCount {
        /// The plan's outputs.
        expected: usize,
        /// Regions given.
        actual: usize,
    },
    /// A plan with copy commands cannot be recorded inside a compute pass.
    #[error(
        "this plan records {copies} copy commands, which cannot go inside a compute pass; plan with Strategy::Gather (dispatches only) to record into a pass"
    )]
    CopiesInComputePass {
        /// The plan's copy commands.
        copies: u64,
    },
    /// A caller's buffer is mapped, so the GPU cannot use it.
    #[error("the {which} buffer is mapped; unmap it before the split is submitted")]
    BufferMapped {
        /// Which buffer.
        which: BufferRole,
    },
    /// The plan was made for another element type or device than it is used with.
    #[error("the plan does not fit this call: {detail}")]
    PlanMismatch {
        /// What differs.
        detail: String,
    },
    /// A planner invariant did not hold. This is a bug in this crate; the
    /// detail says which value broke it.
    #[error("internal error in wgpu-split (please report): {detail}")]
    Internal {
        /// What broke.
        detail: String,
    },
    /// No GPU adapter could be found.
    #[error(
        "no GPU adapter found ({detail}); on Debian/Ubuntu install Mesa's software Vulkan driver: apt-get install -y mesa-vulkan-drivers"
    )]
    NoAdapter {
        /// What wgpu said.
        detail: String,
    },
    /// The adapter refused the device request.
    #[error("cannot create a device: {detail}")]
    RequestDevice {
        /// What wgpu said.
        detail: String,
    },
    /// A GPU operation failed (validation, mapping, polling, device loss).
    #[error("GPU operation failed: {detail}")]
    Gpu {
        /// What wgpu said.
        detail: String,
    },
    /// A conformance check found an output that differs from the expected one.
    #[error("data set {data_set}, output {output}: {detail}")]
    OutputMismatch {
        /// The data set directory name.
        data_set: String,
        /// The output position (or sequence element).
        output: usize,
        /// What differs.
        detail: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            kind: err.kind(),
            detail: err.to_string(),
        }
    }
}
