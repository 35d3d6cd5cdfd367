//! Concats given directly, by a runtime with its own operator layer, and
//! the concat that undoes a split.

use super::error::ConcatError;
use super::resolved::ResolvedConcat;
use super::rules;
use crate::op::OpId;
use crate::semantics::resolved::ResolvedSplit;

impl ResolvedConcat {
    /// A concatenation along `axis` given directly (for runtimes with their
    /// own operator layer): every input has the same rank and the same size
    /// on every dimension but `axis`.
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`], [`ConcatError::TooManyInputs`],
    /// [`ConcatError::InputOverflow`], [`ConcatError::ScalarInput`],
    /// [`ConcatError::AxisOutOfRange`], [`ConcatError::RankMismatch`],
    /// [`ConcatError::DimMismatch`], [`ConcatError::OutputOverflow`].
    pub fn new<S: AsRef<[usize]>>(input_shapes: &[S], axis: usize) -> Result<Self, ConcatError> {
        let axis = i64::try_from(axis).unwrap_or(i64::MAX);
        rules::cat(OpId::DIRECT_CONCAT, input_shapes, axis)
    }

    /// A stack on a new axis `axis` (`0..=rank`) given directly: every input
    /// has the same shape.
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`], [`ConcatError::TooManyInputs`],
    /// [`ConcatError::InputOverflow`], [`ConcatError::AxisOutOfRange`],
    /// [`ConcatError::UnequalShapes`], [`ConcatError::OutputOverflow`].
    pub fn stack<S: AsRef<[usize]>>(input_shapes: &[S], axis: usize) -> Result<Self, ConcatError> {
        let axis = i64::try_from(axis).unwrap_or(i64::MAX);
        rules::stack(OpId::DIRECT_CONCAT, input_shapes, axis)
    }

    /// The concat that undoes `split`, when one exists: the split's windows
    /// must be contiguous, cover its axis and be at least one. Its mirror is
    /// `split` itself. A split that keeps the axis is undone by
    /// concatenating its outputs on that axis, one that drops it (unbind,
    /// `SplitToSequence` with `keepdims = 0`) by stacking them there.
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{OnnxSplit, ResolvedConcat};
    ///
    /// let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[2, 7]).unwrap();
    /// let concat = ResolvedConcat::inverse_of(&split).unwrap();
    /// assert_eq!(concat.input_shapes(), &[vec![2, 3], vec![2, 3], vec![2, 1]]);
    /// assert_eq!(concat.mirror(), &split);
    /// ```
    pub fn inverse_of(split: &ResolvedSplit) -> Option<Self> {
        let dim = split.input_shape()[split.axis()];
        let covered: usize = split.lengths().iter().sum();
        if split.output_count() == 0 || !split.is_contiguous() || covered != dim {
            return None;
        }
        let shapes = split.output_shapes();
        let resolved = if split.keep_axis() {
            Self::new(&shapes, split.axis())
        } else {
            Self::stack(&shapes, split.axis())
        };
        resolved.ok().filter(|concat| concat.mirror() == split)
    }
}
