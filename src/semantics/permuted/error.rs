//! [`PermuteError`]: why a permuted split or concat (a split whose outputs
//! are reshaped and permuted, or a concat whose inputs are permuted and
//! reshaped) does not resolve. Every message names the output or input, the
//! shapes and the permutation.

use crate::semantics::concat::ConcatError;
use crate::semantics::error::ResolveError;

/// Why a permuted split or concat does not resolve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PermuteError {
    /// The split or concat underneath does not resolve.
    #[error(transparent)]
    Split(#[from] ResolveError),
    /// The concat underneath does not resolve.
    #[error(transparent)]
    Concat(#[from] ConcatError),
    /// Not one move per output (split) or input (concat).
    #[error("{what}: {given} moves given, one per piece needed ({expected})")]
    MoveCount {
        /// `permuted split` or `permuted concat`.
        what: &'static str,
        /// Outputs or inputs.
        expected: usize,
        /// Moves given.
        given: usize,
    },
    /// A split's reshape that is not a factoring of its piece as the input
    /// lays it out: each of the piece's strided dimensions (its dimensions
    /// merged where one input stride walks them, 1s dropped) must be the
    /// product of consecutive dimensions of the shape (1s anywhere), so
    /// that every dimension of the shape walks the input with one stride.
    #[error(
        "permuted split: output {output}: shape {shape:?} does not factor the piece {piece:?}, laid out in the input as {strided:?} (each of those must be the product of consecutive shape dimensions, in order)"
    )]
    NotAFactoring {
        /// The output.
        output: usize,
        /// The piece's shape (the plain split's output).
        piece: Vec<usize>,
        /// The piece's strided dimensions in the input.
        strided: Vec<usize>,
        /// The shape asked for.
        shape: Vec<usize>,
    },
    /// A concat's reshape that is not a merge of its permuted input: each
    /// strided dimension of the input's piece of the output must be the
    /// product of consecutive dimensions of the permuted input (the mirror
    /// of [`PermuteError::NotAFactoring`]).
    #[error(
        "permuted concat: input {input}: shape {shape:?} does not merge the permuted input {permuted:?} (each shape dimension must be the product of consecutive dimensions, in order)"
    )]
    NotAMerge {
        /// The input.
        input: usize,
        /// The input's shape once permuted.
        permuted: Vec<usize>,
        /// The shape asked for.
        shape: Vec<usize>,
    },
    /// A permutation that does not hold each of `0..rank` exactly once.
    #[error("{what} {index}: {perm:?} is not a permutation of 0..{rank}")]
    NotAPermutation {
        /// `output` (split) or `input` (concat).
        what: &'static str,
        /// The output or input.
        index: usize,
        /// The permutation given.
        perm: Vec<usize>,
        /// The rank it must permute.
        rank: usize,
    },
    /// A move whose element order needs more strided dimensions than the
    /// kernels carry (after merging the dimensions that stay adjacent and
    /// dropping those of size 1).
    #[error(
        "{what} {index}: the move needs {rank} strided dimensions, more than the {max} the kernels carry"
    )]
    RankTooHigh {
        /// `output` (split) or `input` (concat).
        what: &'static str,
        /// The output or input.
        index: usize,
        /// Strided dimensions needed.
        rank: usize,
        /// [`crate::PermutedSplit::MAX_RANK`].
        max: usize,
    },
    /// `split_heads` / `merge_heads`: a head size of 0, or a width that is
    /// not a whole number of heads.
    #[error("{call}: width {width} is not a whole number of heads of {head_dim}")]
    HeadWidth {
        /// `split_heads` or `merge_heads`.
        call: &'static str,
        /// The width (of an output or input) on the last axis.
        width: usize,
        /// The head size.
        head_dim: usize,
    },
    /// `split_heads` / `merge_heads`: a tensor of rank below 2 (heads need
    /// a sequence axis before the last).
    #[error("{call}: rank {rank} has no sequence axis before the last (rank 2 or more needed)")]
    HeadRank {
        /// `split_heads` or `merge_heads`.
        call: &'static str,
        /// The rank given.
        rank: usize,
    },
}
