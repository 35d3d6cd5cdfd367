//! [`TensorError`]: a host tensor's data does not match its type and shape.

use crate::element::ElementType;

/// Why a host tensor cannot be made or read as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TensorError {
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
    /// The element count of a shape does not fit in `usize`.
    #[error("shape {shape:?} has more elements than fit in memory addressing")]
    ShapeOverflow {
        /// The shape.
        shape: Vec<u64>,
    },
}
