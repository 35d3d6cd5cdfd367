// Rendered by tests/rendered_wgsl.rs: kernel row_blocks (per-layout form), striped lanes, outputs arena,
// split: float16 [256, 130] on axis 1 into [2, 128] (the first sample of its looped path).

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

// The staged blocks of a workgroup.
var<workgroup> tile: array<vec4<u32>, 455>;
// Bits [q, q + 32) of an output's share of the block staged from tile bit
// t, where its runs, the row and its offset are whole words: one staged
// word.
fn aligned_word(t: u32, q: u32, run: u32, block: u32, offset: u32) -> u32 {
    let row = q / run;
    let s = t + row * block + offset + q - row * run;
    return tile[s >> 7u][(s >> 5u) & 3u];
}
// Every invocation of the workgroup runs the body (it shares workgroup
// memory behind a barrier, so none may return early).
@compute @workgroup_size(WORKGROUP_SIZE)
fn split(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    // 7 blocks of 4 rows (65 vec4s each) per workgroup,
    // loaded and written in loops.
    // The workgroup's tile: its first block, the blocks of the dispatch
    // (entry 0 counts them), its first vec4 in the tensor, its blocks.
    let lane = lid.x;
    let tile0 = (wid.y * groups.x + wid.x) * 7u;
    let blocks = table.entries[0u].len_bits / 128u;
    let base = ((table.entries[0u].src_bit + source_shift_bits() - 0u) >> 7u)
        + tile0 * 65u;
    let here = min(7u, blocks - min(tile0, blocks));
    for (var i = lane; i < here * 65u; i += 256u) {
        tile[i] = ld_src(0u, base + i);
    }
    workgroupBarrier();
    // Every output's vec4s of the tile laid end to end, output by output:
    // lane i writes vec4 i of that stretch, into the output that holds it,
    // so that every lane works however narrow the outputs are.
    for (var i = lane; i < here * 65u; i += 256u) {
        if (i < here * 1u) {
            {
                // Vec4 k of output 0's share of the tile: block k / 1,
                // its bits from q.
                let k = i - here * 0u;
                let t = (k / 1u) * 8320u;
                let q = (k % 1u) * 128u;
                let d = table.entries[0u].dst_unit
                    + dst_shift_0(table.entries[0u].window_units) + tile0 * 1u;
                st_dst_0(1u, d + k, vec4<u32>(
                    aligned_word(t, q, 32u, 2080u, 0u),
                    aligned_word(t, q + 32u, 32u, 2080u, 0u),
                    aligned_word(t, q + 64u, 32u, 2080u, 0u),
                    aligned_word(t, q + 96u, 32u, 2080u, 0u)));
            }
        }
        else {
            {
                // Vec4 k of output 1's share of the tile: block k / 64,
                // its bits from q.
                let k = i - here * 1u;
                let t = (k / 64u) * 8320u;
                let q = (k % 64u) * 128u;
                let d = table.entries[1u].dst_unit
                    + dst_shift_0(table.entries[1u].window_units) + tile0 * 64u;
                st_dst_0(2u, d + k, vec4<u32>(
                    aligned_word(t, q, 2048u, 2080u, 32u),
                    aligned_word(t, q + 32u, 2048u, 2080u, 32u),
                    aligned_word(t, q + 64u, 2048u, 2080u, 32u),
                    aligned_word(t, q + 96u, 2048u, 2080u, 32u)));
            }
        }
    }
}
