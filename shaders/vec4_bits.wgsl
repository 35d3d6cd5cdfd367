// Bit helpers over the vec4 source stream (`ld_src`), shared by the funnel
// and the row-stream kernels.

//#fragment helpers
// Where 128 bits start inside two consecutive source vec4s: whole words,
// then bits.
struct Shift {
    words: u32,
    bits: u32,
}

// Where source bit `bit` lies inside its vec4.
fn shift_at(bit: u32) -> Shift {
    return Shift((bit >> 5u) & 3u, bit & 31u);
}

// The 128 bits of the 256 in a:b (a first) that start `shift` into a. The
// branches depend only on the shift, which is the same for every unit of a
// run, so lanes working on one run never diverge.
fn funnel_by(a: vec4<u32>, b: vec4<u32>, shift: Shift) -> vec4<u32> {
    var x0 = a;
    var x1 = b;
    if (shift.words >= 2u) {
        x0 = vec4<u32>(a.z, a.w, b.x, b.y);
        x1 = vec4<u32>(b.z, b.w, 0u, 0u);
    }
    if ((shift.words & 1u) != 0u) {
        x0 = vec4<u32>(x0.y, x0.z, x0.w, x1.x);
        x1 = vec4<u32>(x1.y, x1.z, x1.w, 0u);
    }
    if (shift.bits == 0u) {
        return x0;
    }
    let next = vec4<u32>(x0.y, x0.z, x0.w, x1.x);
    return (x0 >> vec4<u32>(shift.bits)) | (next << vec4<u32>(32u - shift.bits));
}

// The 128 source bits from bit `bit`. Both vec4s are loaded, the second
// clamped to the binding (it is used only when `bit` does not start a vec4,
// and then it lies in the binding).
fn src_bits_128(bit: u32) -> vec4<u32> {
    let at = bit >> 7u;
    let next = min(at + 1u, arrayLength(&src_vec4) - 1u);
    return funnel_by(ld_src(__site__, at), ld_src(__site__, next), shift_at(bit));
}

// The low `n` bits (0..=128) of a 128-bit value, the rest zero.
fn low_bits(v: vec4<u32>, n: u32) -> vec4<u32> {
    let base = vec4<u32>(0u, 32u, 64u, 96u);
    let have = select(vec4<u32>(0u), vec4<u32>(n) - base, vec4<u32>(n) > base);
    let partial = (vec4<u32>(1u) << min(have, vec4<u32>(31u))) - vec4<u32>(1u);
    return v & select(partial, vec4<u32>(0xFFFFFFFFu), have >= vec4<u32>(32u));
}

// A 128-bit value shifted up by `n` bits (0..128), zeros shifted in.
fn shift_up(v: vec4<u32>, n: u32) -> vec4<u32> {
    let words = n >> 5u;
    let b = n & 31u;
    let x = select(v, vec4<u32>(0u, v.x, v.y, v.z), (words & 1u) != 0u);
    let y = select(x, vec4<u32>(0u, 0u, x.x, x.y), (words & 2u) != 0u);
    let prev = vec4<u32>(0u, y.x, y.y, y.z);
    return select((y << vec4<u32>(b)) | (prev >> vec4<u32>(32u - b)), y, b == 0u);
}

