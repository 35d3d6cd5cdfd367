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
