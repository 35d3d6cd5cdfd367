//! burn's concat calls on burn tensors: `cat` and `stack` resolve with the
//! core crate's rules ([`wgpu_split::frameworks::Burn`]) and run through
//! [`BurnSplitter::concat_as`], which checks the tensors against the
//! concat and hands the cubecl tensors under them to the recording
//! ([`crate::concat_run`]).

use burn::tensor::{AsIndex, DType, Tensor};
use wgpu_split::frameworks::Burn as BurnRules;
use wgpu_split::{ConcatError, ResolvedConcat};

use crate::error::{BurnSplitError, Result};
use crate::primitive::SplitKind;
use crate::splitter::BurnSplitter;

/// The tensors' shapes, as the core crate's rules take them.
fn shapes<const D: usize, K: SplitKind>(tensors: &[Tensor<D, K>]) -> Vec<Vec<usize>> {
    tensors.iter().map(|t| t.shape().to_vec()).collect()
}

impl BurnSplitter {
    /// burn's `Tensor::cat(tensors, dim)`: the tensors concatenated along
    /// `dim` (negative from the end) into one tensor allocated by burn's
    /// allocator. Tensors empty on `dim` take part as burn's do: they
    /// write nothing; when all are, the output is empty on `dim`.
    ///
    /// # Errors
    ///
    /// [`wgpu_split::ConcatError::NoInputs`],
    /// [`wgpu_split::ConcatError::AxisOutOfRange`] and
    /// [`wgpu_split::ConcatError::DimMismatch`] where burn panics, and the
    /// errors of [`BurnSplitter::concat_as`].
    pub fn cat<const D: usize, K: SplitKind>(
        &self,
        tensors: Vec<Tensor<D, K>>,
        dim: impl AsIndex,
    ) -> Result<Tensor<D, K>> {
        let concat = BurnRules::cat(&shapes(&tensors), dim.as_index() as i64)?;
        self.concat_as(tensors, &concat)
    }

    /// burn's `Tensor::stack(tensors, dim)`: tensors of one shape stacked
    /// on a new dimension `dim` (in `-D - 1..=D`; negative from the end).
    /// `D2` is the output's rank, `D + 1`.
    ///
    /// # Errors
    ///
    /// [`wgpu_split::ConcatError::NoInputs`],
    /// [`wgpu_split::ConcatError::AxisOutOfRange`] and
    /// [`wgpu_split::ConcatError::UnequalShapes`] where burn panics,
    /// [`BurnSplitError::OutputRank`] when `D2` is not `D + 1`, and the
    /// errors of [`BurnSplitter::concat_as`].
    pub fn stack<const D: usize, const D2: usize, K: SplitKind>(
        &self,
        tensors: Vec<Tensor<D, K>>,
        dim: impl AsIndex,
    ) -> Result<Tensor<D2, K>> {
        let concat = BurnRules::stack(&shapes(&tensors), dim.as_index() as i64)?;
        self.concat_as(tensors, &concat)
    }
}

/// The dtype every tensor has (as burn reports it: the cubecl tensor under
/// a `Flex32` one says `F32`), the first tensor's.
pub(crate) fn one_dtype<const D: usize, K: SplitKind>(
    tensors: &[Tensor<D, K>],
    concat: &ResolvedConcat,
) -> Result<DType> {
    let expected = tensors
        .first()
        .map(Tensor::dtype)
        .ok_or(ConcatError::NoInputs { op: concat.op() })?;
    match tensors.iter().position(|t| t.dtype() != expected) {
        Some(index) => Err(BurnSplitError::DTypeMismatch {
            index,
            dtype: tensors[index].dtype(),
            reference: 0,
            expected,
        }),
        None => Ok(expected),
    }
}
