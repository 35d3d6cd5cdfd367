//! The run-copying core that split and concat share. A split reads one
//! whole tensor (outer blocks of `block` elements) into parts, one run per
//! part per block; a concat writes the parts back into one whole tensor. The
//! copies are the same runs in both directions: byte runs filled share by
//! share on every core ([`fill_in_parallel`]) in strided walks
//! ([`gather_runs`], [`scatter_runs`]), bit runs for
//! sub-byte elements ([`copy_bits`]) and element ranges for strings
//! ([`run_ranges`]).

use crate::plan::{Run, RunLayout};

/// Below this many bytes a copy runs on the calling thread only: starting
/// threads cost more than they bring under it (on the CI machine a 4.9 MB
/// concat reached 0.69 of one memcpy on two threads, 0.99 on one; 16 MB
/// ones 1.3x on two).
const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Cuts every buffer into equal shares of whole `width`-byte elements, one
/// per thread, and calls `fill(buffer index, start, share)` for each share
/// (`start` is the share's byte offset in its buffer). Copies of
/// `total_bytes` or more use every core (up to 8); the shares of one thread
/// run on that thread.
pub(super) fn fill_in_parallel<F>(
    buffers: &mut [&mut [u8]],
    width: usize,
    total_bytes: usize,
    fill: F,
) where
    F: Fn(usize, usize, &mut [u8]) + Sync,
{
    let threads = if total_bytes >= PARALLEL_MIN_BYTES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    } else {
        1
    };
    let mut tasks: Vec<Vec<(usize, usize, &mut [u8])>> = (0..threads).map(|_| Vec::new()).collect();
    for (index, buffer) in buffers.iter_mut().enumerate() {
        let share = buffer.len().div_ceil(threads).div_ceil(width).max(1) * width;
        for (t, piece) in buffer.chunks_mut(share).enumerate() {
            tasks[t].push((index, t * share, piece));
        }
    }
    let fill = &fill;
    let run_task = move |task: Vec<(usize, usize, &mut [u8])>| {
        for (index, start, piece) in task {
            fill(index, start, piece);
        }
    };
    if threads == 1 {
        tasks.into_iter().for_each(run_task);
    } else {
        std::thread::scope(|scope| {
            for task in tasks {
                scope.spawn(move || run_task(task));
            }
        });
    }
}

/// The run lengths [`gather_runs`] and [`scatter_runs`] copy with a length
/// the compiler knows: up to four f32 or eight f16, a box's coordinates or
/// a class score. A split of 8,400 rows into a 16-byte and a 320-byte part
/// otherwise spends most of its time calling memcpy for 16 bytes.
macro_rules! by_run_length {
    ($n:expr, $copy:ident($($arg:expr),*)) => {
        match $n {
            1 => $copy($($arg,)* 1),
            2 => $copy($($arg,)* 2),
            4 => $copy($($arg,)* 4),
            6 => $copy($($arg,)* 6),
            8 => $copy($($arg,)* 8),
            12 => $copy($($arg,)* 12),
            16 => $copy($($arg,)* 16),
            32 => $copy($($arg,)* 32),
            n => $copy($($arg,)* n),
        }
    };
}

/// Fills `dst` with runs of `n` bytes, one per `stride` bytes of `src`
/// (run `r` from `src[r * stride..]`): a split's part, gathered from the
/// rows of its input. `n` is at least 1 and at most `stride`.
pub(super) fn gather_runs(dst: &mut [u8], src: &[u8], stride: usize, n: usize) {
    #[inline(always)]
    fn gather(dst: &mut [u8], src: &[u8], stride: usize, n: usize) {
        for (to, from) in dst.chunks_exact_mut(n).zip(src.chunks(stride)) {
            to.copy_from_slice(&from[..n]);
        }
    }
    by_run_length!(n, gather(dst, src, stride))
}

/// Writes `src`'s runs of `n` bytes into `dst`, one per `stride` bytes (run
/// `r` to `dst[r * stride..]`): a concat's input, scattered into the rows of
/// its output. `n` is at least 1 and at most `stride`.
pub(super) fn scatter_runs(dst: &mut [u8], src: &[u8], stride: usize, n: usize) {
    #[inline(always)]
    fn scatter(dst: &mut [u8], src: &[u8], stride: usize, n: usize) {
        for (to, from) in dst.chunks_mut(stride).zip(src.chunks_exact(n)) {
            to[..n].copy_from_slice(from);
        }
    }
    by_run_length!(n, scatter(dst, src, stride))
}

/// The element range of `run` in every outer block, in order.
pub(super) fn run_ranges(
    layout: &RunLayout,
    run: &Run,
) -> impl Iterator<Item = std::ops::Range<usize>> + use<> {
    let (block, run) = (layout.block(), *run);
    // An empty run has nothing in any block: yield nothing rather than
    // `outer` empty ranges (a zero-size tensor such as [2^33, 0] would
    // otherwise loop billions of times).
    let rows = if run.len == 0 { 0 } else { layout.outer() };
    (0..rows).map(move |o| {
        let start = o * block + run.offset;
        start..start + run.len
    })
}

/// ORs `len` bits of `src` starting at bit `from` into zeroed `dst` at bit `to`.
/// `unit` is the element width (2 or 4), which divides 8, so no element
/// straddles a byte.
pub(super) fn copy_bits(
    src: &[u8],
    from: usize,
    dst: &mut [u8],
    to: usize,
    len: usize,
    unit: usize,
) {
    let (mut from, mut to, mut len) = (from, to, len);
    if from % 8 == to % 8 {
        // Same phase: elements up to the next byte boundary, then whole bytes.
        while len > 0 && from % 8 != 0 {
            copy_unit(src, from, dst, to, unit);
            (from, to, len) = (from + unit, to + unit, len - unit);
        }
        let whole = len / 8;
        dst[to / 8..to / 8 + whole].copy_from_slice(&src[from / 8..from / 8 + whole]);
        (from, to, len) = (from + whole * 8, to + whole * 8, len - whole * 8);
    }
    while len > 0 {
        copy_unit(src, from, dst, to, unit);
        (from, to, len) = (from + unit, to + unit, len - unit);
    }
}

fn copy_unit(src: &[u8], from: usize, dst: &mut [u8], to: usize, unit: usize) {
    let mask = (1u8 << unit) - 1;
    let value = (src[from / 8] >> (from % 8)) & mask;
    dst[to / 8] |= value << (to % 8);
}
