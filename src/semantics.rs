//! Operator semantics: the five split operators, their opsets and attributes,
//! and how each resolves against an input shape into a [`ResolvedSplit`]
//! (normalised axis, output lengths, whether the axis is kept) or a typed
//! [`Error`]. The rules are those of `SEMANTICS.md`; this module does no I/O
//! and knows nothing of GPUs.

use std::fmt;

use crate::element::ElementType;
use crate::error::{Error, Result};

/// 2^63: whole floats below it in magnitude fit in int64.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// The largest number of outputs this crate resolves. Beyond it resolution
/// fails with [`Error::TooManyOutputs`] instead of allocating a length table
/// for a count read from an untrusted model.
pub const MAX_OUTPUTS: usize = 1 << 24;

/// An operator family, without its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// ONNX `Split`.
    OnnxSplit,
    /// ONNX `SplitToSequence`.
    OnnxSplitToSequence,
    /// OpenVINO `VariadicSplit`.
    OpenVinoVariadicSplit,
    /// OpenVINO `Split`.
    OpenVinoSplit,
    /// A split given directly as a [`ResolvedSplit`] by a caller.
    Direct,
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::OnnxSplit => "ONNX Split",
            OpKind::OnnxSplitToSequence => "ONNX SplitToSequence",
            OpKind::OpenVinoVariadicSplit => "OpenVINO VariadicSplit",
            OpKind::OpenVinoSplit => "OpenVINO Split",
            OpKind::Direct => "direct split",
        })
    }
}

/// An operator version: the family and the opset version that defines it
/// (`since_version`), e.g. ONNX Split-18. Used to name the operator in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpId {
    /// The family.
    pub kind: OpKind,
    /// The defining version (1, 2, 11, 13, 18 for ONNX Split; 11, 24 for
    /// SplitToSequence; 1 for the OpenVINO operators).
    pub version: u32,
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            OpKind::Direct => write!(f, "{}", self.kind),
            _ => write!(f, "{}-{}", self.kind, self.version),
        }
    }
}

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
    /// [`Error::NonNumericParam`] when `element_type` is neither an integer
    /// type nor a standard float, or when `values` is of the other kind;
    /// [`Error::DataLength`] when the value count does not match `dims`.
    pub fn new(element_type: ElementType, dims: Vec<usize>, values: ParamValues) -> Result<Self> {
        let kind_matches = match &values {
            ParamValues::Int(_) => element_type.is_integer(),
            ParamValues::Float(_) => element_type.is_standard_float(),
        };
        if !kind_matches {
            return Err(Error::NonNumericParam { element_type });
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
            return Err(Error::DataLength {
                element_type,
                shape: dims.iter().map(|&d| d as u64).collect(),
                expected,
                actual: count,
                unit: "values",
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
    fn integers(&self, op: OpId, param: &'static str) -> Result<Vec<i128>> {
        match &self.values {
            ParamValues::Int(v) => Ok(v.clone()),
            ParamValues::Float(_) => Err(Error::ParamType {
                op,
                param,
                element_type: self.element_type,
                expected: "an integer type",
            }),
        }
    }

    /// The values as integers, accepting whole-valued floats (ONNX Split-1).
    fn integers_or_whole_floats(&self, op: OpId, param: &'static str) -> Result<Vec<i128>> {
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
                        Err(Error::NonWholeLength {
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

    fn require_rank_one(&self, op: OpId, param: &'static str) -> Result<()> {
        if self.dims.len() == 1 {
            Ok(())
        } else {
            Err(Error::ParamShape {
                op,
                param,
                dims: self.dims.clone(),
                expected: "a 1-D tensor",
            })
        }
    }
}

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
    /// [`Error::UnsupportedOpset`] below opset 1.
    pub fn op_id(&self) -> Result<OpId> {
        let version = match self.opset {
            18.. => 18,
            13..=17 => 13,
            11..=12 => 11,
            2..=10 => 2,
            1 => 1,
            _ => {
                return Err(Error::UnsupportedOpset {
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
    /// Every rule of ONNX Split in `SEMANTICS.md` that the node breaks, as a
    /// typed [`Error`].
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit> {
        let op = self.op_id()?;
        let v = op.version;
        if self.outputs == 0 {
            return Err(Error::NoOutputs { op });
        }
        let (axis, dim) = axis_and_dim(op, self.axis as i128, input_shape)?;
        if self.split_attribute.is_some() && v >= 13 {
            return Err(Error::NotInOpset {
                op,
                what: "attribute split",
            });
        }
        if self.split_input.is_some() && (v == 2 || v == 11) {
            return Err(Error::NotInOpset {
                op,
                what: "input split",
            });
        }
        if self.num_outputs.is_some() && v != 18 {
            return Err(Error::NotInOpset {
                op,
                what: "attribute num_outputs",
            });
        }
        let explicit = match (&self.split_attribute, &self.split_input) {
            (Some(_), Some(_)) => {
                return Err(Error::ConflictingParameters {
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
                return Err(Error::ConflictingParameters {
                    op,
                    first: "input split",
                    second: "attribute num_outputs",
                });
            }
            (Some(given), None) => {
                if given.len() != self.outputs {
                    return Err(Error::LengthCountMismatch {
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
    /// Attribute `keepdims` (default 1); only used when `split` is absent.
    pub keepdims: i64,
    /// Input `split`: a scalar chunk size or 1-D lengths, any integer type.
    pub split: Option<ParamTensor>,
}

impl OnnxSplitToSequence {
    /// A SplitToSequence node at `opset` with axis 0, keepdims 1, no split.
    pub fn new(opset: i64) -> Self {
        OnnxSplitToSequence {
            opset,
            axis: 0,
            keepdims: 1,
            split: None,
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
    /// [`Error::UnsupportedOpset`] below opset 11.
    pub fn op_id(&self) -> Result<OpId> {
        let version = match self.opset {
            24.. => 24,
            11..=23 => 11,
            _ => {
                return Err(Error::UnsupportedOpset {
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

    /// Resolves the split for an input of shape `input_shape`.
    ///
    /// # Errors
    ///
    /// Every rule of SplitToSequence in `SEMANTICS.md` that the node breaks.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit> {
        let op = self.op_id()?;
        let (axis, dim) = axis_and_dim(op, self.axis as i128, input_shape)?;
        let Some(split) = &self.split else {
            check_output_count(op, dim as u128)?;
            let lengths = vec![1; dim];
            return Ok(ResolvedSplit::unchecked(
                input_shape,
                axis,
                lengths,
                self.keepdims != 0,
            ));
        };
        let values = split.integers(op, "split")?;
        let lengths = match split.dims.len() {
            0 => {
                let s = values[0];
                if s < 1 {
                    return Err(Error::InvalidScalarSplit {
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
                lengths
            }
            1 if values.is_empty() => return Err(Error::EmptyLengths { op, axis, dim }),
            1 => checked_lengths(op, axis, dim, values)?,
            _ => {
                return Err(Error::ParamShape {
                    op,
                    param: "split",
                    dims: split.dims.clone(),
                    expected: "a scalar or a 1-D tensor",
                });
            }
        };
        Ok(ResolvedSplit::unchecked(input_shape, axis, lengths, true))
    }
}

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
    /// Every rule of VariadicSplit in `SEMANTICS.md` that the inputs break.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit> {
        let op = Self::OP;
        let axis_value = axis_param(op, &self.axis, true)?;
        let (axis, dim) = axis_and_dim(op, axis_value, input_shape)?;
        self.split_lengths.require_rank_one(op, "split_lengths")?;
        let mut given = self.split_lengths.integers(op, "split_lengths")?;
        if given.is_empty() {
            return Err(Error::EmptyLengths { op, axis, dim });
        }
        check_output_count(op, given.len() as u128)?;
        if let Some(index) = given.iter().position(|&l| l < -1) {
            return Err(Error::LengthBelowMinimum {
                op,
                axis,
                dim,
                lengths: given,
                index,
                minimum: -1,
            });
        }
        let inferred: Vec<usize> = (0..given.len()).filter(|&i| given[i] == -1).collect();
        match inferred[..] {
            [] => checked_lengths(op, axis, dim, given)
                .map(|lengths| ResolvedSplit::unchecked(input_shape, axis, lengths, true)),
            [at] => {
                let known: i128 = given.iter().filter(|&&l| l != -1).sum();
                if known > dim as i128 {
                    return Err(Error::LengthSumMismatch {
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
            _ => Err(Error::MultipleInferredLengths {
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
    /// Every rule of OpenVINO Split-1 in `SEMANTICS.md` that the node breaks.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit> {
        let op = Self::OP;
        let axis_value = axis_param(op, &self.axis, false)?;
        let (axis, dim) = axis_and_dim(op, axis_value, input_shape)?;
        if self.num_splits < 1 {
            return Err(Error::PartCountOutOfRange {
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
    /// The operator's typed [`Error`] for any rule the node breaks.
    pub fn resolve(&self, input_shape: &[usize]) -> Result<ResolvedSplit> {
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

/// A split resolved against a concrete input shape: the normalised axis, the
/// length of every output along it, and whether outputs keep the axis.
///
/// Output `i` is the slice `[start_i, start_i + lengths[i])` along `axis`,
/// where `start_i` is the sum of the lengths before it. The lengths sum to the
/// dimension, except for a Split-18 node that declares fewer outputs than
/// `num_outputs`, which receives only the first chunks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResolvedSplit {
    input_shape: Vec<usize>,
    axis: usize,
    lengths: Vec<usize>,
    keep_axis: bool,
}

impl ResolvedSplit {
    /// A split given directly (for runtimes with their own operator layer).
    ///
    /// # Errors
    ///
    /// [`Error::ShapeOverflow`] when the shape's element count overflows;
    /// [`Error::AxisOutOfRange`] when `axis >= rank`; [`Error::LengthSumMismatch`]
    /// when the lengths sum past the dimension; [`Error::TooManyOutputs`];
    /// [`Error::ParamShape`] when `keep_axis` is false and a length is not 1.
    pub fn new(
        input_shape: &[usize],
        axis: usize,
        lengths: Vec<usize>,
        keep_axis: bool,
    ) -> Result<Self> {
        const OP: OpId = OpId {
            kind: OpKind::Direct,
            version: 0,
        };
        let (axis, dim) = axis_and_dim(OP, axis as i128, input_shape)?;
        check_output_count(OP, lengths.len() as u128)?;
        let sum: u128 = lengths.iter().map(|&l| l as u128).sum();
        if sum > dim as u128 {
            return Err(Error::LengthSumMismatch {
                op: OP,
                axis,
                dim,
                lengths: lengths.iter().map(|&l| l as i128).collect(),
                sum: sum as i128,
                inferred: false,
            });
        }
        if !keep_axis && lengths.iter().any(|&l| l != 1) {
            return Err(Error::ParamShape {
                op: OP,
                param: "lengths",
                dims: lengths,
                expected: "all lengths 1 when the axis is removed",
            });
        }
        Ok(Self::unchecked(input_shape, axis, lengths, keep_axis))
    }

    fn unchecked(input_shape: &[usize], axis: usize, lengths: Vec<usize>, keep_axis: bool) -> Self {
        ResolvedSplit {
            input_shape: input_shape.to_vec(),
            axis,
            lengths,
            keep_axis,
        }
    }

    /// The input shape the split was resolved for.
    pub fn input_shape(&self) -> &[usize] {
        &self.input_shape
    }

    /// The normalised (non-negative) axis.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// Length of each output along the axis.
    pub fn lengths(&self) -> &[usize] {
        &self.lengths
    }

    /// False when outputs drop the axis (SplitToSequence with keepdims 0).
    pub fn keep_axis(&self) -> bool {
        self.keep_axis
    }

    /// Number of outputs.
    pub fn output_count(&self) -> usize {
        self.lengths.len()
    }

    /// Start of each output along the axis.
    pub fn starts(&self) -> Vec<usize> {
        self.lengths
            .iter()
            .scan(0, |start, &len| {
                let this = *start;
                *start += len;
                Some(this)
            })
            .collect()
    }

    /// Shape of output `index`.
    ///
    /// # Panics
    ///
    /// When `index >= output_count()`.
    pub fn output_shape(&self, index: usize) -> Vec<usize> {
        let mut shape = self.input_shape.clone();
        if self.keep_axis {
            shape[self.axis] = self.lengths[index];
        } else {
            shape.remove(self.axis);
        }
        shape
    }

    /// Shapes of all outputs, in order.
    pub fn output_shapes(&self) -> Vec<Vec<usize>> {
        (0..self.output_count())
            .map(|i| self.output_shape(i))
            .collect()
    }
}

/// The element count of `shape`.
///
/// # Errors
///
/// [`Error::ShapeOverflow`] when the product of the non-zero dimensions does
/// not fit in `usize`. Zero-size shapes are held to that too, so that a shape
/// such as `[0, 2^40, 2^40]` cannot make any partial product (a block size, a
/// run length) overflow later.
pub fn element_count(shape: &[usize]) -> Result<usize> {
    let nonzero = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match nonzero {
        Some(_) if shape.contains(&0) => Ok(0),
        Some(product) => Ok(product),
        None => Err(Error::ShapeOverflow {
            shape: shape.iter().map(|&d| d as u64).collect(),
        }),
    }
}

/// Checks the shape, normalises `axis` and returns it with its dimension.
fn axis_and_dim(op: OpId, axis: i128, input_shape: &[usize]) -> Result<(usize, usize)> {
    element_count(input_shape)?;
    let rank = input_shape.len() as i128;
    let normalised = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&normalised) {
        return Err(Error::AxisOutOfRange {
            op,
            axis,
            rank: input_shape.len(),
        });
    }
    let axis_index = normalised as usize;
    Ok((axis_index, input_shape[axis_index]))
}

/// The axis value of an OpenVINO axis input (scalar, or `[1]` when allowed).
fn axis_param(op: OpId, axis: &ParamTensor, allow_shape_one: bool) -> Result<i128> {
    let shape_ok = axis.dims.is_empty() || (allow_shape_one && axis.dims == [1]);
    if !shape_ok {
        return Err(Error::ParamShape {
            op,
            param: "axis",
            dims: axis.dims.clone(),
            expected: if allow_shape_one {
                "a scalar or shape [1]"
            } else {
                "a scalar"
            },
        });
    }
    Ok(axis.integers(op, "axis")?[0])
}

fn check_output_count(op: OpId, outputs: u128) -> Result<()> {
    if outputs > MAX_OUTPUTS as u128 {
        return Err(Error::TooManyOutputs {
            op,
            outputs,
            limit: MAX_OUTPUTS,
        });
    }
    Ok(())
}

/// Explicit lengths: each `>= 0`, summing to `dim`.
fn checked_lengths(op: OpId, axis: usize, dim: usize, given: Vec<i128>) -> Result<Vec<usize>> {
    check_output_count(op, given.len() as u128)?;
    if let Some(index) = given.iter().position(|&l| l < 0) {
        return Err(Error::LengthBelowMinimum {
            op,
            axis,
            dim,
            lengths: given,
            index,
            minimum: 0,
        });
    }
    // Saturating: a sum that saturates cannot equal a usize dimension anyway.
    let sum = given.iter().fold(0i128, |acc, &l| acc.saturating_add(l));
    if sum != dim as i128 {
        return Err(Error::LengthSumMismatch {
            op,
            axis,
            dim,
            lengths: given,
            sum,
            inferred: false,
        });
    }
    // Every length is in 0..=dim now, so it fits usize.
    Ok(given.into_iter().map(|l| l as usize).collect())
}

/// Equal split into `parts` outputs: `dim % parts == 0` required.
fn equal_lengths(op: OpId, axis: usize, dim: usize, parts: u128) -> Result<Vec<usize>> {
    check_output_count(op, parts)?;
    let parts_usize = parts as usize;
    if parts_usize == 0 || !dim.is_multiple_of(parts_usize) {
        return Err(Error::NotEvenlySplittable {
            op,
            axis,
            dim,
            parts: parts as u64,
        });
    }
    Ok(vec![dim / parts_usize; parts_usize])
}

/// Split-18 `num_outputs`: chunks of `ceil(dim / n)`, a last chunk of at least 1.
fn num_outputs_lengths(
    op: OpId,
    axis: usize,
    dim: usize,
    n: i64,
    outputs: usize,
) -> Result<Vec<usize>> {
    if n < 1 || n as u128 > dim as u128 {
        return Err(Error::PartCountOutOfRange {
            op,
            attribute: "num_outputs",
            value: n,
            rule: "between 1 and the dimension",
            axis,
            dim,
        });
    }
    let n = n as usize; // 1 <= n <= dim
    if outputs > n {
        return Err(Error::MoreOutputsThanNumOutputs {
            op,
            num_outputs: n as i64,
            outputs,
        });
    }
    check_output_count(op, n as u128)?;
    let chunk = dim.div_ceil(n);
    let last = dim as i128 - chunk as i128 * (n as i128 - 1);
    if last < 1 {
        return Err(Error::EmptyLastChunk {
            op,
            axis,
            dim,
            num_outputs: n as i64,
            chunk: chunk as u64,
            last,
        });
    }
    let mut lengths = vec![chunk; n - 1];
    lengths.push(last as usize);
    lengths.truncate(outputs);
    Ok(lengths)
}
