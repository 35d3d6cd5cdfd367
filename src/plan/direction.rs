//! Which way a plan moves bits: a split reads one tensor and writes its
//! pieces, a concat (the split run backwards) reads the pieces and writes
//! the tensor. The same runs, windows and tables serve both; errors name
//! the regions as the operator does.

use super::split_plan::SplitPlan;
use super::usages::BufferRole;

/// Which way a plan moves bits between the tensor and its pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub(crate) enum Direction {
    /// The tensor is read and its pieces written (a split).
    #[default]
    Split,
    /// The pieces are read and the tensor written (a concat).
    Concat,
}

impl Direction {
    /// A short name, for labels and generated code.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Split => "split",
            Direction::Concat => "concat",
        }
    }

    /// What the operator calls the tensor: a split's input, a concat's
    /// output.
    pub fn tensor(self) -> &'static str {
        match self {
            Direction::Split => "input",
            Direction::Concat => "output",
        }
    }
}

/// One copy command of an encode: `size` bytes between the tensor's region
/// (from `tensor_offset`) and destination `destination`'s (from
/// `destination_offset`), offsets relative to the regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CopyCommand {
    pub destination: usize,
    pub tensor_offset: u64,
    pub destination_offset: u64,
    pub size: u64,
}

impl CopyCommand {
    /// The command's source and destination as `(buffer, offset)` pairs,
    /// given where the tensor's and the destination's regions are: the
    /// tensor is read by a split and written by a concat.
    pub fn ends<B>(
        &self,
        direction: Direction,
        tensor: (B, u64),
        piece: (B, u64),
    ) -> [(B, u64); 2] {
        let tensor = (tensor.0, tensor.1 + self.tensor_offset);
        let piece = (piece.0, piece.1 + self.destination_offset);
        match direction {
            Direction::Split => [tensor, piece],
            Direction::Concat => [piece, tensor],
        }
    }
}

impl SplitPlan {
    /// Which way the plan moves bits (a concat plans its mirror split and
    /// runs it backwards).
    pub(crate) fn direction(&self) -> Direction {
        self.direction.0
    }

    /// What errors call the tensor's region: the input of a split, the
    /// output of a concat.
    pub(crate) fn tensor_role(&self) -> BufferRole {
        match self.direction() {
            Direction::Split => BufferRole::Input,
            Direction::Concat => BufferRole::ConcatOutput,
        }
    }

    /// What errors call destination `i`: an output (or the arena) of a
    /// split, the concat input it is of a concat.
    pub(crate) fn destination_role(&self, i: usize) -> BufferRole {
        match self.direction.1.get(i) {
            Some(&input) => BufferRole::ConcatInput(input),
            None => self.placement().role(i),
        }
    }

    /// The same plan run as a concat whose input `concat_inputs[i]` is
    /// destination `i`.
    pub(crate) fn into_concat(mut self, concat_inputs: Vec<usize>) -> Self {
        self.direction = (Direction::Concat, concat_inputs);
        self
    }

    /// Every copy command of an encode, in order.
    pub(crate) fn copy_commands(&self) -> impl Iterator<Item = CopyCommand> + '_ {
        self.copies().iter().flat_map(move |c| {
            let destination = self.placement().destination_of(c.output);
            (0..c.count).map(move |k| CopyCommand {
                destination,
                tensor_offset: c.src_offset_bytes + k * c.src_stride_bytes,
                destination_offset: c.dst_offset_bytes + k * c.size_bytes,
                size: c.size_bytes,
            })
        })
    }
}
