// Rendered by tests/rendered_wgsl.rs: kernel row_blocks (per-layout form), blocked lanes, outputs arena,
// split: float16 [512, 6] on axis 1 into [1, 2, 3] (the form's first sample).

// Kernel row_blocks, outputs arena, 1 destination slot(s).
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
    // 8 input rows per block.
    let base = ((table.entries[0u].src_bit + source_shift_bits() - 0u) >> 7u)
        + g * 6u;
    let s0 = ld_src(0u, base + 0u);
    let s1 = ld_src(1u, base + 1u);
    let s2 = ld_src(2u, base + 2u);
    let s3 = ld_src(3u, base + 3u);
    let s4 = ld_src(4u, base + 4u);
    let s5 = ld_src(5u, base + 5u);
    {
        let d0 = table.entries[0u].dst_unit
            + dst_shift_0(table.entries[0u].window_units) + g * 1u;
        st_dst_0(6u, d0 + 0u, vec4<u32>((s0.x & 0xffffu) | ((s0.w & 0xffffu) << 16u), (s1.z & 0xffffu) | ((s2.y & 0xffffu) << 16u), (s3.x & 0xffffu) | ((s3.w & 0xffffu) << 16u), (s4.z & 0xffffu) | ((s5.y & 0xffffu) << 16u)));
    }
    {
        let d1 = table.entries[1u].dst_unit
            + dst_shift_0(table.entries[1u].window_units) + g * 2u;
        st_dst_0(7u, d1 + 0u, vec4<u32>((s0.x >> 16u) | ((s0.y & 0xffffu) << 16u), (s0.w >> 16u) | ((s1.x & 0xffffu) << 16u), (s1.z >> 16u) | ((s1.w & 0xffffu) << 16u), (s2.y >> 16u) | ((s2.z & 0xffffu) << 16u)));
        st_dst_0(8u, d1 + 1u, vec4<u32>((s3.x >> 16u) | ((s3.y & 0xffffu) << 16u), (s3.w >> 16u) | ((s4.x & 0xffffu) << 16u), (s4.z >> 16u) | ((s4.w & 0xffffu) << 16u), (s5.y >> 16u) | ((s5.z & 0xffffu) << 16u)));
    }
    {
        let d2 = table.entries[2u].dst_unit
            + dst_shift_0(table.entries[2u].window_units) + g * 3u;
        st_dst_0(9u, d2 + 0u, vec4<u32>((s0.y >> 16u) | ((s0.z & 0xffffu) << 16u), (s0.z >> 16u) | ((s1.x >> 16u) << 16u), s1.y, (s1.w >> 16u) | ((s2.x & 0xffffu) << 16u)));
        st_dst_0(10u, d2 + 1u, vec4<u32>((s2.x >> 16u) | ((s2.z >> 16u) << 16u), s2.w, (s3.y >> 16u) | ((s3.z & 0xffffu) << 16u), (s3.z >> 16u) | ((s4.x >> 16u) << 16u)));
        st_dst_0(11u, d2 + 2u, vec4<u32>(s4.y, (s4.w >> 16u) | ((s5.x & 0xffffu) << 16u), (s5.x >> 16u) | ((s5.z >> 16u) << 16u), s5.w));
    }

}
