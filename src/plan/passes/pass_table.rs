//! Each pass's parameter table, as the shader reads it: one entry per
//! chunk (its windows, runs and units at the pass's bindings), and the
//! header (invocations, entries, the source window), plus the pass's grid.

use std::ops::Range;

use crate::kernels::table::{FLAG_ALIGNED, FLAG_PAD, TableEntry, TableHeader, WORKGROUP_SIZE};
use crate::plan::error::PlanError;
use crate::plan::geometry::align_up;
use crate::plan::geometry::chunks::Chunk;
use crate::plan::limits::PlanLimits;
use crate::plan::passes::{DstWindow, Pass, PassContext, PassGroup};

impl PassContext<'_> {
    /// The table entry of chunk `c`, writing slot `slot` of `group`.
    pub(super) fn entry(
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

    /// Whole units of a window: a binding is the caller's shift (whole
    /// units) and then the window, so the shader's `arrayLength` less this
    /// is the shift.
    fn window_units(&self, window: &Range<u64>) -> u64 {
        (window.end - window.start) * 8 / self.kernel.unit_bits()
    }

    /// One pass's table header and entries.
    pub(super) fn table_of(
        &self,
        group: &PassGroup,
    ) -> Result<(TableHeader, Vec<TableEntry>), PlanError> {
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

/// Windows are at most 2^28 bytes, so every bit position in a table fits
/// u32; a value that does not is a planner bug, reported instead of wrapped.
pub(crate) fn to_u32(value: u64, what: &'static str) -> Result<u32, PlanError> {
    u32::try_from(value).map_err(|_| PlanError::Internal {
        detail: format!("{what} {value} does not fit the shader's u32 table"),
    })
}

/// The grid of workgroups covering `invocations` ([`PlanLimits::grid`];
/// the grouping keeps them below `max_compute_workgroups_per_dimension`²
/// workgroups).
pub(crate) fn grid(invocations: u64, limits: &PlanLimits) -> Result<[u32; 2], PlanError> {
    let groups = invocations.div_ceil(u64::from(WORKGROUP_SIZE));
    limits.grid(groups).ok_or_else(|| PlanError::Internal {
        detail: format!("{groups} workgroups do not fit a dispatch's grid"),
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
