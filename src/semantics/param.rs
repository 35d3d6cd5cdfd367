//! Parameter tensors: split lengths or an axis as they arrive from a model,
//! widened without loss, with the shape and type checks each operator needs.

use super::error::ResolveError;
use crate::element::ElementType;
use crate::op::OpId;

/// 2^63: whole floats below it in magnitude fit in int64.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// The values of a small parameter tensor (split lengths or an axis) as they
/// arrive from a model, widened without loss.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValues {
    /// Any integer type, widened to `i128` (no `u64` or `i64` value is lost).
    Int(Vec<i128>),
    /// `float16`, `bfloat16`, `float` or `double`, widened to `f64`.
    Float(Vec<f64>),
}

/// A parameter tensor (split lengths or an axis): its element type, its shape
/// and its values. Each operator checks the type and shape it accepts.
///
/// # Examples
///
/// ```
/// use wgpu_split::ParamTensor;
///
/// let lengths = ParamTensor::int64_1d(&[2, 3]);
/// assert_eq!(lengths.dims(), &[2]);
/// let scalar = ParamTensor::int64_scalar(4);
/// assert!(scalar.dims().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ParamTensor {
    element_type: ElementType,
    dims: Vec<usize>,
    values: ParamValues,
}

impl ParamTensor {
    /// A parameter tensor from its parts.
    ///
    /// # Errors
    ///
    /// [`ResolveError::NonNumericParam`] when `element_type` is neither an integer
    /// type nor a standard float, or when `values` is of the other kind;
    /// [`ResolveError::ParamValueCount`] when the value count does not match `dims`.
    pub fn new(
        element_type: ElementType,
        dims: Vec<usize>,
        values: ParamValues,
    ) -> Result<Self, ResolveError> {
        let kind_matches = match &values {
            ParamValues::Int(_) => element_type.is_integer(),
            ParamValues::Float(_) => element_type.is_standard_float(),
        };
        if !kind_matches {
            return Err(ResolveError::NonNumericParam { element_type });
        }
        let count = match &values {
            ParamValues::Int(v) => v.len(),
            ParamValues::Float(v) => v.len(),
        };
        let expected = dims
            .iter()
            .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
            .unwrap_or(u128::MAX);
        if expected != count as u128 {
            return Err(ResolveError::ParamValueCount {
                dims,
                expected,
                actual: count,
            });
        }
        Ok(ParamTensor {
            element_type,
            dims,
            values,
        })
    }

    /// A 1-D `int64` tensor.
    pub fn int64_1d(values: &[i64]) -> Self {
        ParamTensor {
            element_type: ElementType::Int64,
            dims: vec![values.len()],
            values: ParamValues::Int(values.iter().map(|&v| v as i128).collect()),
        }
    }

    /// A rank-0 `int64` tensor.
    pub fn int64_scalar(value: i64) -> Self {
        ParamTensor {
            element_type: ElementType::Int64,
            dims: vec![],
            values: ParamValues::Int(vec![value as i128]),
        }
    }

    /// The element type the values arrived as.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The tensor's shape.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The values, widened.
    pub fn values(&self) -> &ParamValues {
        &self.values
    }

    /// The values as integers, for operators that take only integer types.
    pub(super) fn integers(
        &self,
        op: OpId,
        param: &'static str,
    ) -> Result<Vec<i128>, ResolveError> {
        match &self.values {
            ParamValues::Int(v) => Ok(v.clone()),
            ParamValues::Float(_) => Err(ResolveError::ParamType {
                op,
                param,
                element_type: self.element_type,
                expected: "an integer type",
            }),
        }
    }

    /// The values as integers, accepting whole-valued floats (ONNX Split-1).
    pub(super) fn integers_or_whole_floats(
        &self,
        op: OpId,
        param: &'static str,
    ) -> Result<Vec<i128>, ResolveError> {
        match &self.values {
            ParamValues::Int(v) => Ok(v.clone()),
            ParamValues::Float(v) => v
                .iter()
                .enumerate()
                .map(|(index, &value)| {
                    // 2^63 bounds the int64 range; NaN and infinities fail the
                    // comparison or the fract test.
                    let whole = value.fract() == 0.0 && value.abs() < TWO_POW_63;
                    if whole {
                        Ok(value as i128)
                    } else {
                        Err(ResolveError::NonWholeLength {
                            op,
                            param,
                            index,
                            value,
                        })
                    }
                })
                .collect(),
        }
    }

    pub(super) fn require_rank_one(
        &self,
        op: OpId,
        param: &'static str,
    ) -> Result<(), ResolveError> {
        if self.dims.len() == 1 {
            Ok(())
        } else {
            Err(ResolveError::ParamShape {
                op,
                param,
                dims: self.dims.clone(),
                expected: "a 1-D tensor",
            })
        }
    }
}
