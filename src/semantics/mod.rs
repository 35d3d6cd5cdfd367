//! Operator semantics: the five split operators, their opsets and
//! attributes, and how each resolves against an input shape into a
//! [`ResolvedSplit`] (normalised axis, output lengths, whether the axis is
//! kept) or a typed [`ResolveError`]. The rules, and what this crate decided
//! where public implementations disagree, are in [`crate::docs::semantics`]. This
//! module does no I/O and knows nothing of GPUs.
//!
//! Concat, split's mirror, lives beside them: the concat operators and calls
//! resolve against their inputs' shapes into a [`ResolvedConcat`], whose
//! [`mirror`](ResolvedConcat::mirror) is the split of the output they undo,
//! or a typed [`ConcatError`].
//!
//! Permuted splits and concats ([`PermutedSplit`], [`PermutedConcat`]) add
//! a reshape and a permutation to each output or input: attention heads
//! split from a fused projection and merged back.

pub mod concat;
pub(crate) mod error;
pub mod frameworks;
mod onnx_split;
mod openvino;
mod param;
pub(crate) mod permuted;
pub(crate) mod resolved;
pub(crate) mod rules;
mod split_to_sequence;

pub(crate) use concat::ConcatError;
pub use concat::{
    ConcatOperator, OnnxConcat, OnnxConcatFromSequence, OpenVinoConcat, ResolvedConcat,
};
pub(crate) use error::ResolveError;
pub use onnx_split::OnnxSplit;
pub use openvino::{OpenVinoSplit, OpenVinoVariadicSplit};
pub use param::{ParamTensor, ParamValues};
pub use permuted::{
    InputMove, PermuteError, PermutedConcat, PermutedSplit, PieceMove, StridedView,
};
pub use resolved::ResolvedSplit;
pub(crate) use rules::element_count;
pub use split_to_sequence::{OnnxSplitToSequence, SequenceShapes};

/// Any of the supported operators.
///
/// # Examples
///
/// ```
/// use wgpu_split::{Operator, OnnxSplit};
///
/// let op: Operator = OnnxSplit::new(13, 3).axis(1).into();
/// let resolved = op.resolve(&[2, 6]).unwrap();
/// assert_eq!(resolved.output_shapes(), vec![vec![2, 2]; 3]);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Operator {
    /// ONNX `Split`.
    OnnxSplit(OnnxSplit),
    /// ONNX `SplitToSequence`.
    OnnxSplitToSequence(OnnxSplitToSequence),
    /// OpenVINO `VariadicSplit-1`.
    OpenVinoVariadicSplit(OpenVinoVariadicSplit),
    /// OpenVINO `Split-1`.
    OpenVinoSplit(OpenVinoSplit),
}

impl Operator {
    /// Resolves the split for an input of shape `input_shape`.
    ///
    /// # Errors
    ///
    /// The operator's [`ResolveError`] for any rule the node breaks.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit, ResolveError> {
        match self {
            Operator::OnnxSplit(op) => op.resolve(input_shape),
            Operator::OnnxSplitToSequence(op) => op.resolve(input_shape),
            Operator::OpenVinoVariadicSplit(op) => op.resolve(input_shape),
            Operator::OpenVinoSplit(op) => op.resolve(input_shape),
        }
    }

    /// True when the outputs form one sequence value (SplitToSequence).
    pub fn produces_sequence(&self) -> bool {
        matches!(self, Operator::OnnxSplitToSequence(_))
    }
}

impl From<OnnxSplit> for Operator {
    fn from(op: OnnxSplit) -> Self {
        Operator::OnnxSplit(op)
    }
}

impl From<OnnxSplitToSequence> for Operator {
    fn from(op: OnnxSplitToSequence) -> Self {
        Operator::OnnxSplitToSequence(op)
    }
}

impl From<OpenVinoVariadicSplit> for Operator {
    fn from(op: OpenVinoVariadicSplit) -> Self {
        Operator::OpenVinoVariadicSplit(op)
    }
}

impl From<OpenVinoSplit> for Operator {
    fn from(op: OpenVinoSplit) -> Self {
        Operator::OpenVinoSplit(op)
    }
}
