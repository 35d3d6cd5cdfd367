//! NumPy's split calls (`numpy/lib/_shape_base_impl.py`) and concat calls
//! (`numpy.concatenate`, `numpy.stack` in `numpy/_core`). Axes wrap from
//! `-ndim`; indices wrap and clamp as Python slices do.

use super::{FrameworkError, Sections, sections_split};
use crate::op::{FrameworkCall, OpId};
use crate::semantics::concat::rules as concat_rules;
use crate::semantics::concat::{ConcatError, ResolvedConcat};
use crate::semantics::resolved::ResolvedSplit;

///  NumPy's split calls (`numpy/lib/_shape_base_impl.py`) and concat calls
///  (`numpy.concatenate`, `numpy.stack` in `numpy/_core`). Axes wrap from
///  `-ndim`; indices wrap and clamp as Python slices do.
#[derive(Debug, Clone, Copy)]
pub struct Numpy;

impl Numpy {
    /// `numpy.array_split(a, sections, axis)`: with a count, exactly that many
    /// pieces, the first `n % count` one longer; with indices, the pieces
    /// between them (as [`super::Torch::tensor_split`]).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::SectionsNotPositive`] ("number sections must be larger
    /// than 0"), [`FrameworkError::DimOutOfRange`].
    pub fn array_split<'a>(
        shape: &[usize],
        sections: impl Into<Sections<'a>>,
        axis: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        sections_split("numpy.array_split", shape, sections.into(), axis, false)
    }

    /// `numpy.split(a, sections, axis)`: as [`Numpy::array_split`], but a count must
    /// divide the axis.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::UnequalDivision`] ("array split does not result in an
    /// equal division"); [`FrameworkError::SectionsNotPositive`] (numpy raises
    /// `ZeroDivisionError` for 0); [`FrameworkError::DimOutOfRange`].
    pub fn split<'a>(
        shape: &[usize],
        sections: impl Into<Sections<'a>>,
        axis: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        sections_split("numpy.split", shape, sections.into(), axis, true)
    }

    /// `numpy.concatenate(arrays, axis)`: with `Some(axis)`, concatenation
    /// along `axis` (`[-ndim, ndim-1]`), the first array the reference; with
    /// `None` (numpy's `axis=None`), every array flattened, any rank (scalars
    /// included), into a 1-D result. Arrays must share one element type here
    /// (numpy promotes types; out of this crate's scope).
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] ("need at least one array to concatenate");
    /// [`ConcatError::ScalarInput`] when the first array is 0-d
    /// ("zero-dimensional arrays cannot be concatenated");
    /// [`ConcatError::AxisOutOfRange`] (`AxisError`); [`ConcatError::RankMismatch`]
    /// ("all the input arrays must have same number of dimensions");
    /// [`ConcatError::DimMismatch`] ("all the input array dimensions except for
    /// the concatenation axis must match exactly").
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Numpy;
    ///
    /// let flat = Numpy::concatenate(&[vec![2, 3], vec![4], vec![]], None).unwrap();
    /// assert_eq!(flat.output_shape(), &[11]);
    /// assert_eq!(flat.mirror().lengths(), &[6, 4, 1]);
    /// ```
    pub fn concatenate<S: AsRef<[usize]>>(
        arrays: &[S],
        axis: Option<i64>,
    ) -> Result<ResolvedConcat, ConcatError> {
        let op = OpId::call(FrameworkCall::NumpyConcatenate);
        match axis {
            Some(axis) => concat_rules::cat(op, arrays, axis),
            None => concat_rules::flatten(op, arrays),
        }
    }

    /// `numpy.stack(arrays, axis)`: equal shapes stacked on a new axis in
    /// `[-ndim-1, ndim]`; 0-d arrays stack into a 1-D result.
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] ("need at least one array to stack");
    /// [`ConcatError::AxisOutOfRange`]; [`ConcatError::UnequalShapes`] ("all
    /// input arrays must have the same shape").
    pub fn stack<S: AsRef<[usize]>>(
        arrays: &[S],
        axis: i64,
    ) -> Result<ResolvedConcat, ConcatError> {
        concat_rules::stack(OpId::call(FrameworkCall::NumpyStack), arrays, axis)
    }
}
