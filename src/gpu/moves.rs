//! The moves a [`crate::gpu::GpuSplitter`] plans and records, behind its
//! five verbs: [`Move`] is what can be planned (a resolved split or
//! concat, a permuted split or concat), [`MovePlan`] a plan of one and the
//! regions it reads and writes. Both are sealed: the crate's four moves
//! are the ones there are. Each verb takes the move's one view
//! ([`sealed::Placed`], [`sealed::MoveRef`]) and matches on it once.

use super::region::BufferRegion;
use crate::error::Result;
use crate::plan::{ConcatPlan, PermutedConcatPlan, PermutedPlan, PlanError, SplitPlan};
use crate::semantics::{PermutedConcat, PermutedSplit, ResolvedConcat, ResolvedSplit};
use crate::tensor::HostTensor;

pub(crate) use sealed::{AnyPlan, HostRun, MoveRef, MoveRun, Placed, PlanRef, Token};

/// The crate's side of the traits: what a verb sees of a move.
pub(crate) mod sealed {
    use super::BufferRegion;
    use crate::plan::{ConcatPlan, PermutedConcatPlan, PermutedPlan, SplitPlan};
    use crate::semantics::{PermutedConcat, PermutedSplit, ResolvedConcat, ResolvedSplit};
    use crate::tensor::HostTensor;

    /// Closes [`super::Move`] and [`super::MovePlan`] to this crate.
    pub trait Sealed {}

    /// Proof that a call comes from inside the crate: the traits' own
    /// methods take one, so only the verbs call them.
    #[derive(Debug, Clone, Copy)]
    pub struct Token(pub(crate) ());

    /// A move, seen as the one it is.
    #[derive(Debug, Clone, Copy)]
    pub enum MoveRef<'a> {
        /// A resolved split.
        Split(&'a ResolvedSplit),
        /// A resolved concat.
        Concat(&'a ResolvedConcat),
        /// A permuted split.
        PermutedSplit(&'a PermutedSplit),
        /// A permuted concat.
        PermutedConcat(&'a PermutedConcat),
    }

    /// A plan of any move, owned.
    #[derive(Debug)]
    pub enum AnyPlan {
        /// A split's.
        Split(SplitPlan),
        /// A concat's.
        Concat(ConcatPlan),
        /// A permuted split's.
        PermutedSplit(PermutedPlan),
        /// A permuted concat's.
        PermutedConcat(PermutedConcatPlan),
    }

    /// A plan, seen as the one it is.
    #[derive(Debug, Clone, Copy)]
    pub enum PlanRef<'a> {
        /// A split's.
        Split(&'a SplitPlan),
        /// A concat's.
        Concat(&'a ConcatPlan),
        /// A permuted split's.
        PermutedSplit(&'a PermutedPlan),
        /// A permuted concat's.
        PermutedConcat(&'a PermutedConcatPlan),
    }

    /// A plan with the regions an encode reads and writes.
    #[derive(Debug, Clone, Copy)]
    pub enum Placed<'a> {
        /// A split's plan, its input and its outputs' regions.
        Split(&'a SplitPlan, BufferRegion<'a>, &'a [BufferRegion<'a>]),
        /// A concat's plan, its inputs' regions and its output's.
        Concat(&'a ConcatPlan, &'a [BufferRegion<'a>], BufferRegion<'a>),
        /// A permuted split's plan, its input and its outputs' regions.
        PermutedSplit(&'a PermutedPlan, BufferRegion<'a>, &'a [BufferRegion<'a>]),
        /// A permuted concat's plan, its inputs' regions and its output's.
        PermutedConcat(
            &'a PermutedConcatPlan,
            &'a [BufferRegion<'a>],
            BufferRegion<'a>,
        ),
    }

    /// A plan with the host tensors a round trip runs it on.
    #[derive(Debug, Clone, Copy)]
    pub enum HostRun<'a> {
        /// A split's plan and its input.
        Split(&'a SplitPlan, &'a HostTensor),
        /// A concat's plan and its inputs.
        Concat(&'a ConcatPlan, &'a [&'a HostTensor]),
        /// A permuted split's plan and its input.
        PermutedSplit(&'a PermutedPlan, &'a HostTensor),
        /// A permuted concat's plan and its inputs.
        PermutedConcat(&'a PermutedConcatPlan, &'a [&'a HostTensor]),
    }

    /// A move with the host tensors a round trip runs it on.
    #[derive(Debug, Clone, Copy)]
    pub enum MoveRun<'a> {
        /// A split and its input.
        Split(&'a ResolvedSplit, &'a HostTensor),
        /// A concat and its inputs.
        Concat(&'a ResolvedConcat, &'a [&'a HostTensor]),
        /// A permuted split and its input.
        PermutedSplit(&'a PermutedSplit, &'a HostTensor),
        /// A permuted concat and its inputs.
        PermutedConcat(&'a PermutedConcat, &'a [&'a HostTensor]),
    }
}

/// What a [`crate::gpu::GpuSplitter`] plans
/// ([`crate::gpu::GpuSplitter::plan`]): a [`ResolvedSplit`], a
/// [`ResolvedConcat`], a [`PermutedSplit`] or a [`PermutedConcat`].
/// Sealed.
pub trait Move: sealed::Sealed {
    /// The plan of this move.
    type Plan: MovePlan;

    /// The move as the one it is (for the verbs).
    #[doc(hidden)]
    fn as_move(&self, token: Token) -> MoveRef<'_>;

    /// This move's plan out of a plan of any move (for the verbs).
    #[doc(hidden)]
    fn plan_of(token: Token, plan: AnyPlan) -> std::result::Result<Self::Plan, PlanError>;

    /// The move with a round trip's host tensors (for the verbs).
    #[doc(hidden)]
    fn with_host<'a>(
        &'a self,
        token: Token,
        input: <Self::Plan as MovePlan>::HostInput<'a>,
    ) -> MoveRun<'a>;
}

/// A plan a [`crate::gpu::GpuSplitter`] records
/// ([`crate::gpu::GpuSplitter::encode`], `prepare`, `counts`): a
/// [`SplitPlan`], a [`ConcatPlan`], a [`PermutedPlan`] or a
/// [`PermutedConcatPlan`]. Sealed.
pub trait MovePlan: sealed::Sealed {
    /// The region(s) the move reads: a split's input, or one per input of
    /// a concat.
    type Input<'a>: Copy
    where
        Self: 'a;
    /// The region(s) the move writes: one per output of a split (or its
    /// arena), or a concat's output.
    type Output<'a>: Copy
    where
        Self: 'a;
    /// What the move takes on the host
    /// ([`crate::gpu::RoundTrip::run_plan`]): a split's tensor, or a
    /// concat's tensors.
    type HostInput<'a>: Copy
    where
        Self: 'a;
    /// What it gives back: a split's tensors, or a concat's tensor.
    type HostOutput;

    /// The plan as the one it is (for the verbs).
    #[doc(hidden)]
    fn as_plan(&self, token: Token) -> PlanRef<'_>;

    /// The plan with an encode's regions (for the verbs).
    #[doc(hidden)]
    fn placed<'a>(
        &'a self,
        token: Token,
        input: Self::Input<'a>,
        output: Self::Output<'a>,
    ) -> Placed<'a>;

    /// The plan with a round trip's host tensors (for the verbs).
    #[doc(hidden)]
    fn with_host<'a>(&'a self, token: Token, input: Self::HostInput<'a>) -> HostRun<'a>;

    /// A round trip's result as this move's (for the verbs).
    #[doc(hidden)]
    fn host_output(token: Token, output: HostOutput) -> Result<Self::HostOutput>;
}

/// What a round trip of any move gives back.
#[doc(hidden)]
#[derive(Debug)]
pub enum HostOutput {
    /// A split's tensors.
    Many(Vec<HostTensor>),
    /// A concat's tensor.
    One(HostTensor),
}

/// A round trip's result that is not the move's kind: a bug.
fn mismatch() -> crate::Error {
    PlanError::Internal {
        detail: "a round trip gave another move's output".to_string(),
    }
    .into()
}

macro_rules! moves {
    ($($move:ty => $plan:ty, $variant:ident, $input:ty, $output:ty, $host_input:ty, $host_output:ident;)*) => {$(
        impl sealed::Sealed for $move {}
        impl sealed::Sealed for $plan {}

        impl Move for $move {
            type Plan = $plan;

            fn as_move(&self, _: Token) -> MoveRef<'_> {
                MoveRef::$variant(self)
            }

            fn plan_of(_: Token, plan: AnyPlan) -> std::result::Result<$plan, PlanError> {
                match plan {
                    AnyPlan::$variant(plan) => Ok(plan),
                    _ => Err(PlanError::Internal {
                        detail: "a move planned as another".to_string(),
                    }),
                }
            }

            fn with_host<'a>(&'a self, _: Token, input: $host_input) -> MoveRun<'a> {
                MoveRun::$variant(self, input)
            }
        }

        impl MovePlan for $plan {
            type Input<'a> = $input;
            type Output<'a> = $output;
            type HostInput<'a> = $host_input;
            type HostOutput = host_output_type!($host_output);

            fn as_plan(&self, _: Token) -> PlanRef<'_> {
                PlanRef::$variant(self)
            }

            fn placed<'a>(&'a self, _: Token, input: $input, output: $output) -> Placed<'a> {
                Placed::$variant(self, input, output)
            }

            fn with_host<'a>(&'a self, _: Token, input: $host_input) -> HostRun<'a> {
                HostRun::$variant(self, input)
            }

            fn host_output(_: Token, output: HostOutput) -> Result<Self::HostOutput> {
                match output {
                    HostOutput::$host_output(output) => Ok(output),
                    _ => Err(mismatch()),
                }
            }
        }
    )*};
}

macro_rules! host_output_type {
    (Many) => {
        Vec<HostTensor>
    };
    (One) => {
        HostTensor
    };
}

moves! {
    ResolvedSplit => SplitPlan, Split,
        BufferRegion<'a>, &'a [BufferRegion<'a>], &'a HostTensor, Many;
    ResolvedConcat => ConcatPlan, Concat,
        &'a [BufferRegion<'a>], BufferRegion<'a>, &'a [&'a HostTensor], One;
    PermutedSplit => PermutedPlan, PermutedSplit,
        BufferRegion<'a>, &'a [BufferRegion<'a>], &'a HostTensor, Many;
    PermutedConcat => PermutedConcatPlan, PermutedConcat,
        &'a [BufferRegion<'a>], BufferRegion<'a>, &'a [&'a HostTensor], One;
}
