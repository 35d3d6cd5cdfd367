//! The funnel kernel's concat-stream layout, as
//! `shaders/concat_streams.wgsl` does it: lane `g` writes the tensor's
//! vec4 `g` of the pass's window (plus the binding's shift), from the
//! piece whose run holds its first bit and, where that run ends inside the
//! vec4, from the next run (the next piece's in the row, or piece 0's in
//! the next row).

use std::collections::HashSet;

use wgpu_split::plan::internals::ConcatStreams;

use super::generated::GeneratedPass;
use super::{Way, bit, writes};

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
        let j = starts.partition_point(|&s| s <= col) - 1;
        let n = starts[j] + runs[j] - col;
        let ones = if n >= 128 {
            u128::MAX
        } else {
            (1u128 << n) - 1
        };
        let mut mine = 0u128;
        let mut v = 0u128;
        if writes(&pass.entries[j]) {
            v = piece_bits(pass, memory, j, row * runs[j] + col - starts[j], n.min(128));
            mine = ones;
        }
        let (k, r) = if j + 1 == runs.len() {
            (0, row + 1)
        } else {
            (j + 1, row)
        };
        if n < 128 && writes(&pass.entries[k]) {
            v |= piece_bits(pass, memory, k, r * runs[k], 128 - n) << n;
            mine |= !ones;
        }
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
    (0..n).fold(0u128, |v, b| v | u128::from(bit(&bytes, p % 8 + b)) << b)
}
