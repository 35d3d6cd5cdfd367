// Rendered by tests/rendered_wgsl.rs: kernel concat_words (per-layout form), blocked lanes, outputs separate,
// the concat mirroring the split of uint8 [256, 37] on axis 1 into [5, 32] (the form's first sample).

// Kernel concat_words, outputs separate, 2 destination slot(s).
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
@group(0) @binding(1) var<storage, read_write> src_words: array<u32>;
@group(0) @binding(2) var<storage, read> dst_words_0: array<u32>;
@group(0) @binding(3) var<storage, read> dst_words_1: array<u32>;

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
fn ld_src(site: u32, i: u32) -> u32 {
    return src_words[i];
}
fn ld_dst_0(site: u32, i: u32) -> u32 {
    return dst_words_0[i];
}
fn ld_dst_1(site: u32, i: u32) -> u32 {
    return dst_words_1[i];
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
// Writes unit `i` of the source binding (a concat writes the tensor).
fn st_src(site: u32, i: u32, v: u32) {
    src_words[i] = v;
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

// 32 bits of slot 0 from bit `p` (the second word clamped to the
// binding: it is used only where the bits cross into it).
fn piece_bits_0(p: u32) -> u32 {
    let i = p >> 5u;
    let s = p & 31u;
    let a = ld_dst_0(0u, i);
    if (s == 0u) {
        return a;
    }
    let b = ld_dst_0(1u, min(i + 1u, arrayLength(&dst_words_0) - 1u));
    return (a >> s) | (b << (32u - s));
}
// 32 bits of slot 1 from bit `p` (the second word clamped to the
// binding: it is used only where the bits cross into it).
fn piece_bits_1(p: u32) -> u32 {
    let i = p >> 5u;
    let s = p & 31u;
    let a = ld_dst_1(2u, i);
    if (s == 0u) {
        return a;
    }
    let b = ld_dst_1(3u, min(i + 1u, arrayLength(&dst_words_1) - 1u));
    return (a >> s) | (b << (32u - s));
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
    // Lane g owns word g of the window: word w of the binding, which
    // starts the shift (whole words) before the window.
    let w = g + source_shift_bits() / 32u;
    let src0 = table.entries[0u].src_bit;
    let rows = i32(table.entries[0u].len_bits / 40u);
    // The word's first bit, counted from piece 0's run in row 0.
    let y0 = i32(g * 32u) - i32(src0);
    var value = 0u;
    var mask = 0u;
    // Piece 0: 40 bits, 0 bits after piece 0's run in each 296-bit row.
    // At most 1 of its rows reach one word (the word and the run
    // span 32 + run bits of a row period), the first of them the first
    // whose run ends past the word's first bit.
    {
        let e = bound_0(table.entries[0u]);
        let delta = 0;
        let run = 40;
        let t = y0 - delta - run;
        let first = select(t / 296, (t - 296 + 1) / 296, t < 0) + 1;
        for (var k = 0; k < 1; k++) {
            let row = first + k;
            let start = row * 296 + delta;
            let lo = max(start, y0);
            let hi = min(start + run, y0 + 32);
            if (row >= 0 && row < rows && lo < hi) {
                let p = e.dst_unit * 32u + u32(row) * u32(run) + u32(lo - start);
                let n = u32(hi - lo);
                let ones = select((1u << n) - 1u, 0xFFFFFFFFu, n == 32u);
                value |= (piece_bits_0(p) & ones) << u32(lo - y0);
                mask |= ones << u32(lo - y0);
            }
        }
    }
    // Piece 1: 256 bits, 40 bits after piece 0's run in each 296-bit row.
    // At most 1 of its rows reach one word (the word and the run
    // span 32 + run bits of a row period), the first of them the first
    // whose run ends past the word's first bit.
    {
        let e = bound_1(table.entries[1u]);
        let delta = 40;
        let run = 256;
        let t = y0 - delta - run;
        let first = select(t / 296, (t - 296 + 1) / 296, t < 0) + 1;
        for (var k = 0; k < 1; k++) {
            let row = first + k;
            let start = row * 296 + delta;
            let lo = max(start, y0);
            let hi = min(start + run, y0 + 32);
            if (row >= 0 && row < rows && lo < hi) {
                let p = e.dst_unit * 32u + u32(row) * u32(run) + u32(lo - start);
                let n = u32(hi - lo);
                let ones = select((1u << n) - 1u, 0xFFFFFFFFu, n == 32u);
                value |= (piece_bits_1(p) & ones) << u32(lo - y0);
                mask |= ones << u32(lo - y0);
            }
        }
    }
    // The tensor's last word (this layout's last piece ends the row): its
    // bits past the tensor are zero. A word wholly past the tensor (the
    // lane past a tensor of whole words) is not the tensor's: not written.
    {
        let end = (rows - 1) * 296 + (296);
        if (end > y0 && end < y0 + 32) {
            let kept = u32(end - y0);
            let tail = select(0xFFFFFFFFu << kept, 0u, kept == 32u);
            mask |= tail;
            value &= ~tail;
        }
    }
    if (mask == 0xFFFFFFFFu) {
        st_src(4u, w, value);
    } else if (mask != 0u) {
        st_src(5u, w, (ld_src(6u, w) & ~mask) | value);
    }
}
