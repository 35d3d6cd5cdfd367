//! Regrouping a table-driven plan's entries where its destinations would
//! alias: destinations packed closer than the binding alignment in one page
//! (a runtime's pool packs tensors at 16 bytes) all start their bindings at
//! the same aligned-down offset, so the consecutive outputs a pass binds
//! would overlap and the pass would take a dispatch per destination. The
//! entries of a table-driven kernel hold everything they need (the source
//! bit relative to a window, the destination unit relative to the slot's
//! window), so they can be dealt into other dispatches instead: sorted by
//! where they bind, every `n`th into one dispatch (`n` the fewest
//! dispatches the slots allow) where no two of a dispatch's bindings then
//! overlap, as in a page packed in output order: the planned count; else
//! each into the first open dispatch whose bindings it does not overlap.
//! Every dispatch binds the plan's whole source window and writes up to the
//! module's slots, so the table keeps the plan's size.
//!
//! Destinations are disjoint and every entry writes only its own, so the
//! order of the dispatches is free.

use std::ops::Range;

use super::{BoundDispatch, PassBytes, next_slice};
use crate::kernels::lanes::LaneOrder;
use crate::kernels::table::{TableEntry, TableHeader};
use crate::plan::binding::regions::PlainRegion;
use crate::plan::geometry::align_down;
use crate::plan::passes::pass_table::grid;
use crate::plan::split_plan::SplitPlan;

/// Open dispatches a destination is tried against: the most recently
/// opened (a packed page needs as many as one binding alignment holds
/// destinations), so dealing stays linear in the destinations.
const OPEN_DISPATCHES: usize = 128;

/// A table-driven plan's entries dealt into dispatches whose destinations
/// do not overlap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Regrouped {
    /// The source window every dispatch binds (the union of the passes'),
    /// relative to the input's offset.
    window: Range<u64>,
    /// Per dispatch, its entries as (pass, slot) of the plan, in the slots
    /// they now write.
    dispatches: Vec<Vec<(u32, u32)>>,
    /// Per dispatch, its invocations and workgroups (derived from the
    /// entries).
    grids: Vec<(u32, [u32; 2])>,
}

/// One entry to deal: where its destination binds, and its invocations.
struct Item {
    pass: u32,
    slot: u32,
    buffer: usize,
    bytes: Range<u64>,
    invocations: u64,
}

/// A dispatch being filled.
struct Open {
    members: Vec<(u32, u32)>,
    /// The buffer of its last member and where that member's binding ends
    /// (members come sorted by buffer and start).
    buffer: usize,
    end: u64,
    invocations: u64,
}

impl Regrouped {
    /// The plan's entries dealt into dispatches at the bound bytes
    /// `passes`; `None` when the plan is not table-driven with separate
    /// destinations, a destination takes several entries, the passes'
    /// source windows do not fit one binding, or that binding would overlap
    /// a destination in the input's buffer.
    pub(super) fn new(
        plan: &SplitPlan,
        passes: &[PassBytes],
        input: &PlainRegion,
        destinations: &[PlainRegion],
        writable_source: bool,
    ) -> Option<Regrouped> {
        let planned = plan.passes();
        if plan.placement().is_shared() || planned.iter().any(|p| p.layout.is_some()) {
            return None;
        }
        let window = planned
            .iter()
            .map(|p| p.src_window_bytes.clone())
            .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))?;
        let limits = plan.limits();
        if window.end - window.start > limits.window_bytes() - limits.alignment_bytes() {
            return None;
        }
        let src = source_binding(plan, &window, input);
        let mut once = vec![false; destinations.len()];
        for (d, bytes) in passes.iter().flat_map(|p| &p.dst) {
            let shares = writable_source && destinations[*d].buffer == input.buffer;
            if std::mem::replace(&mut once[*d], true)
                || (shares && bytes.start < src.end && src.start < bytes.end)
            {
                return None;
            }
        }
        let mut items = items(plan, passes, destinations)?;
        items.sort_by_key(|i| (i.buffer, i.bytes.start, i.bytes.end));
        let dispatches = deal(plan, &items);
        let grids = dispatches
            .iter()
            .map(|members| {
                let invocations = dispatch_invocations(plan, members);
                Some((
                    u32::try_from(invocations).ok()?,
                    grid(invocations, limits).ok()?,
                ))
            })
            .collect::<Option<_>>()?;
        Some(Regrouped {
            window,
            dispatches,
            grids,
        })
    }

    /// The bound dispatches, and the length of their table.
    pub(super) fn dispatches(
        &self,
        plan: &SplitPlan,
        passes: &[PassBytes],
        input: &PlainRegion,
    ) -> (Vec<BoundDispatch>, u64) {
        let src = source_binding(plan, &self.window, input);
        let slice = slice_bytes(plan);
        let mut len = 0;
        let dispatches = self
            .dispatches
            .iter()
            .zip(&self.grids)
            .map(|(members, &(_, workgroups))| {
                let pass = members[0].0 as usize;
                let start = next_slice(plan, len);
                len = start + slice;
                let written = |slot: usize| {
                    let &(p, s) = members.get(slot)?;
                    Some(passes[p as usize].dst[s as usize].clone())
                };
                BoundDispatch {
                    pass,
                    table_bytes: start..len,
                    src: src.clone(),
                    dst: plan.slot_bindings(pass, written),
                    workgroups,
                }
            })
            .collect();
        (dispatches, len)
    }

    /// The table: per dispatch a header for the whole source window and the
    /// entries of its members, rebased onto that window and renumbered to
    /// their slots (and, striped, to consecutive invocation ranges), the
    /// rest of the module's entries zero.
    pub(super) fn table(&self, plan: &SplitPlan) -> Vec<u8> {
        let unit_bits = plan.kernel().unit_bits();
        let source_window_units = (self.window.end - self.window.start) * 8 / unit_bits;
        let slice = slice_bytes(plan);
        let mut table = Vec::new();
        for (members, &(dispatch_invocations, _)) in self.dispatches.iter().zip(&self.grids) {
            let start = next_slice(plan, table.len() as u64) as usize;
            table.resize(start, 0);
            let mut first_invocation = 0;
            let entries: Vec<TableEntry> = members
                .iter()
                .enumerate()
                .map(|(slot, &(pass, s))| {
                    let mut e = entry(plan, pass, s);
                    let shift =
                        plan.passes()[pass as usize].src_window_bytes.start - self.window.start;
                    // Windows are at most 2^28 bytes: the shift fits u32.
                    e.src_bit = e.src_bit.wrapping_add((shift * 8) as u32);
                    e.dst_slot = slot as u32;
                    e.first_invocation = first_invocation;
                    if striped(plan) {
                        first_invocation += invocations(plan, &e) as u32;
                    }
                    e
                })
                .collect();
            let header = TableHeader {
                invocations: dispatch_invocations,
                entry_count: entries.len() as u32,
                source_window_units: source_window_units as u32,
                padding: 0,
            };
            table.extend_from_slice(bytemuck::bytes_of(&header));
            table.extend_from_slice(bytemuck::cast_slice(&entries));
            table.resize(start + slice as usize, 0);
        }
        table
    }

    /// The grouping as words, after `tag`: per dispatch its entry count
    /// and its entries' pass and slot.
    pub(super) fn recipe(&self, tag: u32) -> Vec<u32> {
        let mut words = vec![tag];
        for members in &self.dispatches {
            words.push(members.len() as u32);
            words.extend(members.iter().flat_map(|&(pass, slot)| [pass, slot]));
        }
        words
    }
}

/// The input's bytes a dispatch binds for source window `window`.
fn source_binding(plan: &SplitPlan, window: &Range<u64>, input: &PlainRegion) -> Range<u64> {
    let align = plan.limits().alignment_bytes();
    align_down(input.offset + window.start, align)..input.offset + window.end
}

/// The bytes of one dispatch's table: the plan's passes' (a uniform table
/// of one entry per slot of the module).
fn slice_bytes(plan: &SplitPlan) -> u64 {
    plan.passes()
        .iter()
        .map(|p| p.table_bytes.end - p.table_bytes.start)
        .max()
        .unwrap_or(0)
}

/// True when the module's entries own consecutive invocation ranges
/// (striped lanes); else every invocation serves every entry.
fn striped(plan: &SplitPlan) -> bool {
    plan.pass_modules().0.first().map(|k| k.lanes()) == Some(LaneOrder::Striped)
}

/// The entry of pass `pass` that writes slot `slot`, as planned.
fn entry(plan: &SplitPlan, pass: u32, slot: u32) -> TableEntry {
    try_entry(plan, pass as usize, slot).unwrap_or_else(bytemuck::Zeroable::zeroed)
}

fn try_entry(plan: &SplitPlan, pass: usize, slot: u32) -> Option<TableEntry> {
    let bytes = &plan.table()[plan.passes()[pass].table_bytes.start as usize..];
    let header: TableHeader = bytemuck::pod_read_unaligned(&bytes[..TableHeader::SIZE as usize]);
    let at = |k: u32| {
        let start = (TableHeader::SIZE + u64::from(k) * TableEntry::SIZE) as usize;
        let e: TableEntry =
            bytemuck::pod_read_unaligned(&bytes[start..][..TableEntry::SIZE as usize]);
        e
    };
    // Entry k writes slot k; searched in case a plan numbers them otherwise.
    (slot < header.entry_count && at(slot).dst_slot == slot)
        .then(|| at(slot))
        .or_else(|| (0..header.entry_count).map(at).find(|e| e.dst_slot == slot))
}

/// The invocations entry `e` needs: its units, `units_per_invocation` each.
fn invocations(plan: &SplitPlan, e: &TableEntry) -> u64 {
    let units = u64::from(e.first_bit + e.len_bits).div_ceil(plan.kernel().unit_bits());
    units.div_ceil(u64::from(e.units_per_invocation.max(1)))
}

/// A dispatch's invocations: the sum of its entries' (striped), or the
/// most any needs (every invocation serves every entry).
fn combine(plan: &SplitPlan, total: u64, more: u64) -> u64 {
    if striped(plan) {
        total + more
    } else {
        total.max(more)
    }
}

/// A dispatch's invocations (see [`combine`]).
fn dispatch_invocations(plan: &SplitPlan, members: &[(u32, u32)]) -> u64 {
    members.iter().fold(0, |total, &(pass, slot)| {
        combine(plan, total, invocations(plan, &entry(plan, pass, slot)))
    })
}

/// Every pass's entries with where their destinations bind; `None` when
/// a slot has no entry.
fn items(
    plan: &SplitPlan,
    passes: &[PassBytes],
    destinations: &[PlainRegion],
) -> Option<Vec<Item>> {
    let mut items = Vec::new();
    for (pass, bytes) in passes.iter().enumerate() {
        for (slot, (d, range)) in bytes.dst.iter().enumerate() {
            let e = try_entry(plan, pass, slot as u32)?;
            items.push(Item {
                pass: pass as u32,
                slot: slot as u32,
                buffer: destinations[*d].buffer,
                bytes: range.clone(),
                invocations: invocations(plan, &e),
            });
        }
    }
    Some(items)
}

/// `items` (sorted by buffer and binding start) dealt into dispatches of
/// at most the module's slots whose bindings do not overlap and whose
/// invocations fit one grid: every `n`th item into one dispatch, `n` the
/// fewest dispatches the slots allow, where that holds (a page packed in
/// output order: the plan's own count), else first fit.
fn deal(plan: &SplitPlan, items: &[Item]) -> Vec<Vec<(u32, u32)>> {
    let slots = plan.pass_slots(0) as usize;
    let most = plan.limits().max_invocations().min(u64::from(u32::MAX));
    strided(plan, items, slots, most).unwrap_or_else(|| first_fit(plan, items, slots, most))
}

/// Item `i` into dispatch `i % n`, `n = ceil(items / slots)`; `None` when
/// two of a dispatch's bindings overlap or its invocations do not fit.
fn strided(
    plan: &SplitPlan,
    items: &[Item],
    slots: usize,
    most: u64,
) -> Option<Vec<Vec<(u32, u32)>>> {
    let n = items.len().div_ceil(slots.max(1));
    (0..n)
        .map(|d| {
            let members: Vec<&Item> = items.iter().skip(d).step_by(n).collect();
            let apart = members.windows(2).all(|w| {
                // Sorted by start: each binding ends before the next starts.
                w[0].buffer != w[1].buffer || w[0].bytes.end <= w[1].bytes.start
            });
            let invocations = members
                .iter()
                .fold(0, |total, i| combine(plan, total, i.invocations));
            (apart && invocations <= most)
                .then(|| members.iter().map(|i| (i.pass, i.slot)).collect())
        })
        .collect()
}

/// Each item into the first open dispatch it fits (see [`deal`]).
fn first_fit(plan: &SplitPlan, items: &[Item], slots: usize, most: u64) -> Vec<Vec<(u32, u32)>> {
    let mut done: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    for item in items {
        let fits = |o: &Open| {
            (o.buffer != item.buffer || o.end <= item.bytes.start)
                && combine(plan, o.invocations, item.invocations) <= most
        };
        let at = match open.iter().position(fits) {
            Some(at) => at,
            None => {
                if open.len() == OPEN_DISPATCHES {
                    done.push(open.remove(0).members);
                }
                open.push(Open {
                    members: Vec::with_capacity(slots),
                    buffer: item.buffer,
                    end: 0,
                    invocations: 0,
                });
                open.len() - 1
            }
        };
        let o = &mut open[at];
        o.members.push((item.pass, item.slot));
        o.end = if o.buffer == item.buffer {
            o.end.max(item.bytes.end)
        } else {
            item.bytes.end
        };
        o.buffer = item.buffer;
        o.invocations = combine(plan, o.invocations, item.invocations);
        if o.members.len() == slots {
            done.push(open.remove(at).members);
        }
    }
    done.extend(open.into_iter().map(|o| o.members));
    done
}
