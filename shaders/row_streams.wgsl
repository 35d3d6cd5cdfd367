// The row-stream kernel for long runs at any bit offset, generated per
// layout (src/kernels/row_streams.rs): invocation g owns, in every output,
// stretch `part = g % per_row` of the whole vec4s that lie inside input row
// `row = g / per_row`, and streams it with one funnel shift (one vec4 load
// and one store per 16 bytes; vec4_bits.wgsl). Output bit q lies in row
// q / run, in vec4 q / 128.
//
// That is the blocked lane order (software rasterisers). Striped (GPUs):
// each output's entry owns a range of invocations, and invocation g of it
// writes the output's vec4 q = g - first: consecutive lanes on consecutive
// vec4s of the output and, inside a row, of the input (fragment
// striped_stream).
//
// Every invocation runs the same straight-line code: the run and row
// lengths, the invocations per row and the stretch are constants, so no
// lane loops longer than another. The stretch is unrolled: on lavapipe the
// same stretch as a WGSL loop ran 10 % slower (a mask update and an
// any-lane test per iteration), and 16 unrolled vec4s a third slower than 8
// (the code, not the loop). Each run's start in a row is a constant too, and
// every entry is read once at the top, from a uniform table up to 32
// outputs (as in row_copies.wgsl).

//#fragment body
    let row = g / {{per_row}}u;
    let part = g % {{per_row}}u;
{{entries}}{{streams}}{{straddles}}
//#fragment stream
    {{unless_skipped}}{
        let e = e{{j}};
        let r0 = row * {{run}}u;
        // Whole vec4s of this row: [first, end).
        let first = (r0 + 127u) >> 7u;
        let end = (r0 + {{run}}u) >> 7u;
        let u0 = first + part * {{vec4s}}u;
        // A stretch that may lie wholly past the row's end (every part but
        // the first of a run of one vec4, as YOLOv5's box) is skipped, its
        // loads too: lavapipe skips the memory operations of masked lanes,
        // as a GPU does (YOLOv5 0.93-0.97 of a copy before, 0.98-1.03
        // after). Where no stretch can be empty the test is `true`.
        if ({{in_row}}) {
            let s = {{src}}u + source_shift_bits() + row * {{block}}u + u0 * 128u - r0;
            let shift = shift_at(s);
            let at = s >> 7u;
            let v0 = ld_src(__site__, at);
{{steps}}        }
    }
//#fragment gather
    // A short run ({{words}} word(s) per row): this invocation gathers the
    // output's vec4 q, word by word from the rows it spans.
    {{unless_skipped}}{
        let e = e{{j}};
        let q = {{q}};
        if ({{in_range}}) {
            let first = q * 4u;
            var row = first / {{words}}u;
            var col = first % {{words}}u;
            var v = vec4<u32>();
            for (var i = 0u; i < 4u; i++) {
                let w = (({{src_bits}}) >> 5u) + row * {{block_words}}u + col;
                v[i] = ld_src_word(__site__, w);
                col += 1u;
                let next_row = col == {{words}}u;
                row = select(row, row + 1u, next_row);
                col = select(col, 0u, next_row);
            }
            st_dst_{{slot}}(__site__, e.dst_unit + q, v);
        }
    }
//#fragment gather_bits
    // A short run ({{run}} bits per row, at any bit offset): this invocation
    // gathers the output's vec4 q from the rows it spans, at most 32 bits a
    // step.
    {{unless_skipped}}{
        let e = e{{j}};
        let q = g - e.first_invocation;
        if (g >= e.first_invocation && q < (e.len_bits >> 7u)) {
            let first = q * 128u;
            var row = first / {{run}}u;
            var col = first % {{run}}u;
            var v = vec4<u32>();
            var filled = 0u;
            for (var i = 0u; i < {{steps}}u; i++) {
                if (filled < 128u) {
                    let take = min(min(32u, {{run}}u - col), 128u - filled);
                    let bits = source_bits(e.src_bit + row * {{block}}u + col);
                    let kept = select((1u << take) - 1u, 0xFFFFFFFFu, take == 32u);
                    v = v | shift_up(vec4<u32>(bits & kept, 0u, 0u, 0u), filled);
                    filled += take;
                    col += take;
                    let next_row = col == {{run}}u;
                    row = select(row, row + 1u, next_row);
                    col = select(col, 0u, next_row);
                }
            }
            st_dst_{{slot}}(__site__, e.dst_unit + q, v);
        }
    }
//#fragment source_bits
// 32 bits of the source from bit `p` (the second word clamped to the
// binding: it is used only where the bits cross into it).
fn source_bits(p: u32) -> u32 {
    let w = p >> 5u;
    let s = p & 31u;
    let low = ld_src_word(__site__, w);
    let high = ld_src_word(__site__, min(w + 1u, arrayLength(&src_vec4) * 4u - 1u));
    return select((low >> s) | (high << (32u - s)), low, s == 0u);
}
//#fragment step
            let v{{next}} = ld_src(__site__, at + {{next}}u);
            if (u0 + {{k}}u < end) {
                st_dst_{{slot}}(__site__, e.dst_unit + u0 + {{k}}u, funnel_by(v{{k}}, v{{next}}, shift));
            }
//#fragment straddle_round
    // The vec4s that straddle two rows (one per row and output whose run is
    // not whole vec4s) are shared out among a row's invocations: invocation
    // `part` writes straddle `part + {{offset}}`, if there is one. Only the
    // writers load (lavapipe runs the rest of the code in every lane).
    {
        let c = part + {{offset}}u;
        let run = {{run}};
        let e = table.entries[{{entry}}];
        let r0 = row * run;
        // The straddling vec4 x: its low `head` bits end the previous
        // row's run, the rest start this row's.
        let x = r0 >> 7u;
        let head = r0 & 127u;
        if (c < {{count}}u && row > 0u && head != 0u{{written}}) {
            let run_src = e.src_bit + source_shift_bits() + row * {{block}}u;
            let tail = src_bits_128(run_src - {{block}}u + run - head);
            let next = src_bits_128(run_src - head);
            let low = low_bits(vec4<u32>(0xFFFFFFFFu), head);
            let value = (tail & low) | (next & ~low);
{{stores}}        }
    }
//#fragment store
            st_dst_{{slot}}(__site__, e.dst_unit + dst_shift_{{slot}}(e.window_units) + x, value);
//#fragment store_if
            if (c == {{c}}u) {
                st_dst_{{slot}}(__site__, e.dst_unit + dst_shift_{{slot}}(e.window_units) + x, value);
            }
//#fragment striped_body
{{entries}}{{streams}}
//#fragment striped_stream
    // Output {{j}}: its vec4 q, from bit q * 128 of the output, at any bit
    // offset of its row's run (the run's start from the table, so that
    // groups of one shape share a module wherever their windows start); a
    // vec4 that crosses the run's end takes the rest from the next row's
    // run.
    {{unless_skipped}}{
        let e = e{{j}};
        let q = g - e.first_invocation;
        if (g >= e.first_invocation && q < (e.len_bits >> 7u)) {
            let p = q * 128u;
            let row = p / {{run}}u;
            let col = p % {{run}}u;
            let s = e.src_bit + row * {{block}}u + col;
            var v = src_bits_128(s);
            if (col + 128u > {{run}}u) {
                let head = {{run}}u - col;
                let next = src_bits_128(s + head + {{gap}}u);
                v = low_bits(v, head) | shift_up(next, head);
            }
            st_dst_{{slot}}(__site__, e.dst_unit + q, v);
        }
    }
