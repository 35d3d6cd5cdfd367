// The row-copy kernel for runs of whole units (vec4s for row_copies, words
// for row_words), generated per layout (src/kernels/row_copies.rs): straight-
// line code, the run lengths, the row stride, the lanes per row and where
// each run starts in a row constants, one load and one store per unit.
// Every entry is read once, before the first copy, from a uniform table
// (arena too: at most MAX_COPY_OUTPUTS entries). Two lane orders:
//
// - blocked (software rasterisers): invocation g owns stretch
//   `part = g % per_row` of input row `row = g / per_row` and copies, in
//   every output, the units [part * steps, part * steps + steps) of that
//   row's run. A stretch is 32 bytes for the longest output.
// - striped (GPUs): the gathered runs of a row laid end to end, invocation g
//   copies unit `w = g % per_row` of row `g / per_row` into the output whose
//   run holds it: consecutive lanes on consecutive units of the input and
//   of every output, so a warp's request touches the sectors its bytes need.
//   The runs' starts come from the table (every entry is read at the top);
//   each lane first finds its run, then makes its one access to the tensor
//   at one site for every run (a load in a split, a store in a concat).
//
// `move_<slot>` copies a unit from the source to slot <slot> in a split,
// and back in a concat (the same units, the other way: prelude.wgsl).

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
        move_{{slot}}(__site__, dst + {{k}}u, src + {{k}}u);
//#fragment guarded_step
        if (u0 + {{k}}u < {{run}}u) {
            move_{{slot}}(__site__, dst + {{k}}u, src + {{k}}u);
        }
//#fragment striped_body
    let row = g / {{per_row}}u;
    let w = g % {{per_row}}u;
{{entries}}    // The run that holds unit w (the row's runs laid end to end): its
    // entry, and where the unit lies in the input row and in its output.
    // The starts of runs come from the table, so that groups of one shape
    // share a module wherever their windows start. Then one access to the
    // tensor per lane, whichever run holds its unit: a warp's units of
    // several runs make one request, not one per run.
    var j = 0u;
    var s = 0u;
    var d = 0u;
{{picks}}{{moves}}
//#fragment striped_pick
    {{test}}{
        j = {{j}}u;
        s = row * {{block}}u + e{{j}}.src_bit / UNIT_BITS + w - {{first}}u;
        d = e{{j}}.dst_unit + row * {{run}}u + w - {{first}}u;
    }
//#fragment striped_split
    let v = ld_src(__site__, s);
{{stores}}
//#fragment striped_store
    if (j == {{j}}u{{and_writes}}) {
        st_dst_{{slot}}(__site__, d, v);
    }
//#fragment striped_store_one
    {{unless_skipped}}{
        st_dst_{{slot}}(__site__, d, v);
    }
//#fragment striped_concat
    var v: {{unit}};
{{loads}}    {{unless_skipped}}{
        st_src(__site__, s, v);
    }
//#fragment striped_load
    if (j == {{j}}u) {
        v = ld_dst_{{slot}}(__site__, d);
    }
//#fragment striped_load_one
    v = ld_dst_{{slot}}(__site__, d);
