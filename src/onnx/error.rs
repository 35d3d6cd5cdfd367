//! [`OnnxError`]: a file, a model or a tensor the ONNX reader cannot use.

use std::path::PathBuf;

/// Why an ONNX file, model or tensor cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OnnxError {
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
    /// The model's node is not one of the supported split or concat operators.
    #[error(
        "unsupported operator {domain}::{op_type} (supported: Split, SplitToSequence, Concat, ConcatFromSequence)"
    )]
    UnsupportedOperator {
        /// The node's domain (empty for the default ONNX domain).
        domain: String,
        /// The node's operator type.
        op_type: String,
    },
    /// A node input that no initializer, graph input or node of the model
    /// (or of a graph enclosing the node's) defines.
    #[error("value {name:?} is defined nowhere in the model")]
    UndefinedValue {
        /// The value's name.
        name: String,
    },
    /// A tensor stored as external data that cannot be read.
    #[error("external data of tensor {tensor:?}: {detail}")]
    ExternalData {
        /// The tensor's name.
        tensor: String,
        /// What is wrong (the file, the range, the path).
        detail: String,
    },
    /// A split whose lengths only exist at run time, asked for its plan
    /// without them (complete it with [`crate::onnx::RuntimeLengths::complete`]).
    #[error("the lengths of {node} are known at run time only ({from})")]
    LengthsAtRunTime {
        /// The node's path.
        node: String,
        /// Where the lengths come from.
        from: super::lengths_source::LengthsSource,
    },
    /// A split node whose input shape the model does not give, or gives
    /// with a dimension that is neither a number nor a name given a value.
    #[error("the input shape of {node} is not known: {detail}")]
    ShapeUnknown {
        /// The node's path.
        node: String,
        /// The input and the dimension missing.
        detail: String,
    },
    /// A `Split -> Reshape -> Transpose` chain whose `Reshape` shape or
    /// `Transpose` permutation ONNX itself refuses for the piece.
    #[error("{node}: {detail}")]
    FusedChain {
        /// The `Reshape` or `Transpose` node.
        node: String,
        /// What is wrong.
        detail: String,
    },
    /// A `TensorProto` that cannot be turned into a tensor.
    #[error("tensor {name:?}: {detail}")]
    MalformedTensor {
        /// The tensor's name.
        name: String,
        /// What is wrong.
        detail: String,
    },
}

impl OnnxError {
    pub(crate) fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        OnnxError::Io {
            path: path.into(),
            kind: err.kind(),
            detail: err.to_string(),
        }
    }
}
