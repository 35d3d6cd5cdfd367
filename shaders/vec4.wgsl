// The vec4 kernel: one vec4<u32> (16 bytes) per unit, when every run,
// offset and block is a multiple of 128 bits: whole vec4s from whole vec4s.

//#fragment slot
fn split_vec4_{{slot}}(e: Entry, i: u32) {
    let first = i * e.units_per_invocation;
    let last = min(first + e.units_per_invocation, e.len_bits >> 7u);
    if (first >= last) {
        return;
    }
    let run = e.run_bits >> 7u;
    let block = e.block_bits >> 7u;
    let q = first + (e.run_phase_bits >> 7u);
    var col = q % run;
    var src = (e.src_bit >> 7u) + (q / run) * block + col;
    for (var w = first; w < last; w++) {
        move_{{slot}}(__site__, e.dst_unit + w, src);
        col += 1u;
        src += 1u;
        if (col == run) {
            col = 0u;
            src += block - run;
        }
    }
}

