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
//! binding starts at the caller's offset aligned down and ends where its
//! window ends; the shader reads the difference off the binding's length
//! (`arrayLength` less the window's units, which the table holds). Tables
//! thus depend on the plan alone: one upload serves every offset. Plans keep
//! one alignment of room in every window for the difference.

use std::borrow::Cow;
use std::ops::Range;

use super::align::{align_down, align_up};
use super::direction::Direction;
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
/// and the table (the plan's own, whatever the offsets; a copy with
/// skipping passes appended where destinations would alias).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPlan<'p> {
    /// The dispatches.
    pub dispatches: Vec<BoundDispatch>,
    /// The parameter table to upload.
    pub table: Cow<'p, [u8]>,
    /// True when a pass was split into dispatches that skip each other's
    /// entries: they run the module variant that tests `FLAG_SKIP`.
    pub skips: bool,
    /// True when a dispatch writes into the input's buffer: the source is
    /// bound `read_write` (WebGPU forbids one buffer bound read-only and
    /// writable in one dispatch, and allows writable bindings that do not
    /// overlap), in the module variant that declares it so.
    pub writable_source: bool,
    /// True when a binding starts before its caller's offset (an offset
    /// that is not a multiple of the binding alignment): the module variant
    /// that reads the shifts off the bindings' lengths.
    pub shifted: bool,
}

impl BoundPlan<'_> {
    /// The modules the dispatches run, distinct, in the order they first
    /// run, and per dispatch the index of its module in that list: each
    /// pass's module, in the variant that skips entries when a pass was
    /// split and that binds the source writable when a destination shares
    /// its buffer.
    pub fn shaders(&self, plan: &SplitPlan) -> (Vec<ShaderKey>, Vec<usize>) {
        let (keys, of_pass) = plan.pass_modules();
        let keys = keys
            .iter()
            .map(|key| {
                key.clone()
                    .skipping(self.skips)
                    .with_writable_source(self.writable_source)
                    .with_shifts(self.shifted)
            })
            .collect();
        let of_dispatch = self.dispatches.iter().map(|d| of_pass[d.pass]).collect();
        (keys, of_dispatch)
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
    /// and the table it reads.
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
        let mut shifted = false;
        let passes: Vec<PassBytes> = self
            .passes()
            .iter()
            .map(|pass| {
                let src_start = input.offset + pass.src_window_bytes.start;
                shifted |= !src_start.is_multiple_of(align);
                let dst = pass
                    .dst_windows
                    .iter()
                    .map(|w| {
                        let start = destinations[w.destination].offset + w.bytes.start;
                        let end = start + (w.bytes.end - w.bytes.start);
                        shifted |= !start.is_multiple_of(align);
                        (w.destination, align_down(start, align)..end)
                    })
                    .collect();
                PassBytes {
                    src: align_down(src_start, align)..input.offset + pass.src_window_bytes.end,
                    dst,
                }
            })
            .collect();
        let writable_source = self.check_source_bindings(&passes, input, destinations)?;
        let mut table = Cow::Borrowed(self.table());
        let mut dispatches = Vec::with_capacity(passes.len());
        let mut skips = false;
        for (index, (pass, PassBytes { src, dst })) in self.passes().iter().zip(passes).enumerate()
        {
            // A concat reads its pieces: read-only bindings may alias,
            // unless a piece shares the tensor's buffer (then all are
            // bound writable).
            let groups = if self.direction() == Direction::Concat && !writable_source {
                vec![(0..dst.len()).collect()]
            } else {
                non_aliasing_groups(&dst, destinations)
            };
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
                let slots = (0..self.pass_slots(index) as usize).map(|slot| match dst.get(slot) {
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
            writable_source,
            shifted,
        })
    }

    /// Destinations in the input's buffer: their bindings may not overlap
    /// the source's (which start aligned down, so regions that do not
    /// overlap still may). Returns whether any dispatch binds one.
    fn check_source_bindings(
        &self,
        passes: &[PassBytes],
        input: &Region,
        destinations: &[Region],
    ) -> Result<bool, EncodeError> {
        let mut shared = false;
        for pass in passes {
            for (destination, bytes) in &pass.dst {
                if destinations[*destination].buffer != input.buffer {
                    continue;
                }
                shared = true;
                if bytes.start < pass.src.end && pass.src.start < bytes.end {
                    let align = self.limits().alignment_bytes();
                    return Err(EncodeError::InputSharesBuffer {
                        which: self.destination_role(*destination),
                        why: format!(
                            "bindings start at offsets aligned down to {align} bytes, so the \
                             input's binding {:?} overlaps its binding {bytes:?}; keep the \
                             two regions {align} bytes apart, or use another buffer",
                            pass.src
                        ),
                    });
                }
            }
        }
        Ok(shared)
    }

    /// The bytes of the splitter's spare buffer that unused destination
    /// slot `slot` binds: 16 bytes at a multiple of 256 (WebGPU's largest
    /// storage offset alignment) of its own, so that no two spare bindings
    /// of a dispatch overlap.
    #[doc(hidden)]
    pub fn spare_binding(&self, slot: usize) -> Range<u64> {
        let start = slot as u64 * 256;
        start..start + 16
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
