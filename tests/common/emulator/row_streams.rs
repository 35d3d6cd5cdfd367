//! The generated row-stream kernel (blocked and striped lanes), as its
//! WGSL does it: long runs at any bit offset, 128 bits a unit.

use wgpu_split::plan::LaneOrder;
use wgpu_split::plan::internals::RowStreams;

use super::generated::GeneratedPass;
use super::writes;

/// 128 source bits from bit `at` of a binding, asserting that every one of
/// them lies inside it (the kernel uses all 128 of each value it shifts out).
fn read_128(binding: &[u8], at: u64) -> u128 {
    assert!(
        at + 128 <= binding.len() as u64 * 8,
        "row stream read bits {at}.. outside its binding"
    );
    let byte = (at / 8) as usize;
    let mut bytes = [0u8; 17];
    let n = (binding.len() - byte).min(17);
    bytes[..n].copy_from_slice(&binding[byte..byte + n]);
    let low = u128::from_le_bytes(bytes[..16].try_into().unwrap());
    match at % 8 {
        0 => low,
        shift => (low >> shift) | (u128::from(bytes[16]) << (128 - shift)),
    }
}

/// The generated row-stream kernel, as its WGSL does it: invocation `g`
/// streams part `g % per_row` of row `g / per_row` of every output, and the
/// vec4s that straddle two rows take their low bits from the previous row's
/// run end; a short run's vec4 `g` is gathered word by word. Every vec4 of every output is written exactly once, inside its
/// binding and its caller's region.
pub(super) fn run_row_streams(
    rs: &RowStreams,
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
) {
    pass.check_entries(rs.outputs.len());
    if rs.lanes == LaneOrder::Striped {
        return run_striped_row_streams(rs, pass, memory);
    }
    let per_row = u64::from(rs.per_row);
    let invocations = u64::from(pass.invocations);
    assert_eq!(invocations % per_row, 0);
    let rows = invocations / per_row;
    let binding = pass.src_binding(memory).to_vec();
    let block = u64::from(rs.block_bits);
    for (e, out) in pass
        .entries
        .iter()
        .zip(&rs.outputs)
        .filter(|(e, _)| writes(e))
    {
        let run = u64::from(out.run_bits);
        assert_eq!((e.first_bit, u64::from(e.len_bits)), (0, rows * run));
        let src_bit = pass.compiled_src_bit(e, u64::from(out.src_bit));
        if out.is_short() {
            // Whole words: invocation g gathers the output's vec4 g.
            assert_eq!(
                (run % 32, e.src_bit % 32, u64::from(rs.block_bits) % 32),
                (0, 0, 0)
            );
            for g in 0..(rows * run / 128).min(invocations) {
                let mut value = [0u8; 16];
                for i in 0..4 {
                    let w = g * 4 + i;
                    let (row, col) = (w * 32 / run, w * 32 % run);
                    let at = src_bit + row * u64::from(rs.block_bits) + col;
                    let byte = (at / 8) as usize;
                    value[i as usize * 4..i as usize * 4 + 4]
                        .copy_from_slice(&binding[byte..byte + 4]);
                }
                pass.store(memory, e, g * 16, &value, "short-run vec4");
            }
            continue;
        }
        assert!(run >= 128, "a vec4 straddles two rows at most");
        let mut write = |unit: u64, value: u128| {
            pass.store(
                memory,
                e,
                unit * 16,
                &value.to_le_bytes(),
                "row stream vec4",
            );
        };
        for g in 0..invocations {
            let (row, part) = (g / per_row, g % per_row);
            let r0 = row * run;
            let (first, end) = (r0.div_ceil(128), (r0 + run) / 128);
            let u0 = first + part * u64::from(out.vec4s);
            for u in u0..(u0 + u64::from(out.vec4s)).min(end) {
                let at = src_bit + row * block + u * 128 - r0;
                write(u, read_128(&binding, at));
            }
        }
        for row in 1..rows {
            let r0 = row * run;
            let head = r0 % 128;
            if head != 0 {
                let run_src = src_bit + row * block;
                let tail = read_128(&binding, run_src - block + run - head);
                let next = read_128(&binding, run_src - head);
                let low = (1u128 << head) - 1;
                write(r0 / 128, (tail & low) | (next & !low));
            }
        }
    }
}

/// The striped row-stream kernel, as its WGSL does it: each entry owns the
/// consecutive invocations from its `first_invocation`, invocation
/// `first + q` writing the output's vec4 `q` (bits `[128 q, 128 q + 128)`,
/// from its row's run, the rest from the next row's where it crosses the
/// run's end; a short run's vec4 gathered word by word).
fn run_striped_row_streams(rs: &RowStreams, pass: &mut GeneratedPass<'_>, memory: &mut [Vec<u8>]) {
    let binding = pass.src_binding(memory).to_vec();
    let block = u64::from(rs.block_bits);
    let mut next = 0;
    for (e, out) in pass.entries.to_vec().iter().zip(&rs.outputs) {
        let run = u64::from(out.run_bits);
        let vec4s = u64::from(e.len_bits) / 128;
        assert_eq!((e.first_bit, u64::from(e.len_bits) % 128), (0, 0));
        assert_eq!(
            u64::from(e.first_invocation),
            next,
            "entries own consecutive ranges"
        );
        next += vec4s;
        if !writes(e) {
            continue;
        }
        // Striped modules read the run's start from the (bound) table.
        assert_eq!(out.src_bit, 0, "not compiled in");
        let src_bit = u64::from(e.src_bit);
        let bit_at = |p: u64| src_bit + (p / run) * block + p % run;
        for q in 0..vec4s {
            // Bit by bit: each of the vec4's 128 output bits from where its
            // row and column put it (a short run's four words included).
            let mut value = 0u128;
            for b in 0..128 {
                let at = bit_at(q * 128 + b);
                let bit = (binding[(at / 8) as usize] >> (at % 8)) & 1;
                value |= u128::from(bit) << b;
            }
            pass.store(
                memory,
                e,
                q * 16,
                &value.to_le_bytes(),
                "striped row stream vec4",
            );
        }
    }
    assert_eq!(next, u64::from(pass.invocations), "a lane per vec4");
}
