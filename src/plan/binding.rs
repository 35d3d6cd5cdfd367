//! From a plan and the caller's regions to concrete dispatches: which byte
//! ranges of the input and of each destination every dispatch binds, the
//! spare binding of each slot a dispatch leaves unused, and the table to
//! bind with them.
//!
//! A binding must start at a multiple of `min_storage_buffer_offset_alignment`
//! (256 bytes on WebGPU), but runtimes pack tensors at 4 or 16 bytes. So each
//! binding starts at the caller's offset aligned down, and the difference is
//! folded into the table: source bits move by it, destination units too. Plans
//! keep one alignment of room in every window for it.

use std::borrow::Cow;
use std::ops::Range;

use super::align::align_down;
use super::error::EncodeError;
use super::regions::Region;
use super::split_plan::SplitPlan;
use super::table::{TableEntry, TableHeader};

/// What one destination slot of a dispatch binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotBinding {
    /// Destination `destination` (an output's region, or the arena): the
    /// bytes of its buffer bound (start aligned for binding).
    Destination {
        /// The destination.
        destination: usize,
        /// Bytes of its buffer bound.
        bytes: Range<u64>,
    },
    /// A slot the dispatch does not write: the splitter's spare buffer, at
    /// [`SplitPlan::spare_binding`].
    Spare,
}

/// One dispatch at concrete offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundDispatch {
    /// The plan's pass it runs.
    pub pass: usize,
    /// Its table slice in [`BoundPlan::table`], in bytes.
    pub table_bytes: Range<u64>,
    /// The input bytes bound (start aligned for binding).
    pub src: Range<u64>,
    /// One binding per destination slot of the shader.
    pub dst: Vec<SlotBinding>,
    /// Workgroups in x and y (z is 1).
    pub workgroups: [u32; 2],
}

/// A plan bound to concrete regions: its dispatches, in recording order,
/// and the table (the plan's own when every offset is aligned, else a
/// patched copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPlan<'p> {
    /// The dispatches.
    pub dispatches: Vec<BoundDispatch>,
    /// The parameter table to upload.
    pub table: Cow<'p, [u8]>,
}

impl SplitPlan {
    /// Checks the caller's input region and destinations (one per output,
    /// or the arena) and binds the plan to them: what each dispatch binds,
    /// and the table with the offsets folded in.
    ///
    /// # Errors
    ///
    /// Every [`EncodeError`] of a region the plan cannot use: count,
    /// buffers shared with the input, usages, offsets, sizes, extents and
    /// overlaps, in that order.
    #[doc(hidden)]
    pub fn bind(
        &self,
        input: &Region,
        destinations: &[Region],
    ) -> Result<BoundPlan<'_>, EncodeError> {
        self.check_regions(input, destinations)?;
        let align = self.limits().alignment_bytes();
        let slots = self.destination_slots() as usize;
        let mut patches: Vec<(u64, Vec<u64>)> = Vec::with_capacity(self.passes().len());
        let mut dispatches = Vec::with_capacity(self.passes().len());
        for (index, pass) in self.passes().iter().enumerate() {
            let src_start = input.offset + pass.src_window_bytes.start;
            let src_bound = align_down(src_start, align);
            let mut dst = Vec::with_capacity(slots);
            let mut dst_shift = Vec::with_capacity(pass.dst_windows.len());
            for w in &pass.dst_windows {
                let start = destinations[w.destination].offset + w.bytes.start;
                let bound = align_down(start, align);
                dst.push(SlotBinding::Destination {
                    destination: w.destination,
                    bytes: bound..start - w.bytes.start + w.bytes.end,
                });
                dst_shift.push(start - bound);
            }
            dst.resize(slots, SlotBinding::Spare);
            dispatches.push(BoundDispatch {
                pass: index,
                table_bytes: pass.table_bytes.clone(),
                src: src_bound..input.offset + pass.src_window_bytes.end,
                dst,
                workgroups: pass.workgroups,
            });
            patches.push((src_start - src_bound, dst_shift));
        }
        let aligned = patches
            .iter()
            .all(|(s, d)| *s == 0 && d.iter().all(|&x| x == 0));
        let table = if aligned {
            Cow::Borrowed(self.table())
        } else {
            Cow::Owned(self.patched_table(&patches))
        };
        Ok(BoundPlan { dispatches, table })
    }

    /// The bytes of the splitter's spare buffer that unused destination
    /// slot `slot` binds.
    pub fn spare_binding(&self, _slot: usize) -> Range<u64> {
        0..16
    }

    /// The table with every pass's source bits and destination units moved
    /// by the bytes between the caller's offsets and the aligned bindings.
    /// Shifts are below the alignment and windows at most 2^28 bytes, so
    /// the sums fit `u32`; the source bit wraps as the shader's arithmetic
    /// does.
    fn patched_table(&self, patches: &[(u64, Vec<u64>)]) -> Vec<u8> {
        let mut table = self.table().to_vec();
        let unit_bytes = self.kernel().unit_bits() / 8;
        let (header_size, entry_size) = (TableHeader::SIZE as usize, TableEntry::SIZE as usize);
        for (pass, (src_shift, dst_shift)) in self.passes().iter().zip(patches) {
            let start = pass.table_bytes.start as usize;
            let header: TableHeader =
                bytemuck::pod_read_unaligned(&table[start..start + header_size]);
            for e in 0..header.entry_count as usize {
                let at = start + header_size + e * entry_size;
                let bytes = &mut table[at..at + entry_size];
                let mut entry: TableEntry = bytemuck::pod_read_unaligned(bytes);
                entry.src_bit = entry.src_bit.wrapping_add((src_shift * 8) as u32);
                let units = dst_shift[entry.dst_slot as usize] / unit_bytes;
                entry.dst_unit += units as u32;
                bytes.copy_from_slice(bytemuck::bytes_of(&entry));
            }
        }
        table
    }
}
