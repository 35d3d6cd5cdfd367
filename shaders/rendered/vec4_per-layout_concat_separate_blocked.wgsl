// Rendered by tests/rendered_wgsl.rs: kernel vec4 (per-layout form), blocked lanes, outputs separate,
// the concat mirroring the split of float [1024, 4096] on axis 1 into [1024, 1024, 1024, 1024] (the form's first sample).

// Kernel vec4, outputs separate, 4 destination slot(s).
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
    entries: array<Entry, 4>,
}

@group(0) @binding(0) var<uniform> table: Table;
@group(0) @binding(1) var<storage, read_write> src_vec4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> dst_vec4_0: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> dst_vec4_1: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> dst_vec4_2: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> dst_vec4_3: array<vec4<u32>>;

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

// Units slot 1's binding starts before a window of `window_units`.
fn dst_shift_1(window_units: u32) -> u32 {
    return 0u;
}

// Entry `e` at this dispatch's bindings, for slot 1.
fn bound_1(e: Entry) -> Entry {
    var b = e;
    b.src_bit = e.src_bit + source_shift_bits();
    b.dst_unit = e.dst_unit + dst_shift_1(e.window_units);
    return b;
}

// Units slot 2's binding starts before a window of `window_units`.
fn dst_shift_2(window_units: u32) -> u32 {
    return 0u;
}

// Entry `e` at this dispatch's bindings, for slot 2.
fn bound_2(e: Entry) -> Entry {
    var b = e;
    b.src_bit = e.src_bit + source_shift_bits();
    b.dst_unit = e.dst_unit + dst_shift_2(e.window_units);
    return b;
}

// Units slot 3's binding starts before a window of `window_units`.
fn dst_shift_3(window_units: u32) -> u32 {
    return 0u;
}

// Entry `e` at this dispatch's bindings, for slot 3.
fn bound_3(e: Entry) -> Entry {
    var b = e;
    b.src_bit = e.src_bit + source_shift_bits();
    b.dst_unit = e.dst_unit + dst_shift_3(e.window_units);
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
fn ld_dst_1(site: u32, i: u32) -> vec4<u32> {
    return dst_vec4_1[i];
}
fn ld_dst_2(site: u32, i: u32) -> vec4<u32> {
    return dst_vec4_2[i];
}
fn ld_dst_3(site: u32, i: u32) -> vec4<u32> {
    return dst_vec4_3[i];
}
// Moves unit `d` of slot 0 into unit `s` of the source (a concat:
// the same units, the other way).
fn move_0(site: u32, d: u32, s: u32) {
    st_src(site, s, ld_dst_0(site, d));
}
// Moves unit `d` of slot 1 into unit `s` of the source (a concat:
// the same units, the other way).
fn move_1(site: u32, d: u32, s: u32) {
    st_src(site, s, ld_dst_1(site, d));
}
// Moves unit `d` of slot 2 into unit `s` of the source (a concat:
// the same units, the other way).
fn move_2(site: u32, d: u32, s: u32) {
    st_src(site, s, ld_dst_2(site, d));
}
// Moves unit `d` of slot 3 into unit `s` of the source (a concat:
// the same units, the other way).
fn move_3(site: u32, d: u32, s: u32) {
    st_src(site, s, ld_dst_3(site, d));
}
// Writes unit `i` of the source binding (a concat writes the tensor).
fn st_src(site: u32, i: u32, v: vec4<u32>) {
    src_vec4[i] = v;
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
    let row = g / 128u;
    let part = g % 128u;
    let src_row = source_shift_bits() / UNIT_BITS + row * 1024u;
    let e0 = bound_0(table.entries[0u]);
    let e1 = bound_1(table.entries[1u]);
    let e2 = bound_2(table.entries[2u]);
    let e3 = bound_3(table.entries[3u]);
    {
        let u0 = part * 2u;
        let src = src_row + 0u + u0;
        let dst = e0.dst_unit + row * 256u + u0;
        move_0(0u, dst + 0u, src + 0u);
        move_0(1u, dst + 1u, src + 1u);
    }
    {
        let u0 = part * 2u;
        let src = src_row + 256u + u0;
        let dst = e1.dst_unit + row * 256u + u0;
        move_1(2u, dst + 0u, src + 0u);
        move_1(3u, dst + 1u, src + 1u);
    }
    {
        let u0 = part * 2u;
        let src = src_row + 512u + u0;
        let dst = e2.dst_unit + row * 256u + u0;
        move_2(4u, dst + 0u, src + 0u);
        move_2(5u, dst + 1u, src + 1u);
    }
    {
        let u0 = part * 2u;
        let src = src_row + 768u + u0;
        let dst = e3.dst_unit + row * 256u + u0;
        move_3(6u, dst + 0u, src + 0u);
        move_3(7u, dst + 1u, src + 1u);
    }

}
