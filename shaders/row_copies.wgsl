// The row-copy kernel for runs of whole units (vec4s for row_copies, words
// for row_words), generated per layout (plan::kernels::row_copies):
// invocation g owns stretch `part = g % per_row` of input row
// `row = g / per_row` and copies, in every output, the units
// [part * steps, part * steps + steps) of that row's run: one load and one
// store per unit, straight-line code, the run lengths, the row stride, the
// lanes per row and where each run starts in a row constants. A stretch is
// 32 bytes (a GPU's memory sector) for the longest output. Every entry is
// read once, before the first copy, from a uniform table (arena too: at
// most MAX_COPY_OUTPUTS entries).

//#fragment body
    let row = g / {{per_row}}u;
    let part = g % {{per_row}}u;
    let src_row = source_shift_bits() / UNIT_BITS + row * {{block}}u;
{{entries}}{{copies}}
//#fragment copy
    {{unless_skipped}}{
        let u0 = part * {{steps}}u;
        let src = src_row + {{src}}u + u0;
        let dst = e{{j}}.dst_unit + row * {{run}}u + u0;
{{stretch}}    }
//#fragment step
        st_dst_{{slot}}(__site__, dst + {{k}}u, ld_src(__site__, src + {{k}}u));
//#fragment guarded_step
        if (u0 + {{k}}u < {{run}}u) {
            st_dst_{{slot}}(__site__, dst + {{k}}u, ld_src(__site__, src + {{k}}u));
        }
