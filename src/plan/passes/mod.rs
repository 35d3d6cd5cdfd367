//! Grouping chunks into passes (one dispatch each) and writing each pass's
//! parameter table, as the shader reads it.

pub(crate) mod modules;
pub(crate) mod pass_table;

use std::ops::Range;

use crate::kernels::lanes::LaneOrder;
use crate::kernels::{GeneratedLayout, Kernel};
use crate::plan::choice::KernelWork;
use crate::plan::error::PlanError;
use crate::plan::geometry::chunks::Chunk;
use crate::plan::geometry::{align_down, align_up};

/// One destination a pass binds: which destination, and the bytes bound.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DstWindow {
    /// The destination bound: the output's region, or the arena (0).
    pub destination: usize,
    /// Bytes bound, relative to the destination's offset (the start is a
    /// multiple of the storage offset alignment).
    pub bytes: Range<u64>,
}

/// One dispatch: the windows it binds, its table slice and its grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pass {
    /// Bytes of the input bound, relative to the input's offset.
    pub src_window_bytes: Range<u64>,
    /// The destinations bound, in slot order (entry `dst_slot` indexes it).
    pub dst_windows: Vec<DstWindow>,
    /// This pass's table slice in [`crate::plan::SplitPlan::table`], in bytes.
    pub table_bytes: Range<u64>,
    /// Workgroups in x and y (z is 1).
    pub workgroups: [u32; 2],
    /// Invocations that do work.
    pub invocations: u32,
    /// The layout of its generated module (`None`: a table-driven kernel).
    pub layout: Option<GeneratedLayout>,
}

/// What the pass builder needs to know: the gather, the kernel and, for a
/// generated kernel, its pass's invocations and input window.
pub(crate) struct PassContext<'a> {
    pub g: &'a KernelWork<'a>,
    pub kernel: Kernel,
    /// Plans of a generated kernel: the invocations of the one pass (row
    /// blocks, or rows times invocations per row for row streams), and
    /// whether its entries own consecutive ranges of them.
    pub generated: Option<(u64, bool)>,
    /// Generated kernels read whole input rows (row blocks load whole
    /// blocks; row streams locate every run from the row start): their pass
    /// binds these bytes of the input (from 0, or from a group's first run
    /// aligned down, to the input's end), whatever windows the outputs read,
    /// and the layout's run starts count from the window's start.
    pub input_window: Option<Range<u64>>,
}

impl<'a> PassContext<'a> {
    /// The context of `kernel` (with `layout`, for a generated kernel whose
    /// pass binds `input_window`) over `g`.
    pub fn new(
        g: &'a KernelWork<'a>,
        kernel: Kernel,
        layout: Option<&GeneratedLayout>,
        input_window: Option<Range<u64>>,
    ) -> Self {
        PassContext {
            g,
            kernel,
            generated: layout.map(|l| {
                let window_bits = input_window
                    .as_ref()
                    .map_or(u64::MAX, |w| (w.end - w.start) * 8);
                let invocations = l.invocations_over(g.outer, window_bits);
                (invocations, l.generated().entry_ranges())
            }),
            input_window,
        }
    }
}

/// A destination bound by a pass being grouped.
pub(super) struct Slot {
    pub(super) destination: usize,
    pub(super) bytes: Range<u64>,
    /// End (exclusive, in bytes) of the last member's destination units.
    pub(super) last_end: u64,
}

/// Chunks gathered into one pass: the union of their windows and their work.
pub(super) struct PassGroup {
    pub(super) src: Range<u64>,
    pub(super) slots: Vec<Slot>,
    pub(super) members: Vec<(Chunk, usize)>,
    pub(super) invocations: u64,
}

fn union(a: &Range<u64>, b: &Range<u64>) -> Range<u64> {
    a.start.min(b.start)..a.end.max(b.end)
}

impl PassContext<'_> {
    /// The chunk's first destination bit, counted from its destination's start.
    pub(super) fn dst_bit(&self, c: &Chunk) -> u64 {
        self.g.dst_offsets_bytes[c.output] * 8 + c.start_bit
    }

    /// Units a chunk writes, counted from the unit holding its first bit.
    /// Window starts are multiples of the unit, so the bit inside the first
    /// unit is the same whether counted from the destination or from a
    /// window: grouping and table writing count the same work.
    pub(super) fn units(&self, c: &Chunk) -> u64 {
        let unit = self.kernel.unit_bits();
        (self.dst_bit(c) % unit + c.len_bits()).div_ceil(unit)
    }

    /// Units an invocation of a table-driven kernel moves of a chunk: a
    /// stretch of [`crate::plan::internals::UNITS_PER_INVOCATION`]
    /// (blocked), or one (striped: consecutive invocations on consecutive
    /// units), more where the grid cannot hold an invocation per unit
    /// (only under limits far below any device's).
    pub(super) fn units_per_invocation(&self, c: &Chunk) -> u64 {
        let fit = self.units(c).div_ceil(self.g.limits.max_invocations());
        self.g.lanes.units_per_invocation().max(fit)
    }

    /// Invocations a chunk needs.
    pub(super) fn invocations(&self, c: &Chunk) -> u64 {
        self.units(c).div_ceil(self.units_per_invocation(c))
    }

    /// True when a pass's entries take consecutive invocation ranges: arena
    /// chunks (the shader finds an invocation's entry by search), and the
    /// entries of striped table-driven kernels and striped generated layouts
    /// that own ranges (one unit per invocation, each lane in one entry).
    /// Else, with separate destinations, every invocation serves every
    /// slot.
    pub(super) fn entries_take_ranges(&self) -> bool {
        match self.generated {
            Some((_, ranges)) => ranges,
            None => self.g.placement.chunks_share_a_slot() || self.g.lanes == LaneOrder::Striped,
        }
    }

    /// A pass's invocations once a chunk of `work` invocations joins.
    pub(super) fn pass_invocations(&self, pass: u64, work: u64) -> u64 {
        if self.entries_take_ranges() {
            pass + work
        } else {
            pass.max(work)
        }
    }

    /// Source and destination byte ranges a chunk touches (destination
    /// widened to whole units).
    fn ranges(&self, c: &Chunk) -> (Range<u64>, Range<u64>) {
        let g = &self.g.geometry[c.output];
        let src = g.src_span_bits(c.start_bit, c.end_bit);
        let unit = self.kernel.unit_bits();
        let dst_start = self.dst_bit(c) - c.start_bit;
        let dst = (dst_start + align_down(c.start_bit, unit)) / 8
            ..(dst_start + align_up(c.end_bit, unit)) / 8;
        (src.start / 8..src.end.div_ceil(8), dst)
    }

    /// A byte range widened to a bindable window: start aligned down to the
    /// offset alignment, end up to a unit (the funnel reads whole vec4s of
    /// the source; its plans have inputs of whole vec4s).
    fn widen(&self, r: &Range<u64>) -> Range<u64> {
        let unit_bytes = self.kernel.unit_bits() / 8;
        // Whole units from a bindable start: the shader counts the caller's
        // shift in units (`arrayLength`).
        let start_alignment = self.g.limits.alignment_bytes().max(unit_bytes);
        align_down(r.start, start_alignment)..align_up(r.end, unit_bytes)
    }

    /// The longest window a pass may plan. The caller's offsets are only
    /// known when encoding; a binding starts at the offset aligned down, so
    /// one alignment is kept free for the difference.
    fn plannable_window(&self) -> u64 {
        self.g.limits.window_bytes() - self.g.limits.alignment_bytes()
    }

    /// Adds chunk `c` to `group` when its windows, grid, slots and the
    /// one-writer-per-unit rule allow; returns whether it did.
    fn join(&self, group: &mut PassGroup, c: &Chunk, src: &Range<u64>, dst: &Range<u64>) -> bool {
        let window = self.plannable_window();
        let work = self.invocations(c);
        let src_union = self.widen(&union(&group.src, src));
        let destination = self.g.placement.destination_of(c.output);
        let slot = group
            .slots
            .iter()
            .position(|s| s.destination == destination);
        let fits = group.invocations + work <= self.g.limits.max_invocations()
            && !(self.g.per_output
                && group
                    .members
                    .first()
                    .is_some_and(|m| m.0.output != c.output))
            && src_union.end - src_union.start <= window
            && match slot {
                // With separate destinations a pass holds one chunk per
                // output: each invocation serves every slot's one entry.
                Some(_) if !self.g.placement.chunks_share_a_slot() => false,
                // A chunk that starts in the unit where the previous one
                // ended (a run boundary mid-word) waits for the next pass:
                // two invocations of one dispatch never write the same unit.
                Some(i) => {
                    let s = &group.slots[i];
                    let w = self.widen(&union(&s.bytes, dst));
                    dst.start >= s.last_end && w.end - w.start <= window
                }
                None => group.slots.len() < self.g.limits.slots_per_pass(self.g.placement),
            };
        if !fits {
            return false;
        }
        group.src = src_union;
        let slot = slot.unwrap_or_else(|| {
            group.slots.push(Slot {
                destination,
                bytes: self.widen(dst),
                last_end: 0,
            });
            group.slots.len() - 1
        });
        let s = &mut group.slots[slot];
        s.bytes = self.widen(&union(&s.bytes, dst));
        s.last_end = dst.end;
        group.members.push((*c, slot));
        group.invocations = self.pass_invocations(group.invocations, work);
        true
    }

    /// Groups chunks into passes greedily, in order.
    pub(super) fn group(&self, chunks: &[Chunk]) -> Result<Vec<PassGroup>, PlanError> {
        let mut groups: Vec<PassGroup> = Vec::new();
        for c in chunks {
            let (src, dst) = self.ranges(c);
            if let Some(group) = groups.last_mut()
                && self.join(group, c, &src, &dst)
            {
                continue;
            }
            let mut group = PassGroup {
                src: self.widen(&src),
                slots: Vec::new(),
                members: Vec::new(),
                invocations: 0,
            };
            // Chunks are cut to fit a window, so an empty pass takes any.
            if !self.join(&mut group, c, &src, &dst) {
                return Err(PlanError::Internal {
                    detail: format!("chunk {c:?} does not fit an empty pass"),
                });
            }
            groups.push(group);
        }
        if let Some(window) = &self.input_window {
            for group in &mut groups {
                group.src = self.widen(window);
            }
        }
        Ok(groups)
    }
}
