// The row-block kernel for short runs, generated per layout
// (plan::kernels::row_blocks): each invocation owns a block of whole input
// rows, loads it with vec4 loads into registers and writes every output's
// share of it as whole vec4s, each word assembled from constant shifts and
// masks. No division, no table walk per element.
//
// Table entry j belongs to gathered output j; the source bit of entry 0
// less its output's offset in a row is the first block's start.
//
// That is the blocked lane order (software rasterisers: each lane loads its
// own block). Striped (GPUs, fragment staged_body): a workgroup stages a
// tile of blocks in workgroup memory, loaded with consecutive lanes on
// consecutive vec4s, then each lane writes one output vec4 of the tile, so
// that every load and every store of a warp is consecutive vec4s.

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
//#fragment staged_body
    // {{tile}} blocks of {{rows}} rows ({{src_vec4s}} vec4s each) per workgroup.
    let lane = lid.x;
    let tile0 = (wid.y * groups.x + wid.x) * {{tile}}u;
    let blocks = table.entries[0u].len_bits / {{out0_block_bits}}u;
    let base = ((table.entries[0u].src_bit + source_shift_bits() - {{offset}}u) >> 7u)
        + tile0 * {{src_vec4s}}u;
    if (lane < {{tile_vec4s}}u && tile0 + lane / {{src_vec4s}}u < blocks) {
        tile[lane] = ld_src(__site__, base + lane);
    }
    workgroupBarrier();
{{outputs}}
//#fragment staged_output
    {{unless_skipped}}{
        let local = lane - {{first}}u;
        let b = local / {{vec4s}}u;
        if (lane >= {{first}}u && local < {{count}}u && tile0 + b < blocks) {
            let v = local % {{vec4s}}u;
            let t = b * {{src_vec4s}}u;
            var value = vec4<u32>();
{{cases}}            let d = table.entries[{{j}}u].dst_unit
                + dst_shift_{{slot}}(table.entries[{{j}}u].window_units);
            st_dst_{{slot}}(__site__, d + (tile0 + b) * {{vec4s}}u + v, value);
        }
    }
//#fragment staged_case
            if (v == {{v}}u) {
                value = vec4<u32>({{words}});
            }
//#fragment tile
// The staged blocks of a workgroup.
var<workgroup> tile: array<vec4<u32>, {{size}}>;
