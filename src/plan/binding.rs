//! From a plan and the caller's offsets to concrete bindings: which byte
//! ranges of the input and of each destination every pass binds, and the
//! table to bind with them.
//!
//! A binding must start at a multiple of `min_storage_buffer_offset_alignment`
//! (256 bytes on WebGPU), but runtimes pack tensors at 4 or 16 bytes. So each
//! binding starts at the caller's offset aligned down, and the difference is
//! folded into the table: source bits move by it, destination units too. Plans
//! keep one alignment of room in every window for it.

use std::borrow::Cow;
use std::ops::Range;

use super::abi::{TableEntry, TableHeader};
use super::passes::to_u32;
use super::split_plan::SplitPlan;
use crate::error::{BufferRole, Error, Result};

/// The bindings of one pass at concrete offsets, in bytes of the buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassBindings {
    /// The input bytes bound (start aligned for binding).
    pub src: Range<u64>,
    /// Per destination slot: the destination (an output, or 0 for the arena)
    /// and its bytes bound (start aligned for binding).
    pub dst: Vec<(usize, Range<u64>)>,
}

/// A plan bound to concrete offsets: what each pass binds, and the table
/// (the plan's own when every offset is aligned, else a patched copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPlan<'p> {
    /// One entry per pass.
    pub passes: Vec<PassBindings>,
    /// The parameter table to upload.
    pub table: Cow<'p, [u8]>,
}

fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

impl SplitPlan {
    /// Binds the plan to an input at `input_offset` and destinations at
    /// `destination_offsets` (one per output for separate destinations, one
    /// for the arena), all in bytes of their buffers.
    ///
    /// # Errors
    ///
    /// [`Error::MisalignedOffset`] for an offset that is not a multiple of
    /// [`SplitPlan::offset_alignment_bytes`]; [`Error::RegionCount`] for a
    /// wrong number of destination offsets.
    pub fn bind(&self, input_offset: u64, destination_offsets: &[u64]) -> Result<BoundPlan<'_>> {
        self.check_offsets(input_offset, destination_offsets)?;
        let align = self.limits().alignment_bytes();
        let mut patches: Vec<(u64, Vec<u64>)> = Vec::with_capacity(self.passes().len());
        let mut passes = Vec::with_capacity(self.passes().len());
        for pass in self.passes() {
            let src_start = input_offset + pass.src_window_bytes.start;
            let src_bound = align_down(src_start, align);
            let mut dst = Vec::with_capacity(pass.dst_windows.len());
            let mut dst_shift = Vec::with_capacity(pass.dst_windows.len());
            for w in &pass.dst_windows {
                let start = destination_offsets[w.destination] + w.bytes.start;
                let bound = align_down(start, align);
                dst.push((w.destination, bound..start - w.bytes.start + w.bytes.end));
                dst_shift.push(start - bound);
            }
            passes.push(PassBindings {
                src: src_bound..input_offset + pass.src_window_bytes.end,
                dst,
            });
            patches.push((src_start - src_bound, dst_shift));
        }
        let aligned = patches
            .iter()
            .all(|(s, d)| *s == 0 && d.iter().all(|&x| x == 0));
        let table = if aligned {
            Cow::Borrowed(self.table())
        } else {
            Cow::Owned(self.patched_table(&patches)?)
        };
        Ok(BoundPlan { passes, table })
    }

    /// Offsets must be multiples of the plan's unit, and one per destination.
    fn check_offsets(&self, input_offset: u64, destination_offsets: &[u64]) -> Result<()> {
        let expected = self.destination_count();
        if destination_offsets.len() != expected {
            return Err(Error::RegionCount {
                expected,
                actual: destination_offsets.len(),
            });
        }
        let alignment = self.offset_alignment_bytes();
        let why = if alignment == 16 {
            "this plan moves 16-byte units"
        } else {
            "copies and storage bindings start on 4-byte words"
        };
        let roles = std::iter::once((BufferRole::Input, input_offset)).chain(
            destination_offsets
                .iter()
                .enumerate()
                .map(|(i, &o)| (self.destination_role(i), o)),
        );
        for (which, offset) in roles {
            if !offset.is_multiple_of(alignment) {
                return Err(Error::MisalignedOffset {
                    which,
                    offset,
                    alignment,
                    why,
                });
            }
        }
        Ok(())
    }

    /// The table with every pass's source bits and destination units moved
    /// by the bytes between the caller's offsets and the aligned bindings.
    fn patched_table(&self, patches: &[(u64, Vec<u64>)]) -> Result<Vec<u8>> {
        let mut table = self.table().to_vec();
        let unit_bytes = self.kernel().unit_bits() / 8;
        for (pass, (src_shift, dst_shift)) in self.passes().iter().zip(patches) {
            let start = pass.table_bytes.start as usize;
            let header: TableHeader = bytemuck::pod_read_unaligned(&table[start..start + 16]);
            for e in 0..header.entry_count as usize {
                let at = start + 16 + e * size_of::<TableEntry>();
                let bytes = &mut table[at..at + size_of::<TableEntry>()];
                let mut entry: TableEntry = bytemuck::pod_read_unaligned(bytes);
                // Shifts are below the alignment; wrapping matches the
                // shader's arithmetic on src_bit.
                let src_bits = to_u32(src_shift * 8, "source shift")?;
                entry.src_bit = entry.src_bit.wrapping_add(src_bits);
                let units = dst_shift[entry.dst_slot as usize] / unit_bytes;
                entry.dst_unit = entry
                    .dst_unit
                    .checked_add(to_u32(units, "destination shift")?)
                    .ok_or_else(|| Error::Internal {
                        detail: "destination unit past u32".to_string(),
                    })?;
                bytes.copy_from_slice(bytemuck::bytes_of(&entry));
            }
        }
        Ok(table)
    }
}
