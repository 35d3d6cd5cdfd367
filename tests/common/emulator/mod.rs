//! A CPU emulator of the encode contract: binds a plan at concrete offsets
//! (`SplitPlan::bind`), then moves bits exactly as the copy commands and
//! the shader's table (and, for generated kernels, the layout) say, inside
//! memory buffers filled with sentinel bytes. Splits and concats alike: a
//! concat runs its mirror split backwards (the tensor written, the pieces
//! read, copies reversed). It asserts every rule the GPU relies on:
//! bindings start aligned and fit their buffers and the binding limit, no
//! unit is written by two entries of one pass, every read lies in its
//! binding and every written bit in its binding and in its caller's
//! region, and WebGPU's aliasing rules hold in every dispatch.
//!
//! One file per concept: the dispatch loop here; the bindings' rules and
//! the entries at them (`bindings.rs`); the table-driven kernels
//! (`table_driven.rs`), the generated row kernels (`generated.rs`,
//! `row_streams.rs`), the concat-words kernel (`concat_words.rs`); the
//! checks against the host path (`checks.rs`, `concat_checks.rs`).

#![allow(dead_code)]

mod bindings;
mod checks;
mod concat_checks;
mod concat_streams;
mod concat_words;
mod generated;
pub mod permuted;
mod row_streams;
mod table_driven;

#[allow(unused_imports)]
pub use checks::{Layout, check_emulated};
#[allow(unused_imports)]
pub use concat_checks::{ConcatLayout, check_emulated_concat};

use std::collections::HashSet;
use std::ops::Range;

use wgpu_split::plan::internals::{
    BoundDispatch, BoundPlan, ConcatPieces, FLAG_SKIP, GeneratedLayout, SlotBinding, TableEntry,
    TableHeader, WORKGROUP_SIZE,
};
use wgpu_split::plan::{ConcatPlan, Kernel, Placement, SplitPlan, Usages};

use bindings::{bind_entries, check_no_writable_aliasing};
use generated::GeneratedPass;

/// A region of one of the emulated memory buffers.
#[derive(Debug, Clone, Copy)]
pub struct PlainRegion {
    pub buffer: usize,
    pub offset: u64,
    pub size: u64,
}

const SENTINEL: u8 = 0xA5;

/// Which way a plan moves bits: a split reads the tensor (the source
/// binding) and writes the pieces (the destination slots); a concat, the
/// split run backwards, reads the pieces and writes the tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    Split,
    Concat,
}

/// What a destination slot of a dispatch binds: a destination and its
/// binding, or nothing (a spare slot).
type SlotTarget = Option<(usize, Range<u64>)>;

fn bit(bytes: &[u8], b: u64) -> u8 {
    (bytes[(b / 8) as usize] >> (b % 8)) & 1
}

fn set_bit(bytes: &mut [u8], b: u64, v: u8) {
    let byte = &mut bytes[(b / 8) as usize];
    *byte = (*byte & !(1 << (b % 8))) | (v << (b % 8));
}

fn inside(r: &PlainRegion, byte: u64) -> bool {
    byte >= r.offset && byte < r.offset + r.size
}

/// The planner's view of an emulated region: its buffer's size, and every
/// usage (the GPU tests check usages).
fn plain(memory: &[Vec<u8>], r: &PlainRegion) -> wgpu_split::plan::internals::PlainRegion {
    wgpu_split::plan::internals::PlainRegion {
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
pub fn emulate(
    plan: &SplitPlan,
    memory: &mut [Vec<u8>],
    input: PlainRegion,
    destinations: &[PlainRegion],
) {
    run_plan(plan, Way::Split, memory, input, destinations);
}

/// Runs `plan` `way` between the tensor's region and the pieces'; a staged
/// plan through a scratch arena of sentinels (one more buffer), its two
/// plans in the order of `way` (a split stages the tensor, then moves the
/// scratch out; a concat moves the pieces in first), the caller's regions
/// checked against the whole plan. Returns the dispatch count.
fn run_plan(
    plan: &SplitPlan,
    way: Way,
    memory: &mut [Vec<u8>],
    tensor: PlainRegion,
    pieces: &[PlainRegion],
) -> usize {
    let Some((stage, unstage)) = plan.staged_plans() else {
        return run(plan, way, memory, tensor, pieces);
    };
    let plain_pieces: Vec<_> = pieces.iter().map(|d| plain(memory, d)).collect();
    plan.bind(&plain(memory, &tensor), &plain_pieces)
        .unwrap_or_else(|e| panic!("the planner refused the emulated regions: {e}"));
    let mut with_scratch = memory.to_vec();
    with_scratch.push(vec![SENTINEL; plan.scratch_bytes() as usize]);
    let scratch = PlainRegion {
        buffer: memory.len(),
        offset: 0,
        size: plan.scratch_bytes(),
    };
    let m = &mut with_scratch;
    let dispatches = match way {
        Way::Split => {
            run(stage, way, m, tensor, &[scratch]) + run(unstage, way, m, scratch, pieces)
        }
        Way::Concat => {
            run(unstage, way, m, scratch, pieces) + run(stage, way, m, tensor, &[scratch])
        }
    };
    with_scratch.pop();
    memory.clone_from_slice(&with_scratch);
    dispatches
}

/// Runs the concat `plan` on `memory`: `inputs` one region per concat
/// input (an input that takes no part is ignored), or the one arena; the
/// output `output`. Returns the bound plan's dispatch count.
pub fn emulate_concat(
    plan: &ConcatPlan,
    memory: &mut [Vec<u8>],
    output: PlainRegion,
    inputs: &[PlainRegion],
) -> usize {
    // The mirror's destinations, as an encode takes them.
    let pieces: Vec<PlainRegion> = match plan.placement() {
        Placement::Arena => {
            assert_eq!(inputs.len(), 1, "one arena");
            inputs.to_vec()
        }
        _ => {
            assert_eq!(inputs.len(), plan.input_count(), "a region per input");
            let taking = plan.arena_offsets();
            inputs
                .iter()
                .zip(taking)
                .filter(|(_, offset)| offset.is_some())
                .map(|(r, _)| *r)
                .collect()
        }
    };
    run_plan(plan.mirror(), Way::Concat, memory, output, &pieces)
}

/// Runs `plan` `way` on `memory` between the tensor's region and the
/// pieces' (the destinations); returns the bound dispatch count.
fn run(
    plan: &SplitPlan,
    way: Way,
    memory: &mut [Vec<u8>],
    tensor: PlainRegion,
    destinations: &[PlainRegion],
) -> usize {
    let plain_destinations: Vec<_> = destinations.iter().map(|d| plain(memory, d)).collect();
    let bound = plan
        .bind(&plain(memory, &tensor), &plain_destinations)
        .unwrap_or_else(|e| panic!("the planner refused the emulated regions: {e}"));
    run_copies(plan, way, memory, tensor, destinations);
    if plan.dispatch_count() == 0 {
        return 0;
    }
    let bound_table = bound.table();
    assert_eq!(bound_table.len() as u64, bound.table_len());
    // Every tensor bit a concat writes, over the whole plan: once each.
    let mut tensor_bits = HashSet::new();
    for b in &bound.dispatches {
        check_no_writable_aliasing(plan, way, b, bound.writable_source, tensor, destinations);
        check_bindings(plan, b, memory[tensor.buffer].len());
        let table = &bound_table[b.table_bytes.start as usize..b.table_bytes.end as usize];
        let (header, entries, src_shift_units) = read_table(plan, &bound, b, table);
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
        let mut pass = GeneratedPass {
            way,
            unit_bytes: plan.kernel().unit_bits() / 8,
            invocations: header.invocations,
            entries: &entries,
            tensor,
            src: &b.src,
            src_shift_units,
            dst: &dst,
            destinations,
            owned: HashSet::new(),
        };
        run_kernel(plan, b, &header, &mut pass, memory, &mut tensor_bits);
    }
    bound.dispatch_count()
}

/// The copy commands, as an encode records them: tensor to piece in a
/// split, piece to tensor in a concat.
fn run_copies(
    plan: &SplitPlan,
    way: Way,
    memory: &mut [Vec<u8>],
    tensor: PlainRegion,
    destinations: &[PlainRegion],
) {
    for c in plan.copies() {
        let d = destinations[plan.placement().destination_of(c.output)];
        for k in 0..c.count {
            let t = tensor.offset + c.src_offset_bytes + k * c.src_stride_bytes;
            let p = d.offset + c.dst_offset_bytes + k * c.size_bytes;
            assert!(t.is_multiple_of(4) && p.is_multiple_of(4) && c.size_bytes.is_multiple_of(4));
            assert!(inside(&d, p) && p + c.size_bytes <= d.offset + d.size);
            assert!(inside(&tensor, t) && t + c.size_bytes <= tensor.offset + tensor.size);
            let [(from, at), (to, into)] = match way {
                Way::Split => [(tensor.buffer, t), (d.buffer, p)],
                Way::Concat => [(d.buffer, p), (tensor.buffer, t)],
            };
            let bytes = memory[from][at as usize..(at + c.size_bytes) as usize].to_vec();
            memory[to][into as usize..(into + c.size_bytes) as usize].copy_from_slice(&bytes);
        }
    }
}

/// Every binding of dispatch `b` starts aligned, is whole words and fits
/// the binding limit and its buffer; a binding per slot of the module.
fn check_bindings(plan: &SplitPlan, b: &BoundDispatch, tensor_buffer_len: usize) {
    let limits = plan.limits();
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
    let bound_ranges = b.dst.iter().filter_map(|slot| match slot {
        SlotBinding::Destination { bytes, .. } => Some(bytes),
        SlotBinding::Spare => None,
    });
    for range in std::iter::once(&b.src).chain(bound_ranges) {
        assert_eq!(range.start % align, 0, "binding {range:?} starts aligned");
        assert!(range.end - range.start <= limits.max_storage_buffer_binding_size);
        assert_eq!(
            (range.end - range.start) % 4,
            0,
            "binding {range:?} in words"
        );
    }
    assert!(b.src.end as usize <= tensor_buffer_len);
    assert!(b.dst.len() as u32 <= limits.destinations_per_dispatch());
    assert_eq!(
        b.dst.len() as u32,
        plan.pass_shader(b.pass).slots(),
        "a binding per slot of the pass's module"
    );
}

/// Dispatch `b`'s table slice: its header, its entries at the dispatch's
/// bindings ([`bind_entries`]) and the source binding's shift in units;
/// checks the unused entries zero and the grid covering the invocations.
fn read_table(
    plan: &SplitPlan,
    bound: &BoundPlan<'_>,
    b: &BoundDispatch,
    table: &[u8],
) -> (TableHeader, Vec<TableEntry>, u32) {
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
    // invocations are checked against its entries.
    if !bound.regrouped {
        assert_eq!(header.invocations, plan.passes()[b.pass].invocations);
    }
    (header, entries, src_shift_units)
}

/// Dispatch `b`'s kernel, as its WGSL does it.
fn run_kernel(
    plan: &SplitPlan,
    b: &BoundDispatch,
    header: &TableHeader,
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
    tensor_bits: &mut HashSet<u64>,
) {
    // Generated kernels: one dispatch, or one per group of separate
    // destinations (each group a module of its own), or groups whose
    // module reads their places from the table (in an arena too).
    let layout = plan.passes()[b.pass].layout.as_ref();
    if let Some(layout) = layout {
        let groups = plan.dispatch_count() == 1
            || !plan.placement().is_shared()
            || layout.path() == Some("from_table");
        assert!(groups, "an arena's generated kernel is one dispatch");
    }
    let split_only = |kernel: Kernel| {
        assert_eq!(pass.way, Way::Split, "{kernel} moves splits only");
    };
    // By what the pass runs: a table-driven form (every kernel's table walk
    // is one emulation; the funnel's entries have its own invariants), or
    // the layout a per-layout form generates.
    let kernel = plan.kernel();
    match layout {
        None => {
            if kernel == Kernel::Funnel {
                split_only(kernel);
                table_driven::check_funnel_entries(pass.entries, &b.src);
            }
            table_driven::run_table_driven((plan, b.pass), header, pass, memory)
        }
        Some(GeneratedLayout::RowBlocks(rb)) => generated::run_row_blocks(rb, pass, memory),
        Some(GeneratedLayout::RowStreams(rs)) => {
            split_only(kernel);
            row_streams::run_row_streams(rs, pass, memory)
        }
        Some(GeneratedLayout::ConcatStreams(cs)) => {
            concat_streams::run_concat_streams(cs, pass, memory, tensor_bits)
        }
        Some(GeneratedLayout::RowCopies(rc)) => generated::run_row_copies(rc, pass, memory),
        Some(GeneratedLayout::ConcatWords(cw)) => {
            assert_eq!(pass.way, Way::Concat, "concat_words moves concats only");
            let pieces = match &cw.pieces {
                ConcatPieces::Fixed(pieces) => {
                    pieces.iter().map(|p| (p.delta_bits, p.run_bits)).collect()
                }
                // As the module reads them: each entry's run start after
                // entry 0's, its bits over the rows.
                &ConcatPieces::FromTable { count } => {
                    pass.check_entries(count as usize);
                    let e0 = pass.entries[0];
                    let rows = e0.len_bits / e0.run_bits;
                    pass.entries
                        .iter()
                        .map(|e| {
                            assert_eq!(
                                e.len_bits,
                                rows * e.run_bits,
                                "as many rows in every piece"
                            );
                            (e.src_bit - e0.src_bit, e.run_bits)
                        })
                        .collect()
                }
            };
            let layout = concat_words::Layout {
                block_bits: cw.block_bits,
                pieces,
                ends_rows: cw.ends_rows,
            };
            concat_words::run_concat_words(&layout, pass, memory, tensor_bits)
        }
        Some(layout) => panic!("no emulation of {kernel}'s layout {layout:?}"),
    }
}

/// True when the dispatch writes entry `e` (no [`FLAG_SKIP`]).
fn writes(e: &TableEntry) -> bool {
    e.flags & FLAG_SKIP == 0
}
