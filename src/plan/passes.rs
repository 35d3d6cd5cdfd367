//! Grouping chunks into passes (one dispatch each) and writing each pass's
//! parameter table, as the shader reads it.

use std::ops::Range;

use super::abi::WORKGROUP_SIZE;
use super::abi::{FLAG_ALIGNED, FLAG_PAD, Kernel, TableEntry, TableHeader, UNITS_PER_INVOCATION};
use super::chunks::Chunk;
use super::geometry::OutputGeometry;
use super::limits::PlanLimits;
use crate::error::{Error, Result};

/// One dispatch: the windows it binds, its table slice and its grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pass {
    /// Bytes of the input bound, relative to the input's offset.
    pub src_window_bytes: Range<u64>,
    /// Bytes of the destination bound, relative to the destination's offset.
    pub dst_window_bytes: Range<u64>,
    /// This pass's table slice in [`crate::plan::SplitPlan::table`], in bytes.
    pub table_bytes: Range<u64>,
    /// Workgroups in x and y (z is 1).
    pub workgroups: [u32; 2],
    /// Invocations that do work.
    pub invocations: u32,
}

/// What the pass builder needs to know about the plan.
pub(crate) struct PassContext<'a> {
    pub geometry: &'a [OutputGeometry],
    /// Where each output starts in the destination, in bytes.
    pub dst_offsets_bytes: &'a [u64],
    pub limits: &'a PlanLimits,
    pub kernel: Kernel,
}

/// Chunks gathered into one pass: the union of their windows and their work.
struct PassGroup {
    src: Range<u64>,
    dst: Range<u64>,
    members: Vec<Chunk>,
    invocations: u64,
    /// End (exclusive, in bytes) of the last member's destination units.
    last_dst_end: u64,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

impl PassContext<'_> {
    /// The chunk's first destination bit, counted from the destination's start.
    fn dst_bit(&self, c: &Chunk) -> u64 {
        self.dst_offsets_bytes[c.output] * 8 + c.start_bit
    }

    /// Invocations a chunk needs: its units (counted from the unit holding
    /// its first bit), `UNITS_PER_INVOCATION` per invocation. Window starts
    /// are multiples of the unit, so the bit inside the first unit is the
    /// same whether counted from the destination or from a window: grouping
    /// and table writing count the same work.
    fn invocations(&self, c: &Chunk) -> u64 {
        let unit = self.kernel.unit_bits();
        (self.dst_bit(c) % unit + c.len_bits())
            .div_ceil(unit)
            .div_ceil(UNITS_PER_INVOCATION)
    }

    /// Source and destination byte ranges a chunk touches (destination
    /// widened to whole units).
    fn ranges(&self, c: &Chunk) -> (Range<u64>, Range<u64>) {
        let g = &self.geometry[c.output];
        let src = g.src_span_bits(c.start_bit, c.end_bit);
        let unit = self.kernel.unit_bits();
        let dst_start = self.dst_bit(c) - c.start_bit;
        let dst = (dst_start + align_down(c.start_bit, unit)) / 8
            ..(dst_start + align_up(c.end_bit, unit)) / 8;
        (src.start / 8..src.end.div_ceil(8), dst)
    }

    /// A byte range widened to a bindable window: start aligned down to the
    /// offset alignment, end up to a word.
    fn widen(&self, r: &Range<u64>) -> Range<u64> {
        align_down(r.start, self.limits.alignment_bytes())..align_up(r.end, 4)
    }

    /// Groups chunks into passes greedily, in order. A chunk joins the
    /// current pass when the pass's windows still fit, its grid still fits,
    /// and it does not start in the unit where the previous chunk ended (a
    /// run boundary mid-word: two invocations of one dispatch never write the
    /// same unit, so it waits for the next pass). `per_output` keeps each
    /// output in passes of its own.
    fn group(&self, chunks: &[Chunk], per_output: bool) -> Vec<PassGroup> {
        let window = self.limits.window_bytes();
        let max_invocations = self.limits.max_invocations();
        let mut groups: Vec<PassGroup> = Vec::new();
        for c in chunks {
            let (src, dst) = self.ranges(c);
            let work = self.invocations(c);
            if let Some(group) = groups.last_mut() {
                let src_union =
                    self.widen(&(group.src.start.min(src.start)..group.src.end.max(src.end)));
                let dst_union =
                    self.widen(&(group.dst.start.min(dst.start)..group.dst.end.max(dst.end)));
                let joins = group.invocations + work <= max_invocations
                    && dst.start >= group.last_dst_end
                    && !(per_output && group.members[0].output != c.output)
                    && src_union.end - src_union.start <= window
                    && dst_union.end - dst_union.start <= window;
                if joins {
                    (group.src, group.dst) = (src_union, dst_union);
                    group.members.push(*c);
                    group.invocations += work;
                    group.last_dst_end = dst.end;
                    continue;
                }
            }
            groups.push(PassGroup {
                src: self.widen(&src),
                dst: self.widen(&dst),
                members: vec![*c],
                invocations: work,
                last_dst_end: dst.end,
            });
        }
        groups
    }

    /// The table entry of chunk `c` in a pass with these windows.
    fn entry(&self, c: &Chunk, group: &PassGroup, first_invocation: u64) -> Result<TableEntry> {
        let g = &self.geometry[c.output];
        let unit = self.kernel.unit_bits();
        let dst_bit = self.dst_bit(c) - group.dst.start * 8;
        let len = c.len_bits();
        let (run, block, phase) = if c.within_run {
            (len, 0, 0)
        } else {
            (g.run_bits, g.block_bits, c.start_bit % g.run_bits)
        };
        // The shader adds the phase back, so the table holds the source bit
        // of the run start; that may lie before the window, and the shader's
        // u32 arithmetic wraps back into it.
        let src_bit = g.src_bit(c.start_bit) as i64 - phase as i64 - (group.src.start * 8) as i64;
        let first_bit = dst_bit % unit;
        let mut flags = 0;
        if c.end_bit == g.total_bits {
            flags |= FLAG_PAD;
        }
        let word_aligned = [first_bit, len, run, block, phase]
            .iter()
            .all(|v| v % 32 == 0);
        if word_aligned && src_bit % 32 == 0 {
            flags |= FLAG_ALIGNED;
        }
        Ok(TableEntry {
            first_invocation: to_u32(first_invocation, "first invocation")?,
            dst_unit: to_u32(dst_bit / unit, "destination unit")?,
            first_bit: to_u32(first_bit, "first bit")?,
            len_bits: to_u32(len, "chunk length")?,
            run_bits: to_u32(run, "run length")?,
            block_bits: to_u32(block, "block length")?,
            run_phase_bits: to_u32(phase, "run phase")?,
            // Two's complement: a source bit before the window wraps, and the
            // shader's addition of the phase wraps back.
            src_bit: src_bit as u32,
            flags,
            padding: [0; 3],
        })
    }
}

/// Windows are at most 2^28 bytes, so every bit position in a table fits
/// u32; a value that does not is a planner bug, reported instead of wrapped.
fn to_u32(value: u64, what: &'static str) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::Internal {
        detail: format!("{what} {value} does not fit the shader's u32 table"),
    })
}

/// Groups `chunks` into passes and writes every pass's table (each at an
/// offset aligned for binding) into one byte vector.
pub(crate) fn build_passes(
    cx: &PassContext<'_>,
    chunks: &[Chunk],
    per_output: bool,
) -> Result<(Vec<Pass>, Vec<u8>)> {
    let mut passes = Vec::new();
    let mut table = Vec::new();
    for group in cx.group(chunks, per_output) {
        let mut entries = Vec::with_capacity(group.members.len());
        let mut invocations: u64 = 0;
        for c in &group.members {
            entries.push(cx.entry(c, &group, invocations)?);
            invocations += cx.invocations(c);
        }
        let header = TableHeader {
            invocations: to_u32(invocations, "invocations")?,
            entry_count: to_u32(entries.len() as u64, "entry count")?,
            padding: [0; 2],
        };
        let start = align_up(table.len() as u64, cx.limits.alignment_bytes());
        table.resize(start as usize, 0);
        table.extend_from_slice(bytemuck::bytes_of(&header));
        table.extend_from_slice(bytemuck::cast_slice(&entries));
        passes.push(Pass {
            src_window_bytes: group.src,
            dst_window_bytes: group.dst,
            table_bytes: start..table.len() as u64,
            workgroups: grid(invocations, cx.limits)?,
            invocations: header.invocations,
        });
    }
    Ok((passes, table))
}

/// A tight 1-D or 2-D grid of workgroups covering `invocations` (which the
/// grouping keeps below `max_compute_workgroups_per_dimension`² workgroups).
fn grid(invocations: u64, limits: &PlanLimits) -> Result<[u32; 2]> {
    let groups = invocations.div_ceil(u64::from(WORKGROUP_SIZE));
    let max = u64::from(limits.max_compute_workgroups_per_dimension);
    let rows = groups.div_ceil(max).max(1);
    Ok([
        to_u32(groups.div_ceil(rows), "workgroups")?,
        to_u32(rows, "workgroup rows")?,
    ])
}
