//! The rules every concat shares, in one place: the input list, the axis
//! range, the rank and size checks, the output shape and the mirror split.
//! Each operator and framework call is one of the four shapes of concat
//! below (`cat`, `cat_where`, `stack`, `flatten`) with its own axis and
//! identity. Rules are checked in the order listed on each function, inputs
//! in order, so the first broken rule is the one reported.

use super::error::ConcatError;
use super::resolved::ResolvedConcat;
use crate::op::OpId;
use crate::semantics::resolved::ResolvedSplit;
use crate::semantics::rules::{MAX_OUTPUTS, element_count};

/// Concatenation along `axis` (in `[-rank, rank-1]`), the first input the
/// reference: no inputs, too many, an overflowing input, a scalar first
/// input, the axis, then each input's rank and sizes, then the output size.
pub(crate) fn cat<S: AsRef<[usize]>>(
    op: OpId,
    shapes: &[S],
    axis: i64,
) -> Result<ResolvedConcat, ConcatError> {
    cat_where(op, shapes, axis, |_| true)
}

/// [`cat`] of the inputs for which `takes_part` holds; the others get no
/// window and are not checked. The first input that takes part is the
/// reference. When none does, the output is an empty 1-D tensor `[0]`
/// whatever the axis (torch's legacy skip of 1-D empty tensors).
pub(crate) fn cat_where<S: AsRef<[usize]>>(
    op: OpId,
    shapes: &[S],
    axis: i64,
    takes_part: impl Fn(&[usize]) -> bool,
) -> Result<ResolvedConcat, ConcatError> {
    let shapes = checked_list(op, shapes)?;
    let parts: Vec<usize> = (0..shapes.len())
        .filter(|&i| takes_part(&shapes[i]))
        .collect();
    let Some(&reference) = parts.first() else {
        let mirror = ResolvedSplit::unchecked(&[0], 0, Vec::new(), true);
        let skipped = vec![None; shapes.len()];
        return Ok(ResolvedConcat::from_parts(
            op,
            shapes,
            vec![0],
            skipped,
            mirror,
        ));
    };
    let expected = &shapes[reference];
    if expected.is_empty() {
        return Err(ConcatError::ScalarInput {
            op,
            index: reference,
        });
    }
    let axis = wrap_axis(op, axis, expected.len(), expected.len())?;
    for &index in &parts {
        check_sizes(op, &shapes, index, reference, axis)?;
    }
    let lengths: Vec<usize> = parts.iter().map(|&i| shapes[i][axis]).collect();
    let mut output: Vec<u128> = expected.iter().map(|&d| d as u128).collect();
    output[axis] = lengths.iter().map(|&l| l as u128).sum();
    let output = fitting(op, output)?;
    let mut mirror_outputs = vec![None; shapes.len()];
    for (window, &index) in parts.iter().enumerate() {
        mirror_outputs[index] = Some(window);
    }
    let mirror = ResolvedSplit::unchecked(&output, axis, lengths, true);
    Ok(ResolvedConcat::from_parts(
        op,
        shapes,
        output,
        mirror_outputs,
        mirror,
    ))
}

/// Stacking on a new axis `axis` (in `[-rank-1, rank]`): no inputs, too
/// many, an overflowing input, the axis, then each input's shape against
/// the first, then the output size. Scalars stack into a 1-D output.
pub(crate) fn stack<S: AsRef<[usize]>>(
    op: OpId,
    shapes: &[S],
    axis: i64,
) -> Result<ResolvedConcat, ConcatError> {
    let shapes = checked_list(op, shapes)?;
    let expected = &shapes[0];
    let axis = wrap_axis(op, axis, expected.len() + 1, expected.len())?;
    if let Some(index) = shapes.iter().position(|s| s != expected) {
        return Err(ConcatError::UnequalShapes {
            op,
            index,
            shape: shapes[index].clone(),
            reference: 0,
            expected: expected.clone(),
        });
    }
    let count = shapes.len();
    let mut output: Vec<u128> = expected.iter().map(|&d| d as u128).collect();
    output.insert(axis, count as u128);
    let output = fitting(op, output)?;
    let mirror = ResolvedSplit::unchecked(&output, axis, vec![1; count], false);
    Ok(ResolvedConcat::from_parts(
        op,
        shapes,
        output,
        (0..count).map(Some).collect(),
        mirror,
    ))
}

/// Flattening concatenation (numpy's `axis=None`): every input flattened,
/// any rank (scalars included), the output 1-D. No inputs, too many, an
/// overflowing input, then the output size.
pub(crate) fn flatten<S: AsRef<[usize]>>(
    op: OpId,
    shapes: &[S],
) -> Result<ResolvedConcat, ConcatError> {
    let shapes = checked_list(op, shapes)?;
    // checked_list checked every element count.
    let lengths: Vec<usize> = shapes.iter().map(|s| s.iter().product()).collect();
    let total = fitting(op, vec![lengths.iter().map(|&l| l as u128).sum()])?;
    let mirror = ResolvedSplit::unchecked(&total, 0, lengths, true);
    let count = shapes.len();
    Ok(ResolvedConcat::from_parts(
        op,
        shapes,
        total,
        (0..count).map(Some).collect(),
        mirror,
    ))
}

/// The list itself: at least one input, at most [`MAX_OUTPUTS`], each
/// shape's element count in range.
fn checked_list<S: AsRef<[usize]>>(op: OpId, shapes: &[S]) -> Result<Vec<Vec<usize>>, ConcatError> {
    if shapes.is_empty() {
        return Err(ConcatError::NoInputs { op });
    }
    if shapes.len() > MAX_OUTPUTS {
        return Err(ConcatError::TooManyInputs {
            op,
            inputs: shapes.len(),
            limit: MAX_OUTPUTS,
        });
    }
    for (index, shape) in shapes.iter().enumerate() {
        if element_count(shape.as_ref()).is_err() {
            return Err(ConcatError::InputOverflow {
                op,
                index,
                shape: shape.as_ref().iter().map(|&d| d as u64).collect(),
            });
        }
    }
    Ok(shapes.iter().map(|s| s.as_ref().to_vec()).collect())
}

/// `axis` normalised into `0..positions` (a negative axis adds
/// `positions`), for inputs of `rank`.
pub(crate) fn wrap_axis(
    op: OpId,
    axis: i64,
    positions: usize,
    rank: usize,
) -> Result<usize, ConcatError> {
    let p = positions as i128;
    let wrapped = if axis < 0 {
        i128::from(axis) + p
    } else {
        i128::from(axis)
    };
    if (0..p).contains(&wrapped) {
        Ok(wrapped as usize)
    } else {
        Err(ConcatError::AxisOutOfRange {
            op,
            axis,
            rank,
            min: -(p as i64),
            max: p as i64 - 1,
        })
    }
}

/// Input `index` against input `reference`: the same rank, the same size on
/// every dimension but `axis`.
fn check_sizes(
    op: OpId,
    shapes: &[Vec<usize>],
    index: usize,
    reference: usize,
    axis: usize,
) -> Result<(), ConcatError> {
    let (shape, expected) = (&shapes[index], &shapes[reference]);
    if shape.len() != expected.len() {
        return Err(ConcatError::RankMismatch {
            op,
            index,
            rank: shape.len(),
            reference,
            expected: expected.len(),
        });
    }
    let differs = (0..shape.len()).find(|&d| d != axis && shape[d] != expected[d]);
    match differs {
        Some(dim) => Err(ConcatError::DimMismatch {
            op,
            axis,
            index,
            dim,
            size: shape[dim],
            reference,
            expected: expected[dim],
        }),
        None => Ok(()),
    }
}

/// The output shape in `usize`, when every dimension and the element count
/// (of the non-zero dimensions) fit.
fn fitting(op: OpId, shape: Vec<u128>) -> Result<Vec<usize>, ConcatError> {
    let overflow = || ConcatError::OutputOverflow {
        op,
        shape: shape.clone(),
    };
    let dims: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| overflow())?;
    element_count(&dims).map_err(|_| overflow())?;
    Ok(dims)
}

/// One input returned unchanged, whatever the axis (candle's `cat` of a
/// single tensor): the output has the input's shape and the mirror splits
/// its 1-D view into one window.
pub(crate) fn unchanged(op: OpId, shape: &[usize]) -> Result<ResolvedConcat, ConcatError> {
    let flat = flatten(op, &[shape])?;
    Ok(ResolvedConcat::from_parts(
        op,
        vec![shape.to_vec()],
        shape.to_vec(),
        vec![Some(0)],
        flat.mirror().clone(),
    ))
}
