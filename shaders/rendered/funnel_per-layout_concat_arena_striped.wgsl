// Rendered by tests/rendered_wgsl.rs: kernel funnel (per-layout form), striped lanes, outputs arena,
// the concat mirroring the split of uint8 [2048, 4097] on axis 1 into [2048, 2049] (the form's first sample).

// Kernel funnel, outputs arena, 1 destination slot(s).
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
    entries: array<Entry, 2>,
}

@group(0) @binding(0) var<uniform> table: Table;
@group(0) @binding(1) var<storage, read_write> src_vec4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> dst_vec4_0: array<vec4<u32>>;

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
// Moves unit `d` of slot 0 into unit `s` of the source (a concat:
// the same units, the other way).
fn move_0(site: u32, d: u32, s: u32) {
    st_src(site, s, ld_dst_0(site, d));
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

// Where 128 bits start inside two consecutive source vec4s: whole words,
// then bits.
struct Shift {
    words: u32,
    bits: u32,
}

// Where source bit `bit` lies inside its vec4.
fn shift_at(bit: u32) -> Shift {
    return Shift((bit >> 5u) & 3u, bit & 31u);
}

// The 128 bits of the 256 in a:b (a first) that start `shift` into a. The
// branches depend only on the shift, which is the same for every unit of a
// run, so lanes working on one run never diverge.
fn funnel_by(a: vec4<u32>, b: vec4<u32>, shift: Shift) -> vec4<u32> {
    var x0 = a;
    var x1 = b;
    if (shift.words >= 2u) {
        x0 = vec4<u32>(a.z, a.w, b.x, b.y);
        x1 = vec4<u32>(b.z, b.w, 0u, 0u);
    }
    if ((shift.words & 1u) != 0u) {
        x0 = vec4<u32>(x0.y, x0.z, x0.w, x1.x);
        x1 = vec4<u32>(x1.y, x1.z, x1.w, 0u);
    }
    if (shift.bits == 0u) {
        return x0;
    }
    let next = vec4<u32>(x0.y, x0.z, x0.w, x1.x);
    return (x0 >> vec4<u32>(shift.bits)) | (next << vec4<u32>(32u - shift.bits));
}

// The 128 source bits from bit `bit`. Both vec4s are loaded, the second
// clamped to the binding (it is used only when `bit` does not start a vec4,
// and then it lies in the binding).
fn src_bits_128(bit: u32) -> vec4<u32> {
    let at = bit >> 7u;
    let next = min(at + 1u, arrayLength(&src_vec4) - 1u);
    return funnel_by(ld_src(0u, at), ld_src(1u, next), shift_at(bit));
}

// The low `n` bits (0..=128) of a 128-bit value, the rest zero.
fn low_bits(v: vec4<u32>, n: u32) -> vec4<u32> {
    let base = vec4<u32>(0u, 32u, 64u, 96u);
    let have = select(vec4<u32>(0u), vec4<u32>(n) - base, vec4<u32>(n) > base);
    let partial = (vec4<u32>(1u) << min(have, vec4<u32>(31u))) - vec4<u32>(1u);
    return v & select(partial, vec4<u32>(0xFFFFFFFFu), have >= vec4<u32>(32u));
}

// A 128-bit value shifted up by `n` bits (0..128), zeros shifted in.
fn shift_up(v: vec4<u32>, n: u32) -> vec4<u32> {
    let words = n >> 5u;
    let b = n & 31u;
    let x = select(v, vec4<u32>(0u, v.x, v.y, v.z), (words & 1u) != 0u);
    let y = select(x, vec4<u32>(0u, 0u, x.x, x.y), (words & 2u) != 0u);
    let prev = vec4<u32>(0u, y.x, y.y, y.z);
    return select((y << vec4<u32>(b)) | (prev >> vec4<u32>(32u - b)), y, b == 0u);
}

// 128 bits of slot 0 from bit `p`: both vec4s loaded, the second
// clamped to the binding (it is used only where the bits cross into it,
// and then it lies in the binding).
fn piece_bits_0(p: u32) -> vec4<u32> {
    let at = p >> 7u;
    let next = min(at + 1u, arrayLength(&dst_vec4_0) - 1u);
    return funnel_by(ld_dst_0(2u, at), ld_dst_0(3u, next), shift_at(p));
}
// 128 bits of piece `j`'s slot from bit `p`.
fn piece_bits(j: u32, p: u32) -> vec4<u32> {
    {
        return piece_bits_0(p);
    }
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
    let e0 = bound_0(table.entries[0u]);
    let e1 = bound_0(table.entries[1u]);
    // The vec4's first bit: its row, and its column in the row.
    let y = g * 128u;
    let row = y / 32776u;
    let col = y % 32776u;
    // The run that holds the column: its piece, where it starts in the
    // row, its length and its piece's first bit.
    var j = 0u;
    var start = 0u;
    var run = 0u;
    var base = 0u;
    if (col < 16384u) {
        j = 0u;
        start = 0u;
        run = 16384u;
        base = e0.dst_unit * 128u;
    }
    else {
        j = 1u;
        start = 16384u;
        run = 16392u;
        base = e1.dst_unit * 128u;
    }

    // `n`: bits of the vec4 filled, from the column to the run's end.
    var n = start + run - col;
    var v = piece_bits(j, base + row * run + col - start);
    // The runs after it, while the vec4 has room: piece `k` in row `r`.
    var k = j;
    var r = row;
    if (n < 128u) {
        k = k + 1u;
        if (k == 2u) {
            k = 0u;
            r = r + 1u;
        }
        // Run `k`'s length and its piece's first bit, picked by selects.
        let k_run = select(16384u, 16392u, k == 1u);
        let w = piece_bits(k, (select(e0.dst_unit, e1.dst_unit, k == 1u)) * 128u + r * k_run);
        v = low_bits(v, n) | shift_up(w, n);
        n = n + k_run;
    }
    st_src(4u, g + source_shift_bits() / 128u, v);
}
