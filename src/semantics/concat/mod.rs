//! Concat semantics: the concat operators (ONNX `Concat`,
//! `ConcatFromSequence`, OpenVINO `Concat-1`) and the framework calls
//! ([`crate::frameworks`]) resolve against their inputs' shapes into a
//! [`ResolvedConcat`], the split of the output they mirror, or a typed
//! [`ConcatError`]. The rules and decisions are in
//! [`crate::docs::semantics`], "Concat".

mod direct;
pub(crate) mod error;
mod onnx;
mod openvino;
mod resolved;
pub(crate) mod rules;

pub(crate) use error::ConcatError;
pub use onnx::{OnnxConcat, OnnxConcatFromSequence};
pub use openvino::OpenVinoConcat;
pub use resolved::ResolvedConcat;
pub(crate) use resolved::check_shapes;

/// Any of the supported concat operators.
///
/// # Examples
///
/// ```
/// use wgpu_split::{ConcatOperator, OnnxConcat};
///
/// let op: ConcatOperator = OnnxConcat::new(13).axis(0).into();
/// let resolved = op.resolve(&[vec![2, 3], vec![1, 3]]).unwrap();
/// assert_eq!(resolved.output_shape(), &[3, 3]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConcatOperator {
    /// ONNX `Concat`.
    OnnxConcat(OnnxConcat),
    /// ONNX `ConcatFromSequence`.
    OnnxConcatFromSequence(OnnxConcatFromSequence),
    /// OpenVINO `Concat-1`.
    OpenVinoConcat(OpenVinoConcat),
}

impl ConcatOperator {
    /// Resolves the concat of inputs of `shapes` (for
    /// `ConcatFromSequence`, the shapes of the sequence's tensors).
    ///
    /// # Errors
    ///
    /// The operator's [`ConcatError`] for any rule the node or the shapes break.
    pub fn resolve<S: AsRef<[usize]>>(&self, shapes: &[S]) -> Result<ResolvedConcat, ConcatError> {
        match self {
            ConcatOperator::OnnxConcat(op) => op.resolve(shapes),
            ConcatOperator::OnnxConcatFromSequence(op) => op.resolve(shapes),
            ConcatOperator::OpenVinoConcat(op) => op.resolve(shapes),
        }
    }

    /// True when the inputs arrive as one sequence value (ConcatFromSequence).
    pub fn consumes_sequence(&self) -> bool {
        matches!(self, ConcatOperator::OnnxConcatFromSequence(_))
    }
}

impl From<OnnxConcat> for ConcatOperator {
    fn from(op: OnnxConcat) -> Self {
        ConcatOperator::OnnxConcat(op)
    }
}

impl From<OnnxConcatFromSequence> for ConcatOperator {
    fn from(op: OnnxConcatFromSequence) -> Self {
        ConcatOperator::OnnxConcatFromSequence(op)
    }
}

impl From<OpenVinoConcat> for ConcatOperator {
    fn from(op: OpenVinoConcat) -> Self {
        ConcatOperator::OpenVinoConcat(op)
    }
}
