//! burn's split calls and the ONNX and OpenVINO operators on burn tensors:
//! each resolves with the core crate's rules and runs through
//! [`BurnSplitter::split_as`]. Dimensions are burn's (`AsIndex`:
//! negative ones count from the end).

use burn::tensor::{AsIndex, Tensor};
use wgpu_split::Operator;
use wgpu_split::error::FrameworkError;
use wgpu_split::frameworks::{Burn as BurnRules, Sections, Torch};

use crate::error::Result;
use crate::primitive::SplitKind;
use crate::splitter::BurnSplitter;

/// `dim` as an index into `rank` dimensions (negative from the end).
fn dim_index(call: &'static str, dim: impl AsIndex, rank: usize) -> Result<usize> {
    let dim = dim.as_index() as i64;
    let wrapped = if dim < 0 { dim + rank as i64 } else { dim };
    if (0..rank as i64).contains(&wrapped) {
        Ok(wrapped as usize)
    } else {
        Err(FrameworkError::DimOutOfRange { call, dim, rank }.into())
    }
}

/// The same dimension, as torch's calls take it.
fn torch_dim(call: &'static str, dim: impl AsIndex, rank: usize) -> Result<i64> {
    Ok(dim_index(call, dim, rank)? as i64)
}

/// A size as torch's calls take it.
fn signed(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl BurnSplitter {
    /// An ONNX or OpenVINO split node ([`Operator`]) on `tensor`. `D2` is
    /// the outputs' rank (`D - 1` for `SplitToSequence` with
    /// `keepdims = 0` on a sequence of length-1 pieces).
    ///
    /// # Errors
    ///
    /// The node's [`wgpu_split::ResolveError`] and the errors of
    /// [`BurnSplitter::split_as`].
    pub fn operator<const D: usize, const D2: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        op: &Operator,
    ) -> Result<Vec<Tensor<D2, K>>> {
        let split = op.resolve(&tensor.shape())?;
        self.split_as(tensor, &split)
    }

    /// burn's `Tensor::chunk(chunks, dim)`, with torch's result where burn
    /// 0.22 panics (5 into 4 gives [2, 2, 1], 6 into 4 [2, 2, 2]): pieces of
    /// `ceil(n / chunks)`, the last shorter.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::ChunksNotPositive`] for 0 chunks,
    /// [`FrameworkError::DimOutOfRange`], and the errors of
    /// [`BurnSplitter::split_as`].
    pub fn chunk<const D: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        chunks: usize,
        dim: impl AsIndex,
    ) -> Result<Vec<Tensor<D, K>>> {
        let axis = dim_index("burn chunk", dim, D)?;
        let split = BurnRules::chunk(&tensor.shape(), chunks, axis)?;
        self.split_as(tensor, &split)
    }

    /// burn's `Tensor::split(split_size, dim)` (torch's `split`): pieces of
    /// `split_size`, the last shorter.
    ///
    /// # Errors
    ///
    /// [`FrameworkError::SplitSizeZero`] on a dimension that is not empty,
    /// [`FrameworkError::DimOutOfRange`], and the errors of
    /// [`BurnSplitter::split_as`].
    pub fn split<const D: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        split_size: usize,
        dim: impl AsIndex,
    ) -> Result<Vec<Tensor<D, K>>> {
        let dim = torch_dim("torch.split", dim, D)?;
        let split = Torch::split(&tensor.shape(), signed(split_size), dim)?;
        self.split_as(tensor, &split)
    }

    /// burn's `Tensor::split_with_sizes(sizes, dim)` with torch's result:
    /// one output per size, zero sizes included (burn 0.22 drops them).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::SizesSum`] when the sizes do not add up to the
    /// dimension, [`FrameworkError::DimOutOfRange`], and the errors of
    /// [`BurnSplitter::split_as`].
    pub fn split_with_sizes<const D: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        sizes: &[usize],
        dim: impl AsIndex,
    ) -> Result<Vec<Tensor<D, K>>> {
        let dim = torch_dim("torch.split_with_sizes", dim, D)?;
        let sizes: Vec<i64> = sizes.iter().map(|&s| signed(s)).collect();
        let split = Torch::split_with_sizes(&tensor.shape(), &sizes, dim)?;
        self.split_as(tensor, &split)
    }

    /// torch's `tensor_split(x, sections, dim)`: a number of sections (the
    /// first `n % sections` one longer) or the indices to split at (pieces
    /// may be empty, or overlap when indices go down).
    ///
    /// # Errors
    ///
    /// [`FrameworkError`]s of [`Torch::tensor_split`] and the errors of
    /// [`BurnSplitter::split_as`].
    pub fn tensor_split<'a, const D: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        sections: impl Into<Sections<'a>>,
        dim: impl AsIndex,
    ) -> Result<Vec<Tensor<D, K>>> {
        let dim = torch_dim("torch.tensor_split", dim, D)?;
        let split = Torch::tensor_split(&tensor.shape(), sections, dim)?;
        self.split_as(tensor, &split)
    }

    /// torch's `unbind(x, dim)`: every slice along `dim`, without it (`D2`
    /// must be `D - 1`).
    ///
    /// # Errors
    ///
    /// [`FrameworkError::DimOutOfRange`],
    /// [`crate::BurnSplitError::OutputRank`] when `D2` is not `D - 1`, and
    /// the errors of [`BurnSplitter::split_as`].
    pub fn unbind<const D: usize, const D2: usize, K: SplitKind>(
        &self,
        tensor: Tensor<D, K>,
        dim: impl AsIndex,
    ) -> Result<Vec<Tensor<D2, K>>> {
        let dim = torch_dim("torch.unbind", dim, D)?;
        let split = Torch::unbind(&tensor.shape(), dim)?;
        self.split_as(tensor, &split)
    }
}
