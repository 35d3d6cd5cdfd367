//! Why a split cannot be planned ([`PlanError`]) or recorded into the
//! caller's buffers ([`EncodeError`]). The region checks behind
//! [`EncodeError`] are plain arithmetic on offsets and sizes
//! ([`crate::plan::SplitPlan::bind`]), so the CPU emulator tests them.

use crate::element::ElementType;
use crate::kernels::Kernel;
use crate::plan::binding::usages::{BufferRole, Usages};
use crate::plan::limits::PlanLimits;

/// Why a split cannot be planned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The element type has no fixed-width GPU layout (strings).
    #[error("{element_type} tensors have no GPU layout; use the host path")]
    NotOnGpu {
        /// The element type.
        element_type: ElementType,
    },
    /// A tensor or arena larger than a GPU buffer may be.
    #[error("the {what} needs {bytes} bytes, more than the device's max_buffer_size of {max}")]
    TooLargeForDevice {
        /// `"input"` (a concat's `"output"`) or `"arena"`.
        what: &'static str,
        /// Bytes needed.
        bytes: u128,
        /// The device limit.
        max: u64,
    },
    /// [`crate::plan::Strategy::Copy`] on an output whose runs are not 4-byte aligned.
    #[error(
        "output {output} cannot be moved with copy commands: runs of {run_bits} bits at bit offset {offset_bits} are not 4-byte aligned"
    )]
    NotCopyable {
        /// The output.
        output: usize,
        /// Bits per run.
        run_bits: u64,
        /// Bit offset of the run in its block.
        offset_bits: u64,
    },
    /// [`crate::plan::Strategy::Copy`] asked of a plan for a compute pass
    /// ([`crate::plan::PlanOptions::in_compute_pass`]), which cannot hold
    /// copy commands.
    #[error("Strategy::Copy records copy commands, which a compute pass cannot hold")]
    CopiesInComputePass,
    /// A kernel forced by the caller cannot move these outputs.
    #[error("the {kernel} kernel cannot move these outputs on this device")]
    KernelDoesNotFit {
        /// The kernel asked for.
        kernel: Kernel,
    },
    /// A concat whose runs are not whole 32-bit words (sub-word element
    /// types, odd lengths of 16-bit ones) is assembled a tensor word at a
    /// time in one binding window of the output, which this output
    /// exceeds (or its rows exceed the kernel's `i32` arithmetic).
    #[error(
        "this concat's runs are not whole 32-bit words, so its {output_bytes}-byte output must fit one storage binding, and the device binds at most {window_bytes} bytes; concatenate whole-word pieces, or in parts"
    )]
    ConcatTooLargeForOneWindow {
        /// Bytes of the output.
        output_bytes: u64,
        /// The most bytes one binding holds on the device.
        window_bytes: u64,
    },
    /// [`crate::plan::Strategy::GatherPerOutput`] asked of a concat whose
    /// runs are not whole 32-bit words: such a concat is assembled a tensor
    /// word at a time from every piece in one dispatch, never one dispatch
    /// per piece.
    #[error(
        "this concat's runs are not whole 32-bit words, so one dispatch joins every piece: Strategy::GatherPerOutput cannot give each its own; use Strategy::Gather"
    )]
    PerOutputConcatOfSubWords,
    /// A tensor of a permuted move (an input or an output, of the split or
    /// the concat) that the device cannot move: past one buffer or 2^32
    /// elements, or, past one storage binding, a view that no cut into
    /// windows fits (a single row of it spans more than a window).
    #[error(
        "the {what} of a permuted move needs {bytes} bytes, and the device moves at most {max} of it (one buffer, or for a move whose rows span more than one binding, one binding)"
    )]
    PermutedTooLarge {
        /// `"input"` or `"output"`.
        what: &'static str,
        /// Bytes of it (rounded up to a word).
        bytes: u64,
        /// The most the device moves: its buffer size, or its binding
        /// size where the view's rows do not cut into windows.
        max: u64,
    },
    /// An option of [`crate::plan::PlanOptions`] that the move planned
    /// does not take (a permuted move into an arena, or with one kernel).
    #[error("{what} takes no {option} option")]
    NotForThisMove {
        /// The option: `"placement"`, `"kernel"`, `"form"` or `"staging"`.
        option: &'static str,
        /// The move.
        what: &'static str,
    },
    /// A plan used with something it was not made for.
    #[error("the plan does not fit this call: {0}")]
    Mismatch(PlanMismatch),
    /// A planner invariant did not hold. This is a bug in this crate; the
    /// detail says which value broke it.
    #[error("internal error in wgpu-split (please report): {detail}")]
    Internal {
        /// What broke.
        detail: String,
    },
}

/// What a plan was made for that differs from its use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanMismatch {
    /// Limits above the device's (a plan for another device, or
    /// `plan_with` limits the device does not allow).
    #[error("planned for {planned:?}, which this device's {device:?} does not allow")]
    Limits {
        /// The plan's limits.
        planned: Box<PlanLimits>,
        /// The device's.
        device: Box<PlanLimits>,
    },
    /// A tensor of another type or shape than the plan's.
    #[error("planned for {planned_type} {planned_shape:?}, given {given_type} {given_shape:?}")]
    Input {
        /// The plan's element type.
        planned_type: ElementType,
        /// The plan's input shape.
        planned_shape: Vec<usize>,
        /// The tensor's element type.
        given_type: ElementType,
        /// The tensor's shape.
        given_shape: Vec<usize>,
    },
}

/// Why a plan cannot be recorded with the caller's buffers: each is caught
/// before wgpu sees anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The number of regions is not the plan's: one per output of a split
    /// (one per input of a concat), or the one arena.
    #[error(
        "{actual} regions given where the plan takes {expected} (one per output of a split, one per input of a concat, or the one arena)"
    )]
    RegionCount {
        /// The regions the plan takes.
        expected: usize,
        /// Regions given.
        actual: usize,
    },
    /// A caller's region is smaller than the split needs.
    #[error("the {which} region has {size} bytes, but {needed} are needed ({why})")]
    BufferTooSmall {
        /// Which region.
        which: BufferRole,
        /// The region's size.
        size: u64,
        /// Bytes needed.
        needed: u64,
        /// Why that many, e.g. `"18 bytes rounded up to the 4-byte word the split writes"`.
        why: String,
    },
    /// A region that does not lie inside its buffer.
    #[error(
        "the {which} region [{offset}, {offset} + {size}) does not lie inside its buffer of {buffer_size} bytes"
    )]
    RegionOutsideBuffer {
        /// Which region.
        which: BufferRole,
        /// The region's offset.
        offset: u64,
        /// The region's size (or the bytes the split binds from the offset).
        size: u64,
        /// The buffer's size.
        buffer_size: u64,
    },
    /// A caller's buffer lacks a usage flag the plan needs.
    #[error("the {which} buffer lacks usage {missing}: {why}")]
    MissingUsage {
        /// Which buffer.
        which: BufferRole,
        /// The missing flags.
        missing: Usages,
        /// Why the plan needs them and what fixes it.
        why: String,
    },
    /// A region offset the plan cannot use.
    #[error("the {which} offset {offset} is not a multiple of {alignment} ({why})")]
    MisalignedOffset {
        /// Which region.
        which: BufferRole,
        /// The offset given.
        offset: u64,
        /// The required alignment.
        alignment: u64,
        /// Why, e.g. `"this plan moves 16-byte units"`.
        why: &'static str,
    },
    /// Two destination regions share bytes.
    #[error("the regions of outputs {first} and {second} overlap in one buffer")]
    OverlappingRegions {
        /// The output whose region starts first.
        first: usize,
        /// The other output.
        second: usize,
    },
    /// The input shares a buffer with a destination where that cannot
    /// work: the destination is written by copy commands (which cannot stay
    /// within one buffer), or the two regions, or their bindings (which
    /// start at offsets aligned down), overlap.
    #[error("the input and the {which} region share a buffer where they cannot: {why}")]
    InputSharesBuffer {
        /// The destination that shares the input's buffer.
        which: BufferRole,
        /// Why they cannot, and the fix.
        why: String,
    },
    /// A plan with copy commands cannot be recorded inside a compute pass.
    #[error(
        "this plan records {copies} copy commands, which cannot go inside a compute pass; plan with PlanOptions::in_compute_pass (dispatches only) to record into a pass"
    )]
    CopiesInComputePass {
        /// The plan's copy commands.
        copies: u64,
    },
}
