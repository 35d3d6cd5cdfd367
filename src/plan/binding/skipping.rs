//! Passes recorded as several dispatches where their destinations would
//! alias: each dispatch of a split pass writes a group of destinations
//! whose bindings do not overlap and reads a copy of the pass's table in
//! which the other groups' entries carry `FLAG_SKIP`. The copies follow the
//! plan's own table; passes that were not split read the plan's slices.

use std::ops::Range;

use super::{BoundDispatch, PassBytes, next_slice};
use crate::kernels::table::{FLAG_SKIP, TableEntry, TableHeader};
use crate::plan::binding::regions::PlainRegion;
use crate::plan::split_plan::SplitPlan;

/// The skipping copies a bound plan's table appends to the plan's: per
/// dispatch of a split pass, in recording order, its pass and the slots it
/// writes (a bit mask; a pass has at most 32 slots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Skipping {
    copies: Vec<(u32, u32)>,
}

impl Skipping {
    /// The dispatches of every pass, each pass as one dispatch per group of
    /// its slots (`groups`, per pass: one group when nothing overlaps), the
    /// skipping copies they read and the table's length.
    pub(super) fn dispatches(
        plan: &SplitPlan,
        passes: Vec<PassBytes>,
        groups: &[Vec<Vec<usize>>],
    ) -> (Vec<BoundDispatch>, Skipping, u64) {
        let mut len = plan.table().len() as u64;
        let mut copies = Vec::new();
        let mut dispatches = Vec::with_capacity(passes.len());
        for (index, (PassBytes { src, dst }, groups)) in passes.into_iter().zip(groups).enumerate()
        {
            let pass = &plan.passes()[index];
            for group in groups {
                let table_bytes = if groups.len() == 1 {
                    pass.table_bytes.clone()
                } else {
                    let mask = group.iter().fold(0u32, |m, &slot| m | 1 << slot);
                    copies.push((index as u32, mask));
                    let start = next_slice(plan, len);
                    len = start + (pass.table_bytes.end - pass.table_bytes.start);
                    start..len
                };
                let written =
                    |slot: usize| dst.get(slot).filter(|_| group.contains(&slot)).cloned();
                dispatches.push(BoundDispatch {
                    pass: index,
                    table_bytes,
                    src: src.clone(),
                    dst: plan.slot_bindings(index, written),
                    workgroups: pass.workgroups,
                });
            }
        }
        (dispatches, Skipping { copies }, len)
    }

    /// The plan's table with the skipping copies appended.
    pub(super) fn table(&self, plan: &SplitPlan) -> Vec<u8> {
        let mut table = plan.table().to_vec();
        for &(pass, mask) in &self.copies {
            skipping_copy(&mut table, plan, pass as usize, mask);
        }
        table
    }

    /// The copies as words, after `tag`.
    pub(super) fn recipe(&self, tag: u32) -> Vec<u32> {
        let mut words = vec![tag];
        words.extend(self.copies.iter().flat_map(|&(pass, mask)| [pass, mask]));
        words
    }
}

/// The slots of one pass (`dst`: per slot, its destination and bytes bound)
/// in groups whose bindings do not overlap in any buffer, first fit in slot
/// order: one group when nothing overlaps.
pub(super) fn non_aliasing_groups(
    dst: &[(usize, Range<u64>)],
    destinations: &[PlainRegion],
) -> Vec<Vec<usize>> {
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

/// Appends to `table` a copy of pass `pass`'s table in which the entries of
/// slots outside `mask` carry [`FLAG_SKIP`].
fn skipping_copy(table: &mut Vec<u8>, plan: &SplitPlan, pass: usize, mask: u32) {
    let source = &plan.passes()[pass].table_bytes;
    let start = next_slice(plan, table.len() as u64) as usize;
    table.resize(start, 0);
    table.extend_from_within(source.start as usize..source.end as usize);
    let header: TableHeader =
        bytemuck::pod_read_unaligned(&table[start..start + TableHeader::SIZE as usize]);
    for e in 0..header.entry_count as usize {
        let at = start + TableHeader::SIZE as usize + e * TableEntry::SIZE as usize;
        let bytes = &mut table[at..at + TableEntry::SIZE as usize];
        let mut entry: TableEntry = bytemuck::pod_read_unaligned(bytes);
        let written = 1u32
            .checked_shl(entry.dst_slot)
            .is_some_and(|bit| mask & bit != 0);
        if !written {
            entry.flags |= FLAG_SKIP;
        }
        bytes.copy_from_slice(bytemuck::bytes_of(&entry));
    }
}
