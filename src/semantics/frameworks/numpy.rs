//! NumPy's split calls (`numpy/lib/_shape_base_impl.py`). Axes wrap from
//! `-ndim`; indices wrap and clamp as Python slices do.

use super::{FrameworkError, Sections, sections_split};
use crate::semantics::resolved::ResolvedSplit;

/// `numpy.array_split(a, sections, axis)`: with a count, exactly that many
/// pieces, the first `n % count` one longer; with indices, the pieces
/// between them (as [`super::torch::tensor_split`]).
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

/// `numpy.split(a, sections, axis)`: as [`array_split`], but a count must
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
