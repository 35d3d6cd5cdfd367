//! Grouping chunks into passes (one dispatch each) and writing each pass's
//! parameter table, as the shader reads it.

use std::ops::Range;

use super::align::{align_down, align_up};
use super::chunks::Chunk;
use super::error::PlanError;
use super::gather::Gather;
use super::kernels::{GeneratedLayout, Kernel};
use super::lanes::LaneOrder;
use super::limits::PlanLimits;
use super::table::{FLAG_ALIGNED, FLAG_PAD, TableEntry, TableHeader, WORKGROUP_SIZE};

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
    pub g: &'a Gather<'a>,
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
        g: &'a Gather<'a>,
        kernel: Kernel,
        layout: Option<&GeneratedLayout>,
        input_window: Option<Range<u64>>,
    ) -> Self {
        PassContext {
            g,
            kernel,
            generated: layout.map(|l| (l.invocations(g.outer), l.generated().entry_ranges())),
            input_window,
        }
    }
}

/// A destination bound by a pass being grouped.
struct Slot {
    destination: usize,
    bytes: Range<u64>,
    /// End (exclusive, in bytes) of the last member's destination units.
    last_end: u64,
}

/// Chunks gathered into one pass: the union of their windows and their work.
struct PassGroup {
    src: Range<u64>,
    slots: Vec<Slot>,
    members: Vec<(Chunk, usize)>,
    invocations: u64,
}

fn union(a: &Range<u64>, b: &Range<u64>) -> Range<u64> {
    a.start.min(b.start)..a.end.max(b.end)
}

impl PassContext<'_> {
    /// The chunk's first destination bit, counted from its destination's start.
    fn dst_bit(&self, c: &Chunk) -> u64 {
        self.g.dst_offsets_bytes[c.output] * 8 + c.start_bit
    }

    /// Units a chunk writes, counted from the unit holding its first bit.
    /// Window starts are multiples of the unit, so the bit inside the first
    /// unit is the same whether counted from the destination or from a
    /// window: grouping and table writing count the same work.
    fn units(&self, c: &Chunk) -> u64 {
        let unit = self.kernel.unit_bits();
        (self.dst_bit(c) % unit + c.len_bits()).div_ceil(unit)
    }

    /// Units an invocation of a table-driven kernel moves of a chunk: a
    /// stretch of [`crate::plan::internals::UNITS_PER_INVOCATION`]
    /// (blocked), or one (striped: consecutive invocations on consecutive
    /// units), more where the grid cannot hold an invocation per unit
    /// (only under limits far below any device's).
    fn units_per_invocation(&self, c: &Chunk) -> u64 {
        let fit = self.units(c).div_ceil(self.g.limits.max_invocations());
        self.g.lanes.units_per_invocation().max(fit)
    }

    /// Invocations a chunk needs.
    fn invocations(&self, c: &Chunk) -> u64 {
        self.units(c).div_ceil(self.units_per_invocation(c))
    }

    /// True when a pass's entries take consecutive invocation ranges: arena
    /// chunks (the shader finds an invocation's entry by search), and the
    /// entries of striped table-driven kernels and striped generated layouts
    /// that own ranges (one unit per invocation, each lane in one entry).
    /// Else, with separate destinations, every invocation serves every
    /// slot.
    fn entries_take_ranges(&self) -> bool {
        match self.generated {
            Some((_, ranges)) => ranges,
            None => self.g.placement.chunks_share_a_slot() || self.g.lanes == LaneOrder::Striped,
        }
    }

    /// A pass's invocations once a chunk of `work` invocations joins.
    fn pass_invocations(&self, pass: u64, work: u64) -> u64 {
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
                None => group.slots.len() < self.g.placement.max_slots(self.g.limits),
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
    fn group(&self, chunks: &[Chunk]) -> Result<Vec<PassGroup>, PlanError> {
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

    /// The table entry of chunk `c`, writing slot `slot` of `group`.
    fn entry(
        &self,
        c: &Chunk,
        slot: usize,
        group: &PassGroup,
        first_invocation: u64,
        units_per_invocation: u64,
    ) -> Result<TableEntry, PlanError> {
        let g = &self.g.geometry[c.output];
        let unit = self.kernel.unit_bits();
        let dst_bit = self.dst_bit(c) - group.slots[slot].bytes.start * 8;
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
            dst_slot: to_u32(slot as u64, "destination slot")?,
            units_per_invocation: to_u32(units_per_invocation, "units per invocation")?,
            window_units: to_u32(self.window_units(&group.slots[slot].bytes), "window units")?,
        })
    }
}

/// Windows are at most 2^28 bytes, so every bit position in a table fits
/// u32; a value that does not is a planner bug, reported instead of wrapped.
pub(crate) fn to_u32(value: u64, what: &'static str) -> Result<u32, PlanError> {
    u32::try_from(value).map_err(|_| PlanError::Internal {
        detail: format!("{what} {value} does not fit the shader's u32 table"),
    })
}

/// Groups `chunks` into passes and writes every pass's table (each at an
/// offset aligned for binding) into one byte vector.
///
/// Arena tables are read-only storage buffers of any length. Uniform tables
/// (separate destinations) are sized at compile time: each holds as many
/// entries as the plan's most-used pass (the slot count of its shader),
/// unused ones zero.
pub(crate) fn build_passes(
    cx: &PassContext<'_>,
    chunks: &[Chunk],
) -> Result<(Vec<Pass>, Vec<u8>), PlanError> {
    let groups = cx.group(chunks)?;
    let slots = groups.iter().map(|g| g.slots.len()).max().unwrap_or(0);
    let mut passes = Vec::with_capacity(groups.len());
    let mut table = Vec::new();
    for group in groups {
        let (header, entries) = cx.table_of(&group)?;
        let start = align_up(table.len() as u64, cx.g.limits.table_alignment_bytes());
        table.resize(start as usize, 0);
        table.extend_from_slice(bytemuck::bytes_of(&header));
        table.extend_from_slice(bytemuck::cast_slice(&entries));
        if cx.g.placement.uniform_table() {
            let padded = table.len() + (slots - entries.len()) * TableEntry::SIZE as usize;
            table.resize(padded, 0);
        }
        passes.push(Pass {
            src_window_bytes: group.src,
            dst_windows: group
                .slots
                .into_iter()
                .map(|s| DstWindow {
                    destination: s.destination,
                    bytes: s.bytes,
                })
                .collect(),
            table_bytes: start..table.len() as u64,
            workgroups: grid(u64::from(header.invocations), cx.g.limits)?,
            invocations: header.invocations,
            layout: None,
        });
    }
    Ok((passes, table))
}

impl PassContext<'_> {
    /// Whole units of a window: a binding is the caller's shift (whole
    /// units) and then the window, so the shader's `arrayLength` less this
    /// is the shift.
    fn window_units(&self, window: &Range<u64>) -> u64 {
        (window.end - window.start) * 8 / self.kernel.unit_bits()
    }

    /// One pass's table header and entries.
    fn table_of(&self, group: &PassGroup) -> Result<(TableHeader, Vec<TableEntry>), PlanError> {
        let mut entries = Vec::with_capacity(group.members.len());
        let mut invocations: u64 = 0;
        for (c, slot) in &group.members {
            // Generated kernels: every invocation writes its share of every
            // entry, as the kernel's constants say (0 units in the table),
            // or each entry owns a range of invocations, one unit each.
            // Table-driven entries take consecutive invocation ranges (arena,
            // striped) of `units_per_invocation` units each; blocked entries
            // of separate destinations (one per slot, in slot order) all
            // start at invocation 0 and spread their units over the pass's
            // invocations.
            let (first, per) = match self.generated {
                Some((_, false)) => (0, 0),
                Some((_, true)) => (invocations, 1),
                None if self.entries_take_ranges() => (invocations, self.units_per_invocation(c)),
                None => (0, self.units(c).div_ceil(group.invocations).max(1)),
            };
            entries.push(self.entry(c, *slot, group, first, per)?);
            invocations = match self.generated {
                Some((n, false)) => n,
                _ => self.pass_invocations(invocations, self.units(c).div_ceil(per)),
            };
        }

        let header = TableHeader {
            invocations: to_u32(invocations, "invocations")?,
            entry_count: to_u32(entries.len() as u64, "entry count")?,
            source_window_units: to_u32(self.window_units(&group.src), "source window units")?,
            padding: 0,
        };
        Ok((header, entries))
    }
}

/// A tight 1-D or 2-D grid of workgroups covering `invocations` (which the
/// grouping keeps below `max_compute_workgroups_per_dimension`² workgroups).
pub(crate) fn grid(invocations: u64, limits: &PlanLimits) -> Result<[u32; 2], PlanError> {
    let groups = invocations.div_ceil(u64::from(WORKGROUP_SIZE));
    let max = u64::from(limits.max_compute_workgroups_per_dimension);
    let rows = groups.div_ceil(max).max(1);
    Ok([
        to_u32(groups.div_ceil(rows), "workgroups")?,
        to_u32(rows, "workgroup rows")?,
    ])
}
