// The row-block kernel for short runs, generated per layout
// (plan::kernels::row_blocks): each invocation owns a block of whole input
// rows, loads it with vec4 loads into registers and writes every output's
// share of it as whole vec4s, each word assembled from constant shifts and
// masks. No division, no table walk per element.
//
// Table entry j belongs to gathered output j; the source bit of entry 0
// less its output's offset in a row is the first block's start.

//#fragment body
    // {{rows}} input rows per block.
    let base = ((table.entries[0u].src_bit + source_shift_bits() - {{offset}}u) >> 7u)
        + g * {{src_vec4s}}u;
{{loads}}{{outputs}}
//#fragment load
    let s{{v}} = ld_src(__site__, base + {{v}}u);
//#fragment output
    {{unless_skipped}}{
        let d{{j}} = table.entries[{{j}}u].dst_unit
            + dst_shift_{{slot}}(table.entries[{{j}}u].window_units) + g * {{vec4s}}u;
{{stores}}    }
//#fragment store
        st_dst_{{slot}}(__site__, d{{j}} + {{v}}u, vec4<u32>({{words}}));
