// Rendered by tests/rendered_wgsl.rs: kernel row_blocks (per-layout form), striped lanes, outputs separate,
// the concat mirroring the split of float16 [512, 6] on axis 1 into [1, 2, 3] (the first sample of its looped path).

// Kernel row_blocks, outputs separate, 3 destination slot(s).
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
    entries: array<Entry, 3>,
}

@group(0) @binding(0) var<uniform> table: Table;
@group(0) @binding(1) var<storage, read_write> src_vec4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> dst_vec4_0: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> dst_vec4_1: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> dst_vec4_2: array<vec4<u32>>;

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

// The tensor's words of a workgroup's blocks, assembled from the pieces.
var<workgroup> tile_words: array<atomic<u32>, 2040>;
// Puts a piece's word (bits [q, q + 32) of its share of the block at tile
// bit t) in place: runs of `run` bits, one every `block` bits from bit
// `offset`, or-ed into the cleared tile field by field.
fn block_put(t: u32, q: u32, run: u32, block: u32, offset: u32, value: u32) {
    var p = q;
    loop {
        if (p >= q + 32u) {
            break;
        }
        let row = p / run;
        let col = p - row * run;
        let s = t + row * block + offset + col;
        let len = min(min(q + 32u - p, run - col), 32u - (s & 31u));
        let mask = select((1u << len) - 1u, 0xffffffffu, len == 32u);
        atomicOr(&tile_words[s >> 5u], ((value >> (p - q)) & mask) << (s & 31u));
        p = p + len;
    }
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
    // 85 blocks of 8 rows (6 vec4s each) per workgroup,
    // assembled in workgroup memory from the pieces and stored in loops.
    // The workgroup's tile: its first block, the blocks of the dispatch
    // (entry 0 counts them), its first vec4 in the tensor, its blocks.
    let lane = lid.x;
    let tile0 = (wid.y * groups.x + wid.x) * 85u;
    let blocks = table.entries[0u].len_bits / 128u;
    let base = ((table.entries[0u].src_bit + source_shift_bits() - 0u) >> 7u)
        + tile0 * 6u;
    let here = min(85u, blocks - min(tile0, blocks));
    for (var i = lane; i < 2040u; i += 256u) {
        atomicStore(&tile_words[i], 0u);
    }
    workgroupBarrier();
    // Every piece's vec4s of the tile laid end to end, piece by piece:
    // lane i loads vec4 i of that stretch from the piece that holds it and
    // puts its words in place.
    for (var i = lane; i < here * 6u; i += 256u) {
        if (i < here * 1u) {
            {
                // Vec4 k of piece 0's share of the tile: block k / 1,
                // its bits at q.
                let k = i - here * 0u;
                let t = (k / 1u) * 768u;
                let q = (k % 1u) * 128u;
                let d = table.entries[0u].dst_unit
                    + dst_shift_0(table.entries[0u].window_units) + tile0 * 1u;
                let v = ld_dst_0(0u, d + k);
                block_put(t, q, 16u, 96u, 0u, v.x);
                block_put(t, q + 32u, 16u, 96u, 0u, v.y);
                block_put(t, q + 64u, 16u, 96u, 0u, v.z);
                block_put(t, q + 96u, 16u, 96u, 0u, v.w);
            }
        }
        else if (i < here * 3u) {
            {
                // Vec4 k of piece 1's share of the tile: block k / 2,
                // its bits at q.
                let k = i - here * 1u;
                let t = (k / 2u) * 768u;
                let q = (k % 2u) * 128u;
                let d = table.entries[1u].dst_unit
                    + dst_shift_1(table.entries[1u].window_units) + tile0 * 2u;
                let v = ld_dst_1(1u, d + k);
                block_put(t, q, 32u, 96u, 16u, v.x);
                block_put(t, q + 32u, 32u, 96u, 16u, v.y);
                block_put(t, q + 64u, 32u, 96u, 16u, v.z);
                block_put(t, q + 96u, 32u, 96u, 16u, v.w);
            }
        }
        else {
            {
                // Vec4 k of piece 2's share of the tile: block k / 3,
                // its bits at q.
                let k = i - here * 3u;
                let t = (k / 3u) * 768u;
                let q = (k % 3u) * 128u;
                let d = table.entries[2u].dst_unit
                    + dst_shift_2(table.entries[2u].window_units) + tile0 * 3u;
                let v = ld_dst_2(2u, d + k);
                block_put(t, q, 48u, 96u, 48u, v.x);
                block_put(t, q + 32u, 48u, 96u, 48u, v.y);
                block_put(t, q + 64u, 48u, 96u, 48u, v.z);
                block_put(t, q + 96u, 48u, 96u, 48u, v.w);
            }
        }
    }
    workgroupBarrier();
    for (var i = lane; i < here * 6u; i += 256u) {
        let w = 4u * i;
        st_src(3u, base + i, vec4<u32>(
            atomicLoad(&tile_words[w]),
            atomicLoad(&tile_words[w + 1u]),
            atomicLoad(&tile_words[w + 2u]),
            atomicLoad(&tile_words[w + 3u])));
    }
}
