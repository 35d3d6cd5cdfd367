// The funnel kernel: runs of at least 128 bits at any bit offset, into
// whole vec4 units, each shifted out of two source vec4s (vec4_bits.wgsl).
// Inside a run the source bit offset of consecutive units differs by 128,
// so the funnel's shift is the same for the whole stretch (lanes of one run
// take the same branches) and each unit costs one new load: its `hi` is the
// next unit's `lo`. A unit that crosses the end of its run takes its tail
// from the next run's start.

//#fragment slot
fn split_funnel_{{slot}}(e: Entry, i: u32) {
    let first = i * e.units_per_invocation;
    let last = min(first + e.units_per_invocation, e.len_bits >> 7u);
    let run = e.run_bits;
    let p = first * 128u + e.run_phase_bits;
    var row = p / run;
    var col = p % run;
    // Loads are clamped to the binding: past its end a funnel at a
    // whole-vec4 offset ignores `hi`.
    let last_src = arrayLength(&src_vec4) - 1u;
    var u = first;
    while (u < last) {
        let s = e.src_bit + row * e.block_bits + col;
        let shift = shift_at(s);
        // Whole units left inside this run, from `col`.
        let inside = min((run - col) >> 7u, last - u);
        var at = s >> 7u;
        var lo = ld_src(__site__, at);
        for (var k = 0u; k < inside; k++) {
            at += 1u;
            let hi = ld_src(__site__, min(at, last_src));
            st_dst_{{slot}}(__site__, e.dst_unit + u + k, funnel_by(lo, hi, shift));
            lo = hi;
        }
        u += inside;
        col += inside << 7u;
        if (u >= last) {
            break;
        }
        // The unit that ends this run (head < 128 bits, or 0 when the run
        // ended on a unit) and begins the next.
        let head = run - col;
        row += 1u;
        col = 0u;
        if (head == 0u) {
            continue;
        }
        let v = funnel_by(lo, ld_src(__site__, min(at + 1u, last_src)), shift);
        let t = e.src_bit + row * e.block_bits;
        let a = t >> 7u;
        let next = funnel_by(
            ld_src(__site__, a),
            ld_src(__site__, min(a + 1u, last_src)),
            shift_at(t),
        );
        st_dst_{{slot}}(__site__, e.dst_unit + u, low_bits(v, head) | shift_up(next, head));
        col = 128u - head;
        u += 1u;
    }
}

