//! Rules shared by every operator: shape and axis checks, output-count
//! limits and the three ways lengths are derived (explicit, equal, Split-18
//! `num_outputs`).

use super::error::ResolveError;
use crate::op::OpId;

/// [`ResolvedSplit::MAX_OUTPUTS`](super::ResolvedSplit::MAX_OUTPUTS).
pub(crate) const MAX_OUTPUTS: usize = 1 << 24;

/// The element count of `shape`.
///
/// # Errors
///
/// [`ResolveError::ShapeOverflow`] when the product of the non-zero dimensions does
/// not fit in `usize`. Zero-size shapes are held to that too, so that a shape
/// such as `[0, 2^40, 2^40]` cannot make any partial product (a block size, a
/// run length) overflow later.
pub fn element_count(shape: &[usize]) -> Result<usize, ResolveError> {
    let nonzero = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match nonzero {
        Some(_) if shape.contains(&0) => Ok(0),
        Some(product) => Ok(product),
        None => Err(ResolveError::ShapeOverflow {
            shape: shape.iter().map(|&d| d as u64).collect(),
        }),
    }
}

/// Checks the shape, normalises `axis` and returns it with its dimension.
pub(super) fn axis_and_dim(
    op: OpId,
    axis: i128,
    input_shape: &[usize],
) -> Result<(usize, usize), ResolveError> {
    element_count(input_shape)?;
    let rank = input_shape.len() as i128;
    let normalised = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&normalised) {
        return Err(ResolveError::AxisOutOfRange {
            op,
            axis,
            rank: input_shape.len(),
        });
    }
    let axis_index = normalised as usize;
    Ok((axis_index, input_shape[axis_index]))
}

pub(super) fn check_output_count(op: OpId, outputs: u128) -> Result<(), ResolveError> {
    if outputs > MAX_OUTPUTS as u128 {
        return Err(ResolveError::TooManyOutputs {
            op,
            outputs,
            limit: MAX_OUTPUTS,
        });
    }
    Ok(())
}

/// `given`, unless a length is below `minimum`:
/// [`ResolveError::LengthBelowMinimum`] names the first.
pub(super) fn at_least(
    op: OpId,
    axis: usize,
    dim: usize,
    given: Vec<i128>,
    minimum: i128,
) -> Result<Vec<i128>, ResolveError> {
    match given.iter().position(|&l| l < minimum) {
        Some(index) => Err(ResolveError::LengthBelowMinimum {
            op,
            axis,
            dim,
            lengths: given,
            index,
            minimum,
        }),
        None => Ok(given),
    }
}

/// Explicit lengths: each `>= 0`, summing to `dim`.
pub(super) fn checked_lengths(
    op: OpId,
    axis: usize,
    dim: usize,
    given: Vec<i128>,
) -> Result<Vec<usize>, ResolveError> {
    check_output_count(op, given.len() as u128)?;
    if let Some(torch_lengths) = legacy_chunk(dim, &given) {
        return Err(ResolveError::LegacyChunk {
            op,
            axis,
            dim,
            chunks: given.len(),
            lengths: given,
            torch_lengths,
        });
    }
    let given = at_least(op, axis, dim, given, 0)?;
    // Saturating: a sum that saturates cannot equal a usize dimension anyway.
    let sum = given.iter().fold(0i128, |acc, &l| acc.saturating_add(l));
    if sum != dim as i128 {
        return Err(ResolveError::LengthSumMismatch {
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

/// When `given` is torch's legacy export of `torch.chunk(dim into k)`
/// (`k - 1` lengths of `c = ceil(dim / k)`, then `dim - c (k - 1) < 0`),
/// the lengths torch itself gives: pieces of `c`, the last shorter.
fn legacy_chunk(dim: usize, given: &[i128]) -> Option<Vec<usize>> {
    let (&last, rest) = given.split_last()?;
    let chunk = dim.div_ceil(given.len()) as i128;
    let exported = last < 0
        && !rest.is_empty()
        && rest.iter().all(|&l| l == chunk)
        && last == dim as i128 - chunk * rest.len() as i128;
    exported.then(|| {
        let c = chunk as usize;
        (0..dim.div_ceil(c)).map(|i| c.min(dim - i * c)).collect()
    })
}

/// Equal split into `parts` outputs: `dim % parts == 0` required.
pub(super) fn equal_lengths(
    op: OpId,
    axis: usize,
    dim: usize,
    parts: u128,
) -> Result<Vec<usize>, ResolveError> {
    check_output_count(op, parts)?;
    let parts_usize = parts as usize;
    if parts_usize == 0 || !dim.is_multiple_of(parts_usize) {
        return Err(ResolveError::NotEvenlySplittable {
            op,
            axis,
            dim,
            parts: parts as u64,
        });
    }
    Ok(vec![dim / parts_usize; parts_usize])
}

/// Split-18 `num_outputs`: chunks of `ceil(dim / n)`, a last chunk of at least 1.
pub(super) fn num_outputs_lengths(
    op: OpId,
    axis: usize,
    dim: usize,
    n: i64,
    outputs: usize,
) -> Result<Vec<usize>, ResolveError> {
    if n < 1 || n as u128 > dim as u128 {
        return Err(ResolveError::PartCountOutOfRange {
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
        return Err(ResolveError::MoreOutputsThanNumOutputs {
            op,
            num_outputs: n as i64,
            outputs,
        });
    }
    check_output_count(op, n as u128)?;
    let chunk = dim.div_ceil(n);
    let last = dim as i128 - chunk as i128 * (n as i128 - 1);
    if last < 1 {
        return Err(ResolveError::EmptyLastChunk {
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
