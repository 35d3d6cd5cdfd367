// wgpu-split gather shader: one invocation per output unit (a u32 word or a
// vec4<u32>) finds its output chunk in the parameter table and copies raw
// source bits. Values never pass through float registers, so NaN payloads,
// -0.0 and padding survive. No optional feature (f16, int64, subgroups).
//
// Each output chunk is a contiguous bit string: chunk bit q (counted from the
// chunk's run phase) comes from source bit
//     src_bit + (q / run_bits) * block_bits + q % run_bits.
// The table layout matches `plan::TableHeader` / `plan::TableEntry`.

struct Entry {
    first_invocation: u32,
    dst_unit: u32,
    first_bit: u32,
    len_bits: u32,
    run_bits: u32,
    block_bits: u32,
    run_phase: u32,
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

const WORKGROUP_SIZE: u32 = 256u;
const FLAG_PAD: u32 = 1u;
const FLAG_ALIGNED: u32 = 2u;

@group(0) @binding(0) var<storage, read> table: Table;
// split_words binds 1 and 2; split_vec4 binds 3 and 4.
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

@compute @workgroup_size(256)
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
    let w = g - e.first_invocation;
    let dst = e.dst_unit + w;
    if ((e.flags & FLAG_ALIGNED) != 0u) {
        // Whole words from whole words: one load, one store.
        let q = w * 32u + e.run_phase;
        let bit = e.src_bit + (q / e.run_bits) * e.block_bits + q % e.run_bits;
        dst_words[dst] = src_words[bit >> 5u];
        return;
    }
    // Assemble the word from segments, each inside one run.
    let word_start = w * 32u;
    let end = e.first_bit + e.len_bits;
    let lo = max(word_start, e.first_bit);
    let hi = min(word_start + 32u, end);
    var value = 0u;
    var b = lo;
    loop {
        if (b >= hi) {
            break;
        }
        let q = b - e.first_bit + e.run_phase;
        let r = q % e.run_bits;
        let count = min(hi - b, e.run_bits - r);
        value |= read_bits(e.src_bit + (q / e.run_bits) * e.block_bits + r, count) << (b - word_start);
        b += count;
    }
    // The bits this invocation owns: [lo, hi) of the word, plus the tail
    // after the output's last bit, which is written as zero.
    let own_lo = lo - word_start;
    var own_hi = hi - word_start;
    if ((e.flags & FLAG_PAD) != 0u && hi == end) {
        own_hi = 32u;
    }
    let upper = select((1u << own_hi) - 1u, 0xFFFFFFFFu, own_hi == 32u);
    let mask = upper & ~((1u << own_lo) - 1u);
    if (mask == 0xFFFFFFFFu) {
        dst_words[dst] = value;
    } else {
        // A chunk that starts or ends mid-word (only in multi-pass plans):
        // another pass owns the other bits of this word.
        dst_words[dst] = (dst_words[dst] & ~mask) | value;
    }
}

@compute @workgroup_size(256)
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
    let w = g - e.first_invocation;
    // Every field is a multiple of 128 bits here: work in vec4 units.
    let q = w + (e.run_phase >> 7u);
    let run = e.run_bits >> 7u;
    let unit = (e.src_bit >> 7u) + (q / run) * (e.block_bits >> 7u) + q % run;
    dst_vec4[e.dst_unit + w] = src_vec4[unit];
}
