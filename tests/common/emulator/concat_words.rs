//! The concat-words kernel, as `shaders/concat_words.wgsl` does it, from
//! its layout: lane `g` owns word `g` of the pass's window of the tensor
//! (word `g` plus the binding's shift of the source binding), assembles it
//! from every piece whose run in one of the rows the shader looks at
//! overlaps the word, zeroes the bits past the tensor's end where the
//! layout's last piece ends the row, and writes the bits it assembled (a
//! whole word, or a masked read-modify-write).

use std::collections::HashSet;

use super::generated::GeneratedPass;
use super::{Way, bit, set_bit, writes};

/// A concat-words layout, as plain numbers: bits per tensor row; per piece
/// (in entry order) its run's start after piece 0's run and its length;
/// whether the last piece ends the row.
pub(super) struct Layout {
    pub block_bits: u32,
    pub pieces: Vec<(u32, u32)>,
    pub ends_rows: bool,
}

/// Runs the dispatch `pass` of a concat-words layout. Every lane whose
/// word a piece's run (or the tensor's end) touches is emulated as the
/// shader runs it; the others assemble nothing and write nothing (a
/// lane's loops find no overlap), so they are skipped, which keeps the
/// emulation of many groups over a long tensor linear. `tensor_bits`
/// holds every tensor bit written so far by the plan: each is written
/// once.
pub(super) fn run_concat_words(
    layout: &Layout,
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
    tensor_bits: &mut HashSet<u64>,
) {
    assert_eq!(pass.way, Way::Concat);
    assert_eq!(pass.unit_bytes, 4, "a word a unit");
    pass.check_entries(layout.pieces.len());
    let block = i64::from(layout.block_bits);
    let e0 = pass.entries[0];
    // Piece 0's run start from the window's start: the entry's, less the
    // binding's shift (added by the binding).
    let shift_words = u64::from(pass.src_shift_units);
    let src0 = i64::from(e0.src_bit) - (shift_words * 32) as i64;
    let run0 = u64::from(layout.pieces[0].1);
    assert_eq!(u64::from(e0.len_bits) % run0, 0, "whole rows of piece 0");
    let rows = (u64::from(e0.len_bits) / run0) as i64;
    let invocations = i64::from(pass.invocations);
    // The lanes whose word some row's run of a piece overlaps, or that
    // holds the tensor's end.
    let mut lanes = std::collections::BTreeSet::new();
    let lane_of = |y: i64| (y + src0).div_euclid(32);
    for (j, &(delta, run)) in layout.pieces.iter().enumerate() {
        if !writes(&pass.entries[j]) || run == 0 {
            continue;
        }
        for row in 0..rows {
            let start = row * block + i64::from(delta);
            lanes.extend(lane_of(start)..=lane_of(start + i64::from(run) - 1));
        }
    }
    let end = tensor_end(layout, rows);
    if let Some(end) = end {
        lanes.insert(lane_of(end));
    }
    for g in lanes.into_iter().filter(|&g| (0..invocations).contains(&g)) {
        let y0 = g * 32 - src0;
        let (value, pieces) = assemble(layout, pass, memory, y0, rows);
        // The bits past the tensor's end: zero.
        let tail = match end.filter(|&end| end > y0 && end < y0 + 32) {
            Some(end) => u32::MAX << (end - y0) as u32,
            None => 0,
        };
        if pieces | tail == 0 {
            continue;
        }
        let word = (g as u64 + shift_words) * 4;
        write_word(
            pass,
            memory,
            word,
            (value & !tail, pieces, tail),
            tensor_bits,
        );
    }
}

/// Where the tensor ends, in bits from piece 0's run in row 0, when the
/// layout's last piece ends the row (its dispatch zeroes the bits past it).
fn tensor_end(layout: &Layout, rows: i64) -> Option<i64> {
    let &(delta, run) = layout.pieces.last()?;
    layout
        .ends_rows
        .then(|| (rows - 1) * i64::from(layout.block_bits) + i64::from(delta + run))
}

/// The bits of the word from bit `y0` (from piece 0's run in row 0) that
/// the pieces hold, and their mask: per piece, the rows `r0 - 1` to
/// `r0 - 1 + 32 / block + 2` as the shader's loop visits them, each run's
/// overlap with the word read from the piece's binding.
fn assemble(
    layout: &Layout,
    pass: &GeneratedPass<'_>,
    memory: &[Vec<u8>],
    y0: i64,
    rows: i64,
) -> (u32, u32) {
    let block = i64::from(layout.block_bits);
    let rows_per_word = 32 / block + 3;
    let r0 = y0.div_euclid(block);
    let (mut value, mut mask) = (0u32, 0u32);
    for (j, &(delta, run)) in layout.pieces.iter().enumerate() {
        let e = pass.entries[j];
        if !writes(&e) {
            continue;
        }
        for k in 0..rows_per_word {
            let row = r0 - 1 + k;
            let start = row * block + i64::from(delta);
            let lo = start.max(y0);
            let hi = (start + i64::from(run)).min(y0 + 32);
            if row < 0 || row >= rows || lo >= hi {
                continue;
            }
            // The bit in the piece, from its first unit (the shader adds
            // the entry's unit at the binding).
            let p = (row as u64) * u64::from(run) + (lo - start) as u64;
            let n = (hi - lo) as u64;
            let words = (p % 32 + n).div_ceil(32);
            let bits = pass.read_piece(memory, &e, p / 32 * 4, words * 4, "piece bits");
            let mut got = 0u32;
            for b in 0..n {
                got |= u32::from(bit(&bits, p % 32 + b)) << b;
            }
            let ones = if n == 32 { u32::MAX } else { (1 << n) - 1 };
            assert_eq!(mask & (ones << (lo - y0)), 0, "two pieces hold one bit");
            value |= got << (lo - y0);
            mask |= ones << (lo - y0);
        }
    }
    (value, mask)
}

/// Writes the bits of `value` the pieces hold (`pieces`) and the zero bits
/// past the tensor (`tail`) into the tensor's word at byte `at` of the
/// source binding (the shader stores the whole word, its other bits read
/// back), asserting the word lies inside the binding and the tensor's
/// region, no piece bit is written twice, and no dispatch zeroes a bit a
/// piece holds (each dispatch of a pass split into several zeroes the
/// tail again).
fn write_word(
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
    at: u64,
    (value, pieces, tail): (u32, u32, u32),
    tensor_bits: &mut HashSet<u64>,
) {
    assert_eq!(pieces & tail, 0, "a piece's bit past the tensor");
    let byte = pass.src.start + at;
    let buffer = pass.tensor.buffer;
    let mut word = memory[buffer][byte as usize..byte as usize + 4].to_vec();
    for b in (0..32).filter(|b| (pieces | tail) >> b & 1 == 1) {
        let absolute = byte * 8 + b;
        let piece = pieces >> b & 1 == 1;
        // Piece bits as they are, tail bits with a mark of their own.
        let key = if piece { absolute } else { absolute | 1 << 63 };
        let other = if piece { absolute | 1 << 63 } else { absolute };
        assert!(
            !tensor_bits.contains(&other),
            "tensor bit {absolute}: a piece's and the tail's"
        );
        assert!(
            tensor_bits.insert(key) || !piece,
            "tensor bit {absolute} written twice"
        );
        set_bit(&mut word, b, (value >> b & 1) as u8);
    }
    pass.write_tensor(memory, at, &word, "concat word");
}
