// Rendered by tests/rendered_wgsl.rs: kernel funnel (per-layout form), blocked lanes, outputs separate,
// split: uint8 [2048, 4097] on axis 1 into [2048, 2049] (the form's first sample).

// Kernel funnel, outputs separate, 2 destination slot(s).
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
@group(0) @binding(1) var<storage, read> src_vec4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst_vec4_0: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> dst_vec4_1: array<vec4<u32>>;

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
fn st_dst_0(site: u32, i: u32, v: vec4<u32>) {
    dst_vec4_0[i] = v;
}
fn st_dst_1(site: u32, i: u32, v: vec4<u32>) {
    dst_vec4_1[i] = v;
}
// Moves unit `s` of the source into unit `d` of slot 0 (a split).
fn move_0(site: u32, d: u32, s: u32) {
    st_dst_0(site, d, ld_src(site, s));
}
// Moves unit `s` of the source into unit `d` of slot 1 (a split).
fn move_1(site: u32, d: u32, s: u32) {
    st_dst_1(site, d, ld_src(site, s));
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
    let row = g / 16u;
    let part = g % 16u;
    let e0 = bound_0(table.entries[0u]);
    let e1 = bound_1(table.entries[1u]);
    {
        let e = e0;
        let r0 = row * 16384u;
        // Whole vec4s of this row: [first, end).
        let first = (r0 + 127u) >> 7u;
        let end = (r0 + 16384u) >> 7u;
        let u0 = first + part * 8u;
        // A stretch that may lie wholly past the row's end (every part but
        // the first of a run of one vec4, as YOLOv5's box) is skipped, its
        // loads too: lavapipe skips the memory operations of masked lanes,
        // as a GPU does (YOLOv5 0.93-0.97 of a copy before, 0.98-1.03
        // after). Where no stretch can be empty the test is `true`.
        if (true) {
            let s = 0u + source_shift_bits() + row * 32776u + u0 * 128u - r0;
            let shift = shift_at(s);
            let at = s >> 7u;
            let v0 = ld_src(2u, at);
            let v1 = ld_src(3u, at + 1u);
            if (u0 + 0u < end) {
                st_dst_0(4u, e.dst_unit + u0 + 0u, funnel_by(v0, v1, shift));
            }
            let v2 = ld_src(5u, at + 2u);
            if (u0 + 1u < end) {
                st_dst_0(6u, e.dst_unit + u0 + 1u, funnel_by(v1, v2, shift));
            }
            let v3 = ld_src(7u, at + 3u);
            if (u0 + 2u < end) {
                st_dst_0(8u, e.dst_unit + u0 + 2u, funnel_by(v2, v3, shift));
            }
            let v4 = ld_src(9u, at + 4u);
            if (u0 + 3u < end) {
                st_dst_0(10u, e.dst_unit + u0 + 3u, funnel_by(v3, v4, shift));
            }
            let v5 = ld_src(11u, at + 5u);
            if (u0 + 4u < end) {
                st_dst_0(12u, e.dst_unit + u0 + 4u, funnel_by(v4, v5, shift));
            }
            let v6 = ld_src(13u, at + 6u);
            if (u0 + 5u < end) {
                st_dst_0(14u, e.dst_unit + u0 + 5u, funnel_by(v5, v6, shift));
            }
            let v7 = ld_src(15u, at + 7u);
            if (u0 + 6u < end) {
                st_dst_0(16u, e.dst_unit + u0 + 6u, funnel_by(v6, v7, shift));
            }
            let v8 = ld_src(17u, at + 8u);
            if (u0 + 7u < end) {
                st_dst_0(18u, e.dst_unit + u0 + 7u, funnel_by(v7, v8, shift));
            }
        }
    }
    {
        let e = e1;
        let r0 = row * 16392u;
        // Whole vec4s of this row: [first, end).
        let first = (r0 + 127u) >> 7u;
        let end = (r0 + 16392u) >> 7u;
        let u0 = first + part * 8u;
        // A stretch that may lie wholly past the row's end (every part but
        // the first of a run of one vec4, as YOLOv5's box) is skipped, its
        // loads too: lavapipe skips the memory operations of masked lanes,
        // as a GPU does (YOLOv5 0.93-0.97 of a copy before, 0.98-1.03
        // after). Where no stretch can be empty the test is `true`.
        if (true) {
            let s = 16384u + source_shift_bits() + row * 32776u + u0 * 128u - r0;
            let shift = shift_at(s);
            let at = s >> 7u;
            let v0 = ld_src(19u, at);
            let v1 = ld_src(20u, at + 1u);
            if (u0 + 0u < end) {
                st_dst_1(21u, e.dst_unit + u0 + 0u, funnel_by(v0, v1, shift));
            }
            let v2 = ld_src(22u, at + 2u);
            if (u0 + 1u < end) {
                st_dst_1(23u, e.dst_unit + u0 + 1u, funnel_by(v1, v2, shift));
            }
            let v3 = ld_src(24u, at + 3u);
            if (u0 + 2u < end) {
                st_dst_1(25u, e.dst_unit + u0 + 2u, funnel_by(v2, v3, shift));
            }
            let v4 = ld_src(26u, at + 4u);
            if (u0 + 3u < end) {
                st_dst_1(27u, e.dst_unit + u0 + 3u, funnel_by(v3, v4, shift));
            }
            let v5 = ld_src(28u, at + 5u);
            if (u0 + 4u < end) {
                st_dst_1(29u, e.dst_unit + u0 + 4u, funnel_by(v4, v5, shift));
            }
            let v6 = ld_src(30u, at + 6u);
            if (u0 + 5u < end) {
                st_dst_1(31u, e.dst_unit + u0 + 5u, funnel_by(v5, v6, shift));
            }
            let v7 = ld_src(32u, at + 7u);
            if (u0 + 6u < end) {
                st_dst_1(33u, e.dst_unit + u0 + 6u, funnel_by(v6, v7, shift));
            }
            let v8 = ld_src(34u, at + 8u);
            if (u0 + 7u < end) {
                st_dst_1(35u, e.dst_unit + u0 + 7u, funnel_by(v7, v8, shift));
            }
        }
    }
    // The vec4s that straddle two rows (one per row and output whose run is
    // not whole vec4s) are shared out among a row's invocations: invocation
    // `part` writes straddle `part + 0`, if there is one. Only the
    // writers load (lavapipe runs the rest of the code in every lane).
    {
        let c = part + 0u;
        let run = 16392u;
        let e = table.entries[1u];
        let r0 = row * run;
        // The straddling vec4 x: its low `head` bits end the previous
        // row's run, the rest start this row's.
        let x = r0 >> 7u;
        let head = r0 & 127u;
        if (c < 1u && row > 0u && head != 0u) {
            let run_src = e.src_bit + source_shift_bits() + row * 32776u;
            let tail = src_bits_128(run_src - 32776u + run - head);
            let next = src_bits_128(run_src - head);
            let low = low_bits(vec4<u32>(0xFFFFFFFFu), head);
            let value = (tail & low) | (next & ~low);
            st_dst_1(36u, e.dst_unit + dst_shift_1(e.window_units) + x, value);
        }
    }

}
