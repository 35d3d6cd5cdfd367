// The concat kernel for pieces at any bit offset, generated per layout
// (src/kernels/concat_words.rs): a concat writes the tensor (the source
// binding) from its pieces (the destination slots). Invocation g owns
// tensor word g of the pass's window (consecutive lanes on consecutive
// words of the tensor, and of each piece; the binding starts whole words
// before the window where the caller's offset is not aligned), and
// assembles it from every piece of the layout whose run in some row
// overlaps the word's 32 bits: the piece's bits are read at their place in
// the piece (two words, funnel shifted). A word that pieces of another
// dispatch share (a run boundary between two groups) keeps those bits (a
// masked read-modify-write; the dispatches of a pass run in order); the
// bits past the tensor's end are zero. Positions count from piece 0's run
// in row 0, whose place in the window comes from the table, so groups of
// one shape share a module; every other piece's offset from it, every run
// and the row are constants, or (a concat cut into more groups than
// modules) the offsets and runs come from the table too, and the row count
// is the constant.

//#fragment body
    // Lane g owns word g of the window: word w of the binding, which
    // starts the shift (whole words) before the window.
    let w = g + source_shift_bits() / 32u;
    let src0 = table.entries[0u].src_bit;
    let rows = {{rows}};
    // The word's first bit, counted from piece 0's run in row 0.
    let y0 = i32(g * 32u) - i32(src0);
    var value = 0u;
    var mask = 0u;
{{pieces}}{{pad}}    if (mask == 0xFFFFFFFFu) {
        st_src(__site__, w, value);
    } else if (mask != 0u) {
        st_src(__site__, w, (ld_src(__site__, w) & ~mask) | value);
    }
//#fragment piece
    // Piece {{j}}: {{about}}.
    // At most {{reach}} of its rows reach one word (the word and the run
    // span 32 + run bits of a row period), the first of them the first
    // whose run ends past the word's first bit.
    {{unless_skipped}}{
        let e = bound_{{slot}}(table.entries[{{j}}u]);
        let delta = {{delta}};
        let run = {{run}};
        let t = y0 - delta - run;
        let first = select(t / {{block}}, (t - {{block}} + 1) / {{block}}, t < 0) + 1;
        for (var k = 0; k < {{reach}}; k++) {
            let row = first + k;
            let start = row * {{block}} + delta;
            let lo = max(start, y0);
            let hi = min(start + run, y0 + 32);
            if (row >= 0 && row < rows && lo < hi) {
                let p = e.dst_unit * 32u + u32(row) * u32(run) + u32(lo - start);
                let n = u32(hi - lo);
                let ones = select((1u << n) - 1u, 0xFFFFFFFFu, n == 32u);
                value |= (piece_bits_{{slot}}(p) & ones) << u32(lo - y0);
                mask |= ones << u32(lo - y0);
            }
        }
    }
//#fragment pad
    // The tensor's last word (this layout's last piece ends the row): its
    // bits past the tensor are zero. A word wholly past the tensor (the
    // lane past a tensor of whole words) is not the tensor's: not written.
    {
        let end = (rows - 1) * {{block}} + ({{end}});
        if (end > y0 && end < y0 + 32) {
            let kept = u32(end - y0);
            let tail = select(0xFFFFFFFFu << kept, 0u, kept == 32u);
            mask |= tail;
            value &= ~tail;
        }
    }
//#fragment piece_bits
// 32 bits of slot {{slot}} from bit `p` (the second word clamped to the
// binding: it is used only where the bits cross into it).
fn piece_bits_{{slot}}(p: u32) -> u32 {
    let i = p >> 5u;
    let s = p & 31u;
    let a = ld_dst_{{slot}}(__site__, i);
    if (s == 0u) {
        return a;
    }
    let b = ld_dst_{{slot}}(__site__, min(i + 1u, arrayLength(&dst_words_{{slot}}) - 1u));
    return (a >> s) | (b << (32u - s));
}
