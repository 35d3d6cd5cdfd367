//! The funnel kernel's concat-stream layout, as
//! `shaders/concat_streams.wgsl` does it: lane `g` writes the tensor's
//! vec4 `g` of the pass's window (plus the binding's shift), from the
//! piece whose run holds its first bit and, where that run ends inside the
//! vec4, from the runs after it (the next pieces' in the row, then piece
//! 0's in the next row), at most the layout's `fragments` runs.

use std::collections::HashSet;

use wgpu_split::plan::internals::ConcatStreams;

use super::generated::GeneratedPass;
use super::{Way, writes};

/// Runs the dispatch `pass` of a concat-stream layout, asserting every
/// bit a lane uses lies inside its piece's binding and the caller's region
/// (`GeneratedPass::read_piece`) and every vec4 it writes inside the
/// tensor's (`GeneratedPass::write_tensor`, once each). A piece another
/// dispatch writes (`FLAG_SKIP`) keeps its bits (a masked
/// read-modify-write); `tensor_bits` holds every tensor bit the plan's
/// dispatches wrote so far: each is written once.
pub(super) fn run_concat_streams(
    cs: &ConcatStreams,
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
    tensor_bits: &mut HashSet<u64>,
) {
    assert_eq!(pass.way, Way::Concat, "concat streams move concats");
    assert_eq!(pass.unit_bytes, 16, "a vec4 a unit");
    pass.check_entries(cs.runs.len());
    let block = u64::from(cs.block_bits);
    let runs: Vec<u64> = cs.runs.iter().map(|&r| u64::from(r)).collect();
    let starts: Vec<u64> = runs
        .iter()
        .scan(0, |at, r| {
            let start = *at;
            *at += r;
            Some(start)
        })
        .collect();
    assert_eq!(starts.last().unwrap() + runs.last().unwrap(), block);
    let shift = u64::from(pass.src_shift_units);
    for g in 0..u64::from(pass.invocations) {
        let y = g * 128;
        let (row, col) = (y / block, y % block);
        let mut j = starts.partition_point(|&s| s <= col) - 1;
        let mut r = row;
        // From run `j` of row `r`, bit `from` of it, until the vec4 is full.
        let (mut from, mut filled, mut spans) = (col - starts[j], 0u64, 0u32);
        let (mut mine, mut v) = (0u128, 0u128);
        while filled < 128 {
            spans += 1;
            let n = (runs[j] - from).min(128 - filled);
            if writes(&pass.entries[j]) {
                v |= piece_bits(pass, memory, j, r * runs[j] + from, n) << filled;
                mine |= low_ones(filled + n) & !low_ones(filled);
            }
            filled += n;
            from = 0;
            j += 1;
            if j == runs.len() {
                (j, r) = (0, r + 1);
            }
        }
        assert!(
            spans <= cs.fragments,
            "vec4 {g} spans {spans} runs, past the layout's {}",
            cs.fragments
        );
        if mine == 0 {
            continue;
        }
        let at = (g + shift) * 16;
        let byte = pass.src.start + at;
        let old = u128::from_le_bytes(
            memory[pass.tensor.buffer][byte as usize..byte as usize + 16]
                .try_into()
                .unwrap(),
        );
        for b in (0..128).filter(|b| mine >> b & 1 == 1) {
            assert!(
                tensor_bits.insert(byte * 8 + b),
                "tensor bit {} written twice",
                byte * 8 + b
            );
        }
        let value = (old & !mine) | (v & mine);
        pass.write_tensor(memory, at, &value.to_le_bytes(), "concat stream vec4");
    }
}

/// Bits `p..p + n` of entry `j`'s piece (from its first unit), low first.
fn piece_bits(pass: &GeneratedPass<'_>, memory: &[Vec<u8>], j: usize, p: u64, n: u64) -> u128 {
    let e = pass.entries[j];
    assert!(
        p + n <= u64::from(e.len_bits),
        "concat stream bits {p}..{} past piece {j}'s {} bits",
        p + n,
        e.len_bits
    );
    let bytes = pass.read_piece(memory, &e, p / 8, (p % 8 + n).div_ceil(8), "concat stream");
    // Byte `i` holds bits `8i - p % 8` on of the value.
    let v = bytes.iter().enumerate().fold(0u128, |v, (i, &b)| {
        let at = 8 * i as i64 - (p % 8) as i64;
        let b = u128::from(b);
        v | match at {
            ..0 => b >> -at,
            0..128 => b << at,
            _ => 0,
        }
    });
    v & low_ones(n)
}

/// The low `n` bits set (`n` up to 128).
fn low_ones(n: u64) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}
