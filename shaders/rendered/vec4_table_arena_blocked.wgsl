// Rendered by tests/rendered_wgsl.rs: kernel vec4 (table form), blocked lanes, outputs arena,
// split: float [1024, 4096] on axis 1 into [1024, 1024, 1024, 1024] (the form's first sample).

// Kernel vec4, outputs arena, 1 destination slot(s).
const WORKGROUP_SIZE: u32 = 256u;
const UNIT_BITS: u32 = 128u;
const UNITS_PER_INVOCATION: u32 = 8u;
const FLAG_PAD: u32 = 1u;
const FLAG_ALIGNED: u32 = 2u;
const FLAG_SKIP: u32 = 4u;

struct Entry {
    first_invocation: u32,
    dst_unit: u32,
    first_bit: u32,
    len_bits: u32,
    run_bits: u32,
    block_bits: u32,
    run_phase_bits: u32,
    src_bit: u32,
    flags: u32,
    dst_slot: u32,
    units_per_invocation: u32,
    window_units: u32,
}

struct Table {
    invocations: u32,
    entry_count: u32,
    source_window_units: u32,
    padding: u32,
    entries: array<Entry>,
}

@group(0) @binding(0) var<storage, read> table: Table;
@group(0) @binding(1) var<storage, read> src_vec4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst_vec4_0: array<vec4<u32>>;

// The caller's offsets need not be multiples of the binding alignment:
// each binding starts at its offset aligned down and ends where its window
// ends, so the shift is the binding's length less the window's units that
// the table holds. Tables depend on the plan alone, never on the offsets.
// This module's bindings start at the caller's offsets: no shift.

// Bits the source binding starts before the source window.
fn source_shift_bits() -> u32 {
    return 0u;
}

// Units slot 0's binding starts before a window of `window_units`.
fn dst_shift_0(window_units: u32) -> u32 {
    return 0u;
}

// Entry `e` at this dispatch's bindings, for slot 0.
fn bound_0(e: Entry) -> Entry {
    var b = e;
    b.src_bit = e.src_bit + source_shift_bits();
    b.dst_unit = e.dst_unit + dst_shift_0(e.window_units);
    return b;
}

// Every load and store of the module's kernel goes through these accessors,
// each call site numbered (`site`), so that the module's trace variant can
// record what every invocation touches (src/plan/coalescing.rs); elsewhere they
// are plain accesses that the compilers inline.
fn ld_src(site: u32, i: u32) -> vec4<u32> {
    return src_vec4[i];
}
// Source word `w` (of a vec4 source).
fn ld_src_word(site: u32, w: u32) -> u32 {
    return src_vec4[w >> 2u][w & 3u];
}
fn ld_dst_0(site: u32, i: u32) -> vec4<u32> {
    return dst_vec4_0[i];
}
fn st_dst_0(site: u32, i: u32, v: vec4<u32>) {
    dst_vec4_0[i] = v;
}
// Moves unit `s` of the source into unit `d` of slot 0 (a split).
fn move_0(site: u32, d: u32, s: u32) {
    st_dst_0(site, d, ld_src(site, s));
}

// The invocation's index in the dispatch (a 2-D grid past 65535 workgroups).
fn invocation_index(wid: vec3<u32>, groups: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * groups.x + wid.x) * WORKGROUP_SIZE + lid.x;
}

// True when this dispatch writes table entry `j`: FLAG_SKIP leaves it to
// another dispatch of the pass (where two destinations' bindings would
// overlap in one buffer).
fn writes(j: u32) -> bool {
    return (table.entries[j].flags & FLAG_SKIP) == 0u;
}

fn split_vec4_0(e: Entry, i: u32) {
    let first = i * e.units_per_invocation;
    let last = min(first + e.units_per_invocation, e.len_bits >> 7u);
    if (first >= last) {
        return;
    }
    let run = e.run_bits >> 7u;
    let block = e.block_bits >> 7u;
    let q = first + (e.run_phase_bits >> 7u);
    var col = q % run;
    var src = (e.src_bit >> 7u) + (q / run) * block + col;
    for (var w = first; w < last; w++) {
        move_0(0u, e.dst_unit + w, src);
        col += 1u;
        src += 1u;
        if (col == run) {
            col = 0u;
            src += block - run;
        }
    }
}

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

@compute @workgroup_size(WORKGROUP_SIZE)
fn split(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    if (g >= table.invocations) {
        return;
    }
    let e = bound_0(table.entries[find_entry(g)]);
    split_vec4_0(e, g - e.first_invocation);
}
