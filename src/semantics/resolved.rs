//! The resolved split: a normalised axis and one window (start, length) per
//! output, checked against a concrete input shape. Everything downstream
//! (planning, GPU and host execution) starts from here.

use super::error::ResolveError;
use super::rules::{axis_and_dim, check_output_count};
use crate::op::OpId;

/// A split resolved against a concrete input shape: the normalised axis, the
/// window of every output along it, and whether outputs keep the axis.
///
/// Output `i` is the slice `[starts[i], starts[i] + lengths[i])` along
/// `axis`. The operators (ONNX, OpenVINO) give contiguous windows, each
/// starting where the one before ends, that cover the dimension (except for
/// a Split-18 node that declares fewer outputs than `num_outputs`, which
/// receives only the first chunks). Framework calls
/// ([`crate::frameworks`]) may give windows that are empty, overlap, or
/// leave parts of the axis unread.
///
/// # Examples
///
/// ```
/// use wgpu_split::ResolvedSplit;
///
/// // torch.tensor_split(x, [3, 1]) of 5 rows: [0, 3), an empty piece, [1, 5).
/// let split = ResolvedSplit::from_windows(&[5, 2], 0, vec![(0, 3), (3, 0), (1, 4)], true).unwrap();
/// assert_eq!(split.output_shapes(), vec![vec![3, 2], vec![0, 2], vec![4, 2]]);
/// assert!(!split.is_contiguous());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResolvedSplit {
    input_shape: Vec<usize>,
    axis: usize,
    starts: Vec<usize>,
    lengths: Vec<usize>,
    keep_axis: bool,
}

impl ResolvedSplit {
    /// The largest number of outputs this crate resolves (2^24), for a split
    /// and for a concat's inputs. Beyond it resolution fails with
    /// [`ResolveError::TooManyOutputs`] (a concat with
    /// [`crate::ConcatError::TooManyInputs`]) instead of allocating a length
    /// table for a count read from an untrusted model.
    pub const MAX_OUTPUTS: usize = super::rules::MAX_OUTPUTS;

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
        check_removed_axis(OP, &lengths, keep_axis)?;
        Ok(Self::unchecked(input_shape, axis, lengths, keep_axis))
    }

    /// A split given as one window `(start, length)` per output along the
    /// axis; windows may be empty, overlap or leave parts of the axis unread.
    ///
    /// # Errors
    ///
    /// [`ResolveError::ShapeOverflow`]; [`ResolveError::AxisOutOfRange`];
    /// [`ResolveError::TooManyOutputs`]; [`ResolveError::WindowOutOfRange`]
    /// for a window past the dimension; [`ResolveError::ParamShape`] when
    /// `keep_axis` is false and a window's length is not 1.
    pub fn from_windows(
        input_shape: &[usize],
        axis: usize,
        windows: Vec<(usize, usize)>,
        keep_axis: bool,
    ) -> Result<Self, ResolveError> {
        const OP: OpId = OpId::DIRECT;
        let (axis, dim) = axis_and_dim(OP, axis as i128, input_shape)?;
        check_output_count(OP, windows.len() as u128)?;
        if let Some(index) = windows
            .iter()
            .position(|&(start, len)| start.checked_add(len).is_none_or(|end| end > dim))
        {
            let (start, length) = windows[index];
            return Err(ResolveError::WindowOutOfRange {
                index,
                start,
                length,
                axis,
                dim,
            });
        }
        let (starts, lengths): (Vec<usize>, Vec<usize>) = windows.into_iter().unzip();
        check_removed_axis(OP, &lengths, keep_axis)?;
        Ok(ResolvedSplit {
            input_shape: input_shape.to_vec(),
            axis,
            starts,
            lengths,
            keep_axis,
        })
    }

    /// Contiguous windows of `lengths`, each starting where the one before
    /// ends (the caller has checked them).
    pub(super) fn unchecked(
        input_shape: &[usize],
        axis: usize,
        lengths: Vec<usize>,
        keep_axis: bool,
    ) -> Self {
        let starts = lengths
            .iter()
            .scan(0, |start, &len| {
                let this = *start;
                *start += len;
                Some(this)
            })
            .collect();
        ResolvedSplit {
            input_shape: input_shape.to_vec(),
            axis,
            starts,
            lengths,
            keep_axis,
        }
    }

    /// Windows the caller has checked (framework calls).
    pub(super) fn unchecked_windows(
        input_shape: &[usize],
        axis: usize,
        windows: Vec<(usize, usize)>,
        keep_axis: bool,
    ) -> Self {
        let (starts, lengths) = windows.into_iter().unzip();
        ResolvedSplit {
            input_shape: input_shape.to_vec(),
            axis,
            starts,
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
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// Each output's window `(start, length)` along the axis.
    pub fn windows(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts
            .iter()
            .copied()
            .zip(self.lengths.iter().copied())
    }

    /// True when each window starts where the one before ends (as every
    /// ONNX and OpenVINO operator resolves).
    pub fn is_contiguous(&self) -> bool {
        self.windows()
            .try_fold(0, |end, (start, len)| (start == end).then_some(start + len))
            .is_some()
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

/// Without the axis every output must have length 1 along it.
fn check_removed_axis(op: OpId, lengths: &[usize], keep_axis: bool) -> Result<(), ResolveError> {
    if !keep_axis && lengths.iter().any(|&l| l != 1) {
        return Err(ResolveError::ParamShape {
            op,
            param: "lengths",
            dims: lengths.to_vec(),
            expected: "all lengths 1 when the axis is removed",
        });
    }
    Ok(())
}
