//! Rounding to multiples: the one place the crate aligns offsets and sizes.

/// `x` rounded up to a multiple of `a` (`a > 0`).
pub(crate) fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `x` rounded down to a multiple of `a` (`a > 0`).
pub(crate) fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}
