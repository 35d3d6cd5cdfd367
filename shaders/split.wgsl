// wgpu-split gather shader. Each invocation moves UNITS_PER_INVOCATION
// consecutive units (u32 words or vec4<u32>) of one output chunk: it finds
// its chunk in the parameter table and copies raw source bits. Values never
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
// the source
// arrays src_words / src_vec4, one destination array per slot
// (dst_words_N / dst_vec4_N) and split_words_every_slot /
// split_vec4_every_slot. Entry and Table mirror plan::abi::TableEntry /
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

// Arena passes: each invocation works on the entry whose invocation range
// holds it (every entry writes the one arena binding, slot 0).
@compute @workgroup_size(WORKGROUP_SIZE)
fn split_words(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    if (g >= table.invocations) {
        return;
    }
    let e = table.entries[find_entry(g)];
    split_words_0(e, g - e.first_invocation);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn split_vec4(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    if (g >= table.invocations) {
        return;
    }
    let e = table.entries[find_entry(g)];
    split_vec4_0(e, g - e.first_invocation);
}

// Passes of separate destinations: entry k writes slot k, and every
// invocation does its share of every entry (generated: *_every_slot), so no
// invocation chooses a destination at run time.
@compute @workgroup_size(WORKGROUP_SIZE)
fn split_words_each(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    if (g < table.invocations) {
        split_words_every_slot(g);
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn split_vec4_each(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    if (g < table.invocations) {
        split_vec4_every_slot(g);
    }
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
// ---- per destination slot: end ----
