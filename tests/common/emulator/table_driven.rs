//! The table-driven kernels (words, vec4, funnel), as their WGSL does
//! them: every table entry's bits, a split's from the tensor into a piece
//! (with the zero padding of an output's last word), a concat's the other
//! way in whole units.

use std::collections::HashSet;
use std::ops::Range;

use wgpu_split::plan::internals::{
    FLAG_PAD, FLAG_SKIP, TableEntry, TableHeader, UNITS_PER_INVOCATION,
};
use wgpu_split::plan::{LaneOrder, SplitPlan};

use super::generated::GeneratedPass;
use super::{PlainRegion, Way, bit, inside, set_bit};

/// What the funnel shader assumes of every entry.
pub(super) fn check_funnel_entries(entries: &[TableEntry], src: &Range<u64>) {
    for e in entries {
        assert_eq!(e.first_bit, 0, "funnel entries start on a vec4");
        assert_eq!(e.len_bits % 128, 0, "funnel entries are whole vec4s");
        assert!(
            e.run_bits >= 128,
            "a funnel unit crosses one run end at most"
        );
    }
    assert_eq!((src.end - src.start) % 16, 0, "source in whole vec4s");
}

/// A pass of a table-driven kernel (words, vec4, funnel): every entry's
/// bits, moved as the table says (a concat's the other way), with the
/// invocation ranges and the one-writer-per-unit rule checked.
pub(super) fn run_table_driven(
    (plan, pass_index): (&SplitPlan, usize),
    header: &TableHeader,
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
) {
    let unit = plan.kernel().unit_bits();
    let lanes = plan.pass_shader(pass_index).lanes();
    let (entries, dst) = (pass.entries, pass.dst);
    let mut owned = HashSet::new();
    let mut next_invocation = 0;
    for (k, e) in entries.iter().enumerate() {
        let units = (u64::from(e.first_bit) + u64::from(e.len_bits)).div_ceil(unit);
        let per = u64::from(e.units_per_invocation);
        assert!((1..=UNITS_PER_INVOCATION).contains(&per));
        let invocations = units.div_ceil(per) as u32;
        if plan.placement().is_shared() || lanes == LaneOrder::Striped {
            // Arena, or striped: consecutive invocation ranges (found by
            // search in an arena), one unit each when striped.
            // Striped: one unit an invocation, more only where the grid
            // cannot hold an invocation per unit.
            match lanes {
                LaneOrder::Blocked => assert_eq!(per, UNITS_PER_INVOCATION),
                LaneOrder::Striped => {
                    let groups = u64::from(plan.limits().max_compute_workgroups_per_dimension);
                    assert!(per == 1 || units > groups * groups * 256);
                }
            }
            assert_eq!(
                e.first_invocation, next_invocation,
                "entries sorted and dense"
            );
            if !plan.placement().is_shared() {
                assert_eq!(e.dst_slot, k as u32, "entry k writes slot k");
            }
            next_invocation += invocations;
        } else {
            // Separate: entry k is slot k's, and every invocation runs it.
            assert_eq!((e.first_invocation, e.dst_slot), (0, k as u32));
            next_invocation = next_invocation.max(invocations);
        }
        if e.flags & FLAG_SKIP != 0 {
            // Another dispatch of the pass writes it; its slot is spare here.
            assert!(
                dst[e.dst_slot as usize].is_none(),
                "a skipped entry's slot is bound"
            );
            continue;
        }
        for u in 0..units {
            assert!(
                owned.insert((e.dst_slot, u64::from(e.dst_unit) + u)),
                "two entries of one pass write the same unit"
            );
        }
        let (destination, range) = dst[e.dst_slot as usize]
            .as_ref()
            .expect("an entry writes a spare slot");
        let region = pass.destinations[*destination];
        assert!(range.end as usize <= memory[region.buffer].len());
        match pass.way {
            Way::Split => move_entry(e, unit, memory, pass.tensor.buffer, pass.src, region, range),
            Way::Concat => move_entry_back(e, unit, memory, pass),
        }
    }
    assert_eq!(next_invocation, header.invocations);
}

/// One entry's bits, and for the last chunk of an output the zero bits up to
/// its last word's end, exactly as the shader writes them.
fn move_entry(
    e: &TableEntry,
    unit: u64,
    memory: &mut [Vec<u8>],
    src_buffer: usize,
    src: &Range<u64>,
    region: PlainRegion,
    dst: &Range<u64>,
) {
    let dst_base = dst.start * 8 + u64::from(e.dst_unit) * unit + u64::from(e.first_bit);
    let write = |memory: &mut [Vec<u8>], d: u64, v: u8| {
        assert!(d < dst.end * 8, "destination bit outside its binding");
        assert!(
            inside(&region, d / 8),
            "bit {d} written outside the caller's region {region:?}"
        );
        set_bit(&mut memory[region.buffer], d, v);
    };
    for q in 0..e.len_bits {
        // The shader's u32 arithmetic, wrapping included.
        let p = q + e.run_phase_bits;
        let s = e
            .src_bit
            .wrapping_add((p / e.run_bits) * e.block_bits)
            .wrapping_add(p % e.run_bits);
        let s = u64::from(s);
        assert!(
            s < (src.end - src.start) * 8,
            "source bit outside its binding"
        );
        let v = bit(&memory[src_buffer], src.start * 8 + s);
        write(memory, dst_base + u64::from(q), v);
    }
    if e.flags & FLAG_PAD != 0 {
        let end = dst_base + u64::from(e.len_bits);
        for d in end..end.div_ceil(32) * 32 {
            write(memory, d, 0);
        }
    }
}

/// A concat's entry: the split's units the other way, as the concat
/// variants do it (`move_<slot>` reversed): whole units only (the kernels
/// fit a concat whose runs, offsets and rows are whole units), each tensor
/// unit from the piece's unit.
fn move_entry_back(
    e: &TableEntry,
    unit: u64,
    memory: &mut [Vec<u8>],
    pass: &mut GeneratedPass<'_>,
) {
    let whole = [
        e.first_bit,
        e.len_bits,
        e.run_bits,
        e.block_bits,
        e.run_phase_bits,
        e.src_bit,
    ];
    assert!(
        whole.iter().all(|&b| u64::from(b) % unit == 0),
        "a concat entry of whole units: {e:?}"
    );
    let bytes = unit / 8;
    let (run, block) = (u64::from(e.run_bits) / unit, u64::from(e.block_bits) / unit);
    let phase = u64::from(e.run_phase_bits) / unit;
    for w in 0..u64::from(e.len_bits) / unit {
        let q = w + phase;
        let s = u64::from(e.src_bit) / unit + (q / run) * block + q % run;
        let value = pass.read_piece(memory, e, w * bytes, bytes, "table-driven unit");
        pass.write_tensor(memory, s * bytes, &value, "table-driven unit");
    }
}
