// The word kernel: one u32 word per unit, for any geometry. A word is
// assembled from source bits with shifts where runs do not fall on word
// boundaries.
//
// Each output chunk is a contiguous bit string: chunk bit q (counted from
// the chunk's run phase) comes from source bit
//     src_bit + (q / run_bits) * block_bits + q % run_bits.

//#fragment helpers
// Source bits [bit, bit + count), count in 1..=32, in the low bits.
fn read_bits(bit: u32, count: u32) -> u32 {
    let word = bit >> 5u;
    let shift = bit & 31u;
    var value = ld_src(__site__, word) >> shift;
    if (shift + count > 32u) {
        value |= ld_src(__site__, word + 1u) << (32u - shift);
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

// The walk state (b, row, r) through a chunk's runs.
struct Walk {
    b: u32,
    row: u32,
    r: u32,
}

// The value of destination word `w` bits [lo, hi) (relative to the chunk's
// first unit): segments, each inside one run, from the walk state, which it
// advances.
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

//#fragment aligned_slot
// Word-aligned chunk: whole words from whole words, walking the run without
// dividing after the first word (`move_<slot>`: the other way in a concat).
fn copy_aligned_words_{{slot}}(e: Entry, first_word: u32, last_word: u32) {
    let run = e.run_bits >> 5u;
    let block = e.block_bits >> 5u;
    let q = first_word + (e.run_phase_bits >> 5u);
    var col = q % run;
    var src = (e.src_bit >> 5u) + (q / run) * block + col;
    for (var w = first_word; w < last_word; w++) {
        move_{{slot}}(__site__, e.dst_unit + w, src);
        col += 1u;
        src += 1u;
        if (col == run) {
            col = 0u;
            src += block - run;
        }
    }
}

//#fragment slot
// Every word lies whole inside one run that starts at source bit s: a funnel
// shift over consecutive source words, one load per word.
fn copy_shifted_words_{{slot}}(e: Entry, first_word: u32, last_word: u32, s: u32) {
    var index = s >> 5u;
    let shift = s & 31u;
    var current = ld_src(__site__, index);
    for (var w = first_word; w < last_word; w++) {
        var value = current;
        if (shift != 0u) {
            let next = ld_src(__site__, index + 1u);
            value = (current >> shift) | (next << (32u - shift));
            current = next;
        }
        st_dst_{{slot}}(__site__, e.dst_unit + w, value);
        index += 1u;
        if (shift == 0u && w + 1u < last_word) {
            current = ld_src(__site__, index);
        }
    }
}

// The general case: each word assembled from segments (assemble_word) and
// written with the bits it owns (owned_mask), merging with the word's other
// bits where a chunk starts or ends mid-word.
fn assemble_words_{{slot}}(e: Entry, first_word: u32, last_word: u32, walk0: Walk) {
    var walk = walk0;
    for (var w = first_word; w < last_word; w++) {
        let lo = walk.b;
        let value = assemble_word(e, w, &walk);
        let mask = owned_mask(e, w, lo, walk.b);
        let dst = e.dst_unit + w;
        if (mask == 0xFFFFFFFFu) {
            st_dst_{{slot}}(__site__, dst, value);
        } else {
            st_dst_{{slot}}(__site__, dst, (ld_dst_{{slot}}(__site__, dst) & ~mask) | value);
        }
    }
}

fn split_words_{{slot}}(e: Entry, i: u32) {
    let end = e.first_bit + e.len_bits;
    let first_word = i * e.units_per_invocation;
    let last_word = min(first_word + e.units_per_invocation, (end + 31u) / 32u);
    if (first_word >= last_word) {
        return;
    }
    if ((e.flags & FLAG_ALIGNED) != 0u) {
        copy_aligned_words_{{slot}}(e, first_word, last_word);
        return;
    }
    let b = max(first_word * 32u, e.first_bit);
    let q = b - e.first_bit + e.run_phase_bits;
    let walk = Walk(b, q / e.run_bits, q % e.run_bits);
    let span = (last_word - first_word) * 32u;
    if (b == first_word * 32u && b + span <= end && walk.r + span <= e.run_bits) {
        let s = e.src_bit + walk.row * e.block_bits + walk.r;
        copy_shifted_words_{{slot}}(e, first_word, last_word, s);
        return;
    }
    assemble_words_{{slot}}(e, first_word, last_word, walk);
}

//#fragment concat_slot
// A concat moves word-aligned chunks only (the kernel fits a concat where
// every run, offset and row is whole words).
fn split_words_{{slot}}(e: Entry, i: u32) {
    let first_word = i * e.units_per_invocation;
    let last_word = min(first_word + e.units_per_invocation, (e.first_bit + e.len_bits + 31u) / 32u);
    if (first_word < last_word) {
        copy_aligned_words_{{slot}}(e, first_word, last_word);
    }
}
