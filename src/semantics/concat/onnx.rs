//! ONNX `Concat` (opsets 1, 4, 11, 13) and `ConcatFromSequence` (11).

use super::error::ConcatError;
use super::resolved::ResolvedConcat;
use super::rules;
use crate::op::{OpId, OpKind};

/// ONNX `Concat`, opsets 1, 4, 11 and 13 (any opset from 1 up selects the
/// latest version at or below it; 11 documents negative axes, 13 adds
/// bfloat16).
///
/// # Examples
///
/// ```
/// use wgpu_split::OnnxConcat;
///
/// let concat = OnnxConcat::new(13).axis(-1).resolve(&[[2, 3], [2, 4]]).unwrap();
/// assert_eq!(concat.output_shape(), &[2, 7]);
/// // Opset 1: an absent axis is 1.
/// let concat = OnnxConcat::new(1).resolve(&[[2, 3], [2, 1]]).unwrap();
/// assert_eq!(concat.output_shape(), &[2, 4]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OnnxConcat {
    /// The model's opset for the default domain.
    pub opset: i64,
    /// Attribute `axis`: optional at opset 1 (default 1), required from 4.
    pub axis: Option<i64>,
}

impl OnnxConcat {
    /// A Concat node at `opset` without an `axis` attribute.
    pub fn new(opset: i64) -> Self {
        OnnxConcat { opset, axis: None }
    }

    /// Sets attribute `axis`.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = Some(axis);
        self
    }

    /// The operator version this node's opset selects.
    ///
    /// # Errors
    ///
    /// [`ConcatError::UnsupportedOpset`] below opset 1.
    pub fn op_id(&self) -> Result<OpId, ConcatError> {
        let version = match self.opset {
            13.. => 13,
            11..=12 => 11,
            4..=10 => 4,
            1..=3 => 1,
            _ => {
                return Err(ConcatError::UnsupportedOpset {
                    kind: OpKind::OnnxConcat,
                    opset: self.opset,
                });
            }
        };
        Ok(OpId {
            kind: OpKind::OnnxConcat,
            version,
        })
    }

    /// Resolves the concat of inputs of `shapes`.
    ///
    /// # Errors
    ///
    /// Every rule of ONNX Concat in [`crate::docs::semantics`] that the node
    /// or the shapes break, as a typed [`ConcatError`].
    pub fn resolve<S: AsRef<[usize]>>(&self, shapes: &[S]) -> Result<ResolvedConcat, ConcatError> {
        let op = self.op_id()?;
        let axis = match (self.axis, op.version) {
            (Some(axis), _) => axis,
            (None, 1) => 1,
            (None, _) => return Err(ConcatError::MissingAxis { op }),
        };
        rules::cat(op, shapes, axis)
    }
}

/// ONNX `ConcatFromSequence` (opset 11): the tensors of a sequence
/// concatenated on an existing axis (`new_axis = 0`, as
/// `numpy.concatenate`) or stacked on a new one (`new_axis = 1`, as
/// `numpy.stack`).
///
/// # Examples
///
/// ```
/// use wgpu_split::OnnxConcatFromSequence;
///
/// let stacked = OnnxConcatFromSequence::new(11).axis(-1).new_axis(1);
/// assert_eq!(stacked.resolve(&[[2, 3], [2, 3]]).unwrap().output_shape(), &[2, 3, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OnnxConcatFromSequence {
    /// The model's opset for the default domain.
    pub opset: i64,
    /// Attribute `axis` (required).
    pub axis: Option<i64>,
    /// Attribute `new_axis` (default 0): 0 concatenates, 1 stacks.
    pub new_axis: i64,
}

impl OnnxConcatFromSequence {
    /// A ConcatFromSequence node at `opset` without `axis`, `new_axis` 0.
    pub fn new(opset: i64) -> Self {
        OnnxConcatFromSequence {
            opset,
            axis: None,
            new_axis: 0,
        }
    }

    /// Sets attribute `axis`.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = Some(axis);
        self
    }

    /// Sets attribute `new_axis`.
    pub fn new_axis(mut self, new_axis: i64) -> Self {
        self.new_axis = new_axis;
        self
    }

    /// The operator version this node's opset selects.
    ///
    /// # Errors
    ///
    /// [`ConcatError::UnsupportedOpset`] below opset 11.
    pub fn op_id(&self) -> Result<OpId, ConcatError> {
        if self.opset < 11 {
            return Err(ConcatError::UnsupportedOpset {
                kind: OpKind::OnnxConcatFromSequence,
                opset: self.opset,
            });
        }
        Ok(OpId {
            kind: OpKind::OnnxConcatFromSequence,
            version: 11,
        })
    }

    /// Resolves the concat of a sequence whose tensors have `shapes`.
    ///
    /// # Errors
    ///
    /// Every rule of ConcatFromSequence in [`crate::docs::semantics`] that the
    /// node or the shapes break; an empty sequence is
    /// [`ConcatError::NoInputs`].
    pub fn resolve<S: AsRef<[usize]>>(&self, shapes: &[S]) -> Result<ResolvedConcat, ConcatError> {
        let op = self.op_id()?;
        let Some(axis) = self.axis else {
            return Err(ConcatError::MissingAxis { op });
        };
        match self.new_axis {
            0 => rules::cat(op, shapes, axis),
            1 => rules::stack(op, shapes, axis),
            new_axis => Err(ConcatError::NewAxisOutOfRange { op, new_axis }),
        }
    }
}
