//! candle's split and concat calls (`candle-core/src/tensor.rs`,
//! `tensor_cat.rs`). Dimensions are
//! candle's `Dim`: an index, or from the end (`D::Minus1` is -1 here).

use super::{FrameworkError, check_count, dim_index, even_sections, resolved};
use crate::op::{FrameworkCall, OpId};
use crate::semantics::concat::rules as concat_rules;
use crate::semantics::concat::{ConcatError, ResolvedConcat};
use crate::semantics::resolved::ResolvedSplit;

///  candle's split and concat calls (`candle-core/src/tensor.rs`,
///  `tensor_cat.rs`). Dimensions are
///  candle's `Dim`: an index, or from the end (`D::Minus1` is -1 here).
#[derive(Debug, Clone, Copy)]
pub struct Candle;

impl Candle {
    /// `Tensor::chunk(chunks, dim)`: NumPy's `array_split` rule, the remainder
    /// to the **first** pieces (5 into 4 gives [2, 1, 1, 1]); a dimension
    /// shorter than `chunks` gives `n` pieces of 1 (none when empty).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::ChunksNotPositive`] for 0 (candle divides by zero and
    /// panics, huggingface/candle#3778); [`FrameworkError::DimOutOfRange`].
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Candle;
    ///
    /// assert_eq!(Candle::chunk(&[5, 3], 4, 0).unwrap().lengths(), &[2, 1, 1, 1]);
    /// assert_eq!(Candle::chunk(&[3, 3], 5, 0).unwrap().lengths(), &[1, 1, 1]);
    /// ```
    pub fn chunk(
        shape: &[usize],
        chunks: usize,
        dim: i64,
    ) -> Result<ResolvedSplit, FrameworkError> {
        const CALL: &str = "candle chunk";
        let axis = dim_index(CALL, shape, dim)?;
        if chunks == 0 {
            return Err(FrameworkError::ChunksNotPositive {
                call: CALL,
                chunks: 0,
            });
        }
        let n = shape[axis];
        let count = chunks.min(n);
        check_count(count as u128)?;
        resolved(shape, axis, even_sections(n, count), true)
    }

    /// `Tensor::cat(args, dim)` (`candle-core/src/tensor_cat.rs`):
    /// concatenation along `dim` (`D::Minus1` is -1), the first tensor the
    /// reference. **A single tensor is returned unchanged without any check**,
    /// whatever `dim` (candle clones it), and so it is here. Tensors must share
    /// one element type (candle's `DTypeMismatchBinaryOp`, checked when the
    /// concat runs).
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] (`OpRequiresAtLeastOneTensor`);
    /// [`ConcatError::ScalarInput`] and [`ConcatError::AxisOutOfRange`]
    /// (`DimOutOfRange`); [`ConcatError::RankMismatch`]
    /// (`UnexpectedNumberOfDims`); [`ConcatError::DimMismatch`]
    /// (`ShapeMismatchCat`).
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Candle;
    ///
    /// assert_eq!(Candle::cat(&[[2, 3], [2, 5]], -1).unwrap().output_shape(), &[2, 8]);
    /// // One tensor: unchanged, even for a dimension it does not have.
    /// assert_eq!(Candle::cat(&[[2, 3]], 7).unwrap().output_shape(), &[2, 3]);
    /// ```
    pub fn cat<S: AsRef<[usize]>>(args: &[S], dim: i64) -> Result<ResolvedConcat, ConcatError> {
        let op = OpId::call(FrameworkCall::CandleCat);
        match args {
            [only] => concat_rules::unchanged(op, only.as_ref()),
            _ => concat_rules::cat(op, args, dim),
        }
    }

    /// `Tensor::stack(args, dim)`: equal shapes stacked on a new dimension in
    /// `[-rank-1, rank]` (`D::Minus1` appends).
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] (`OpRequiresAtLeastOneTensor`);
    /// [`ConcatError::AxisOutOfRange`] (`DimOutOfRange`);
    /// [`ConcatError::UnequalShapes`] (candle's `ShapeMismatchCat` or
    /// `UnexpectedNumberOfDims` after unsqueezing).
    pub fn stack<S: AsRef<[usize]>>(args: &[S], dim: i64) -> Result<ResolvedConcat, ConcatError> {
        concat_rules::stack(OpId::call(FrameworkCall::CandleStack), args, dim)
    }
}
