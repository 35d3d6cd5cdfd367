//! From a plan and the caller's regions to concrete dispatches: which byte
//! ranges of the input and of each destination every dispatch binds, the
//! spare binding of each slot a dispatch leaves unused, and the table to
//! bind with them.
//!
//! WebGPU forbids two writable bindings of one dispatch that overlap in one
//! buffer (Dawn enforces it; wgpu 30 does not). Unused slots bind distinct
//! ranges of the spare buffer. Destinations packed closer than the binding
//! alignment in one buffer would overlap once their bindings start aligned
//! down, so their pass is recorded as several dispatches of the same
//! pipeline, each writing destinations that do not overlap and leaving the
//! others' entries (`FLAG_SKIP`) to the next.
//!
//! A binding must start at a multiple of `min_storage_buffer_offset_alignment`
//! (256 bytes on WebGPU), but runtimes pack tensors at 4 or 16 bytes. So each
//! binding starts at the caller's offset aligned down, and the difference is
//! folded into the table: source bits move by it, destination units too. Plans
//! keep one alignment of room in every window for it.

use std::borrow::Cow;
use std::ops::Range;

use super::align::{align_down, align_up};
use super::error::EncodeError;
use super::passes::Pass;
use super::regions::Region;
use super::shader::ShaderKey;
use super::split_plan::SplitPlan;
use super::table::{FLAG_SKIP, TableEntry, TableHeader};

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
    /// True when a pass was split into dispatches that skip each other's
    /// entries: they run the module variant that tests `FLAG_SKIP`.
    pub skips: bool,
}

impl BoundPlan<'_> {
    /// The module the dispatches run: the plan's, in the variant that skips
    /// entries when a pass was split.
    pub fn shader(&self, plan: &SplitPlan) -> Option<ShaderKey> {
        plan.shader().map(|key| key.skipping(self.skips))
    }
}

/// The bytes one pass binds at concrete offsets: the input's, and per slot
/// the destination and its bytes.
struct PassBytes {
    src: Range<u64>,
    dst: Vec<(usize, Range<u64>)>,
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
        let mut patches: Vec<(u64, Vec<u64>)> = Vec::with_capacity(self.passes().len());
        let mut passes: Vec<PassBytes> = Vec::with_capacity(self.passes().len());
        for pass in self.passes() {
            let src_start = input.offset + pass.src_window_bytes.start;
            let src_bound = align_down(src_start, align);
            let mut dst = Vec::with_capacity(pass.dst_windows.len());
            let mut dst_shift = Vec::with_capacity(pass.dst_windows.len());
            for w in &pass.dst_windows {
                let start = destinations[w.destination].offset + w.bytes.start;
                let bound = align_down(start, align);
                dst.push((w.destination, bound..start - w.bytes.start + w.bytes.end));
                dst_shift.push(start - bound);
            }
            passes.push(PassBytes {
                src: src_bound..input.offset + pass.src_window_bytes.end,
                dst,
            });
            patches.push((src_start - src_bound, dst_shift));
        }
        let aligned = patches
            .iter()
            .all(|(s, d)| *s == 0 && d.iter().all(|&x| x == 0));
        let mut table = if aligned {
            Cow::Borrowed(self.table())
        } else {
            Cow::Owned(self.patched_table(&patches))
        };
        let mut dispatches = Vec::with_capacity(passes.len());
        let mut skips = false;
        for (index, (pass, PassBytes { src, dst })) in self.passes().iter().zip(passes).enumerate()
        {
            let groups = non_aliasing_groups(&dst, destinations);
            skips |= groups.len() > 1;
            for group in &groups {
                let table_bytes = if groups.len() == 1 {
                    pass.table_bytes.clone()
                } else {
                    skipping_table(
                        table.to_mut(),
                        pass,
                        group,
                        self.limits().table_alignment_bytes(),
                    )
                };
                let slots =
                    (0..self.destination_slots() as usize).map(|slot| match dst.get(slot) {
                        Some((destination, bytes)) if group.contains(&slot) => {
                            SlotBinding::Destination {
                                destination: *destination,
                                bytes: bytes.clone(),
                            }
                        }
                        _ => SlotBinding::Spare,
                    });
                dispatches.push(BoundDispatch {
                    pass: index,
                    table_bytes,
                    src: src.clone(),
                    dst: slots.collect(),
                    workgroups: pass.workgroups,
                });
            }
        }
        Ok(BoundPlan {
            dispatches,
            table,
            skips,
        })
    }

    /// The bytes of the splitter's spare buffer that unused destination
    /// slot `slot` binds: 16 bytes at a multiple of 256 (WebGPU's largest
    /// storage offset alignment) of its own, so that no two spare bindings
    /// of a dispatch overlap.
    pub fn spare_binding(&self, slot: usize) -> Range<u64> {
        let start = slot as u64 * 256;
        start..start + 16
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

/// The slots of one pass (`dst`: per slot, its destination and bytes bound)
/// in groups whose bindings do not overlap in any buffer, first fit in slot
/// order: one group when nothing overlaps.
fn non_aliasing_groups(dst: &[(usize, Range<u64>)], destinations: &[Region]) -> Vec<Vec<usize>> {
    let overlap = |a: usize, b: usize| {
        let ((da, ra), (db, rb)) = (&dst[a], &dst[b]);
        destinations[*da].buffer == destinations[*db].buffer
            && ra.start < rb.end
            && rb.start < ra.end
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for slot in 0..dst.len() {
        match groups
            .iter_mut()
            .find(|g| g.iter().all(|&other| !overlap(slot, other)))
        {
            Some(group) => group.push(slot),
            None => groups.push(vec![slot]),
        }
    }
    if groups.is_empty() {
        groups.push(Vec::new());
    }
    groups
}

/// Appends to `table` a copy of `pass`'s table in which the entries of
/// slots outside `group` carry [`FLAG_SKIP`], and returns its range.
fn skipping_table(table: &mut Vec<u8>, pass: &Pass, group: &[usize], alignment: u64) -> Range<u64> {
    let source = pass.table_bytes.start as usize..pass.table_bytes.end as usize;
    let start = align_up(table.len() as u64, alignment) as usize;
    table.resize(start, 0);
    table.extend_from_within(source);
    let header: TableHeader =
        bytemuck::pod_read_unaligned(&table[start..start + TableHeader::SIZE as usize]);
    for e in 0..header.entry_count as usize {
        let at = start + TableHeader::SIZE as usize + e * TableEntry::SIZE as usize;
        let bytes = &mut table[at..at + TableEntry::SIZE as usize];
        let mut entry: TableEntry = bytemuck::pod_read_unaligned(bytes);
        if !group.contains(&(entry.dst_slot as usize)) {
            entry.flags |= FLAG_SKIP;
        }
        bytes.copy_from_slice(bytemuck::bytes_of(&entry));
    }
    start as u64..table.len() as u64
}
