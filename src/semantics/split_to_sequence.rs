//! ONNX `SplitToSequence` (opsets 11 and 24).

use super::ResolvedSplit;
use super::error::ResolveError;
use super::param::ParamTensor;
use super::rules::{axis_and_dim, check_output_count, checked_lengths};
use crate::op::{OpId, OpKind};

/// ONNX `SplitToSequence`, opsets 11 and 24 (24 only adds bfloat16).
///
/// # Examples
///
/// ```
/// use wgpu_split::{OnnxSplitToSequence, ParamTensor};
///
/// let op = OnnxSplitToSequence::new(11).split(ParamTensor::int64_scalar(3));
/// assert_eq!(op.resolve(&[8]).unwrap().lengths(), &[3, 3, 2]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxSplitToSequence {
    /// The model's opset for the default domain.
    pub opset: i64,
    /// Attribute `axis` (default 0).
    pub axis: i64,
    /// Attribute `keepdims` (default 1): 0 drops the axis, any other value
    /// keeps it. Used only when `split` is absent, unless [`SequenceShapes::OnnxRuntime`].
    pub keepdims: i64,
    /// Input `split`: a scalar chunk size or 1-D lengths, any integer type.
    pub split: Option<ParamTensor>,
    /// Whose output shapes to produce where the specification and
    /// onnxruntime disagree (default: the specification).
    pub shapes: SequenceShapes,
}

impl OnnxSplitToSequence {
    /// A SplitToSequence node at `opset` with axis 0, keepdims 1, no split.
    pub fn new(opset: i64) -> Self {
        OnnxSplitToSequence {
            opset,
            axis: 0,
            keepdims: 1,
            split: None,
            shapes: SequenceShapes::Spec,
        }
    }

    /// Sets attribute `axis`.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }

    /// Sets attribute `keepdims`.
    pub fn keepdims(mut self, keepdims: i64) -> Self {
        self.keepdims = keepdims;
        self
    }

    /// Sets input `split`.
    pub fn split(mut self, split: ParamTensor) -> Self {
        self.split = Some(split);
        self
    }

    /// The operator version this node's opset selects.
    ///
    /// # Errors
    ///
    /// [`ResolveError::UnsupportedOpset`] below opset 11.
    pub fn op_id(&self) -> Result<OpId, ResolveError> {
        let version = match self.opset {
            24.. => 24,
            11..=23 => 11,
            _ => {
                return Err(ResolveError::UnsupportedOpset {
                    kind: OpKind::OnnxSplitToSequence,
                    opset: self.opset,
                });
            }
        };
        Ok(OpId {
            kind: OpKind::OnnxSplitToSequence,
            version,
        })
    }

    /// Reproduce onnxruntime's output shapes instead of the specification's
    /// (see [`SequenceShapes::OnnxRuntime`]).
    pub fn onnxruntime_shapes(mut self) -> Self {
        self.shapes = SequenceShapes::OnnxRuntime;
        self
    }

    /// Resolves the split for an input of shape `input_shape`.
    ///
    /// `keepdims` is "non-zero keeps the axis": 0 drops it, any other value
    /// (1, 2, -1) keeps it, as ONNX's checker, shape inference and reference
    /// implementation and onnxruntime all do ([`crate::docs::semantics`]).
    ///
    /// # Errors
    ///
    /// Every rule of SplitToSequence in [`crate::docs::semantics`] that the node
    /// breaks.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit, ResolveError> {
        let op = self.op_id()?;
        let (axis, dim) = axis_and_dim(op, self.axis as i128, input_shape)?;
        let keep = self.keepdims != 0;
        let Some(split) = &self.split else {
            check_output_count(op, dim as u128)?;
            return Ok(ResolvedSplit::unchecked(
                input_shape,
                axis,
                vec![1; dim],
                keep,
            ));
        };
        let values = split.integers(op, "split")?;
        match split.dims().len() {
            0 => {
                let lengths = scalar_lengths(op, axis, dim, values[0])?;
                // The specification ignores keepdims whenever split is given;
                // onnxruntime drops the axis on the scalar path.
                let drop_axis = self.shapes == SequenceShapes::OnnxRuntime && !keep;
                if drop_axis && let Some(&chunk) = lengths.iter().find(|&&l| l != 1) {
                    return Err(ResolveError::CannotDropAxis {
                        op,
                        axis,
                        dim,
                        chunk,
                    });
                }
                Ok(ResolvedSplit::unchecked(
                    input_shape,
                    axis,
                    lengths,
                    !drop_axis,
                ))
            }
            1 if values.is_empty() => Err(ResolveError::EmptyLengths { op, axis, dim }),
            1 => {
                let lengths = checked_lengths(op, axis, dim, values)?;
                Ok(ResolvedSplit::unchecked(input_shape, axis, lengths, true))
            }
            _ => Err(ResolveError::ParamShape {
                op,
                param: "split",
                dims: split.dims().to_vec(),
                expected: "a scalar or a 1-D tensor",
            }),
        }
    }
}

/// Which output shapes a SplitToSequence with a scalar `split` and
/// `keepdims = 0` produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SequenceShapes {
    /// The specification: `keepdims` is ignored whenever `split` is given,
    /// so every chunk keeps the axis.
    #[default]
    Spec,
    /// onnxruntime: a scalar `split` with `keepdims = 0` drops the axis from
    /// every chunk (which then must have length 1). `torch.onnx` exports
    /// `torch.unbind` in exactly this form, and PyTorch models expect these
    /// shapes. 1-D `split` inputs keep the axis in both modes.
    OnnxRuntime,
}

/// Chunks of a scalar `split = s` over a dimension `dim`: `floor(dim / s)`
/// chunks of `s`, then the remainder if it is non-zero.
fn scalar_lengths(op: OpId, axis: usize, dim: usize, s: i128) -> Result<Vec<usize>, ResolveError> {
    if s < 1 {
        return Err(ResolveError::InvalidScalarSplit {
            op,
            axis,
            dim,
            split: s,
        });
    }
    // s >= 1 and dim fits usize, so a chunk is min(s, dim).
    let chunk = usize::try_from(s).unwrap_or(usize::MAX).min(dim);
    let full = dim.checked_div(chunk).unwrap_or(0);
    let rest = dim.checked_rem(chunk).unwrap_or(0);
    check_output_count(op, full as u128 + u128::from(rest != 0))?;
    let mut lengths = vec![chunk; full];
    if rest != 0 {
        lengths.push(rest);
    }
    Ok(lengths)
}
