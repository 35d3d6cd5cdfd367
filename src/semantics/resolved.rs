//! The resolved split: a normalised axis and one length per output, checked
//! against a concrete input shape. Everything downstream (planning, GPU and
//! host execution) starts from here.

use super::error::ResolveError;
use super::rules::{axis_and_dim, check_output_count};
use crate::op::OpId;

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
    /// [`ResolveError::ShapeOverflow`] when the shape's element count overflows;
    /// [`ResolveError::AxisOutOfRange`] when `axis >= rank`; [`ResolveError::LengthSumMismatch`]
    /// when the lengths sum past the dimension; [`ResolveError::TooManyOutputs`];
    /// [`ResolveError::ParamShape`] when `keep_axis` is false and a length is not 1.
    pub fn new(
        input_shape: &[usize],
        axis: usize,
        lengths: Vec<usize>,
        keep_axis: bool,
    ) -> Result<Self, ResolveError> {
        const OP: OpId = OpId::DIRECT;
        let (axis, dim) = axis_and_dim(OP, axis as i128, input_shape)?;
        check_output_count(OP, lengths.len() as u128)?;
        let sum: u128 = lengths.iter().map(|&l| l as u128).sum();
        if sum > dim as u128 {
            return Err(ResolveError::LengthSumMismatch {
                op: OP,
                axis,
                dim,
                lengths: lengths.iter().map(|&l| l as i128).collect(),
                sum: sum as i128,
                inferred: false,
            });
        }
        if !keep_axis && lengths.iter().any(|&l| l != 1) {
            return Err(ResolveError::ParamShape {
                op: OP,
                param: "lengths",
                dims: lengths,
                expected: "all lengths 1 when the axis is removed",
            });
        }
        Ok(Self::unchecked(input_shape, axis, lengths, keep_axis))
    }

    pub(super) fn unchecked(
        input_shape: &[usize],
        axis: usize,
        lengths: Vec<usize>,
        keep_axis: bool,
    ) -> Self {
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

    /// Checks that a tensor of `shape` is the one this split was resolved for.
    ///
    /// # Errors
    ///
    /// [`ResolveError::ShapeMismatch`] naming both shapes.
    pub fn check_input_shape(&self, shape: &[usize]) -> Result<(), ResolveError> {
        if shape == self.input_shape.as_slice() {
            Ok(())
        } else {
            Err(ResolveError::ShapeMismatch {
                expected: self.input_shape.clone(),
                actual: shape.to_vec(),
            })
        }
    }

    /// Shapes of all outputs, in order.
    pub fn output_shapes(&self) -> Vec<Vec<usize>> {
        (0..self.output_count())
            .map(|i| self.output_shape(i))
            .collect()
    }
}
