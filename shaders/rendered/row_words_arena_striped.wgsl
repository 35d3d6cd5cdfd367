// Rendered by tests/rendered_wgsl.rs: kernel row_words (per-layout form), striped lanes, outputs arena,
// split: float [1024, 1025] on axis 1 into [512, 513] (the form's first sample).

// Kernel row_words, outputs arena, 1 destination slot(s).
const WORKGROUP_SIZE: u32 = 256u;
const UNIT_BITS: u32 = 32u;
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
    entries: array<Entry, 2>,
}

@group(0) @binding(0) var<uniform> table: Table;
@group(0) @binding(1) var<storage, read> src_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst_words_0: array<u32>;

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
fn ld_src(site: u32, i: u32) -> u32 {
    return src_words[i];
}
fn ld_dst_0(site: u32, i: u32) -> u32 {
    return dst_words_0[i];
}
fn st_dst_0(site: u32, i: u32, v: u32) {
    dst_words_0[i] = v;
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
    let row = g / 1025u;
    let w = g % 1025u;
    let e0 = bound_0(table.entries[0u]);
    let e1 = bound_0(table.entries[1u]);
    // The run that holds unit w (the row's runs laid end to end): its
    // entry, and where the unit lies in the input row and in its output.
    // The starts of runs come from the table, so that groups of one shape
    // share a module wherever their windows start. Then one access to the
    // tensor per lane, whichever run holds its unit: a warp's units of
    // several runs make one request, not one per run.
    var j = 0u;
    var s = 0u;
    var d = 0u;
    if (w < 512u) {
        j = 0u;
        s = row * 1025u + e0.src_bit / UNIT_BITS + w - 0u;
        d = e0.dst_unit + row * 512u + w - 0u;
    }
    else {
        j = 1u;
        s = row * 1025u + e1.src_bit / UNIT_BITS + w - 512u;
        d = e1.dst_unit + row * 513u + w - 512u;
    }
    let v = ld_src(0u, s);
    {
        st_dst_0(1u, d, v);
    }


}
