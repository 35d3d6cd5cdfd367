//! The two ends of a plan, the tensor and its pieces, as an encode uses
//! them: what errors call each (a split's input and outputs, a concat's
//! output and inputs), and the copy commands between them in the plan's
//! direction.

use crate::plan::binding::usages::BufferRole;
use crate::plan::geometry::Direction;
use crate::plan::split_plan::SplitPlan;

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
            None => BufferRole::destination(self.placement(), i),
        }
    }

    /// The same plan run as a concat whose input `concat_inputs[i]` is
    /// destination `i`.
    pub(crate) fn into_concat(mut self, concat_inputs: Vec<usize>) -> Self {
        // A staged concat's pieces are its unstage's destinations.
        if let Some(staging) = self.staging.as_mut() {
            staging.unstage.direction.1 = concat_inputs.clone();
        }
        self.direction = (Direction::Concat, concat_inputs);
        self
    }

    /// Every copy command of an encode, in order, as its source and
    /// destination `(buffer, offset)` pairs and its size, given where the
    /// tensor's region and each destination's region are.
    pub(crate) fn copies_between<'a, B: Copy + 'a>(
        &'a self,
        tensor: (B, u64),
        destinations: &'a [(B, u64)],
    ) -> impl Iterator<Item = ([(B, u64); 2], u64)> + 'a {
        self.copy_commands().map(move |c| {
            let ends = c.ends(self.direction(), tensor, destinations[c.destination]);
            (ends, c.size)
        })
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
