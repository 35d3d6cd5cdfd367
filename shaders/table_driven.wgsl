// The entry-point bodies of the table-driven kernels (words, vec4, funnel),
// whose per-slot functions `<family>_<slot>(e, i)` do invocation `i`'s share
// of entry `e`: units [i * n, (i + 1) * n) with n = e.units_per_invocation
// (8 with blocked lanes, 1 with striped ones: consecutive invocations on
// consecutive units).
//
// Arena passes: each invocation works on the entry whose invocation range
// holds it (entries are sorted by first invocation; every entry writes the
// one arena binding, slot 0). Separate destinations, blocked: entry k
// writes slot k, and every invocation does its share of every entry, so
// none chooses a destination at run time. Separate destinations, striped:
// entry k owns a range of invocations, as in an arena, and writes slot k. (WGSL cannot index a set of bindings, and on
// lavapipe a switch on the slot runs every case under masks: 3 slots cost
// 11 %, 30 slots 58 % of a copy. Each slot's code is instantiated with its
// binding instead.) A slot the pass does not use, or an entry this
// dispatch leaves to another (FLAG_SKIP), costs one uniform test.

//#fragment find_entry
// The last entry whose first invocation is <= g (binary search; entries are
// sorted and a dispatched pass has at least one).
fn find_entry(g: u32) -> u32 {
    var lo = 0u;
    var hi = table.entry_count - 1u;
    while (lo < hi) {
        let mid = (lo + hi + 1u) / 2u;
        if (table.entries[mid].first_invocation <= g) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

//#fragment arena_body
    let e = bound_0(table.entries[find_entry(g)]);
    {{family}}_0(e, g - e.first_invocation);
//#fragment slot_call
    if ({{slot}}u < table.entry_count{{written}}) {
        {{family}}_{{slot}}(bound_{{slot}}(table.entries[{{slot}}u]), g);
    }
//#fragment slot_range_call
    if ({{slot}}u < table.entry_count{{written}}) {
        let e = bound_{{slot}}(table.entries[{{slot}}u]);
        let i = g - e.first_invocation;
        let units = (e.first_bit + e.len_bits + UNIT_BITS - 1u) / UNIT_BITS;
        if (g >= e.first_invocation && i * e.units_per_invocation < units) {
            {{family}}_{{slot}}(e, i);
        }
    }
