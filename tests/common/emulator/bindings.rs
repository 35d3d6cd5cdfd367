//! A dispatch's bindings: WebGPU's aliasing rules checked on them, and the
//! table's entries moved to them (the shifts of bindings that start
//! before their windows).

use std::ops::Range;

use wgpu_split::plan::SplitPlan;
use wgpu_split::plan::internals::{BoundDispatch, SlotBinding, TableEntry, TableHeader};

use super::{PlainRegion, Way};

/// The entries at the dispatch's bindings, as the shader's
/// `source_shift_bits` and `dst_shift_<slot>` compute them: a binding starts
/// at the caller's offset aligned down and ends with its window, so its
/// length in units less the window's units (from the table) is the shift.
/// Entries of spare slots are left as they are (nothing writes them). A
/// module without shifts (`shifted` false) compiles them out: every shift
/// must then be zero.
pub(super) fn bind_entries(
    plan: &SplitPlan,
    header: &TableHeader,
    entries: &mut [TableEntry],
    b: &BoundDispatch,
    shifted: bool,
) -> u32 {
    let unit_bytes = plan.kernel().unit_bits() / 8;
    let units = |r: &Range<u64>| ((r.end - r.start) / unit_bytes) as u32;
    let src_shift = units(&b.src).wrapping_sub(header.source_window_units);
    assert!(
        shifted || src_shift == 0,
        "a source shift in a module without shifts"
    );
    for e in entries {
        e.src_bit = e
            .src_bit
            .wrapping_add(src_shift.wrapping_mul(plan.kernel().unit_bits() as u32));
        if let SlotBinding::Destination { bytes, .. } = &b.dst[e.dst_slot as usize] {
            assert!(units(bytes) >= e.window_units, "a binding holds its window");
            let shift = units(bytes) - e.window_units;
            assert!(
                shifted || shift == 0,
                "a destination shift in a module without shifts"
            );
            e.dst_unit += shift;
        }
    }
    src_shift
}

/// WebGPU's rules (which Dawn enforces and wgpu 30 does not): no two
/// writable storage bindings of one dispatch overlap in one buffer, and a
/// buffer bound read-only is not also bound writable (the source is bound
/// writable where a destination shares its buffer; a concat's pieces,
/// read-only otherwise, may alias). The splitter's spare buffer counts as
/// a buffer of its own.
pub(super) fn check_no_writable_aliasing(
    plan: &SplitPlan,
    way: Way,
    b: &BoundDispatch,
    writable_source: bool,
    tensor: PlainRegion,
    destinations: &[PlainRegion],
) {
    const SPARE: usize = usize::MAX;
    let slots: Vec<(usize, Range<u64>)> = b
        .dst
        .iter()
        .enumerate()
        .map(|(slot, binding)| match binding {
            SlotBinding::Destination { destination, bytes } => {
                (destinations[*destination].buffer, bytes.clone())
            }
            SlotBinding::Spare => (SPARE, plan.spare_binding(slot)),
        })
        .collect();
    let shared = slots.iter().any(|(buffer, _)| *buffer == tensor.buffer);
    assert!(
        !shared || writable_source,
        "the source is bound writable where a destination shares its buffer"
    );
    let mut writable = match (way, writable_source) {
        (Way::Concat, false) => Vec::new(),
        _ => slots,
    };
    if writable_source || way == Way::Concat {
        writable.push((tensor.buffer, b.src.clone()));
    }
    for (i, (a, ra)) in writable.iter().enumerate() {
        for (b2, rb) in &writable[i + 1..] {
            let overlap = ra.start < rb.end && rb.start < ra.end;
            assert!(
                a != b2 || !overlap,
                "writable storage bindings alias: {ra:?} and {rb:?} of buffer {a}"
            );
        }
    }
}
