//! What a plan needs of the caller's buffers, known before anything is
//! encoded: how many destinations, the bytes each must hold, the usages of
//! every buffer and the alignment of every offset.

use super::placement::Outputs;
use super::split_plan::SplitPlan;
use crate::error::BufferRole;

impl SplitPlan {
    /// Destinations an encode takes: one per output, or one arena.
    pub fn destination_count(&self) -> usize {
        match self.placement() {
            Outputs::Separate => self.outputs().len(),
            Outputs::Arena => 1,
        }
    }

    /// Which buffer role destination `index` has in errors.
    pub(crate) fn destination_role(&self, index: usize) -> BufferRole {
        match self.placement() {
            Outputs::Separate => BufferRole::Output(index),
            Outputs::Arena => BufferRole::Arena,
        }
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

    /// The usages the input's buffer needs: `STORAGE` when the plan
    /// dispatches, `COPY_SRC` when it copies.
    pub fn input_usages(&self) -> wgpu::BufferUsages {
        let mut usage = wgpu::BufferUsages::empty();
        if self.dispatch_count() > 0 {
            usage |= wgpu::BufferUsages::STORAGE;
        }
        if self.copy_count() > 0 {
            usage |= wgpu::BufferUsages::COPY_SRC;
        }
        usage
    }

    /// The usages output `index`'s destination buffer needs: `STORAGE` when
    /// the gather writes it, `COPY_DST` when it is copied, nothing when it
    /// is empty. For an arena plan, the arena's are the union over outputs
    /// ([`SplitPlan::destination_usages`]).
    pub fn output_usages(&self, index: usize) -> wgpu::BufferUsages {
        if self.is_gathered(index) {
            wgpu::BufferUsages::STORAGE
        } else if self.copies().iter().any(|c| c.output == index) {
            wgpu::BufferUsages::COPY_DST
        } else {
            wgpu::BufferUsages::empty()
        }
    }

    /// The usages destination `index` needs: output `index`'s for separate
    /// destinations, the union over all outputs for the arena.
    pub fn destination_usages(&self, index: usize) -> wgpu::BufferUsages {
        match self.placement() {
            Outputs::Separate => self.output_usages(index),
            Outputs::Arena => (0..self.outputs().len())
                .map(|i| self.output_usages(i))
                .fold(wgpu::BufferUsages::empty(), |a, b| a | b),
        }
    }

    /// Bytes destination `index` must hold from its offset: the output's
    /// [`crate::plan::PlannedOutput::region_bytes`], or the arena size.
    pub fn destination_bytes(&self, index: usize) -> u64 {
        match self.placement() {
            Outputs::Separate => self.outputs().get(index).map_or(0, |o| o.region_bytes),
            Outputs::Arena => self.arena_bytes(),
        }
    }
}
