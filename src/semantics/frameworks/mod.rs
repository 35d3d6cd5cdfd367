//! The split calls of the frameworks that embed the crate, each with its
//! framework's own rules (read from each framework's source; see
//! [`crate::docs::semantics`], "Framework conventions"), one type per
//! framework: [`Torch`], [`Numpy`], [`Candle`] and [`Burn`], whose
//! associated functions are the framework's calls. Each takes the input shape
//! and the call's own arguments and returns the [`ResolvedSplit`] its
//! framework would produce, as windows: pieces may be empty, overlap
//! (`tensor_split` with decreasing indices) or leave parts of the axis
//! unread (`narrow`). Arguments the framework refuses are a
//! [`FrameworkError`] naming the call and the values; where a framework
//! itself panics or divides by zero, the result or the error is stated on
//! the function.
//!
//! Their concat calls (`Torch::cat`, `Numpy::concatenate`, `Candle::stack`,
//! ...) take the inputs' shapes and return the [`crate::ResolvedConcat`] the
//! framework would produce, or a [`crate::ConcatError`] naming the call.
//!
//! # Examples
//!
//! ```
//! use wgpu_split::frameworks::Torch;
//!
//! // torch.chunk(x, 4) of 5 rows gives 3 pieces: [2, 2, 1].
//! let split = Torch::chunk(&[5, 8], 4, 0).unwrap();
//! assert_eq!(split.lengths(), &[2, 2, 1]);
//! ```

mod burn;
mod candle;
pub(crate) mod error;
mod numpy;
mod torch;

pub use burn::Burn;
pub use candle::Candle;
pub use numpy::Numpy;
pub use torch::Torch;

pub(crate) use error::FrameworkError;

use super::resolved::ResolvedSplit;
use super::rules::{check_output_count, element_count};
use crate::op::OpId;

/// The sections argument of `tensor_split` / `array_split` / `split`: a
/// number of sections, or the indices to split at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sections<'a> {
    /// This many sections.
    Count(i64),
    /// Pieces `[.., i0)`, `[i0, i1)`, ..., `[i_last, ..)`.
    Indices(&'a [i64]),
}

impl From<i64> for Sections<'_> {
    fn from(count: i64) -> Self {
        Sections::Count(count)
    }
}

impl<'a> From<&'a [i64]> for Sections<'a> {
    fn from(indices: &'a [i64]) -> Self {
        Sections::Indices(indices)
    }
}

impl<'a, const N: usize> From<&'a [i64; N]> for Sections<'a> {
    fn from(indices: &'a [i64; N]) -> Self {
        Sections::Indices(indices)
    }
}

/// The dimension `dim` of `shape`, wrapped as torch, numpy and candle wrap
/// it (`-rank..rank`), after the shape's element count is checked.
fn dim_index(call: &'static str, shape: &[usize], dim: i64) -> Result<usize, FrameworkError> {
    element_count(shape)?;
    let rank = shape.len() as i64;
    let wrapped = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&wrapped) {
        return Err(FrameworkError::DimOutOfRange {
            call,
            dim,
            rank: shape.len(),
        });
    }
    Ok(wrapped as usize)
}

/// A slice bound as Python and ATen take it: a negative index adds `n`,
/// then the result is clamped to `[0, n]`.
fn slice_bound(index: i64, n: usize) -> usize {
    let n_i = n as i128;
    let wrapped = if index < 0 {
        i128::from(index) + n_i
    } else {
        i128::from(index)
    };
    wrapped.clamp(0, n_i) as usize
}

/// Contiguous windows of `lengths` from 0.
fn contiguous(lengths: impl IntoIterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut start = 0;
    lengths
        .into_iter()
        .map(|len| {
            let window = (start, len);
            start += len;
            window
        })
        .collect()
}

/// A split into `sections` along `axis` as numpy's `array_split` and
/// torch's `tensor_split` make it (`equal` false), or numpy's `split`
/// (`equal` true: the count must divide the dimension).
pub(super) fn sections_split(
    call: &'static str,
    shape: &[usize],
    sections: Sections<'_>,
    axis: i64,
    equal: bool,
) -> Result<ResolvedSplit, FrameworkError> {
    let axis = dim_index(call, shape, axis)?;
    let n = shape[axis];
    let windows = match sections {
        Sections::Count(count) if count <= 0 => {
            return Err(FrameworkError::SectionsNotPositive {
                call,
                sections: count,
            });
        }
        Sections::Count(count) if equal && !n.is_multiple_of(count as usize) => {
            return Err(FrameworkError::UnequalDivision {
                call,
                sections: count,
                dim_size: n,
            });
        }
        Sections::Count(count) => {
            check_count(count as u128)?;
            even_sections(n, count as usize)
        }
        Sections::Indices(indices) => pieces_at(n, indices),
    };
    resolved(shape, axis, windows, true)
}

/// `count` sections of `n`: the first `n % count` one longer (numpy's
/// `array_split`, torch's `tensor_split`, candle's `chunk`); none for a
/// count of 0.
fn even_sections(n: usize, count: usize) -> Vec<(usize, usize)> {
    let Some(each) = n.checked_div(count) else {
        return Vec::new();
    };
    let extra = n % count;
    contiguous((0..count).map(|i| each + usize::from(i < extra)))
}

/// Pieces of `size` (the last shorter) covering `n`: torch's `split`.
fn pieces_of(n: usize, size: usize) -> Vec<(usize, usize)> {
    let count = n.div_ceil(size).max(1);
    (0..count)
        .map(|i| {
            let start = (i * size).min(n);
            (start, size.min(n - start))
        })
        .collect()
}

/// Windows between `indices` with slice rules: `[.., i0)`, `[i0, i1)`, ...
/// `[i_last, ..)`; an end before its start is an empty piece.
fn pieces_at(n: usize, indices: &[i64]) -> Vec<(usize, usize)> {
    let mut windows = Vec::with_capacity(indices.len() + 1);
    let mut start = 0;
    for &index in indices {
        let end = slice_bound(index, n);
        windows.push((start, end.saturating_sub(start)));
        start = end;
    }
    windows.push((start, n - start));
    windows
}

/// Refuses more pieces than the crate plans before any is made.
fn check_count(count: u128) -> Result<(), FrameworkError> {
    Ok(check_output_count(OpId::DIRECT, count)?)
}

/// The split of `shape` along `axis` into `windows` (checked by the
/// caller), each keeping the axis unless `keep_axis` is false.
fn resolved(
    shape: &[usize],
    axis: usize,
    windows: Vec<(usize, usize)>,
    keep_axis: bool,
) -> Result<ResolvedSplit, FrameworkError> {
    check_count(windows.len() as u128)?;
    Ok(ResolvedSplit::unchecked_windows(
        shape, axis, windows, keep_axis,
    ))
}
