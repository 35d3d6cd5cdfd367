//! OpenVINO `VariadicSplit-1` and `Split-1`.

use super::ResolvedSplit;
use super::error::ResolveError;
use super::param::ParamTensor;
use super::rules::{at_least, axis_and_dim, check_output_count, checked_lengths, equal_lengths};
use crate::op::{OpId, OpKind};

/// OpenVINO `VariadicSplit-1`: lengths as an input, at most one `-1` inferred.
///
/// # Examples
///
/// ```
/// use wgpu_split::{OpenVinoVariadicSplit, ParamTensor};
///
/// let op = OpenVinoVariadicSplit::new(ParamTensor::int64_scalar(0), ParamTensor::int64_1d(&[2, -1]));
/// assert_eq!(op.resolve(&[6, 3]).unwrap().lengths(), &[2, 4]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OpenVinoVariadicSplit {
    /// Input `axis`: scalar or shape `[1]`, any integer type.
    pub axis: ParamTensor,
    /// Input `split_lengths`: 1-D, any integer type.
    pub split_lengths: ParamTensor,
}

impl OpenVinoVariadicSplit {
    /// The operator identity.
    pub const OP: OpId = OpId {
        kind: OpKind::OpenVinoVariadicSplit,
        version: 1,
    };

    /// A VariadicSplit with the given axis and lengths inputs.
    pub fn new(axis: ParamTensor, split_lengths: ParamTensor) -> Self {
        OpenVinoVariadicSplit {
            axis,
            split_lengths,
        }
    }

    /// Resolves the split for an input of shape `input_shape`.
    ///
    /// # Errors
    ///
    /// Every rule of VariadicSplit in [`crate::docs::semantics`] that the inputs break.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit, ResolveError> {
        let op = Self::OP;
        let axis_value = axis_param(op, &self.axis, true)?;
        let (axis, dim) = axis_and_dim(op, axis_value, input_shape)?;
        self.split_lengths.require_rank_one(op, "split_lengths")?;
        let mut given = self.split_lengths.integers(op, "split_lengths")?;
        if given.is_empty() {
            return Err(ResolveError::EmptyLengths { op, axis, dim });
        }
        check_output_count(op, given.len() as u128)?;
        // -1 marks the one inferred length.
        given = at_least(op, axis, dim, given, -1)?;
        let inferred: Vec<usize> = (0..given.len()).filter(|&i| given[i] == -1).collect();
        match inferred[..] {
            [] => checked_lengths(op, axis, dim, given)
                .map(|lengths| ResolvedSplit::unchecked(input_shape, axis, lengths, true)),
            [at] => {
                let known: i128 = given.iter().filter(|&&l| l != -1).sum();
                if known > dim as i128 {
                    return Err(ResolveError::LengthSumMismatch {
                        op,
                        axis,
                        dim,
                        lengths: given,
                        sum: known,
                        inferred: true,
                    });
                }
                given[at] = dim as i128 - known;
                checked_lengths(op, axis, dim, given)
                    .map(|lengths| ResolvedSplit::unchecked(input_shape, axis, lengths, true))
            }
            _ => Err(ResolveError::MultipleInferredLengths {
                op,
                axis,
                dim,
                lengths: given,
            }),
        }
    }
}

/// OpenVINO `Split-1`: `num_splits` equal parts.
///
/// # Examples
///
/// ```
/// use wgpu_split::{OpenVinoSplit, ParamTensor};
///
/// let op = OpenVinoSplit::new(ParamTensor::int64_scalar(1), 3);
/// assert_eq!(op.resolve(&[2, 9]).unwrap().lengths(), &[3, 3, 3]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OpenVinoSplit {
    /// Input `axis`: a scalar of any integer type.
    pub axis: ParamTensor,
    /// Attribute `num_splits`.
    pub num_splits: i64,
}

impl OpenVinoSplit {
    /// The operator identity.
    pub const OP: OpId = OpId {
        kind: OpKind::OpenVinoSplit,
        version: 1,
    };

    /// A Split-1 with the given axis input and part count.
    pub fn new(axis: ParamTensor, num_splits: i64) -> Self {
        OpenVinoSplit { axis, num_splits }
    }

    /// Resolves the split for an input of shape `input_shape`.
    ///
    /// # Errors
    ///
    /// Every rule of OpenVINO Split-1 in [`crate::docs::semantics`] that the node breaks.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit, ResolveError> {
        let op = Self::OP;
        let axis_value = axis_param(op, &self.axis, false)?;
        let (axis, dim) = axis_and_dim(op, axis_value, input_shape)?;
        if self.num_splits < 1 {
            return Err(ResolveError::PartCountOutOfRange {
                op,
                attribute: "num_splits",
                value: self.num_splits,
                rule: "at least 1",
                axis,
                dim,
            });
        }
        let lengths = equal_lengths(op, axis, dim, self.num_splits as u128)?;
        Ok(ResolvedSplit::unchecked(input_shape, axis, lengths, true))
    }
}

/// The axis value of an OpenVINO axis input (scalar, or `[1]` when allowed).
fn axis_param(op: OpId, axis: &ParamTensor, allow_shape_one: bool) -> Result<i128, ResolveError> {
    let shape_ok = axis.dims().is_empty() || (allow_shape_one && axis.dims() == [1]);
    if !shape_ok {
        return Err(ResolveError::ParamShape {
            op,
            param: "axis",
            dims: axis.dims().to_vec(),
            expected: if allow_shape_one {
                "a scalar or shape [1]"
            } else {
                "a scalar"
            },
        });
    }
    Ok(axis.integers(op, "axis")?[0])
}
