//! PyTorch's split and concat calls, as ATen defines them
//! (`aten/src/ATen/native/TensorShape.cpp`). Dimensions wrap from
//! `-rank`; indices wrap and clamp as Python slices do.

use super::{
    FrameworkError, Sections, check_count, contiguous, dim_index, pieces_of, resolved,
    sections_split, slice_bound,
};
use crate::op::{FrameworkCall, OpId};
use crate::semantics::concat::rules as concat_rules;
use crate::semantics::concat::{ConcatError, ResolvedConcat};
use crate::semantics::resolved::ResolvedSplit;

///  PyTorch's split and concat calls, as ATen defines them
///  (`aten/src/ATen/native/TensorShape.cpp`). Dimensions wrap from
///  `-rank`; indices wrap and clamp as Python slices do.
#[derive(Debug, Clone, Copy)]
pub struct Torch;

impl Torch {
    /// `torch.chunk(x, chunks, dim)`: pieces of `ceil(n / chunks)` (the last
    /// shorter), so **fewer than `chunks`** when the division is uneven (5 into
    /// 4 gives [2, 2, 1]); an empty dimension gives `chunks` empty pieces.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::ChunksNotPositive`], [`FrameworkError::DimOutOfRange`].
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Torch;
    ///
    /// assert_eq!(Torch::chunk(&[6, 2], 4, 0).unwrap().lengths(), &[2, 2, 2]);
    /// assert_eq!(Torch::chunk(&[0, 2], 3, 0).unwrap().lengths(), &[0, 0, 0]);
    /// ```
    pub fn chunk(shape: &[usize], chunks: i64, dim: i64) -> Result<ResolvedSplit, FrameworkError> {
        const CALL: &str = "torch.chunk";
        let axis = dim_index(CALL, shape, dim)?;
        if chunks <= 0 {
            return Err(FrameworkError::ChunksNotPositive { call: CALL, chunks });
        }
        let n = shape[axis];
        if n == 0 {
            check_count(chunks as u128)?;
            return resolved(shape, axis, vec![(0, 0); chunks as usize], true);
        }
        let size = n.div_ceil(chunks.min(n as i64) as usize);
        resolved(shape, axis, pieces_of(n, size), true)
    }

    /// `torch.split(x, split_size, dim)`: pieces of `split_size`, the last
    /// shorter; `max(ceil(n / split_size), 1)` of them (an empty dimension gives
    /// one empty piece).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::SplitSizeNegative`]; [`FrameworkError::SplitSizeZero`]
    /// on a dimension that is not empty; [`FrameworkError::DimOutOfRange`].
    pub fn split(
        shape: &[usize],
        split_size: i64,
        dim: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        const CALL: &str = "torch.split";
        let axis = dim_index(CALL, shape, dim)?;
        let n = shape[axis];
        if split_size < 0 {
            return Err(FrameworkError::SplitSizeNegative {
                call: CALL,
                split_size,
            });
        }
        if split_size == 0 {
            if n != 0 {
                return Err(FrameworkError::SplitSizeZero {
                    call: CALL,
                    dim_size: n,
                });
            }
            return resolved(shape, axis, vec![(0, 0)], true);
        }
        let size = usize::try_from(split_size)
            .unwrap_or(usize::MAX)
            .min(n.max(1));
        check_count(n.div_ceil(size) as u128)?;
        resolved(shape, axis, pieces_of(n, size), true)
    }

    /// `torch.split(x, [sizes], dim)` (`split_with_sizes`): one piece per size,
    /// zeros kept.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::SizeNegative`], [`FrameworkError::SizesSum`],
    /// [`FrameworkError::DimOutOfRange`].
    pub fn split_with_sizes(
        shape: &[usize],
        sizes: &[i64],
        dim: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        const CALL: &str = "torch.split_with_sizes";
        let axis = dim_index(CALL, shape, dim)?;
        let n = shape[axis];
        if let Some(index) = sizes.iter().position(|&s| s < 0) {
            return Err(FrameworkError::SizeNegative {
                call: CALL,
                sizes: sizes.to_vec(),
                index,
            });
        }
        let sum: i128 = sizes.iter().map(|&s| i128::from(s)).sum();
        if sum != n as i128 {
            return Err(FrameworkError::SizesSum {
                call: CALL,
                sizes: sizes.to_vec(),
                sum,
                dim_size: n,
            });
        }
        resolved(
            shape,
            axis,
            contiguous(sizes.iter().map(|&s| s as usize)),
            true,
        )
    }

    /// `torch.tensor_split(x, sections, dim)`: with a count, exactly that many
    /// pieces, the first `n % count` one longer (empty pieces past `n`); with
    /// indices, the pieces between them with Python's slice rules, which may be
    /// empty or **overlap** (`[3, 1]` on 5 gives `[0, 3)`, an empty piece,
    /// `[1, 5)`).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::SectionsNotPositive`], [`FrameworkError::DimOutOfRange`].
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Torch;
    ///
    /// let split = Torch::tensor_split(&[5], &[3, 1], 0).unwrap();
    /// assert_eq!(split.windows().collect::<Vec<_>>(), vec![(0, 3), (3, 0), (1, 4)]);
    /// assert_eq!(Torch::tensor_split(&[5], 3, 0).unwrap().lengths(), &[2, 2, 1]);
    /// ```
    pub fn tensor_split<'a>(
        shape: &[usize],
        sections: impl Into<Sections<'a>>,
        dim: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        sections_split("torch.tensor_split", shape, sections.into(), dim, false)
    }

    /// `torch.unbind(x, dim)`: `n` pieces of length 1 that drop the axis (none
    /// for an empty dimension).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::DimOutOfRange`].
    pub fn unbind(shape: &[usize], dim: i64) -> Result<ResolvedSplit, FrameworkError> {
        let axis = dim_index("torch.unbind", shape, dim)?;
        let n = shape[axis];
        check_count(n as u128)?;
        resolved(shape, axis, (0..n).map(|i| (i, 1)).collect(), false)
    }

    /// `torch.narrow(x, dim, start, length)` (also candle's and burn's): one
    /// window; a negative `start` adds `n`.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::LengthNegative`], [`FrameworkError::StartOutOfRange`]
    /// (outside `[-n, n]`), [`FrameworkError::PastEnd`],
    /// [`FrameworkError::DimOutOfRange`].
    pub fn narrow(
        shape: &[usize],
        dim: i64,
        start: i64,
        length: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        const CALL: &str = "torch.narrow";
        let axis = dim_index(CALL, shape, dim)?;
        let n = shape[axis];
        if length < 0 {
            return Err(FrameworkError::LengthNegative { call: CALL, length });
        }
        let n_i = n as i128;
        if !(-n_i..=n_i).contains(&i128::from(start)) {
            return Err(FrameworkError::StartOutOfRange {
                call: CALL,
                start,
                dim_size: n,
            });
        }
        let start = slice_bound(start, n);
        if start as i128 + i128::from(length) > n_i {
            return Err(FrameworkError::PastEnd {
                call: CALL,
                start: start as i64,
                length,
                dim_size: n,
            });
        }
        resolved(shape, axis, vec![(start, length as usize)], true)
    }

    /// `torch.cat(tensors, dim)` (ATen's `cat`): concatenation along `dim`,
    /// with torch's legacy rule that a 1-D empty tensor (shape `[0]`) takes no
    /// part whatever the others' rank. `dim` wraps against the rank of the first
    /// tensor that takes part; when none does, the result is `[0]` whatever
    /// `dim` is. Tensors must share one element type here (torch promotes
    /// types; a promotion is not a copy, so it is out of this crate's scope).
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] ("expected a non-empty list of Tensors");
    /// [`ConcatError::ScalarInput`] for a rank-0 tensor at any position
    /// ("zero-dimensional tensor (at position i) cannot be concatenated");
    /// [`ConcatError::AxisOutOfRange`] ("Dimension out of range");
    /// [`ConcatError::RankMismatch`] ("Tensors must have same number of
    /// dimensions"); [`ConcatError::DimMismatch`] ("Sizes of tensors must
    /// match except in dimension d").
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Torch;
    ///
    /// // The [0] tensor is skipped: it has no window in the mirror.
    /// let concat = Torch::cat(&[vec![0], vec![2, 3], vec![2, 1]], 1).unwrap();
    /// assert_eq!(concat.output_shape(), &[2, 4]);
    /// assert_eq!(concat.mirror_outputs(), &[None, Some(0), Some(1)]);
    /// ```
    pub fn cat<S: AsRef<[usize]>>(tensors: &[S], dim: i64) -> Result<ResolvedConcat, ConcatError> {
        legacy_cat(FrameworkCall::TorchCat, tensors, dim)
    }

    /// `torch.concat(tensors, dim)`, an alias of [`Torch::cat`] (as is
    /// `torch.concatenate`).
    ///
    /// # Errors
    ///
    /// As [`Self::cat`].
    pub fn concat<S: AsRef<[usize]>>(
        tensors: &[S],
        dim: i64,
    ) -> Result<ResolvedConcat, ConcatError> {
        legacy_cat(FrameworkCall::TorchConcat, tensors, dim)
    }

    /// `torch.stack(tensors, dim)`: equal shapes stacked on a new dimension
    /// `dim` in `[-rank-1, rank]`; scalars stack into a 1-D tensor.
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] ("stack expects a non-empty TensorList");
    /// [`ConcatError::AxisOutOfRange`]; [`ConcatError::UnequalShapes`] ("stack
    /// expects each tensor to be equal size").
    pub fn stack<S: AsRef<[usize]>>(
        tensors: &[S],
        dim: i64,
    ) -> Result<ResolvedConcat, ConcatError> {
        concat_rules::stack(OpId::call(FrameworkCall::TorchStack), tensors, dim)
    }
}

/// torch's `cat` rules under the name `call`.
fn legacy_cat<S: AsRef<[usize]>>(
    call: FrameworkCall,
    tensors: &[S],
    dim: i64,
) -> Result<ResolvedConcat, ConcatError> {
    let op = OpId::call(call);
    if let Some(index) = tensors.iter().position(|t| t.as_ref().is_empty()) {
        return Err(ConcatError::ScalarInput { op, index });
    }
    concat_rules::cat_where(op, tensors, dim, |shape| shape != [0])
}
