//! A CPU emulator of the encode contract: binds a plan at concrete offsets
//! (`SplitPlan::bind`), then moves bits one at a time exactly as the copy
//! commands and the shader's table say, inside memory buffers filled with
//! sentinel bytes. It asserts every rule the GPU relies on: bindings start
//! aligned and fit their buffers and the binding limit, no unit is written by
//! two entries of one pass, every read lies in its source binding and every
//! written bit in its binding and in its caller's region.

#![allow(dead_code)]

use std::collections::HashSet;

use wgpu_split::plan::internals::{
    BoundDispatch, FLAG_PAD, FLAG_SKIP, SlotBinding, TableEntry, TableHeader, UNITS_PER_INVOCATION,
    WORKGROUP_SIZE,
};
use wgpu_split::plan::internals::{GeneratedLayout, RowBlock, RowCopies, RowStreams};
use wgpu_split::plan::{Kernel, LaneOrder, SplitPlan, Usages};
use wgpu_split::{HostTensor, ResolvedSplit, host};

use super::Rng;

/// A region of one of the emulated memory buffers.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    pub buffer: usize,
    pub offset: u64,
    pub size: u64,
}

const SENTINEL: u8 = 0xA5;

/// What a destination slot of a dispatch writes: a destination and its
/// binding, or nothing (a spare slot).
type SlotTarget = Option<(usize, std::ops::Range<u64>)>;

fn bit(bytes: &[u8], b: u64) -> u8 {
    (bytes[(b / 8) as usize] >> (b % 8)) & 1
}

fn set_bit(bytes: &mut [u8], b: u64, v: u8) {
    let byte = &mut bytes[(b / 8) as usize];
    *byte = (*byte & !(1 << (b % 8))) | (v << (b % 8));
}

fn inside(r: &Region, byte: u64) -> bool {
    byte >= r.offset && byte < r.offset + r.size
}

/// The planner's view of an emulated region: its buffer's size, and every
/// usage (the GPU tests check usages).
fn plain(memory: &[Vec<u8>], r: &Region) -> wgpu_split::plan::internals::Region {
    wgpu_split::plan::internals::Region {
        buffer: r.buffer,
        buffer_size: memory[r.buffer].len() as u64,
        usages: Usages {
            storage: true,
            copy_src: true,
            copy_dst: true,
        },
        offset: r.offset,
        size: r.size,
    }
}

/// Runs `plan` on `memory`: the input is `input`, the destinations
/// `destinations` (one per output, or the arena). The planner's region
/// checks run first, as an encode runs them, and must pass.
pub fn emulate(plan: &SplitPlan, memory: &mut [Vec<u8>], input: Region, destinations: &[Region]) {
    let plain_destinations: Vec<_> = destinations.iter().map(|d| plain(memory, d)).collect();
    let bound = plan
        .bind(&plain(memory, &input), &plain_destinations)
        .unwrap_or_else(|e| panic!("the planner refused the emulated regions: {e}"));
    for c in plan.copies() {
        let d = destinations[plan.placement().destination_of(c.output)];
        for k in 0..c.count {
            let src = input.offset + c.src_offset_bytes + k * c.src_stride_bytes;
            let dst = d.offset + c.dst_offset_bytes + k * c.size_bytes;
            assert!(
                src.is_multiple_of(4) && dst.is_multiple_of(4) && c.size_bytes.is_multiple_of(4)
            );
            assert!(inside(&d, dst) && dst + c.size_bytes <= d.offset + d.size);
            let bytes = memory[input.buffer][src as usize..(src + c.size_bytes) as usize].to_vec();
            memory[d.buffer][dst as usize..(dst + c.size_bytes) as usize].copy_from_slice(&bytes);
        }
    }
    if plan.dispatch_count() == 0 {
        return;
    }
    let limits = plan.limits();
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
    let bound_table = bound.table();
    assert_eq!(bound_table.len() as u64, bound.table_len());
    for b in &bound.dispatches {
        let pass = &plan.passes()[b.pass];
        check_no_writable_aliasing(plan, b, bound.writable_source, input, destinations);
        // Per slot: the destination and its binding (None: a spare slot).
        let dst: Vec<SlotTarget> = b
            .dst
            .iter()
            .map(|slot| match slot {
                SlotBinding::Destination { destination, bytes } => {
                    Some((*destination, bytes.clone()))
                }
                SlotBinding::Spare => None,
            })
            .collect();
        let bound_ranges = dst.iter().flatten().map(|(_, r)| r);
        for range in std::iter::once(&b.src).chain(bound_ranges) {
            assert_eq!(range.start % align, 0, "binding {range:?} starts aligned");
            assert!(range.end - range.start <= limits.max_storage_buffer_binding_size);
            assert_eq!(
                (range.end - range.start) % 4,
                0,
                "binding {range:?} in words"
            );
        }
        assert!(b.src.end as usize <= memory[input.buffer].len());
        assert!(b.dst.len() as u32 <= limits.destinations_per_dispatch());
        assert_eq!(
            b.dst.len() as u32,
            plan.pass_shader(b.pass).slots(),
            "a binding per slot of the pass's module"
        );
        let table = &bound_table[b.table_bytes.start as usize..b.table_bytes.end as usize];
        let header_size = TableHeader::SIZE as usize;
        let header: TableHeader = bytemuck::pod_read_unaligned(&table[..header_size]);
        let mut entries: Vec<TableEntry> = bytemuck::pod_collect_to_vec(&table[header_size..]);
        // A separate destinations' table holds one entry per slot of the
        // shader; the ones past the pass's are zero. An arena's table (in
        // storage, or uniform for row copies) holds exactly the pass's.
        let unused = entries.split_off(header.entry_count as usize);
        assert!(unused.iter().all(|e| *e == bytemuck::Zeroable::zeroed()));
        let src_shift_units = bind_entries(plan, &header, &mut entries, b, bound.shifted);
        if plan.placement().is_shared() {
            assert!(unused.is_empty());
        }
        let grid = u64::from(b.workgroups[0]) * u64::from(b.workgroups[1]);
        assert!(
            grid * u64::from(WORKGROUP_SIZE) >= u64::from(header.invocations),
            "the grid covers the table's invocations"
        );
        // A regrouped dispatch runs entries of several passes; its
        // invocations are checked against its entries below.
        if !bound.regrouped {
            assert_eq!(header.invocations, pass.invocations);
        }
        let mut generated = GeneratedPass {
            unit_bytes: plan.kernel().unit_bits() / 8,
            invocations: header.invocations,
            entries: &entries,
            src: (input.buffer, &b.src),
            src_shift_units,
            dst: &dst,
            destinations,
            owned: HashSet::new(),
        };
        // Each kernel as its WGSL does it.
        // Generated kernels: one dispatch, or one per group of separate
        // destinations (each group a module of its own).
        let layout = pass.layout.as_ref();
        if layout.is_some() {
            let groups = plan.dispatch_count() == 1 || !plan.placement().is_shared();
            assert!(groups, "an arena's generated kernel is one dispatch");
        }
        match (plan.kernel(), layout) {
            (kernel @ (Kernel::Words | Kernel::Vec4 | Kernel::Funnel), None) => {
                if kernel == Kernel::Funnel {
                    check_funnel_entries(&entries, &b.src);
                }
                run_table_driven(
                    (plan, b.pass),
                    &entries,
                    &header,
                    (&b.src, &dst),
                    input,
                    destinations,
                    memory,
                )
            }
            (Kernel::RowBlocks, Some(GeneratedLayout::RowBlock(rb))) => {
                run_row_blocks(rb, &mut generated, memory)
            }
            (Kernel::RowStreams, Some(GeneratedLayout::RowStreams(rs))) => {
                run_row_streams(rs, &mut generated, memory)
            }
            (Kernel::RowCopies | Kernel::RowWords, Some(GeneratedLayout::RowCopies(rc))) => {
                run_row_copies(rc, &mut generated, memory)
            }
            (kernel, layout) => panic!("no emulation of {kernel} with layout {layout:?}"),
        }
    }
}

/// The entries at the dispatch's bindings, as the shader's
/// `source_shift_bits` and `dst_shift_<slot>` compute them: a binding starts
/// at the caller's offset aligned down and ends with its window, so its
/// length in units less the window's units (from the table) is the shift.
/// Entries of spare slots are left as they are (nothing writes them). A
/// module without shifts (`shifted` false) compiles them out: every shift
/// must then be zero.
fn bind_entries(
    plan: &SplitPlan,
    header: &TableHeader,
    entries: &mut [TableEntry],
    b: &BoundDispatch,
    shifted: bool,
) -> u32 {
    let unit_bytes = plan.kernel().unit_bits() / 8;
    let units = |r: &std::ops::Range<u64>| ((r.end - r.start) / unit_bytes) as u32;
    let src_shift = units(&b.src).wrapping_sub(header.source_window_units);
    assert!(
        shifted || src_shift == 0,
        "a source shift in a module without shifts"
    );
    for e in entries {
        e.src_bit = e
            .src_bit
            .wrapping_add(src_shift.wrapping_mul(plan.kernel().unit_bits() as u32));
        if let SlotBinding::Destination { bytes, .. } = &b.dst[e.dst_slot as usize] {
            assert!(units(bytes) >= e.window_units, "a binding holds its window");
            let shift = units(bytes) - e.window_units;
            assert!(
                shifted || shift == 0,
                "a destination shift in a module without shifts"
            );
            e.dst_unit += shift;
        }
    }
    src_shift
}

/// WebGPU's rules (which Dawn enforces and wgpu 30 does not): no two
/// writable storage bindings of one dispatch overlap in one buffer, and a
/// buffer bound read-only is not also bound writable (the source is bound
/// writable where a destination shares its buffer). The splitter's spare
/// buffer counts as a buffer of its own.
fn check_no_writable_aliasing(
    plan: &SplitPlan,
    b: &BoundDispatch,
    writable_source: bool,
    input: Region,
    destinations: &[Region],
) {
    const SPARE: usize = usize::MAX;
    let mut writable: Vec<(usize, std::ops::Range<u64>)> = b
        .dst
        .iter()
        .enumerate()
        .map(|(slot, binding)| match binding {
            SlotBinding::Destination { destination, bytes } => {
                (destinations[*destination].buffer, bytes.clone())
            }
            SlotBinding::Spare => (SPARE, plan.spare_binding(slot)),
        })
        .collect();
    let shared = writable.iter().any(|(buffer, _)| *buffer == input.buffer);
    assert!(
        !shared || writable_source,
        "the source is bound writable where a destination shares its buffer"
    );
    if writable_source {
        writable.push((input.buffer, b.src.clone()));
    }
    for (i, (a, ra)) in writable.iter().enumerate() {
        for (b2, rb) in &writable[i + 1..] {
            let overlap = ra.start < rb.end && rb.start < ra.end;
            assert!(
                a != b2 || !overlap,
                "writable storage bindings alias: {ra:?} and {rb:?} of buffer {a}"
            );
        }
    }
}

/// True when the dispatch writes entry `e` (no [`FLAG_SKIP`]).
fn writes(e: &TableEntry) -> bool {
    e.flags & FLAG_SKIP == 0
}

/// What the funnel shader assumes of every entry.
fn check_funnel_entries(entries: &[TableEntry], src: &std::ops::Range<u64>) {
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
/// bits, moved as the table says, with the invocation ranges and the
/// one-writer-per-unit rule checked.
fn run_table_driven(
    (plan, pass): (&SplitPlan, usize),
    entries: &[TableEntry],
    header: &TableHeader,
    (src, dst): (&std::ops::Range<u64>, &[SlotTarget]),
    input: Region,
    destinations: &[Region],
    memory: &mut [Vec<u8>],
) {
    let unit = plan.kernel().unit_bits();
    let lanes = plan.pass_shader(pass).lanes();
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
        let region = destinations[*destination];
        assert!(range.end as usize <= memory[region.buffer].len());
        move_entry(e, unit, memory, input.buffer, src, region, range);
    }
    assert_eq!(next_invocation, header.invocations);
}

/// The one pass of a generated kernel: its table entries and bindings, and
/// the destination bytes written so far.
struct GeneratedPass<'a> {
    /// Bytes per unit of the kernel.
    unit_bytes: u64,
    invocations: u32,
    entries: &'a [TableEntry],
    /// The source buffer and its binding.
    src: (usize, &'a std::ops::Range<u64>),
    /// Units the source binding starts before the source window.
    src_shift_units: u32,
    /// Per slot: the destination and its binding.
    dst: &'a [SlotTarget],
    destinations: &'a [Region],
    owned: HashSet<(u32, u64)>,
}

impl GeneratedPass<'_> {
    /// One entry per gathered output, entry `j` writing slot `j` (slot 0
    /// in an arena).
    fn check_entries(&self, outputs: usize) {
        assert_eq!(self.entries.len(), outputs, "one entry per gathered output");
        for (j, e) in self.entries.iter().enumerate() {
            let slot = if self.dst.len() == 1 { 0 } else { j };
            assert_eq!(e.dst_slot as usize, slot);
        }
    }

    /// Where a generated module reads a run that starts at input bit
    /// `layout_bit` (a constant it compiles in) at this pass's source
    /// binding, the binding's shift added; asserted to be where entry
    /// `e` (shift added too) says the run starts.
    fn compiled_src_bit(&self, e: &TableEntry, layout_bit: u64) -> u64 {
        let bit = layout_bit + u64::from(self.src_shift_units) * self.unit_bytes * 8;
        assert_eq!(
            u64::from(e.src_bit),
            bit,
            "the layout's run start is the table's"
        );
        bit
    }

    /// The source binding's bytes.
    fn src_binding<'m>(&self, memory: &'m [Vec<u8>]) -> &'m [u8] {
        let (buffer, range) = self.src;
        &memory[buffer][range.start as usize..range.end as usize]
    }

    /// Writes `bytes` at byte `offset` of entry `e`'s destination (counted
    /// from its first unit), asserting that they lie inside the binding and
    /// the caller's region and were not written before.
    fn store(
        &mut self,
        memory: &mut [Vec<u8>],
        e: &TableEntry,
        offset: u64,
        bytes: &[u8],
        what: &str,
    ) {
        let (destination, range) = self.dst[e.dst_slot as usize]
            .as_ref()
            .expect("an entry writes a spare slot");
        let region = self.destinations[*destination];
        let byte = range.start + u64::from(e.dst_unit) * self.unit_bytes + offset;
        let last = byte + bytes.len() as u64 - 1;
        assert!(last < range.end, "{what} written outside its binding");
        assert!(
            inside(&region, byte) && inside(&region, last),
            "{what} at {byte} outside the caller's region {region:?}"
        );
        assert!(
            self.owned.insert((e.dst_slot, byte)),
            "{what} at {byte} written twice"
        );
        let at = byte as usize;
        memory[region.buffer][at..at + bytes.len()].copy_from_slice(bytes);
    }
}

/// The generated row-block kernel, as its WGSL does it: invocation `g`
/// loads block `g` (from the first entry's source bit less its output's
/// offset) and writes each gathered output's share, word by word from the
/// layout's pieces, at its entry's destination unit.
fn run_row_blocks(rb: &RowBlock, pass: &mut GeneratedPass<'_>, memory: &mut [Vec<u8>]) {
    pass.check_entries(rb.outputs.len());
    // Blocked: an invocation per block. Striped: a workgroup per tile of
    // blocks, staged, each lane then writing one output vec4; the bits
    // written are the same.
    let out0_bits = rb.outputs[0].words.len() as u32 * 32;
    let blocks = match rb.lanes {
        LaneOrder::Blocked => pass.invocations,
        LaneOrder::Striped => {
            let blocks = pass.entries[0].len_bits / out0_bits;
            assert_eq!(
                pass.invocations,
                blocks.div_ceil(rb.tile) * 256,
                "a workgroup per tile"
            );
            assert!(rb.tile * rb.src_vec4s <= 256, "a tile fits the workgroup");
            blocks
        }
    };
    for (e, out) in pass.entries.iter().zip(&rb.outputs) {
        let per_block = out.words.len() as u64 / 4;
        assert_eq!(e.units_per_invocation, 0, "the layout says the units");
        assert_eq!(u64::from(e.len_bits), u64::from(blocks) * per_block * 128);
        assert_eq!(e.first_bit, 0);
    }
    let base = u64::from(
        pass.entries[0]
            .src_bit
            .wrapping_sub(rb.outputs[0].offset_bits),
    ) / 128;
    for g in 0..u64::from(blocks) {
        let first_byte = (base + g * u64::from(rb.src_vec4s)) * 16;
        let bytes = 16 * u64::from(rb.src_vec4s);
        let binding = pass.src_binding(memory);
        assert!(
            first_byte + bytes <= binding.len() as u64,
            "block read outside its binding"
        );
        let words: Vec<u32> = binding[first_byte as usize..(first_byte + bytes) as usize]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        for (e, out) in pass
            .entries
            .iter()
            .zip(&rb.outputs)
            .filter(|(e, _)| writes(e))
        {
            let share = g * out.words.len() as u64 * 4;
            for (w, pieces) in out.words.iter().enumerate() {
                let value = pieces.iter().fold(0u32, |v, p| {
                    let mask = if p.len == 32 {
                        u32::MAX
                    } else {
                        (1 << p.len) - 1
                    };
                    v | (((words[p.src_word as usize] >> p.shift) & mask) << p.dst_bit)
                });
                let offset = share + w as u64 * 4;
                pass.store(memory, e, offset, &value.to_le_bytes(), "row block word");
            }
        }
    }
}

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
fn run_row_streams(rs: &RowStreams, pass: &mut GeneratedPass<'_>, memory: &mut [Vec<u8>]) {
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

/// The generated row-copy kernel (vec4s or words), as its WGSL does it.
/// Blocked: invocation `g` copies units `[part * n, part * n + n)` (n the
/// output's `units`, part `g % per_row`) of row `g / per_row`'s run of
/// every output. Striped: the row's runs laid end to end, invocation `g`
/// copies unit `g % per_row` of them. Every unit of every output is
/// written exactly once, inside its binding and its caller's region.
fn run_row_copies(rc: &RowCopies, pass: &mut GeneratedPass<'_>, memory: &mut [Vec<u8>]) {
    pass.check_entries(rc.outputs.len());
    let unit = u64::from(rc.unit_bits);
    let bytes = unit / 8;
    assert_eq!(bytes, pass.unit_bytes);
    let per_row = u64::from(rc.per_row);
    let invocations = u64::from(pass.invocations);
    assert_eq!(invocations % per_row, 0);
    let rows = invocations / per_row;
    assert!(rows <= 1 || rc.block_units > 0, "rows need a stride");
    let binding = pass.src_binding(memory).to_vec();
    // Per output: its entry, its run, its place among the row's runs.
    let mut first = 0;
    let mut runs = Vec::new();
    for (e, out) in pass.entries.iter().zip(&rc.outputs) {
        let run = u64::from(out.run_units);
        assert_eq!((e.first_bit, u64::from(e.len_bits)), (0, rows * run * unit));
        let src_row0 = match rc.lanes {
            LaneOrder::Blocked => pass.compiled_src_bit(e, u64::from(out.src_unit) * unit) / unit,
            LaneOrder::Striped => {
                // Read from the (bound) table, not compiled in.
                assert_eq!(out.src_unit, 0, "not compiled in");
                u64::from(e.src_bit) / unit
            }
        };
        runs.push((*e, run, first, src_row0, u64::from(out.units)));
        first += run;
    }
    // Every (invocation, unit of a run) the module's lanes copy.
    let mut copies = Vec::new();
    for g in 0..invocations {
        let (row, lane) = (g / per_row, g % per_row);
        for (k, &(e, run, first, _, n)) in runs.iter().enumerate() {
            let units: Vec<u64> = match rc.lanes {
                LaneOrder::Blocked => {
                    assert!(n * per_row >= run, "the stretches cover the run");
                    (lane * n..lane * n + n).filter(|&u| u < run).collect()
                }
                LaneOrder::Striped => {
                    assert_eq!(per_row, first_end(&runs), "a lane per unit");
                    (lane >= first && lane < first + run)
                        .then(|| lane - first)
                        .into_iter()
                        .collect()
                }
            };
            if writes(&e) {
                copies.extend(units.into_iter().map(|u| (k, row, u)));
            }
        }
    }
    for (k, row, u) in copies {
        let (e, run, _, src_row0, _) = runs[k];
        let from = ((src_row0 + row * u64::from(rc.block_units) + u) * bytes) as usize;
        pass.store(
            memory,
            &e,
            (row * run + u) * bytes,
            &binding[from..from + bytes as usize],
            "row copy unit",
        );
    }
}

/// The units of every run of a row, laid end to end.
fn first_end(runs: &[(TableEntry, u64, u64, u64, u64)]) -> u64 {
    runs.iter().map(|r| r.1).sum()
}

/// One entry's bits, and for the last chunk of an output the zero bits up to
/// its last word's end, exactly as the shader writes them.
fn move_entry(
    e: &TableEntry,
    unit: u64,
    memory: &mut [Vec<u8>],
    src_buffer: usize,
    src: &std::ops::Range<u64>,
    region: Region,
    dst: &std::ops::Range<u64>,
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

/// How the emulated caller lays out its buffers.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// Every destination in a buffer of its own, at offset 0.
    OwnBuffers,
    /// Every destination in one shared page, at random offsets (multiples of
    /// the plan's offset alignment) with random gaps; the input in another
    /// page at a random offset.
    Pooled,
    /// The input and every destination in one page: the destinations after
    /// the input, from one binding alignment past its end (bindings start
    /// aligned down, and the input's may not overlap theirs), with random
    /// gaps. For plans without copies (a copy cannot stay in one buffer).
    WithInput,
}

/// Runs `plan` on `input` in the emulator with `layout`, then checks every
/// output bit-exactly against the host path, the padding bytes of each
/// region zero, and every byte outside the regions still its sentinel.
pub fn check_emulated(
    plan: &SplitPlan,
    input: &HostTensor,
    split: &ResolvedSplit,
    layout: Layout,
    rng: &mut Rng,
    context: &str,
) {
    let align = plan.offset_alignment_bytes();
    let gap = |rng: &mut Rng| rng.below(4) as u64 * align;
    let bytes = input.as_bytes().unwrap();
    // The input page: random bytes before, the tensor, random bytes after.
    let input_offset = gap(rng);
    let mut input_page = rng.bytes(input_offset as usize);
    input_page.extend_from_slice(bytes);
    input_page.extend(rng.bytes(64));
    let mut memory = vec![input_page];
    let input_region = Region {
        buffer: 0,
        offset: input_offset,
        size: bytes.len() as u64,
    };
    let mut destinations = Vec::new();
    let mut page_end = 0;
    if let Layout::WithInput = layout {
        let binding_alignment = plan.limits().min_storage_buffer_offset_alignment as u64;
        page_end = (input_offset + bytes.len() as u64).next_multiple_of(4) + binding_alignment;
    }
    for i in 0..plan.destination_count() {
        let size = plan.destination_bytes(i);
        let region = match layout {
            Layout::OwnBuffers => {
                memory.push(vec![SENTINEL; size as usize]);
                Region {
                    buffer: memory.len() - 1,
                    offset: 0,
                    size,
                }
            }
            Layout::Pooled | Layout::WithInput => {
                let offset = page_end + gap(rng);
                page_end = offset + size;
                Region {
                    buffer: if let Layout::WithInput = layout { 0 } else { 1 },
                    offset,
                    size,
                }
            }
        };
        destinations.push(region);
    }
    match layout {
        Layout::Pooled => memory.insert(1, vec![SENTINEL; (page_end + 64) as usize]),
        Layout::WithInput => memory[0].resize((page_end + 64) as usize, SENTINEL),
        Layout::OwnBuffers => {}
    }
    let before = memory.clone();
    emulate(plan, &mut memory, input_region, &destinations);
    let input_bytes = input_offset as usize..input_offset as usize + bytes.len();
    assert_eq!(
        memory[0][input_bytes.clone()],
        before[0][input_bytes],
        "{context}: the input is never written"
    );
    let expected = host::split(input, split).unwrap();
    for (i, (o, e)) in plan.outputs().iter().zip(&expected).enumerate() {
        assert_eq!(o.shape, e.shape(), "{context}: output {i} shape");
        let region = destinations[plan.placement().destination_of(i)];
        let start = region.offset + o.arena_offset_bytes;
        let got = &memory[region.buffer][start as usize..(start + o.len_bytes) as usize];
        assert_eq!(got, e.as_bytes().unwrap(), "{context}: output {i}");
        let pad = &memory[region.buffer]
            [(start + o.len_bytes) as usize..(start + o.region_bytes) as usize];
        assert!(
            pad.iter().all(|&b| b == 0),
            "{context}: output {i} padding {pad:?}"
        );
    }
    for (b, (after, before)) in memory.iter().zip(&before).enumerate() {
        for (at, (x, y)) in after.iter().zip(before).enumerate() {
            let covered = destinations
                .iter()
                .any(|r| r.buffer == b && inside(r, at as u64));
            assert!(
                covered || x == y,
                "{context}: sentinel byte {at} of buffer {b} changed"
            );
        }
    }
}
