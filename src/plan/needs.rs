//! What a plan needs of the caller's buffers, known before anything is
//! encoded: how many destinations, the bytes each must hold, the usages of
//! every buffer and the alignment of every offset.

use super::split_plan::SplitPlan;
use super::usages::Usages;

impl SplitPlan {
    /// Destinations an encode takes: one per output, or one arena.
    pub fn destination_count(&self) -> usize {
        self.placement().destination_count(self.outputs().len())
    }

    /// The multiple every offset (input and destinations) must be: 16 bytes
    /// when the dispatches move vec4 units, else 4 (copies and word
    /// bindings). Unlike bindings, offsets need not be multiples of
    /// `min_storage_buffer_offset_alignment`.
    pub fn offset_alignment_bytes(&self) -> u64 {
        if self.kernel().unit_bits() == 128 && self.dispatch_count() > 0 {
            16
        } else {
            4
        }
    }

    /// The usages the input's buffer needs: storage when the plan
    /// dispatches, copy source when it copies.
    pub fn input_usages(&self) -> Usages {
        Usages {
            storage: self.dispatch_count() > 0,
            copy_src: self.copy_count() > 0,
            copy_dst: false,
        }
    }

    /// The usages output `index`'s destination needs: storage when the
    /// gather writes it, copy destination when it is copied, nothing when it
    /// is empty. For an arena plan, the arena's are the union over outputs
    /// ([`SplitPlan::destination_usages`]).
    pub fn output_usages(&self, index: usize) -> Usages {
        Usages {
            storage: self.is_gathered(index),
            copy_src: false,
            copy_dst: !self.is_gathered(index) && self.copies().iter().any(|c| c.output == index),
        }
    }

    /// The usages destination `index` needs: output `index`'s, or for the
    /// arena the union over every output.
    pub fn destination_usages(&self, index: usize) -> Usages {
        if !self.placement().is_shared() {
            return self.output_usages(index);
        }
        (0..self.outputs().len())
            .map(|i| self.output_usages(i))
            .fold(Usages::NONE, Usages::union)
    }

    /// Bytes destination `index` must hold from its offset: the output's
    /// [`crate::plan::PlannedOutput::region_bytes`], or the arena size.
    pub fn destination_bytes(&self, index: usize) -> u64 {
        if self.placement().is_shared() {
            return self.arena_bytes();
        }
        self.outputs().get(index).map_or(0, |o| o.region_bytes)
    }
}
