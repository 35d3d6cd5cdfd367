//! ONNX `Split` (opsets 1, 2, 11, 13, 18).

use super::ResolvedSplit;
use super::error::ResolveError;
use super::param::ParamTensor;
use super::rules::{axis_and_dim, checked_lengths, equal_lengths, num_outputs_lengths};
use crate::op::{OpId, OpKind};

/// ONNX `Split`, opsets 1, 2, 11, 13 and 18 (any opset from 1 up selects the
/// latest version at or below it).
///
/// # Examples
///
/// ```
/// use wgpu_split::OnnxSplit;
///
/// let resolved = OnnxSplit::new(18, 2).axis(-1).num_outputs(2).resolve(&[3, 7]).unwrap();
/// assert_eq!(resolved.lengths(), &[4, 3]);
/// assert_eq!(resolved.axis(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxSplit {
    /// The model's opset for the default domain.
    pub opset: i64,
    /// Attribute `axis` (default 0; opset 1 has no default, absent is 0).
    pub axis: i64,
    /// Attribute `split` (opsets 1, 2, 11).
    pub split_attribute: Option<Vec<i64>>,
    /// Input `split` (opset 1: of the data's float type; 13, 18: integer).
    pub split_input: Option<ParamTensor>,
    /// Attribute `num_outputs` (opset 18).
    pub num_outputs: Option<i64>,
    /// The number of outputs the node declares.
    pub outputs: usize,
}

impl OnnxSplit {
    /// A Split node at `opset` with `outputs` declared outputs, axis 0 and no lengths.
    pub fn new(opset: i64, outputs: usize) -> Self {
        OnnxSplit {
            opset,
            axis: 0,
            split_attribute: None,
            split_input: None,
            num_outputs: None,
            outputs,
        }
    }

    /// Sets attribute `axis`.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }

    /// Sets attribute `split`.
    pub fn split_attribute(mut self, lengths: &[i64]) -> Self {
        self.split_attribute = Some(lengths.to_vec());
        self
    }

    /// Sets input `split`.
    pub fn split_input(mut self, lengths: ParamTensor) -> Self {
        self.split_input = Some(lengths);
        self
    }

    /// Sets attribute `num_outputs`.
    pub fn num_outputs(mut self, n: i64) -> Self {
        self.num_outputs = Some(n);
        self
    }

    /// The operator version this node's opset selects.
    ///
    /// # Errors
    ///
    /// [`ResolveError::UnsupportedOpset`] below opset 1.
    pub fn op_id(&self) -> Result<OpId, ResolveError> {
        let version = match self.opset {
            18.. => 18,
            13..=17 => 13,
            11..=12 => 11,
            2..=10 => 2,
            1 => 1,
            _ => {
                return Err(ResolveError::UnsupportedOpset {
                    kind: OpKind::OnnxSplit,
                    opset: self.opset,
                });
            }
        };
        Ok(OpId {
            kind: OpKind::OnnxSplit,
            version,
        })
    }

    /// Resolves the split for an input of shape `input_shape`.
    ///
    /// # Errors
    ///
    /// Every rule of ONNX Split in [`crate::docs::semantics`] that the node breaks, as a
    /// typed [`ResolveError`].
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit, ResolveError> {
        let op = self.op_id()?;
        let v = op.version;
        if self.outputs == 0 {
            return Err(ResolveError::NoOutputs { op });
        }
        let (axis, dim) = axis_and_dim(op, self.axis as i128, input_shape)?;
        if self.split_attribute.is_some() && v >= 13 {
            return Err(ResolveError::NotInOpset {
                op,
                what: "attribute split",
            });
        }
        if self.split_input.is_some() && (v == 2 || v == 11) {
            return Err(ResolveError::NotInOpset {
                op,
                what: "input split",
            });
        }
        if self.num_outputs.is_some() && v != 18 {
            return Err(ResolveError::NotInOpset {
                op,
                what: "attribute num_outputs",
            });
        }
        let explicit = match (&self.split_attribute, &self.split_input) {
            (Some(_), Some(_)) => {
                return Err(ResolveError::ConflictingParameters {
                    op,
                    first: "attribute split",
                    second: "input split",
                });
            }
            (Some(attr), None) => Some(attr.iter().map(|&l| l as i128).collect()),
            (None, Some(input)) => {
                input.require_rank_one(op, "split")?;
                Some(if v == 1 {
                    input.integers_or_whole_floats(op, "split")?
                } else {
                    input.integers(op, "split")?
                })
            }
            (None, None) => None,
        };
        let lengths = match (explicit, self.num_outputs) {
            (Some(_), Some(_)) => {
                return Err(ResolveError::ConflictingParameters {
                    op,
                    first: "input split",
                    second: "attribute num_outputs",
                });
            }
            (Some(given), None) => {
                if given.len() != self.outputs {
                    return Err(ResolveError::LengthCountMismatch {
                        op,
                        axis,
                        dim,
                        lengths: given,
                        outputs: self.outputs,
                    });
                }
                checked_lengths(op, axis, dim, given)?
            }
            (None, Some(n)) => num_outputs_lengths(op, axis, dim, n, self.outputs)?,
            (None, None) => equal_lengths(op, axis, dim, self.outputs as u128)?,
        };
        Ok(ResolvedSplit::unchecked(input_shape, axis, lengths, true))
    }
}
