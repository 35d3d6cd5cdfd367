// Permuted moves (src/kernels/permute.rs): each invocation writes one
// 32-bit word of one destination, gathered from the source through the
// destination's strided view (dimensions outermost first, each with the
// source stride it steps, from an offset). Whole words where the view's
// runs are whole words (`MODE_WORDS`), else element by element, each
// element's bits taken from the source word holding them (`MODE_ELEMENTS`:
// elements of 2, 4, 8 or 16 bits, which never straddle a word).
//
// params (a uniform block, read as words by `p`): the dispatch's header
// [destinations, 0, 0, 0], then per destination RECORD words: first,
// words, elements, mode, bits, rank, offset, src_shift, dst_shift, 0, 0,
// 0, dims[8], strides[8].

//#fragment module
const RECORD: u32 = 28u;
const HEADER: u32 = 4u;
const MODE_WORDS: u32 = 0u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, {{vec4s}}>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
{{bindings}}
fn p(i: u32) -> u32 {
    return params[i / 4u][i % 4u];
}

// The source unit (a word, or an element) of unit `unit` of the view at
// record `r`.
fn source_unit(r: u32, unit: u32) -> u32 {
    let rank = p(r + 5u);
    var rest = unit;
    var at = p(r + 6u);
    for (var j = rank; j > 0u; j -= 1u) {
        let d = p(r + 12u + j - 1u);
        let s = p(r + 20u + j - 1u);
        at += (rest % d) * s;
        rest /= d;
    }
    return at;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * 256u;
    let count = p(0);
    var slot = 0u;
    var r = HEADER;
    loop {
        if (slot >= count) {
            return;
        }
        r = HEADER + slot * RECORD;
        let first = p(r);
        if (index >= first && index < first + p(r + 1u)) {
            break;
        }
        slot += 1u;
    }
    let word = index - p(r);
    let src_shift = p(r + 7u);
    var value = 0u;
    if (p(r + 3u) == MODE_WORDS) {
        value = src[source_unit(r, word) + src_shift];
    } else {
        let bits = p(r + 4u);
        let per_word = 32u / bits;
        let mask = (1u << bits) - 1u;
        let elements = p(r + 2u);
        for (var k = 0u; k < per_word; k += 1u) {
            let e = word * per_word + k;
            if (e >= elements) {
                break;
            }
            let bit = source_unit(r, e) * bits;
            let v = (src[bit / 32u + src_shift] >> (bit % 32u)) & mask;
            value |= v << (k * bits);
        }
    }
    let at = word + p(r + 8u);
    switch slot {
{{stores}}
        default: {}
    }
}

//#fragment binding
@group(0) @binding({{binding}}) var<storage, read_write> dst{{slot}}: array<u32>;

//#fragment store
        case {{slot}}u: { dst{{slot}}[at] = value; }

//#fragment concat_module
// The concat: the tensor (binding 1) written from the pieces (bindings 2
// and up), each piece read in order and each of its units written where
// its view of the tensor says: whole words stored, elements ORed into
// words the `clear` entry point zeroed first (pieces share those words).
const RECORD: u32 = 28u;
const HEADER: u32 = 4u;
const MODE_WORDS: u32 = 0u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, {{vec4s}}>;
@group(0) @binding(1) var<storage, read_write> dst: array<atomic<u32>>;
{{bindings}}
fn p(i: u32) -> u32 {
    return params[i / 4u][i % 4u];
}

// The tensor unit (a word, or an element) of unit `unit` of the piece at
// record `r`.
fn tensor_unit(r: u32, unit: u32) -> u32 {
    let rank = p(r + 5u);
    var rest = unit;
    var at = p(r + 6u);
    for (var j = rank; j > 0u; j -= 1u) {
        let d = p(r + 12u + j - 1u);
        let s = p(r + 20u + j - 1u);
        at += (rest % d) * s;
        rest /= d;
    }
    return at;
}

// Word `i` of piece `slot`'s binding.
fn piece_word(slot: u32, i: u32) -> u32 {
    switch slot {
{{loads}}
        default: { return 0u; }
    }
}

// The invocation's index, and the record of the piece it serves (`count`
// when none: the invocation is past the pieces).
fn find(index: u32) -> vec2<u32> {
    let count = p(0u);
    for (var slot = 0u; slot < count; slot += 1u) {
        let r = HEADER + slot * RECORD;
        let first = p(r);
        if (index >= first && index < first + p(r + 1u)) {
            return vec2<u32>(slot, r);
        }
    }
    return vec2<u32>(count, 0u);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * 256u;
    let found = find(index);
    if (found.x >= p(0u)) {
        return;
    }
    let slot = found.x;
    let r = found.y;
    let word = index - p(r);
    // For a piece: src_shift is its binding's, dst_shift the tensor's.
    let piece_shift = p(r + 7u);
    let dst_shift = p(r + 8u);
    if (p(r + 3u) == MODE_WORDS) {
        atomicStore(&dst[tensor_unit(r, word) + dst_shift], piece_word(slot, word + piece_shift));
        return;
    }
    let bits = p(r + 4u);
    let per_word = 32u / bits;
    let mask = (1u << bits) - 1u;
    let elements = p(r + 2u);
    let value = piece_word(slot, word + piece_shift);
    for (var k = 0u; k < per_word; k += 1u) {
        let e = word * per_word + k;
        if (e >= elements) {
            break;
        }
        let bit = tensor_unit(r, e) * bits;
        let v = (value >> (k * bits)) & mask;
        atomicOr(&dst[bit / 32u + dst_shift], v << (bit % 32u));
    }
}

// Zeroes the tensor's words before pieces of elements are ORed in: the
// header's second word counts them, its third is the tensor's shift.
@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * 256u;
    if (index < p(1u)) {
        atomicStore(&dst[index + p(2u)], 0u);
    }
}

//#fragment concat_binding
@group(0) @binding({{binding}}) var<storage, read> piece{{slot}}: array<u32>;

//#fragment concat_load
        case {{slot}}u: { return piece{{slot}}[i]; }
