// Permuted moves (src/kernels/permute.rs): each invocation writes one
// 32-bit word of one destination, gathered from the source through the
// destination's strided view (dimensions outermost first, each with the
// source stride it steps, from an offset). Whole words where the view's
// runs are whole words (`MODE_WORDS`), else element by element, each
// element's bits taken from the source word holding them (`MODE_ELEMENTS`:
// elements of 2, 4, 8 or 16 bits, which never straddle a word).
//
// params (a uniform block, read as words by `p`): a header, then one
// record per destination, laid out as Rust's PermuteHeader and
// PermuteRecord (src/kernels/permute_records.rs); the constants naming
// their words (HEADER, RECORD, H_*, R_*) are generated from those structs.
//
// The `note` holes and `trace`/`trace_start` are empty except in the
// module's access-trace variant (kernels::wgsl::TraceHooks), which records
// every load and store of an invocation.

//#fragment module
{{consts}}
@group(0) @binding(0) var<uniform> params: array<vec4<u32>, {{vec4s}}>;
@group(0) @binding(1) var<storage, {{src_access}}> src: array<{{unit}}>;
{{bindings}}{{trace}}
fn p(i: u32) -> u32 {
    return params[i / 4u][i % 4u];
}

// The source unit (a word, or an element) of unit `unit` of the view at
// record `r`.
fn source_unit(r: u32, unit: u32) -> u32 {
    let rank = p(r + R_RANK);
    var rest = unit;
    var at = p(r + R_OFFSET);
    for (var j = rank; j > 0u; j -= 1u) {
        let d = p(r + R_DIMS + j - 1u);
        let s = p(r + R_STRIDES + j - 1u);
        at += (rest % d) * s;
        rest /= d;
    }
    return at;
}

// Words (units) per step of the view's innermost dimension, and its
// length: a cursor walks it by adding the stride, and unravels the index
// again only where a run ends.
fn last_stride(r: u32) -> u32 {
    let rank = p(r + R_RANK);
    return select(0u, p(r + R_STRIDES + rank - 1u), rank > 0u);
}

fn last_dim(r: u32) -> u32 {
    let rank = p(r + R_RANK);
    return select(1u, p(r + R_DIMS + rank - 1u), rank > 0u);
}

// The next dimension out (its length and stride; 1 and 0 when there is
// none): at a run's end the cursor steps it without unravelling, and
// unravels only when it wraps too (lavapipe's lanes divide slowly).
fn next_dim(r: u32) -> u32 {
    let rank = p(r + R_RANK);
    return select(1u, p(r + R_DIMS + rank - 2u), rank > 1u);
}

fn next_stride(r: u32) -> u32 {
    let rank = p(r + R_RANK);
    return select(0u, p(r + R_STRIDES + rank - 2u), rank > 1u);
}

// The dispatch's header: its destinations, and the words each invocation
// writes (1 on GPUs: consecutive lanes on consecutive words; a run's worth
// on a software adapter, whose lanes walk long stretches). A record's
// `first` counts invocations.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
{{trace_start}}    let count = p(H_RECORDS);
    let per = p(H_UNITS_PER_INVOCATION);
    var slot = 0u;
    var r = HEADER;
    loop {
        if (slot >= count) {
            return;
        }
        r = HEADER + slot * RECORD;
        let first = p(r + R_FIRST);
        let words = p(r + R_WORDS);
        if (index >= first && index < first + (words + per - 1u) / per) {
            break;
        }
        slot += 1u;
    }
    let words = p(r + R_WORDS);
    var w = (index - p(r + R_FIRST)) * per;
    let end = min(w + per, words);
    let src_shift = p(r + R_SRC_SHIFT);
    let dst_shift = p(r + R_DST_SHIFT);
    let d_last = last_dim(r);
    let s_last = last_stride(r);
    if (p(r + R_MODE) == MODE_WORDS) {
        // A loop per slot, each binding named in it: no switch per word.
        switch slot {
{{word_calls}}
            default: {}
        }
        return;
    }
{{elements}}
}

{{element_fns}}

//#fragment elements
    let bits = p(r + R_BITS);
    let per_word = 32u / bits;
    let mask = (1u << bits) - 1u;
    var e = w * per_word;
    let e_end = min(end * per_word, p(r + R_ELEMENTS));
    var at = source_unit(r, e);
    var pos = e % d_last;
    let d_next = next_dim(r);
    let step = next_stride(r) - (d_last - 1u) * s_last;
    var pos_next = (e / d_last) % d_next;
    var value = 0u;
    var k = 0u;
    loop {
        if (e >= e_end) {
            break;
        }
        let bit = at * bits;
        {{note_load}}value |= ((src[bit / 32u + src_shift] >> (bit % 32u)) & mask) << (k * bits);
        k += 1u;
        e += 1u;
        if (k == per_word) {
            store(slot, w + dst_shift, value);
            w += 1u;
            value = 0u;
            k = 0u;
        }
        pos += 1u;
        if (pos == d_last) {
            pos = 0u;
            pos_next += 1u;
            if (pos_next == d_next) {
                pos_next = 0u;
                at = source_unit(r, e);
            } else {
                at += step;
            }
        } else {
            at += s_last;
        }
    }
    if (k > 0u) {
        store(slot, w + dst_shift, value);
    }

//#fragment element_fns
fn store(slot: u32, at: u32, value: u32) {
    switch slot {
{{stores}}
        default: {}
    }
}

//#fragment binding
@group(0) @binding({{binding}}) var<storage, read_write> dst{{slot}}: array<{{unit}}>;

// Words [w, end) of the destination in slot {{slot}}, each one source word.
fn words_{{slot}}(r: u32, first: u32, end: u32, src_shift: u32, dst_shift: u32) {
    let d_last = last_dim(r);
    let s_last = last_stride(r);
    let d_next = next_dim(r);
    // From a run's last word to the next run's first.
    let step = next_stride(r) - (d_last - 1u) * s_last;
    var w = first;
    var at = source_unit(r, w);
    var pos = w % d_last;
    var pos_next = (w / d_last) % d_next;
    loop {
        if (w >= end) {
            break;
        }
        // The rest of this run (or of the stretch), then the next run.
        let n = min(d_last - pos, end - w);
        for (var k = 0u; k < n; k += 1u) {
            {{note}}dst{{slot}}[w + k + dst_shift] = src[at + k * s_last + src_shift];
        }
        w += n;
        pos += n;
        at += (n - 1u) * s_last;
        if (pos == d_last) {
            pos = 0u;
            pos_next += 1u;
            if (pos_next == d_next) {
                pos_next = 0u;
                at = source_unit(r, w);
            } else {
                at += step;
            }
        }
    }
}

//#fragment store
        case {{slot}}u: { {{note}}dst{{slot}}[at] = value; }

//#fragment word_call
            case {{slot}}u: { words_{{slot}}(r, w, end, src_shift, dst_shift); }

//#fragment concat_module
// The concat: the tensor (binding 1) written from the pieces (bindings 2
// and up), walking each piece of the tensor in its own order: the words
// (or elements) it covers written through one view of the tensor, each
// read through a view of its input (a gather: the writes stay runs).
// Whole words are stored; elements are ORed into words the `clear` entry
// point zeroed first (pieces share those words, so a dispatch that moves
// elements binds the tensor as atomics).
//
// A record: Rust's ConcatRecord (src/kernels/permute_records.rs), its
// views' strides RANK words after their dimensions; the header's
// clear_words and clear_shift serve the `clear` entry point.
{{consts}}
@group(0) @binding(0) var<uniform> params: array<vec4<u32>, {{vec4s}}>;
@group(0) @binding(1) var<storage, read_write> dst: {{dst_type}};
{{bindings}}
{{access}}{{trace}}
fn p(i: u32) -> u32 {
    return params[i / 4u][i % 4u];
}

// The unit of a view (dims at `r + at`, strides 8 words after) at index
// `unit`.
fn unravel(r: u32, at: u32, rank: u32, offset: u32, unit: u32) -> u32 {
    var rest = unit;
    var unit_at = offset;
    for (var j = rank; j > 0u; j -= 1u) {
        let d = p(r + at + j - 1u);
        let s = p(r + at + RANK + j - 1u);
        unit_at += (rest % d) * s;
        rest /= d;
    }
    return unit_at;
}

// A cursor over one view: the unit it is at, its place in the innermost
// dimension, that dimension's length and stride, its place in the next
// dimension out and that one's length, and the step from a run's last unit
// to the next run's first. At a run's end it steps the next dimension,
// and unravels only when that wraps too (lavapipe's lanes divide slowly).
struct Cursor {
    at: u32,
    pos: u32,
    dim: u32,
    stride: u32,
    pos_next: u32,
    dim_next: u32,
    step: u32,
}

fn cursor(r: u32, at: u32, rank: u32, offset: u32, unit: u32) -> Cursor {
    let dim = select(1u, p(r + at + rank - 1u), rank > 0u);
    let stride = select(0u, p(r + at + RANK + rank - 1u), rank > 0u);
    let dim_next = select(1u, p(r + at + rank - 2u), rank > 1u);
    let stride_next = select(0u, p(r + at + RANK + rank - 2u), rank > 1u);
    return Cursor(
        unravel(r, at, rank, offset, unit),
        unit % dim,
        dim,
        stride,
        (unit / dim) % dim_next,
        dim_next,
        stride_next - (dim - 1u) * stride,
    );
}

// The cursor moved to unit `next` (the one after its own).
fn advance(c: Cursor, r: u32, at: u32, rank: u32, offset: u32, next: u32) -> Cursor {
    var n = c;
    if (c.pos + 1u < c.dim) {
        n.at = c.at + c.stride;
        n.pos = c.pos + 1u;
        return n;
    }
    n.pos = 0u;
    n.pos_next = c.pos_next + 1u;
    if (n.pos_next == c.dim_next) {
        n.pos_next = 0u;
        n.at = unravel(r, at, rank, offset, next);
    } else {
        n.at = c.at + c.step;
    }
    return n;
}

// The invocation's index, and the record of the piece it serves (`count`
// when none: the invocation is past the pieces).
fn find(index: u32) -> vec2<u32> {
    let count = p(H_RECORDS);
    let per = p(H_UNITS_PER_INVOCATION);
    for (var slot = 0u; slot < count; slot += 1u) {
        let r = HEADER + slot * RECORD;
        let first = p(r + R_FIRST);
        if (index >= first && index < first + (p(r + R_WORDS) + per - 1u) / per) {
            return vec2<u32>(slot, r);
        }
    }
    return vec2<u32>(count, 0u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
{{trace_start}}    let found = find(index);
    if (found.x >= p(H_RECORDS)) {
        return;
    }
    let slot = found.x;
    let r = found.y;
    let per = p(H_UNITS_PER_INVOCATION);
    let w = (index - p(r + R_FIRST)) * per;
    let end = min(w + per, p(r + R_WORDS));
    if (p(r + R_MODE) == MODE_WORDS) {
        // A loop per slot, each binding named in it: no switch per word.
        switch slot {
{{word_calls}}
            default: {}
        }
        return;
    }
{{elements}}
}

{{element_fns}}

//#fragment concat_elements
    let piece_shift = p(r + R_PIECE_SHIFT);
    let dst_shift = p(r + R_DST_SHIFT);
    let bits = p(r + R_BITS);
    let per_word = 32u / bits;
    let mask = (1u << bits) - 1u;
    var e = w * per_word;
    let e_end = min(end * per_word, p(r + R_ELEMENTS));
    var read = cursor(r, R_READ_DIMS, p(r + R_READ_RANK), p(r + R_READ_OFFSET), e);
    var write = cursor(r, R_WRITE_DIMS, p(r + R_WRITE_RANK), p(r + R_WRITE_OFFSET), e);
    loop {
        if (e >= e_end) {
            break;
        }
        let source = read.at * bits;
        let v = (piece_word(slot, source / 32u + piece_shift) >> (source % 32u)) & mask;
        let to = write.at * bits;
        or_in(to / 32u + dst_shift, v << (to % 32u));
        e += 1u;
        read = advance(read, r, R_READ_DIMS, p(r + R_READ_RANK), p(r + R_READ_OFFSET), e);
        write = advance(write, r, R_WRITE_DIMS, p(r + R_WRITE_RANK), p(r + R_WRITE_OFFSET), e);
    }

//#fragment concat_element_fns
// Word `i` of piece `slot`'s binding.
fn piece_word(slot: u32, i: u32) -> u32 {
    switch slot {
{{loads}}
        default: { return 0u; }
    }
}

// Zeroes the tensor's words before pieces of elements are ORed in: the
// header's third word counts them, its fourth is the tensor's shift.
@compute @workgroup_size(WORKGROUP_SIZE)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
{{trace_start}}    if (index < p(H_CLEAR_WORDS)) {
        put(index + p(H_CLEAR_SHIFT), 0u);
    }
}

//#fragment concat_binding
@group(0) @binding({{binding}}) var<storage, {{access}}> piece{{slot}}: array<{{unit}}>;

// Words [first, end) of the piece in slot {{slot}}, in its order, each
// read through the record's read view and stored through its write view.
fn words_{{slot}}(r: u32, first: u32, end: u32) {
    let piece_shift = p(r + R_PIECE_SHIFT);
    let dst_shift = p(r + R_DST_SHIFT);
    let read_rank = p(r + R_READ_RANK);
    let read_offset = p(r + R_READ_OFFSET);
    let write_rank = p(r + R_WRITE_RANK);
    let write_offset = p(r + R_WRITE_OFFSET);
    var w = first;
    var read = cursor(r, R_READ_DIMS, read_rank, read_offset, w);
    var write = cursor(r, R_WRITE_DIMS, write_rank, write_offset, w);
    loop {
        if (w >= end) {
            break;
        }
        {{note}}put(write.at + dst_shift, piece{{slot}}[read.at + piece_shift]);
        w += 1u;
        read = advance(read, r, R_READ_DIMS, read_rank, read_offset, w);
        write = advance(write, r, R_WRITE_DIMS, write_rank, write_offset, w);
    }
}

//#fragment concat_load
        case {{slot}}u: { {{note}}return piece{{slot}}[i]; }

//#fragment concat_word_call
            case {{slot}}u: { words_{{slot}}(r, w, end); }

//#fragment concat_atomic
fn put(i: u32, v: u32) {
    {{note_put}}atomicStore(&dst[i], v);
}

fn or_in(i: u32, v: u32) {
    {{note_or}}atomicOr(&dst[i], v);
}

//#fragment concat_plain
fn put(i: u32, v: u32) {
    {{note_put}}dst[i] = v;
}

// Never called: a dispatch with pieces of elements binds the atomic module.
fn or_in(i: u32, v: u32) {
    {{note_or}}dst[i] = dst[i] | v;
}

//#fragment concat_vec4
fn put(i: u32, v: vec4<u32>) {
    {{note_put}}dst[i] = v;
}
