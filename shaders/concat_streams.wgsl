// The funnel kernel's concat form, generated per layout
// (src/kernels/concat_streams.rs): a concat writes the tensor (the source
// binding) from its pieces (the destination slots), whose runs tile each
// tensor row in entry order, each at least 128 bits. Lane g writes vec4 g
// of the tensor: consecutive lanes on consecutive vec4s of the tensor and,
// inside a run, of its piece. The vec4's bits come from the piece whose run
// holds its first bit (128 bits at any offset: two vec4 loads, one funnel
// shift) and, where that run ends inside the vec4, from the next run (the
// next piece's in the row, or piece 0's in the next row): no vec4 spans
// more than two runs. Every store is a whole vec4 of the tensor (where a
// piece is left to another dispatch, a masked read-modify-write).

//#fragment body
{{entries}}    // The vec4's first bit: its row, and its column in the row.
    let y = g * 128u;
    let row = y / {{block}}u;
    let col = y % {{block}}u;
    // The run that holds the column (its piece, where the run starts in
    // the row, its length, its piece's first bit) and the run after it.
    var j = 0u;
    var start = 0u;
    var run = 0u;
    var base = 0u;
    var k = 0u;
    var next_run = 0u;
    var next_base = 0u;
    var next_row = row;
{{picks}}
    // Bits of the run from the column on.
    let n = start + run - col;
    var v = piece_bits(j, base + row * run + col - start);
    if (n < 128u) {
        let w = piece_bits(k, next_base + next_row * next_run);
        v = low_bits(v, n) | shift_up(w, n);
    }
{{store}}//#fragment store
    st_src(__site__, g + source_shift_bits() / 128u, v);
//#fragment store_skipping
    // A piece another dispatch of the pass writes (FLAG_SKIP) keeps its
    // bits: a masked read-modify-write of the vec4 it shares.
    let ones = low_bits(vec4<u32>(0xFFFFFFFFu), min(n, 128u));
    let mine = select(vec4<u32>(0u), ones, writes(j))
        | select(vec4<u32>(0u), ~ones, n < 128u && writes(k));
    let at = g + source_shift_bits() / 128u;
    if (all(mine == vec4<u32>(0xFFFFFFFFu))) {
        st_src(__site__, at, v);
    } else if (any(mine != vec4<u32>(0u))) {
        st_src(__site__, at, (ld_src(__site__, at) & ~mine) | (v & mine));
    }
//#fragment pick
    {{test}}{
        j = {{j}}u;
        start = {{start}}u;
        run = {{run}}u;
        base = e{{j}}.dst_unit * 128u;
        k = {{k}}u;
        next_run = {{next_run}}u;
        next_base = e{{k}}.dst_unit * 128u;
        next_row = row + {{wraps}}u;
    }
//#fragment piece_bits_slot
// 128 bits of slot {{slot}} from bit `p`: both vec4s loaded, the second
// clamped to the binding (it is used only where the bits cross into it,
// and then it lies in the binding).
fn piece_bits_{{slot}}(p: u32) -> vec4<u32> {
    let at = p >> 7u;
    let next = min(at + 1u, arrayLength(&dst_vec4_{{slot}}) - 1u);
    return funnel_by(ld_dst_{{slot}}(__site__, at), ld_dst_{{slot}}(__site__, next), shift_at(p));
}
//#fragment piece_bits
// 128 bits of piece `j`'s slot from bit `p`.
fn piece_bits(j: u32, p: u32) -> vec4<u32> {
{{reads}}}
//#fragment read
    {{test}}{
        return piece_bits_{{slot}}(p);
    }
