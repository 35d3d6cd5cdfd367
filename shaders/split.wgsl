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
// The constants (WORKGROUP_SIZE, UNITS_PER_INVOCATION, FLAG_*) are generated
// from Rust and prepended (wgpu_split::plan::abi::wgsl_constants); the
// structs mirror plan::TableHeader / plan::TableEntry, and tests/shaders.rs
// checks every member's offset and size against Rust.

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
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

struct Table {
    invocations: u32,
    entry_count: u32,
    pad0: u32,
    pad1: u32,
    entries: array<Entry>,
}

@group(0) @binding(0) var<storage, read> table: Table;
// split_words binds 1 and 2; split_vec4 binds 3 and 4 (plan::Kernel::bindings).
@group(0) @binding(1) var<storage, read> src_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst_words: array<u32>;
@group(0) @binding(3) var<storage, read> src_vec4: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> dst_vec4: array<vec4<u32>>;

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

// Word-aligned chunk: whole words from whole words, walking the run without
// dividing after the first word.
fn copy_aligned_words(e: Entry, first_word: u32, last_word: u32) {
    let run = e.run_bits >> 5u;
    let block = e.block_bits >> 5u;
    let q = first_word + (e.run_phase_bits >> 5u);
    var col = q % run;
    var src = (e.src_bit >> 5u) + (q / run) * block + col;
    for (var w = first_word; w < last_word; w++) {
        dst_words[e.dst_unit + w] = src_words[src];
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
fn copy_shifted_words(e: Entry, first_word: u32, last_word: u32, s: u32) {
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
        dst_words[e.dst_unit + w] = value;
        index += 1u;
        if (shift == 0u && w + 1u < last_word) {
            current = src_words[index];
        }
    }
}

// Writes the bits [lo, hi) of destination word `w` (bit positions relative
// to the chunk's first unit), keeping the word's other bits unless this is
// the output's last word, whose tail past the output is written as zero.
fn store_word_bits(e: Entry, w: u32, lo: u32, hi: u32, value: u32) {
    let word_start = w * 32u;
    let own_lo = lo - word_start;
    var own_hi = hi - word_start;
    if ((e.flags & FLAG_PAD) != 0u && hi == e.first_bit + e.len_bits) {
        own_hi = 32u;
    }
    let upper = select((1u << own_hi) - 1u, 0xFFFFFFFFu, own_hi == 32u);
    let mask = upper & ~((1u << own_lo) - 1u);
    let dst = e.dst_unit + w;
    if (mask == 0xFFFFFFFFu) {
        dst_words[dst] = value;
    } else {
        // A chunk that starts or ends mid-word (only in multi-pass plans):
        // another pass owns the other bits of this word.
        dst_words[dst] = (dst_words[dst] & ~mask) | value;
    }
}

// The general case: each word assembled from segments, each inside one run;
// (row, r) walks the runs incrementally from bit b after one division.
fn assemble_words(e: Entry, first_word: u32, last_word: u32, start: u32, row0: u32, r0: u32) {
    let end = e.first_bit + e.len_bits;
    var b = start;
    var row = row0;
    var r = r0;
    for (var w = first_word; w < last_word; w++) {
        let word_start = w * 32u;
        let lo = b;
        let hi = min(word_start + 32u, end);
        var value = 0u;
        loop {
            if (b >= hi) {
                break;
            }
            let count = min(hi - b, e.run_bits - r);
            value |= read_bits(e.src_bit + row * e.block_bits + r, count) << (b - word_start);
            b += count;
            r += count;
            if (r == e.run_bits) {
                r = 0u;
                row += 1u;
            }
        }
        store_word_bits(e, w, lo, hi, value);
    }
}

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
    let end = e.first_bit + e.len_bits;
    let first_word = (g - e.first_invocation) * UNITS_PER_INVOCATION;
    let last_word = min(first_word + UNITS_PER_INVOCATION, (end + 31u) / 32u);
    if ((e.flags & FLAG_ALIGNED) != 0u) {
        copy_aligned_words(e, first_word, last_word);
        return;
    }
    let b = max(first_word * 32u, e.first_bit);
    let q = b - e.first_bit + e.run_phase_bits;
    let row = q / e.run_bits;
    let r = q % e.run_bits;
    let span = (last_word - first_word) * 32u;
    if (b == first_word * 32u && b + span <= end && r + span <= e.run_bits) {
        copy_shifted_words(e, first_word, last_word, e.src_bit + row * e.block_bits + r);
        return;
    }
    assemble_words(e, first_word, last_word, b, row, r);
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
    // Every field is a multiple of 128 bits here: work in vec4 units.
    let first = (g - e.first_invocation) * UNITS_PER_INVOCATION;
    let last = min(first + UNITS_PER_INVOCATION, e.len_bits >> 7u);
    let run = e.run_bits >> 7u;
    let block = e.block_bits >> 7u;
    let q = first + (e.run_phase_bits >> 7u);
    var col = q % run;
    var src = (e.src_bit >> 7u) + (q / run) * block + col;
    for (var w = first; w < last; w++) {
        dst_vec4[e.dst_unit + w] = src_vec4[src];
        col += 1u;
        src += 1u;
        if (col == run) {
            col = 0u;
            src += block - run;
        }
    }
}
