// The funnel kernel's concat form, generated per layout
// (src/kernels/concat_streams.rs): a concat writes the tensor (the source
// binding) from its pieces (the destination slots), whose runs tile each
// tensor row in entry order. Lane g writes vec4 g of the tensor:
// consecutive lanes on consecutive vec4s of the tensor and, inside a run,
// of its piece. The vec4's bits come from the piece whose run holds its
// first bit (128 bits at any offset: two vec4 loads, one funnel shift)
// and, where that run ends inside the vec4, from the runs after it (the
// next pieces' in the row, then piece 0's in the next row), as many as
// the layout's bound on the runs one vec4 spans. Every store is a whole
// vec4 of the tensor (where a piece is left to another dispatch, a masked
// read-modify-write).

//#fragment body
{{entries}}    // The vec4's first bit: its row, and its column in the row.
    let y = g * 128u;
    let row = y / {{block}}u;
    let col = y % {{block}}u;
    // The run that holds the column: its piece, where it starts in the
    // row, its length and its piece's first bit.
    var j = 0u;
    var start = 0u;
    var run = 0u;
    var base = 0u;
{{picks}}
    // `n`: bits of the vec4 filled, from the column to the run's end.
    var n = start + run - col;
    var v = piece_bits(j, base + row * run + col - start);
{{mine}}    // The runs after it, while the vec4 has room: piece `k` in row `r`.
    var k = j;
    var r = row;
{{fragments_code}}{{store}}//#fragment fragment
    if (n < 128u) {
        k = k + 1u;
        if (k == {{count}}u) {
            k = 0u;
            r = r + 1u;
        }
        // Run `k`'s length and its piece's first bit, picked by selects.
        let k_run = {{run_of_k}};
        let w = piece_bits(k, ({{unit_of_k}}) * 128u + r * k_run);
        v = low_bits(v, n) | shift_up(w, n);
{{mine_next}}        n = n + k_run;
    }
//#fragment mine
    // The bits this dispatch writes: those of pieces not left to another
    // dispatch (FLAG_SKIP).
    let ones = vec4<u32>(0xFFFFFFFFu);
    var mine = select(vec4<u32>(0u), low_bits(ones, min(n, 128u)), writes(j));
//#fragment mine_next
        mine = mine | select(vec4<u32>(0u), low_bits(ones, min(n + k_run, 128u)) & ~low_bits(ones, n), writes(k));
//#fragment store
    st_src(__site__, g + source_shift_bits() / 128u, v);
//#fragment store_skipping
    // A piece another dispatch of the pass writes keeps its bits: a masked
    // read-modify-write of the vec4 it shares.
    let at = g + source_shift_bits() / 128u;
    if (all(mine == ones)) {
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
