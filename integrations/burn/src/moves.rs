//! One verb per direction for every move: [`BurnSplitter::split_as`] runs
//! any split the core crate resolves (a [`ResolvedSplit`], or a
//! [`PermutedSplit`] whose outputs are each reshaped and permuted in the
//! same pass) and [`BurnSplitter::concat_as`] any concat (a
//! [`ResolvedConcat`], or a [`PermutedConcat`]). The moves are sealed
//! traits, as the core crate's `GpuSplitter::plan` takes them: the checks
//! against burn's tensors are the same for each, and each runs its own
//! recording.

use burn::tensor::{DType, Tensor};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use wgpu_split::{ElementType, PermutedConcat, PermutedSplit, ResolvedConcat, ResolvedSplit};

use crate::concat::one_dtype;
use crate::element::element_type;
use crate::error::{BurnSplitError, Result};
use crate::primitive::SplitKind;
use crate::splitter::BurnSplitter;

mod sealed {
    /// Only this crate's moves are moves.
    pub trait Sealed {}

    /// Only this crate calls a move's steps.
    pub struct Token(pub(crate) ());
}

use sealed::{Sealed, Token};

/// A split that [`BurnSplitter::split_as`] runs on a burn tensor: a
/// [`ResolvedSplit`] or a [`PermutedSplit`] (sealed).
pub trait SplitMove: Sealed {
    /// Checks the input's shape against the split.
    #[doc(hidden)]
    fn check_input(&self, token: Token, shape: &[usize]) -> Result<()>;
    /// The outputs' ranks for an input of rank `rank`.
    #[doc(hidden)]
    fn output_ranks(&self, token: Token, rank: usize) -> Vec<usize>;
    /// Records and submits the split of `input` (contiguous).
    #[doc(hidden)]
    fn run(
        &self,
        token: Token,
        splitter: &BurnSplitter,
        input: CubeTensor,
        element: ElementType,
        dtype: DType,
    ) -> Result<Vec<CubeTensor>>;
}

/// A concat that [`BurnSplitter::concat_as`] runs on burn tensors: a
/// [`ResolvedConcat`] or a [`PermutedConcat`] (sealed).
pub trait ConcatMove: Sealed {
    /// Checks the inputs' shapes against the concat.
    #[doc(hidden)]
    fn check_inputs(&self, token: Token, shapes: &[Vec<usize>]) -> Result<()>;
    /// The output's shape.
    #[doc(hidden)]
    fn output_shape(&self, token: Token) -> &[usize];
    /// The concat of the pieces (its operator names its errors).
    #[doc(hidden)]
    fn resolved(&self, token: Token) -> &ResolvedConcat;
    /// Records and submits the concat of `inputs` (contiguous).
    #[doc(hidden)]
    fn run(
        &self,
        token: Token,
        splitter: &BurnSplitter,
        inputs: Vec<CubeTensor>,
        element: ElementType,
        dtype: DType,
    ) -> Result<CubeTensor>;
}

impl Sealed for ResolvedSplit {}
impl Sealed for PermutedSplit {}
impl Sealed for ResolvedConcat {}
impl Sealed for PermutedConcat {}

impl SplitMove for ResolvedSplit {
    fn check_input(&self, _: Token, shape: &[usize]) -> Result<()> {
        Ok(self.check_input_shape(shape)?)
    }

    fn output_ranks(&self, _: Token, rank: usize) -> Vec<usize> {
        vec![rank - usize::from(!self.keep_axis())]
    }

    fn run(
        &self,
        _: Token,
        splitter: &BurnSplitter,
        input: CubeTensor,
        element: ElementType,
        dtype: DType,
    ) -> Result<Vec<CubeTensor>> {
        splitter.run(input, self, element, dtype)
    }
}

impl SplitMove for PermutedSplit {
    fn check_input(&self, _: Token, shape: &[usize]) -> Result<()> {
        Ok(self.split().check_input_shape(shape)?)
    }

    fn output_ranks(&self, _: Token, _rank: usize) -> Vec<usize> {
        self.output_shapes().iter().map(Vec::len).collect()
    }

    fn run(
        &self,
        _: Token,
        splitter: &BurnSplitter,
        input: CubeTensor,
        element: ElementType,
        dtype: DType,
    ) -> Result<Vec<CubeTensor>> {
        splitter.run_permuted(input, self, element, dtype)
    }
}

impl ConcatMove for ResolvedConcat {
    fn check_inputs(&self, _: Token, shapes: &[Vec<usize>]) -> Result<()> {
        Ok(self.check_input_shapes(shapes)?)
    }

    fn output_shape(&self, _: Token) -> &[usize] {
        ResolvedConcat::output_shape(self)
    }

    fn resolved(&self, _: Token) -> &ResolvedConcat {
        self
    }

    fn run(
        &self,
        _: Token,
        splitter: &BurnSplitter,
        inputs: Vec<CubeTensor>,
        element: ElementType,
        dtype: DType,
    ) -> Result<CubeTensor> {
        splitter.run_concat(inputs, self, element, dtype)
    }
}

impl ConcatMove for PermutedConcat {
    fn check_inputs(&self, _: Token, shapes: &[Vec<usize>]) -> Result<()> {
        Ok(self.check_input_shapes(shapes)?)
    }

    fn output_shape(&self, _: Token) -> &[usize] {
        PermutedConcat::output_shape(self)
    }

    fn resolved(&self, _: Token) -> &ResolvedConcat {
        self.concat()
    }

    fn run(
        &self,
        _: Token,
        splitter: &BurnSplitter,
        inputs: Vec<CubeTensor>,
        element: ElementType,
        dtype: DType,
    ) -> Result<CubeTensor> {
        splitter.run_permuted_concat(inputs, self, element, dtype)
    }
}

impl BurnSplitter {
    /// Splits `tensor` as `split` says: a [`ResolvedSplit`] (resolved for
    /// `tensor`'s shape by an operator or a framework call of
    /// [`wgpu_split`]) or a [`PermutedSplit`] (each output reshaped and
    /// permuted in the same pass). `D2` is the outputs' rank: for a
    /// resolved split `D`, or `D - 1` when it drops its axis (`unbind`,
    /// `SplitToSequence` with `keepdims = 0`). The outputs are contiguous
    /// tensors allocated by burn's allocator, written by one recorded move
    /// on burn's queue; a view (transposed, strided) is first made
    /// contiguous by burn's own kernel.
    ///
    /// ```no_run
    /// # fn heads(s: &wgpu_split_burn::BurnSplitter, x: burn::tensor::Tensor<3>) -> wgpu_split_burn::Result<()> {
    /// use wgpu_split::{PermutedSplit, ResolvedSplit};
    /// // [2, 16, 96] into three [2, 16, 32] along the last dimension,
    /// let thirds = ResolvedSplit::new(&[2, 16, 96], 2, vec![32; 3], true)?;
    /// let parts: Vec<burn::tensor::Tensor<3>> = s.split_as(x.clone(), &thirds)?;
    /// // and into Q, K, V heads [2, 4, 16, 8] in the same verb.
    /// let qkv = PermutedSplit::split_heads(&[2, 16, 96], &[32; 3], 8).map_err(wgpu_split::Error::from)?;
    /// let heads: Vec<burn::tensor::Tensor<4>> = s.split_as(x, &qkv)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`BurnSplitError::OtherDevice`], [`BurnSplitError::NotWgpu`],
    /// [`BurnSplitError::UnsupportedDType`], [`BurnSplitError::OutputRank`]
    /// when an output's rank is not `D2`, a shape `split` was not made for,
    /// and the core crate's plan and encode errors.
    pub fn split_as<const D: usize, const D2: usize, K: SplitKind, M: SplitMove>(
        &self,
        tensor: Tensor<D, K>,
        split: &M,
    ) -> Result<Vec<Tensor<D2, K>>> {
        self.check_device(&tensor.device())?;
        split.check_input(Token(()), &tensor.shape())?;
        if let Some(&rank) = split.output_ranks(Token(()), D).iter().find(|&&r| r != D2) {
            return Err(BurnSplitError::OutputRank {
                asked: D2,
                actual: rank,
            });
        }
        // The dtype burn's tensor reports (the cubecl tensor under a
        // `Flex32` one says `F32`): the outputs report the same.
        let dtype = tensor.dtype();
        let element = element_type(dtype)?;
        let input = into_contiguous(K::into_cube(tensor)?);
        let outputs = split.run(Token(()), self, input, element, dtype)?;
        Ok(K::from_cubes(outputs))
    }

    /// Concatenates `tensors` as `concat` says: a [`ResolvedConcat`]
    /// (resolved for their shapes by a concat operator or a framework call
    /// of [`wgpu_split`]) or a [`PermutedConcat`] (each input permuted and
    /// reshaped in the same pass), into one tensor of rank `D2`, allocated
    /// by burn's allocator, written by one recorded move on burn's queue.
    /// The inputs are read where burn keeps them (views are made contiguous
    /// first by burn's own kernel).
    ///
    /// # Errors
    ///
    /// [`BurnSplitError::OtherDevice`], [`BurnSplitError::NotWgpu`],
    /// [`BurnSplitError::DTypeMismatch`],
    /// [`BurnSplitError::UnsupportedDType`], [`BurnSplitError::OutputRank`],
    /// tensors `concat` was not made for
    /// ([`wgpu_split::ConcatError::InputCountMismatch`],
    /// [`wgpu_split::ConcatError::InputShapeMismatch`]), and the core
    /// crate's plan and encode errors.
    pub fn concat_as<const D: usize, const D2: usize, K: SplitKind, M: ConcatMove>(
        &self,
        tensors: Vec<Tensor<D, K>>,
        concat: &M,
    ) -> Result<Tensor<D2, K>> {
        for t in &tensors {
            self.check_device(&t.device())?;
        }
        let shapes: Vec<Vec<usize>> = tensors.iter().map(|t| t.shape().to_vec()).collect();
        concat.check_inputs(Token(()), &shapes)?;
        let rank = concat.output_shape(Token(())).len();
        if rank != D2 {
            return Err(BurnSplitError::OutputRank {
                asked: D2,
                actual: rank,
            });
        }
        // The shapes' check saw as many tensors as the concat has inputs,
        // and a concat has at least one.
        let dtype = one_dtype(&tensors, concat.resolved(Token(())))?;
        let element = element_type(dtype)?;
        let inputs = tensors
            .into_iter()
            .map(|t| Ok(into_contiguous(K::into_cube(t)?)))
            .collect::<Result<Vec<_>>>()?;
        let output = concat.run(Token(()), self, inputs, element, dtype)?;
        Ok(K::from_cube(output))
    }
}
