// wgpu-split gather shader. Each invocation moves up to UNITS_PER_INVOCATION
// consecutive units (u32 words or vec4<u32>) of one output chunk: it finds
// its chunk in the parameter table and copies raw source bits. Three
// kernels: words (any geometry), vec4 (everything 128-bit aligned) and the
// funnel (runs of at least 128 bits at any offset, shifted into vec4s). Values never
// pass through float registers, so NaN payloads, -0.0 and padding survive.
// No optional feature (f16, int64, subgroups).
//
// Each output chunk is a contiguous bit string: chunk bit q (counted from the
// chunk's run phase) comes from source bit
//     src_bit + (q / run_bits) * block_bits + q % run_bits.
//
// Generated from Rust and prepended (wgpu_split::plan::abi::wgsl_prelude):
// the constants (WORKGROUP_SIZE, UNITS_PER_INVOCATION, FLAG_*), the
// parameter table `table` (struct Table: a storage buffer for the arena, a
// uniform buffer of DESTINATION_SLOTS entries for separate destinations),
// the source arrays src_words / src_vec4, one destination array per slot
// (dst_words_N / dst_vec4_N), split_<kernel>_every_slot and the entry
// points of every kernel (split_<kernel> for the arena, split_<kernel>_each
// for separate destinations). Entry and Table mirror plan::abi::TableEntry /
// TableHeader; tests/shaders.rs checks every member's offset and size.

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
    pad0: u32,
}

fn invocation_index(wid: vec3<u32>, groups: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * groups.x + wid.x) * WORKGROUP_SIZE + lid.x;
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

// Source bits [bit, bit + count), count in 1..=32, in the low bits.
fn read_bits(bit: u32, count: u32) -> u32 {
    let word = bit >> 5u;
    let shift = bit & 31u;
    var value = src_words[word] >> shift;
    if (shift + count > 32u) {
        value |= src_words[word + 1u] << (32u - shift);
    }
    if (count < 32u) {
        value &= (1u << count) - 1u;
    }
    return value;
}

// The bits of destination word `w` the chunk owns, as a mask: [lo, hi)
// relative to the chunk's first unit, plus, for the output's last word, the
// tail past the output (written as zero). Other bits belong to another
// pass's chunk (a mid-word boundary in a multi-pass plan) and are kept.
fn owned_mask(e: Entry, w: u32, lo: u32, hi: u32) -> u32 {
    let word_start = w * 32u;
    let own_lo = lo - word_start;
    var own_hi = hi - word_start;
    if ((e.flags & FLAG_PAD) != 0u && hi == e.first_bit + e.len_bits) {
        own_hi = 32u;
    }
    let upper = select((1u << own_hi) - 1u, 0xFFFFFFFFu, own_hi == 32u);
    return upper & ~((1u << own_lo) - 1u);
}

// The value of destination word `w` bits [lo, hi) (relative to the chunk's
// first unit): segments, each inside one run, from the walk state
// (b, row, r), which it advances.
struct Walk {
    b: u32,
    row: u32,
    r: u32,
}

fn assemble_word(e: Entry, w: u32, walk: ptr<function, Walk>) -> u32 {
    let word_start = w * 32u;
    let hi = min(word_start + 32u, e.first_bit + e.len_bits);
    var value = 0u;
    loop {
        if ((*walk).b >= hi) {
            break;
        }
        let count = min(hi - (*walk).b, e.run_bits - (*walk).r);
        let bit = e.src_bit + (*walk).row * e.block_bits + (*walk).r;
        value |= read_bits(bit, count) << ((*walk).b - word_start);
        (*walk).b += count;
        (*walk).r += count;
        if ((*walk).r == e.run_bits) {
            (*walk).r = 0u;
            (*walk).row += 1u;
        }
    }
    return value;
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

// The 128 source bits from bit `bit`. Both vec4s are loaded: the second
// must lie in the binding unless `bit` starts a vec4.
fn src_bits_128(bit: u32) -> vec4<u32> {
    let at = bit >> 7u;
    return funnel_by(src_vec4[at], src_vec4[at + 1u], shift_at(bit));
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

// ---- per destination slot: begin ----
// Instantiated once per destination slot with SLOT_ID replaced by the slot
// number (plan::abi::wgsl_module), so that every store writes one binding
// directly. (A switch on the slot, per store or per invocation, runs every
// case under masks on lavapipe: 3 slots cost 11 %, 30 slots 58 % of a copy.)
// Each function does invocation `i`'s share of entry `e`: its units
// [i * n, (i + 1) * n) with n = e.units_per_invocation, if any.

// Word-aligned chunk: whole words from whole words, walking the run without
// dividing after the first word.
fn copy_aligned_words_SLOT_ID(e: Entry, first_word: u32, last_word: u32) {
    let run = e.run_bits >> 5u;
    let block = e.block_bits >> 5u;
    let q = first_word + (e.run_phase_bits >> 5u);
    var col = q % run;
    var src = (e.src_bit >> 5u) + (q / run) * block + col;
    for (var w = first_word; w < last_word; w++) {
        dst_words_SLOT_ID[e.dst_unit + w] = src_words[src];
        col += 1u;
        src += 1u;
        if (col == run) {
            col = 0u;
            src += block - run;
        }
    }
}

// Every word lies whole inside one run that starts at source bit s: a funnel
// shift over consecutive source words, one load per word.
fn copy_shifted_words_SLOT_ID(e: Entry, first_word: u32, last_word: u32, s: u32) {
    var index = s >> 5u;
    let shift = s & 31u;
    var current = src_words[index];
    for (var w = first_word; w < last_word; w++) {
        var value = current;
        if (shift != 0u) {
            let next = src_words[index + 1u];
            value = (current >> shift) | (next << (32u - shift));
            current = next;
        }
        dst_words_SLOT_ID[e.dst_unit + w] = value;
        index += 1u;
        if (shift == 0u && w + 1u < last_word) {
            current = src_words[index];
        }
    }
}

// The general case: each word assembled from segments (assemble_word) and
// written with the bits it owns (owned_mask), merging with the word's other
// bits where a chunk starts or ends mid-word.
fn assemble_words_SLOT_ID(e: Entry, first_word: u32, last_word: u32, walk0: Walk) {
    var walk = walk0;
    for (var w = first_word; w < last_word; w++) {
        let lo = walk.b;
        let value = assemble_word(e, w, &walk);
        let mask = owned_mask(e, w, lo, walk.b);
        let dst = e.dst_unit + w;
        if (mask == 0xFFFFFFFFu) {
            dst_words_SLOT_ID[dst] = value;
        } else {
            dst_words_SLOT_ID[dst] = (dst_words_SLOT_ID[dst] & ~mask) | value;
        }
    }
}

fn split_words_SLOT_ID(e: Entry, i: u32) {
    let end = e.first_bit + e.len_bits;
    let first_word = i * e.units_per_invocation;
    let last_word = min(first_word + e.units_per_invocation, (end + 31u) / 32u);
    if (first_word >= last_word) {
        return;
    }
    if ((e.flags & FLAG_ALIGNED) != 0u) {
        copy_aligned_words_SLOT_ID(e, first_word, last_word);
        return;
    }
    let b = max(first_word * 32u, e.first_bit);
    let q = b - e.first_bit + e.run_phase_bits;
    let walk = Walk(b, q / e.run_bits, q % e.run_bits);
    let span = (last_word - first_word) * 32u;
    if (b == first_word * 32u && b + span <= end && walk.r + span <= e.run_bits) {
        let s = e.src_bit + walk.row * e.block_bits + walk.r;
        copy_shifted_words_SLOT_ID(e, first_word, last_word, s);
        return;
    }
    assemble_words_SLOT_ID(e, first_word, last_word, walk);
}

// Every field is a multiple of 128 bits: whole vec4s from whole vec4s.
fn split_vec4_SLOT_ID(e: Entry, i: u32) {
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
        dst_vec4_SLOT_ID[e.dst_unit + w] = src_vec4[src];
        col += 1u;
        src += 1u;
        if (col == run) {
            col = 0u;
            src += block - run;
        }
    }
}
// Runs of at least 128 bits at any bit offset, into whole vec4 units. Inside
// a run the source bit offset of consecutive units differs by 128, so the
// funnel's shift is the same for the whole stretch (lanes of one run take
// the same branches) and each unit costs one new load: its `hi` is the next
// unit's `lo`. A unit that crosses the end of its run takes its tail from
// the next run's start.
fn split_funnel_SLOT_ID(e: Entry, i: u32) {
    let first = i * e.units_per_invocation;
    let last = min(first + e.units_per_invocation, e.len_bits >> 7u);
    let run = e.run_bits;
    let p = first * 128u + e.run_phase_bits;
    var row = p / run;
    var col = p % run;
    // Loads are clamped to the binding: past its end a funnel at a
    // whole-vec4 offset ignores `hi`.
    let last_src = arrayLength(&src_vec4) - 1u;
    var u = first;
    while (u < last) {
        let s = e.src_bit + row * e.block_bits + col;
        let shift = shift_at(s);
        // Whole units left inside this run, from `col`.
        let inside = min((run - col) >> 7u, last - u);
        var at = s >> 7u;
        var lo = src_vec4[at];
        for (var k = 0u; k < inside; k++) {
            at += 1u;
            let hi = src_vec4[min(at, last_src)];
            dst_vec4_SLOT_ID[e.dst_unit + u + k] = funnel_by(lo, hi, shift);
            lo = hi;
        }
        u += inside;
        col += inside << 7u;
        if (u >= last) {
            break;
        }
        // The unit that ends this run (head < 128 bits, or 0 when the run
        // ended on a unit) and begins the next.
        let head = run - col;
        row += 1u;
        col = 0u;
        if (head == 0u) {
            continue;
        }
        let v = funnel_by(lo, src_vec4[min(at + 1u, last_src)], shift);
        let t = e.src_bit + row * e.block_bits;
        let a = t >> 7u;
        let next = funnel_by(src_vec4[a], src_vec4[min(a + 1u, last_src)], shift_at(t));
        dst_vec4_SLOT_ID[e.dst_unit + u] = low_bits(v, head) | shift_up(next, head);
        col = 128u - head;
        u += 1u;
    }
}
// ---- per destination slot: end ----
