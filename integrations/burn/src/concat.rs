//! burn's concat calls on burn tensors: `cat` and `stack` resolve with the
//! core crate's rules ([`wgpu_split::frameworks::Burn`]) and run through
//! [`BurnSplitter::concat_resolved`], which checks the tensors against the
//! concat and hands the cubecl tensors under them to the recording
//! ([`crate::concat_run`]).

use burn::tensor::{AsIndex, DType, Tensor};
use burn_cubecl::kernel::into_contiguous;
use wgpu_split::frameworks::Burn as BurnRules;
use wgpu_split::{ConcatError, ResolvedConcat};

use crate::element::element_type;
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
    /// errors of [`BurnSplitter::concat_resolved`].
    pub fn cat<const D: usize, K: SplitKind>(
        &self,
        tensors: Vec<Tensor<D, K>>,
        dim: impl AsIndex,
    ) -> Result<Tensor<D, K>> {
        let concat = BurnRules::cat(&shapes(&tensors), dim.as_index() as i64)?;
        self.concat_resolved(tensors, &concat)
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
    /// errors of [`BurnSplitter::concat_resolved`].
    pub fn stack<const D: usize, const D2: usize, K: SplitKind>(
        &self,
        tensors: Vec<Tensor<D, K>>,
        dim: impl AsIndex,
    ) -> Result<Tensor<D2, K>> {
        let concat = BurnRules::stack(&shapes(&tensors), dim.as_index() as i64)?;
        self.concat_resolved(tensors, &concat)
    }

    /// Concatenates `tensors` as `concat` says (resolved for their shapes
    /// by a concat operator or a framework call of [`wgpu_split`]) into one
    /// tensor of rank `D2` (`D`, or `D + 1` for a stack), allocated by
    /// burn's allocator, written by one recorded concat on burn's queue.
    /// The inputs are read where burn keeps them (views are made
    /// contiguous first by burn's own kernel).
    ///
    /// # Errors
    ///
    /// [`BurnSplitError::OtherDevice`], [`BurnSplitError::NotWgpu`],
    /// [`BurnSplitError::DTypeMismatch`],
    /// [`BurnSplitError::UnsupportedDType`], [`BurnSplitError::OutputRank`],
    /// tensors `concat` was not resolved for
    /// ([`wgpu_split::ConcatError::InputCountMismatch`],
    /// [`wgpu_split::ConcatError::InputShapeMismatch`]), and the core
    /// crate's plan and encode errors.
    pub fn concat_resolved<const D: usize, const D2: usize, K: SplitKind>(
        &self,
        tensors: Vec<Tensor<D, K>>,
        concat: &ResolvedConcat,
    ) -> Result<Tensor<D2, K>> {
        for t in &tensors {
            self.check_device(&t.device())?;
        }
        concat.check_input_shapes(&shapes(&tensors))?;
        let rank = concat.output_shape().len();
        if rank != D2 {
            return Err(BurnSplitError::OutputRank {
                asked: D2,
                actual: rank,
            });
        }
        // `check_input_shapes` saw as many tensors as the concat has
        // inputs, and a resolved concat has at least one.
        let dtype = one_dtype(&tensors, concat)?;
        let element = element_type(dtype)?;
        let inputs = tensors
            .into_iter()
            .map(|t| Ok(into_contiguous(K::into_cube(t)?)))
            .collect::<Result<Vec<_>>>()?;
        let output = self.run_concat(inputs, concat, element, dtype)?;
        Ok(K::from_cube(output))
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
