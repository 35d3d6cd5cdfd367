//! burn's split and concat calls (`burn-tensor/src/tensor/api/base.rs`,
//! 0.22). `chunk` takes an index (`usize`); `cat` and `stack` take burn's
//! `impl AsIndex`, which wraps negative dimensions.

use super::{FrameworkError, check_count, pieces_of, resolved};
use crate::op::{FrameworkCall, OpId};
use crate::semantics::concat::rules as concat_rules;
use crate::semantics::concat::{ConcatError, ResolvedConcat};
use crate::semantics::resolved::ResolvedSplit;
use crate::semantics::rules::element_count;

///  burn's split and concat calls (`burn-tensor/src/tensor/api/base.rs`,
///  0.22). `chunk` takes an index (`usize`); `cat` and `stack` take burn's
///  `impl AsIndex`, which wraps negative dimensions.
#[derive(Debug, Clone, Copy)]
pub struct Burn;

impl Burn {
    /// `Tensor::chunk(chunks, dim)`: torch's rule, pieces of
    /// `ceil(n / chunks)`, the last shorter (7 into 3 gives [3, 3, 1]); a
    /// dimension shorter than `chunks` gives `n` pieces of 1 (none when empty).
    /// Where burn 0.22 itself panics (5 into 4 and 6 into 4: its loop takes
    /// `chunks - 1` pieces of `ceil(n / chunks)` and overruns), this gives
    /// torch's result ([2, 2, 1] and [2, 2, 2]), which burn gives wherever it
    /// does not panic.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::ChunksNotPositive`] for 0 (burn divides by zero);
    /// [`FrameworkError::DimOutOfRange`] for a dimension past the rank.
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Burn;
    ///
    /// assert_eq!(Burn::chunk(&[5, 2], 4, 0).unwrap().lengths(), &[2, 2, 1]);
    /// assert_eq!(Burn::chunk(&[7, 2], 3, 0).unwrap().lengths(), &[3, 3, 1]);
    /// ```
    pub fn chunk(
        shape: &[usize],
        chunks: usize,
        dim: usize,
    ) -> Result<ResolvedSplit, FrameworkError> {
        const CALL: &str = "burn chunk";
        element_count(shape)?;
        if dim >= shape.len() {
            return Err(FrameworkError::DimOutOfRange {
                call: CALL,
                dim: i64::try_from(dim).unwrap_or(i64::MAX),
                rank: shape.len(),
            });
        }
        if chunks == 0 {
            return Err(FrameworkError::ChunksNotPositive {
                call: CALL,
                chunks: 0,
            });
        }
        let n = shape[dim];
        if n == 0 {
            return resolved(shape, dim, Vec::new(), true);
        }
        let size = n.div_ceil(chunks.min(n));
        check_count(n.div_ceil(size) as u128)?;
        resolved(shape, dim, pieces_of(n, size), true)
    }

    /// `Tensor::cat(tensors, dim)` (0.22): concatenation along `dim`, which
    /// wraps from `-rank` (`impl AsIndex`); burn filters out tensors empty on
    /// `dim` after checking them, which writes what their zero-length windows
    /// write: nothing. burn's tensors have their rank in their type, so a rank
    /// mismatch cannot be written there; here it is an error.
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] ("Can't concatenate an empty list of
    /// tensors"); [`ConcatError::ScalarInput`] and
    /// [`ConcatError::AxisOutOfRange`] (burn panics on the index);
    /// [`ConcatError::RankMismatch`]; [`ConcatError::DimMismatch`] ("Can't
    /// concatenate tensors with different shapes, except for the provided
    /// dimension"). burn panics where these are returned.
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::frameworks::Burn;
    ///
    /// assert_eq!(Burn::cat(&[[2, 4], [2, 3]], 1).unwrap().output_shape(), &[2, 7]);
    /// ```
    pub fn cat<S: AsRef<[usize]>>(tensors: &[S], dim: i64) -> Result<ResolvedConcat, ConcatError> {
        concat_rules::cat(OpId::call(FrameworkCall::BurnCat), tensors, dim)
    }

    /// `Tensor::stack(tensors, dim)` (0.22): equal shapes stacked on a new
    /// dimension in `[-rank-1, rank]`.
    ///
    /// # Errors
    ///
    /// [`ConcatError::NoInputs`] ("Can't stack an empty list of tensors");
    /// [`ConcatError::AxisOutOfRange`]; [`ConcatError::UnequalShapes`] ("Can't
    /// stack tensors with different shapes"). burn panics where these are
    /// returned.
    pub fn stack<S: AsRef<[usize]>>(
        tensors: &[S],
        dim: i64,
    ) -> Result<ResolvedConcat, ConcatError> {
        concat_rules::stack(OpId::call(FrameworkCall::BurnStack), tensors, dim)
    }
}
