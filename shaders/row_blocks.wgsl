// The row-block kernel for short runs, generated per layout
// (src/kernels/row_blocks.rs): each invocation owns a block of whole input
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
//#fragment looped_body
    // {{tile}} blocks of {{rows}} rows ({{src_vec4s}} vec4s each) per workgroup,
    // loaded and written in loops.
{{start}}    for (var i = lane; i < here * {{src_vec4s}}u; i += {{size}}u) {
        tile[i] = ld_src(__site__, base + i);
    }
    workgroupBarrier();
    // Every output's vec4s of the tile laid end to end, output by output:
    // lane i writes vec4 i of that stretch, into the output that holds it,
    // so that every lane works however narrow the outputs are.
    for (var i = lane; i < here * {{out_vec4s}}u; i += {{size}}u) {
{{outputs}}    }
//#fragment looped_start
    // The workgroup's tile: its first block, the blocks of the dispatch
    // (entry 0 counts them), its first vec4 in the tensor, its blocks.
    let lane = lid.x;
    let tile0 = (wid.y * groups.x + wid.x) * {{tile}}u;
    let blocks = table.entries[0u].len_bits / {{out0_block_bits}}u;
    let base = ((table.entries[0u].src_bit + source_shift_bits() - {{offset}}u) >> 7u)
        + tile0 * {{src_vec4s}}u;
    let here = min({{tile}}u, blocks - min(tile0, blocks));
//#fragment looped_output
        {{test}}{
            {{unless_skipped}}{
                // Vec4 k of output {{j}}'s share of the tile: block k / {{vec4s}},
                // its bits from q.
                let k = i - here * {{first}}u;
                let t = (k / {{vec4s}}u) * {{src_bits}}u;
                let q = (k % {{vec4s}}u) * 128u;
                let d = table.entries[{{j}}u].dst_unit
                    + dst_shift_{{slot}}(table.entries[{{j}}u].window_units) + tile0 * {{vec4s}}u;
                st_dst_{{slot}}(__site__, d + k, vec4<u32>(
                    {{word}}(t, q, {{run}}u, {{block}}u, {{offset}}u),
                    {{word}}(t, q + 32u, {{run}}u, {{block}}u, {{offset}}u),
                    {{word}}(t, q + 64u, {{run}}u, {{block}}u, {{offset}}u),
                    {{word}}(t, q + 96u, {{run}}u, {{block}}u, {{offset}}u)));
            }
        }
//#fragment aligned_word
// Bits [q, q + 32) of an output's share of the block staged from tile bit
// t, where its runs, the row and its offset are whole words: one staged
// word.
fn aligned_word(t: u32, q: u32, run: u32, block: u32, offset: u32) -> u32 {
    let row = q / run;
    let s = t + row * block + offset + q - row * run;
    return tile[s >> 7u][(s >> 5u) & 3u];
}
//#fragment block_word
// Bits [q, q + 32) of an output's share of the block staged from tile bit
// t: runs of `run` bits, one every `block` bits from bit `offset`. A field
// ends at a run's end, a tile word's end or the output word's end.
fn block_word(t: u32, q: u32, run: u32, block: u32, offset: u32) -> u32 {
    var word = 0u;
    var p = q;
    loop {
        if (p >= q + 32u) {
            break;
        }
        let row = p / run;
        let col = p - row * run;
        let s = t + row * block + offset + col;
        let len = min(min(q + 32u - p, run - col), 32u - (s & 31u));
        let mask = select((1u << len) - 1u, 0xffffffffu, len == 32u);
        word = word | (((tile[s >> 7u][(s >> 5u) & 3u] >> (s & 31u)) & mask) << (p - q));
        p = p + len;
    }
    return word;
}
//#fragment looped_concat_body
    // {{tile}} blocks of {{rows}} rows ({{src_vec4s}} vec4s each) per workgroup,
    // assembled in workgroup memory from the pieces and stored in loops.
{{start}}{{clear}}    // Every piece's vec4s of the tile laid end to end, piece by piece:
    // lane i loads vec4 i of that stretch from the piece that holds it and
    // puts its words in place.
    for (var i = lane; i < here * {{out_vec4s}}u; i += {{size}}u) {
{{pieces}}    }
    workgroupBarrier();
    for (var i = lane; i < here * {{src_vec4s}}u; i += {{size}}u) {
{{store}}    }
//#fragment looped_clear
    for (var i = lane; i < {{words}}u; i += {{size}}u) {
        atomicStore(&tile_words[i], 0u);
{{mask}}    }
    workgroupBarrier();
//#fragment clear_mask
        atomicStore(&tile_mask[i], 0u);
//#fragment looped_piece
        {{test}}{
            {{unless_skipped}}{
                // Vec4 k of piece {{j}}'s share of the tile: block k / {{vec4s}},
                // its bits at q.
                let k = i - here * {{first}}u;
                let t = (k / {{vec4s}}u) * {{src_bits}}u;
                let q = (k % {{vec4s}}u) * 128u;
                let d = table.entries[{{j}}u].dst_unit
                    + dst_shift_{{slot}}(table.entries[{{j}}u].window_units) + tile0 * {{vec4s}}u;
                let v = ld_dst_{{slot}}(__site__, d + k);
                {{put}}(t, q, {{run}}u, {{block}}u, {{offset}}u, v.x);
                {{put}}(t, q + 32u, {{run}}u, {{block}}u, {{offset}}u, v.y);
                {{put}}(t, q + 64u, {{run}}u, {{block}}u, {{offset}}u, v.z);
                {{put}}(t, q + 96u, {{run}}u, {{block}}u, {{offset}}u, v.w);
            }
        }
//#fragment looped_store
        let w = 4u * i;
        st_src(__site__, base + i, vec4<u32>(
            atomicLoad(&tile_words[w]),
            atomicLoad(&tile_words[w + 1u]),
            atomicLoad(&tile_words[w + 2u]),
            atomicLoad(&tile_words[w + 3u])));
//#fragment looped_store_masked
        // Only the bits this dispatch placed: the others are another
        // dispatch's (or lie in a piece it skips).
        let w = 4u * i;
        let m = vec4<u32>(
            atomicLoad(&tile_mask[w]),
            atomicLoad(&tile_mask[w + 1u]),
            atomicLoad(&tile_mask[w + 2u]),
            atomicLoad(&tile_mask[w + 3u]));
        if (any(m != vec4<u32>())) {
            var value = vec4<u32>(
                atomicLoad(&tile_words[w]),
                atomicLoad(&tile_words[w + 1u]),
                atomicLoad(&tile_words[w + 2u]),
                atomicLoad(&tile_words[w + 3u]));
            if (any(m != vec4<u32>(0xffffffffu))) {
                value = (ld_src(__site__, base + i) & ~m) | (value & m);
            }
            st_src(__site__, base + i, value);
        }
//#fragment word_tile
// The tensor's words of a workgroup's blocks, assembled from the pieces.
var<workgroup> tile_words: array<atomic<u32>, {{words}}>;
//#fragment mask_tile
// Which bits of each tile word this dispatch placed.
var<workgroup> tile_mask: array<atomic<u32>, {{words}}>;
//#fragment aligned_put
// Puts a piece's word (bits [q, q + 32) of its share of the block at tile
// bit t) in place, where its runs, the row and its offset are whole words:
// one tile word.
fn aligned_put(t: u32, q: u32, run: u32, block: u32, offset: u32, value: u32) {
    let row = q / run;
    let s = t + row * block + offset + q - row * run;
    atomicStore(&tile_words[s >> 5u], value);
{{mask}}}
//#fragment aligned_put_mask
    atomicStore(&tile_mask[s >> 5u], 0xffffffffu);
//#fragment block_put
// Puts a piece's word (bits [q, q + 32) of its share of the block at tile
// bit t) in place: runs of `run` bits, one every `block` bits from bit
// `offset`, or-ed into the cleared tile field by field.
fn block_put(t: u32, q: u32, run: u32, block: u32, offset: u32, value: u32) {
    var p = q;
    loop {
        if (p >= q + 32u) {
            break;
        }
        let row = p / run;
        let col = p - row * run;
        let s = t + row * block + offset + col;
        let len = min(min(q + 32u - p, run - col), 32u - (s & 31u));
        let mask = select((1u << len) - 1u, 0xffffffffu, len == 32u);
        atomicOr(&tile_words[s >> 5u], ((value >> (p - q)) & mask) << (s & 31u));
{{mask}}        p = p + len;
    }
}
//#fragment block_put_mask
        atomicOr(&tile_mask[s >> 5u], mask << (s & 31u));
