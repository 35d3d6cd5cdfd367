//! How a permuted move binds its caller's regions, as plain data: the
//! copy commands (kept pieces), then the dispatches, each its module, its
//! parameters, its bindings (a region's buffer from an offset aligned down,
//! and how many bytes) and its workgroups. The GPU path records exactly
//! this ([`crate::gpu::GpuSplitter::encode`]); the Dawn replay and
//! the browser suite run the same as a [`Recording`].

use std::ops::Range;

use crate::kernels::permute::{ConcatUnits, concat_record, record};
use crate::kernels::permute_module::PermuteModule;
use crate::kernels::permute_records::{ConcatRecord, PermuteHeader, RecordMode, Words, header};
use crate::kernels::permute_tile::{self, TileSide, TileWalk};
use crate::kernels::table::WORKGROUP_SIZE;
use crate::plan::binding::regions::PlainRegion;
use crate::plan::binding::regions::overlap;
use crate::plan::error::EncodeError;
use crate::plan::limits::PlanLimits;
use crate::plan::permuted_concat_plan::PermutedConcatPlan;
use crate::plan::permuted_plan::PermutedPlan;
use crate::plan::permuted_windows::{ViewChunk, footprint};
use crate::plan::recording::{
    RecordedBinding, RecordedBuffer, RecordedCommand, RecordedModule, Recording,
};

/// The region a binding takes its buffer from: the one on the move's
/// single side (a split's input, a concat's output), or region `i` on the
/// other (a split's output, a concat's input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// A split's input, a concat's output.
    Single,
    /// A split's output `i`, a concat's input `i`.
    Each(usize),
}

/// One dispatch of a permuted move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PermutedDispatch {
    /// The module it runs.
    pub module: PermuteModule,
    /// Its parameters (binding 0, a uniform block).
    pub params: Vec<u32>,
    /// Bindings 1 and up: the binding, the region whose buffer it binds,
    /// the bytes bound.
    pub bindings: Vec<(u32, Side, Range<u64>)>,
    /// Workgroups (laid out over x and y by the encode).
    pub workgroups: u32,
}

/// Everything an encode of a permuted move records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PermutedBinding {
    /// Copy commands, recorded before the pass: the output, the input's
    /// byte offset, the bytes (a split's kept pieces).
    pub copies: Vec<(usize, u64, u64)>,
    /// The dispatches, in order, in one compute pass.
    pub dispatches: Vec<PermutedDispatch>,
}

/// A tile dispatch moving `walks` (each with the element shifts of its
/// read and write bindings) on `side`, binding `bindings`.
fn tile_dispatch(
    side: TileSide,
    bits: u32,
    writable: u32,
    walks: &[(&TileWalk, u32, u32)],
    bindings: Vec<(u32, Side, Range<u64>)>,
) -> PermutedDispatch {
    let mut params = header(walks.len(), 0).words().to_vec();
    let mut first = 0u32;
    for &(walk, read_shift, write_shift) in walks {
        let record = permute_tile::record(first, walk, read_shift, write_shift, bits);
        params.extend_from_slice(record.words());
        first += walk.workgroups() as u32;
    }
    PermutedDispatch {
        module: PermuteModule::Tile {
            slots: walks.len(),
            side,
            bits,
            writable,
        },
        params,
        bindings,
        workgroups: first,
    }
}

impl PermutedPlan {
    /// The commands of an encode of this plan from `input` into
    /// `destinations`, checked: kept pieces as copy commands where
    /// the plan has them and the buffers take them, then a dispatch per
    /// group of destinations whose bindings do not alias (outputs through
    /// tiles in dispatches of their own).
    ///
    /// # Errors
    ///
    /// The [`EncodeError`]s of the regions.
    pub(crate) fn bind(
        &self,
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> Result<PermutedBinding, EncodeError> {
        self.check_regions(input, destinations)?;
        let at = SplitAt {
            plan: self,
            input,
            destinations,
            src: self.binding(input, self.input_bytes().next_multiple_of(4)),
            bits: self.element_type().bit_width().unwrap_or(32),
        };
        let copied = |i: usize| self.copies_output(i) && at.copyable(i);
        let mut binding = PermutedBinding {
            copies: (0..self.outputs().len())
                .filter(|&i| self.outputs()[i].words > 0 && copied(i))
                .filter_map(|i| at.copy_command(i))
                .collect(),
            dispatches: Vec::new(),
        };
        let groups = self.dispatch_groups(input, destinations)?;
        if self.is_windowed() {
            let moved: Vec<usize> = groups
                .into_iter()
                .flatten()
                .filter(|&i| !copied(i))
                .collect();
            binding.dispatches = at.windowed_dispatches(&moved);
            return Ok(binding);
        }
        for group in groups {
            let (tiled, gathered): (Vec<usize>, Vec<usize>) = group
                .into_iter()
                .filter(|&i| !copied(i))
                .partition(|&i| at.tiles(i));
            for chunk in tiled.chunks(self.tile_destinations_per_dispatch()) {
                binding.dispatches.push(at.tile_dispatch(chunk));
            }
            if !gathered.is_empty() {
                binding.dispatches.push(at.gather_dispatch(&gathered));
            }
        }
        Ok(binding)
    }

    analysis_pub! {
        /// What an encode of this plan from `input` into `destinations`
        /// records, as plain data (the caller's buffers by region number,
        /// then the parameters' buffer, each dispatch's block at a multiple
        /// of 256 bytes).
        ///
        /// # Errors
        ///
        /// The [`EncodeError`]s of the regions.
        pub fn recording(
            &self,
            input: &PlainRegion,
            destinations: &[PlainRegion],
        ) -> Result<Recording, EncodeError> {
            let binding = self.bind(input, destinations)?;
            let mut recording = Recording::of_regions(std::iter::once(input).chain(destinations));
            for &(i, src_offset, size) in &binding.copies {
                recording.commands.push(RecordedCommand::Copy {
                    src: input.buffer,
                    src_offset,
                    dst: destinations[i].buffer,
                    dst_offset: destinations[i].offset,
                    size,
                });
            }
            let buffer = |b: Side| match b {
                Side::Single => input.buffer,
                Side::Each(i) => destinations[i].buffer,
            };
            record_dispatches(&mut recording, &binding, buffer, self.limits());
            Ok(recording)
        }
    }
}

impl PermutedConcatPlan {
    /// The commands of an encode of this plan from `inputs` into `output`,
    /// checked: the zeroing dispatch where pieces of elements share words,
    /// then a dispatch per group of inputs (inputs through tiles in
    /// dispatches of their own). Inputs in the output's buffer are bound
    /// writable (WebGPU forbids a buffer bound read-only beside a writable
    /// binding of it), dealt so that no two writable bindings of a dispatch
    /// overlap.
    ///
    /// # Errors
    ///
    /// The [`EncodeError`]s of the regions.
    pub(crate) fn bind(
        &self,
        inputs: &[PlainRegion],
        output: &PlainRegion,
    ) -> Result<PermutedBinding, EncodeError> {
        let groups = self.check_regions(inputs, output)?;
        let at = ConcatAt {
            plan: self,
            inputs,
            output,
            out: self.binding(output, self.output_region_bytes()),
            bits: self.element_type().bit_width().unwrap_or(32),
        };
        let mut binding = PermutedBinding::default();
        if self.is_windowed() {
            if self.zeroes_output() {
                binding.dispatches.extend(at.windowed_clears());
            }
            let moved: Vec<usize> = groups.into_iter().flatten().collect();
            binding.dispatches.extend(at.windowed_dispatches(&moved));
            return Ok(binding);
        }
        if self.zeroes_output() {
            binding.dispatches.push(at.clear_dispatch());
        }
        for group in groups.iter().flat_map(|g| at.dealt(g)) {
            let (tiled, gathered): (Vec<usize>, Vec<usize>) =
                group.into_iter().partition(|&i| at.tiles(i));
            for chunk in tiled.chunks(self.tile_inputs_per_dispatch()) {
                binding.dispatches.push(at.tile_dispatch(chunk));
            }
            if !gathered.is_empty() {
                binding.dispatches.push(at.gather_dispatch(&gathered));
            }
        }
        Ok(binding)
    }

    analysis_pub! {
        /// What an encode of this plan from `inputs` into `output` records,
        /// as plain data ([`PermutedPlan::recording`]).
        ///
        /// # Errors
        ///
        /// The [`EncodeError`]s of the regions.
        pub fn recording(
            &self,
            inputs: &[PlainRegion],
            output: &PlainRegion,
        ) -> Result<Recording, EncodeError> {
            let binding = self.bind(inputs, output)?;
            let mut recording = Recording::of_regions(std::iter::once(output).chain(inputs));
            let buffer = |b: Side| match b {
                Side::Single => output.buffer,
                Side::Each(i) => inputs[i].buffer,
            };
            record_dispatches(&mut recording, &binding, buffer, self.limits());
            Ok(recording)
        }
    }
}

/// The unit the tile kernel moves for elements of `bits`, in bytes: the
/// element, or a word for packed ones.
fn tile_unit_bytes(bits: u32) -> u64 {
    u64::from(bits.max(32) / 8)
}

/// A split's regions as its dispatches bind them.
struct SplitAt<'a> {
    plan: &'a PermutedPlan,
    input: &'a PlainRegion,
    destinations: &'a [PlainRegion],
    /// The input's binding.
    src: Range<u64>,
    bits: u32,
}

impl SplitAt<'_> {
    /// Destination `i`'s binding.
    fn placed(&self, i: usize) -> Range<u64> {
        self.plan
            .binding(&self.destinations[i], self.plan.output_region_bytes(i))
    }

    /// Bytes from the input's binding start to its region.
    fn src_shift(&self) -> u64 {
        self.input.offset - self.src.start
    }

    /// Bytes from destination `i`'s binding start to its region.
    fn dst_shift(&self, i: usize) -> u64 {
        self.destinations[i].offset - self.placed(i).start
    }

    /// Output `i` is one run of the input into another buffer that takes
    /// copies: a copy command (memcpy on a software adapter, the copy path
    /// on a GPU) can move it instead of the kernel.
    fn copyable(&self, i: usize) -> bool {
        let o = &self.plan.outputs()[i];
        o.run.is_some()
            && o.bytes.is_multiple_of(4)
            && self.input.usages.copy_src
            && self.destinations[i].usages.copy_dst
            && self.destinations[i].buffer != self.input.buffer
    }

    /// Output `i`'s copy command: (output, input byte, bytes).
    fn copy_command(&self, i: usize) -> Option<(usize, u64, u64)> {
        let o = &self.plan.outputs()[i];
        Some((i, self.input.offset + o.run?, o.bytes))
    }

    /// Output `i` moves through tiles here: the plan says so, and both
    /// regions lie whole tile units from their bindings' starts.
    fn tiles(&self, i: usize) -> bool {
        let unit = tile_unit_bytes(self.bits);
        self.plan.moves_through_tiles(i)
            && self.src_shift().is_multiple_of(unit)
            && self.dst_shift(i).is_multiple_of(unit)
    }

    /// A dispatch writing into the input's buffer binds the input writable
    /// too.
    fn writes_input_buffer(&self, group: &[usize]) -> bool {
        group
            .iter()
            .any(|&i| self.destinations[i].buffer == self.input.buffer)
    }

    /// The tile dispatch of the outputs `chunk`.
    fn tile_dispatch(&self, chunk: &[usize]) -> PermutedDispatch {
        let unit = tile_unit_bytes(self.bits);
        let mut bindings = vec![(1, Side::Single, self.src.clone())];
        let mut walks = Vec::with_capacity(chunk.len());
        for (slot, &i) in chunk.iter().enumerate() {
            if let Some(walk) = &self.plan.outputs()[i].tile {
                let shifts = (self.src_shift() / unit, self.dst_shift(i) / unit);
                walks.push((walk, shifts.0 as u32, shifts.1 as u32));
            }
            bindings.push((slot as u32 + 2, Side::Each(i), self.placed(i)));
        }
        let writable = u32::from(self.writes_input_buffer(chunk));
        tile_dispatch(TileSide::Split, self.bits, writable, &walks, bindings)
    }

    /// The gather dispatch of the outputs `group`: in whole vec4s where
    /// every output moves them and every binding starts a whole vec4
    /// before its region, else in words.
    fn gather_dispatch(&self, group: &[usize]) -> PermutedDispatch {
        let outputs = self.plan.outputs();
        let vec4 = self.src_shift().is_multiple_of(16)
            && group
                .iter()
                .all(|&i| outputs[i].vec4.is_some() && self.dst_shift(i).is_multiple_of(16));
        let unit_bytes: u64 = if vec4 { 16 } else { 4 };
        let per = (self.plan.words_per_invocation() * 4 / unit_bytes as u32).max(1);
        let mut params = header(group.len(), per).words().to_vec();
        let mut first = 0u32;
        let mut bindings = vec![(1, Side::Single, self.src.clone())];
        for (slot, &i) in group.iter().enumerate() {
            let o = &outputs[i];
            let (units, view) = match (&o.vec4, vec4) {
                (Some(v), true) => (o.words / 4, (&v.0[..], &v.1[..], v.2)),
                _ => (o.words, (&o.dims[..], &o.strides[..], o.offset)),
            };
            params.extend_from_slice(
                record(
                    first,
                    units,
                    o.elements,
                    o.mode,
                    self.bits,
                    view,
                    (self.src_shift() / unit_bytes) as u32,
                    (self.dst_shift(i) / unit_bytes) as u32,
                )
                .words(),
            );
            first += units.div_ceil(per);
            bindings.push((slot as u32 + 2, Side::Each(i), self.placed(i)));
        }
        PermutedDispatch {
            module: PermuteModule::Split {
                slots: group.len(),
                vec4,
                writable_source: self.writes_input_buffer(group),
            },
            params,
            bindings,
            workgroups: first.div_ceil(WORKGROUP_SIZE),
        }
    }
}

/// One record of a windowed dispatch: output `output`'s sub-view `chunk`,
/// the source bytes it reads and the destination binding it writes.
struct WindowRecord<'c> {
    output: usize,
    chunk: &'c ViewChunk,
    /// The sub-view's source strides.
    strides: &'c [u32],
    /// Bits of the record's units (source and destination: words, vec4s,
    /// or elements).
    unit_bits: u64,
    /// The bytes of the source it reads (from its region's buffer start).
    reads: Range<u64>,
    /// Its destination binding, and the byte its sub-view starts at.
    writes: Range<u64>,
    dest_byte: u64,
}

impl SplitAt<'_> {
    /// The dispatches of a move past one binding: the records of every
    /// output in `outputs` (each a sub-view of its view, [`Windows`]),
    /// dealt in the order of their reads into dispatches whose records' source footprints one
    /// binding holds, whose destination bindings do not overlap and whose
    /// invocations one grid reaches; vec4s for an output whose view and
    /// regions take them.
    fn windowed_dispatches(&self, outputs: &[usize]) -> Vec<PermutedDispatch> {
        let limits = self.plan.limits();
        let most = limits.max_storage_buffer_binding_size;
        // In the order of their reads: records that share a window (the
        // same rows of neighbouring heads) are dealt together.
        let mut records: Vec<WindowRecord<'_>> = outputs
            .iter()
            .flat_map(|&i| self.window_records(i))
            .collect();
        records.sort_by_key(|r| r.reads.start);
        let align = window_alignment(limits);
        let groups = deal(records, |open, record| {
            let window = spanning(open.iter().chain([record]).map(|r| &r.reads), align);
            (open[0].unit_bits == 128) == (record.unit_bits == 128)
                && open.len() < self.plan.destinations_per_dispatch()
                && window.end - window.start <= most
                && open.iter().all(|r| {
                    self.destinations[r.output].buffer != self.destinations[record.output].buffer
                        || !overlap(&r.writes, &record.writes)
                })
                && on_one_grid(self.invocations(open.iter().chain([record])), limits)
        });
        groups.iter().map(|g| self.window_dispatch(g)).collect()
    }

    /// Output `i`'s records: its cut in vec4s where its regions lie whole
    /// vec4s from the bindings' starts (windows start at multiples of 256),
    /// else in its units.
    fn window_records(&self, i: usize) -> Vec<WindowRecord<'_>> {
        let o = &self.plan.outputs()[i];
        let Some(windows) = &o.windows else {
            return Vec::new();
        };
        let offsets = [self.input.offset, self.destinations[i].offset];
        let vec4 =
            (windows.vec4.as_ref()).filter(|_| windows_take_vec4(self.plan.limits(), &offsets));
        let (cut, unit_bits) = match (vec4, o.mode) {
            (Some(c), _) => (c, 128),
            (None, RecordMode::Words) => (&windows.units, 32),
            (None, RecordMode::Elements) => (&windows.units, u64::from(self.bits)),
        };
        let (chunks, strides) = (&cut.chunks, &cut.strides[0]);
        let dest = &self.destinations[i];
        let align = window_alignment(self.plan.limits());
        chunks
            .iter()
            .map(|chunk| {
                let strides = &strides[strides.len() - chunk.dims.len()..];
                let first = chunk.offsets[0];
                let end = first + footprint(&chunk.dims, strides);
                let dest_byte = dest.offset + chunk.offsets[1] * unit_bits / 8;
                let dest_end = dest_byte + (chunk.units * unit_bits).div_ceil(32) * 4;
                WindowRecord {
                    output: i,
                    chunk,
                    strides,
                    unit_bits,
                    reads: self.input.offset + first * unit_bits / 8 / 4 * 4
                        ..self.input.offset + (end * unit_bits).div_ceil(32) * 4,
                    writes: dest_byte / align * align..dest_end,
                    dest_byte,
                }
            })
            .collect()
    }

    /// The invocations of `records` in one dispatch.
    fn invocations<'r>(&self, records: impl Iterator<Item = &'r WindowRecord<'r>>) -> u64
    where
        Self: 'r,
    {
        let per = self.plan.words_per_invocation();
        records
            .map(|r| {
                let mode = self.plan.outputs()[r.output].mode;
                let (count, _) = record_counts(r.chunk.units, r.unit_bits, mode, self.bits);
                record_invocations(count, r.unit_bits, per)
            })
            .sum()
    }

    /// The dispatch of `records`, its source bound over their window.
    fn window_dispatch(&self, records: &[WindowRecord<'_>]) -> PermutedDispatch {
        let window = spanning(
            records.iter().map(|r| &r.reads),
            window_alignment(self.plan.limits()),
        );
        let vec4 = records[0].unit_bits == 128;
        let unit_bytes: u64 = if vec4 { 16 } else { 4 };
        let per = (self.plan.words_per_invocation() * 4 / unit_bytes as u32).max(1);
        let mut params = header(records.len(), per).words().to_vec();
        let mut bindings = vec![(1, Side::Single, window.clone())];
        let mut first = 0u32;
        for (slot, r) in records.iter().enumerate() {
            let o = &self.plan.outputs()[r.output];
            let c = r.chunk;
            // The sub-view's offset from the window's start, in its units
            // (the window starts a whole number of them before the input).
            let offset =
                c.offsets[0] + self.input.offset * 8 / r.unit_bits - window.start * 8 / r.unit_bits;
            let (units, elements) = record_counts(c.units, r.unit_bits, o.mode, self.bits);
            params.extend_from_slice(
                record(
                    first,
                    units as u32,
                    elements.min(u64::from(u32::MAX)) as u32,
                    o.mode,
                    self.bits,
                    (&c.dims, r.strides, offset as u32),
                    0,
                    ((r.dest_byte - r.writes.start) / unit_bytes) as u32,
                )
                .words(),
            );
            first += (units as u32).div_ceil(per);
            bindings.push((slot as u32 + 2, Side::Each(r.output), r.writes.clone()));
        }
        let writable_source = records
            .iter()
            .any(|r| self.destinations[r.output].buffer == self.input.buffer);
        PermutedDispatch {
            module: PermuteModule::Split {
                slots: records.len(),
                vec4,
                writable_source,
            },
            params,
            bindings,
            workgroups: first.div_ceil(WORKGROUP_SIZE),
        }
    }
}

/// Where a window's bindings start: the storage offset alignment.
fn window_alignment(limits: &PlanLimits) -> u64 {
    u64::from(limits.min_storage_buffer_offset_alignment.max(4))
}

/// True when windows take vec4 records for regions at `offsets`: each a
/// whole vec4 from a window's start (at a multiple of the alignment).
fn windows_take_vec4(limits: &PlanLimits, offsets: &[u64]) -> bool {
    window_alignment(limits).is_multiple_of(16) && offsets.iter().all(|o| o.is_multiple_of(16))
}

/// A concat's regions as its dispatches bind them.
struct ConcatAt<'a> {
    plan: &'a PermutedConcatPlan,
    inputs: &'a [PlainRegion],
    output: &'a PlainRegion,
    /// The output's binding.
    out: Range<u64>,
    bits: u32,
}

impl ConcatAt<'_> {
    /// Input `i`'s binding.
    fn placed(&self, i: usize) -> Range<u64> {
        let bytes = self.plan.pieces()[i].bytes.next_multiple_of(4);
        self.plan.binding(&self.inputs[i], bytes)
    }

    /// Bytes from the output's binding start to its region.
    fn out_shift(&self) -> u64 {
        self.output.offset - self.out.start
    }

    /// Bytes from input `i`'s binding start to its region.
    fn in_shift(&self, i: usize) -> u64 {
        self.inputs[i].offset - self.placed(i).start
    }

    fn in_output_buffer(&self, i: usize) -> bool {
        self.inputs[i].buffer == self.output.buffer
    }

    /// `group` dealt into dispatches where no input in the output's buffer
    /// (bound writable: WebGPU forbids a buffer bound read-only beside a
    /// writable binding of it) overlaps another such input's binding
    /// (writable bindings of one dispatch may not overlap).
    fn dealt(&self, group: &[usize]) -> Vec<Vec<usize>> {
        let mut dealt: Vec<Vec<usize>> = Vec::new();
        for &i in group {
            let fits = |d: &Vec<usize>| {
                !self.in_output_buffer(i)
                    || d.iter().all(|&j| {
                        !self.in_output_buffer(j) || !overlap(&self.placed(i), &self.placed(j))
                    })
            };
            match dealt.iter_mut().find(|d| fits(d)) {
                Some(d) => d.push(i),
                None => dealt.push(vec![i]),
            }
        }
        dealt
    }

    /// The slots of `group` bound writable: its inputs in the output's
    /// buffer.
    fn writable(&self, group: &[usize]) -> u32 {
        group
            .iter()
            .enumerate()
            .filter(|&(_, &i)| self.in_output_buffer(i))
            .fold(0u32, |mask, (slot, _)| mask | 1 << slot)
    }

    /// The dispatch zeroing the output's words, before pieces of elements
    /// are ORed in.
    fn clear_dispatch(&self) -> PermutedDispatch {
        let words = (self.plan.output_region_bytes() / 4) as u32;
        // The module's block holds a header and one record.
        let head = PermuteHeader {
            clear_words: words,
            clear_shift: (self.out_shift() / 4) as u32,
            ..header(0, 1)
        };
        let mut params = head.words().to_vec();
        params.resize(PermuteHeader::WORDS + ConcatRecord::WORDS, 0);
        PermutedDispatch {
            module: PermuteModule::Clear,
            params,
            bindings: vec![(1, Side::Single, self.out.clone())],
            workgroups: words.div_ceil(WORKGROUP_SIZE),
        }
    }

    /// Input `i` moves through tiles here: the plan says so, and both
    /// regions lie whole tile units from their bindings' starts.
    fn tiles(&self, i: usize) -> bool {
        let unit = tile_unit_bytes(self.bits);
        self.plan.moves_through_tiles(i)
            && self.out_shift().is_multiple_of(unit)
            && self.in_shift(i).is_multiple_of(unit)
    }

    /// The tile dispatch of the inputs `chunk`.
    fn tile_dispatch(&self, chunk: &[usize]) -> PermutedDispatch {
        let unit = tile_unit_bytes(self.bits);
        let write_shift = (self.out_shift() / unit) as u32;
        let mut bindings = vec![(1, Side::Single, self.out.clone())];
        let mut walks = Vec::with_capacity(chunk.len());
        for (slot, &i) in chunk.iter().enumerate() {
            if let Some(walk) = &self.plan.pieces()[i].tile {
                walks.push((walk, (self.in_shift(i) / unit) as u32, write_shift));
            }
            bindings.push((slot as u32 + 2, Side::Each(i), self.placed(i)));
        }
        let writable = self.writable(chunk);
        tile_dispatch(TileSide::Concat, self.bits, writable, &walks, bindings)
    }

    /// How a gather dispatch of `group` writes the output: atomics where a
    /// piece of elements ORs into words others write; whole vec4s where
    /// every piece moves them and every binding starts a whole vec4 before
    /// its region; else words.
    fn units(&self, group: &[usize]) -> ConcatUnits {
        let pieces = self.plan.pieces();
        if group
            .iter()
            .any(|&i| pieces[i].mode == RecordMode::Elements)
        {
            return ConcatUnits::Atomic;
        }
        let vec4 = self.out_shift().is_multiple_of(16)
            && group
                .iter()
                .all(|&i| pieces[i].vec4.is_some() && self.in_shift(i).is_multiple_of(16));
        if vec4 {
            ConcatUnits::Vec4
        } else {
            ConcatUnits::Words
        }
    }

    /// The gather dispatch of the inputs `group`.
    fn gather_dispatch(&self, group: &[usize]) -> PermutedDispatch {
        let units = self.units(group);
        let unit_bytes: u64 = if units == ConcatUnits::Vec4 { 16 } else { 4 };
        let per = (self.plan.words_per_invocation() * 4 / unit_bytes as u32).max(1);
        let mut params = header(group.len(), per).words().to_vec();
        let mut bindings = vec![(1, Side::Single, self.out.clone())];
        let mut first = 0u32;
        for (slot, &i) in group.iter().enumerate() {
            let piece = &self.plan.pieces()[i];
            let vec4 = units == ConcatUnits::Vec4;
            let (count, read, write) = piece.walk(vec4, self.plan.lane_order());
            params.extend_from_slice(
                concat_record(
                    first,
                    count,
                    piece.elements,
                    piece.mode,
                    self.bits,
                    (&read.0, &read.1, read.2),
                    (&write.0, &write.1, write.2),
                    (self.in_shift(i) / unit_bytes) as u32,
                    (self.out_shift() / unit_bytes) as u32,
                )
                .words(),
            );
            first += count.div_ceil(per);
            bindings.push((slot as u32 + 2, Side::Each(i), self.placed(i)));
        }
        PermutedDispatch {
            module: PermuteModule::Concat {
                slots: group.len(),
                units,
                writable: self.writable(group),
            },
            params,
            bindings,
            workgroups: first.div_ceil(WORKGROUP_SIZE),
        }
    }
}

/// One record of a windowed concat dispatch: input `input`'s sub-view
/// `chunk`, the bytes of the input it reads (its binding) and of the
/// output it writes.
struct PieceRecord<'c> {
    input: usize,
    chunk: &'c ViewChunk,
    /// The sub-view's read and write strides.
    strides: (&'c [u32], &'c [u32]),
    mode: RecordMode,
    /// Bits of its units (words, vec4s, or elements).
    unit_bits: u64,
    /// Its input binding (from its first byte read, aligned down).
    reads: Range<u64>,
    /// The output bytes it writes, whole words.
    writes: Range<u64>,
}

impl ConcatAt<'_> {
    /// The zeroing of an output past one binding: a dispatch per window
    /// of its words.
    fn windowed_clears(&self) -> Vec<PermutedDispatch> {
        let limits = self.plan.limits();
        let align = window_alignment(limits);
        let most = limits.max_storage_buffer_binding_size;
        let step = most.saturating_sub(align) / 4 * 4;
        let (start, end) = (
            self.output.offset,
            self.output.offset + self.plan.output_region_bytes(),
        );
        (start..end)
            .step_by(step.max(4) as usize)
            .map(|from| {
                let to = (from + step).min(end);
                let bound = from / align * align..to;
                let words = ((to - from) / 4) as u32;
                let head = PermuteHeader {
                    clear_words: words,
                    clear_shift: ((from - bound.start) / 4) as u32,
                    ..header(0, 1)
                };
                let mut params = head.words().to_vec();
                params.resize(PermuteHeader::WORDS + ConcatRecord::WORDS, 0);
                PermutedDispatch {
                    module: PermuteModule::Clear,
                    params,
                    bindings: vec![(1, Side::Single, bound)],
                    workgroups: words.div_ceil(WORKGROUP_SIZE),
                }
            })
            .collect()
    }

    /// The dispatches of a concat past one binding: every input's records
    /// (sub-views of its piece, [`Windows`]), dealt in the order of their
    /// writes into dispatches whose writes one window of the output holds, whose
    /// inputs in the output's buffer (bound writable) do not overlap, and
    /// whose invocations one grid reaches.
    fn windowed_dispatches(&self, inputs: &[usize]) -> Vec<PermutedDispatch> {
        let most = self.plan.limits().max_storage_buffer_binding_size;
        // In the order of their writes: records that share a window are
        // dealt together.
        let mut records: Vec<PieceRecord<'_>> =
            inputs.iter().flat_map(|&i| self.piece_records(i)).collect();
        records.sort_by_key(|r| r.writes.start);
        let align = window_alignment(self.plan.limits());
        let groups = deal(records, |open, record| {
            let window = spanning(open.iter().chain([record]).map(|r| &r.writes), align);
            (open[0].unit_bits == 128) == (record.unit_bits == 128)
                && open.len() < self.plan.inputs_per_dispatch()
                && window.end - window.start <= most
                && (!self.in_output_buffer(record.input)
                    || open.iter().all(|r| {
                        !self.in_output_buffer(r.input) || !overlap(&r.reads, &record.reads)
                    }))
                && on_one_grid(
                    open.iter()
                        .chain([record])
                        .map(|r| {
                            let bits = self.bits;
                            let (count, _) =
                                record_counts(r.chunk.units, r.unit_bits, r.mode, bits);
                            record_invocations(count, r.unit_bits, self.plan.words_per_invocation())
                        })
                        .sum(),
                    self.plan.limits(),
                )
        });
        groups.iter().map(|g| self.piece_dispatch(g)).collect()
    }

    /// Input `i`'s records: its cut in vec4s where its regions lie whole
    /// vec4s from the windows' starts, else in its units.
    fn piece_records(&self, i: usize) -> Vec<PieceRecord<'_>> {
        let piece = &self.plan.pieces()[i];
        let Some(windows) = &piece.windows else {
            return Vec::new();
        };
        let offsets = [self.inputs[i].offset, self.output.offset];
        let vec4 =
            (windows.vec4.as_ref()).filter(|_| windows_take_vec4(self.plan.limits(), &offsets));
        let (cut, unit_bits) = match (vec4, piece.mode) {
            (Some(c), _) => (c, 128),
            (None, RecordMode::Words) => (&windows.units, 32),
            (None, RecordMode::Elements) => (&windows.units, u64::from(self.bits)),
        };
        let (chunks, strides) = (&cut.chunks, (&cut.strides[0], &cut.strides[1]));
        let align = window_alignment(self.plan.limits());
        let bytes = |base: u64, first: u64, span: u64| {
            base + first * unit_bits / 32 * 4..base + ((first + span) * unit_bits).div_ceil(32) * 4
        };
        chunks
            .iter()
            .map(|chunk| {
                let depth = strides.0.len() - chunk.dims.len();
                let (read, write) = (&strides.0[depth..], &strides.1[depth..]);
                let reads = bytes(
                    self.inputs[i].offset,
                    chunk.offsets[0],
                    footprint(&chunk.dims, read),
                );
                PieceRecord {
                    input: i,
                    chunk,
                    strides: (read, write),
                    mode: piece.mode,
                    unit_bits,
                    reads: reads.start / align * align..reads.end,
                    writes: bytes(
                        self.output.offset,
                        chunk.offsets[1],
                        footprint(&chunk.dims, write),
                    ),
                }
            })
            .collect()
    }

    /// The dispatch of `records`, the output bound over their window.
    fn piece_dispatch(&self, records: &[PieceRecord<'_>]) -> PermutedDispatch {
        let window = spanning(
            records.iter().map(|r| &r.writes),
            window_alignment(self.plan.limits()),
        );
        let vec4 = records[0].unit_bits == 128;
        let units = if records.iter().any(|r| r.mode == RecordMode::Elements) {
            ConcatUnits::Atomic
        } else if vec4 {
            ConcatUnits::Vec4
        } else {
            ConcatUnits::Words
        };
        let unit_bytes: u64 = if vec4 { 16 } else { 4 };
        let per = (self.plan.words_per_invocation() * 4 / unit_bytes as u32).max(1);
        let mut params = header(records.len(), per).words().to_vec();
        let mut bindings = vec![(1, Side::Single, window.clone())];
        let mut first = 0u32;
        let mut writable = 0u32;
        for (slot, r) in records.iter().enumerate() {
            let c = r.chunk;
            // Each view's offset from its window's start, in its units.
            let rebased = |unit: u64, region: u64, start: u64| {
                (unit + region * 8 / r.unit_bits - start * 8 / r.unit_bits) as u32
            };
            let read = rebased(c.offsets[0], self.inputs[r.input].offset, r.reads.start);
            let write = rebased(c.offsets[1], self.output.offset, window.start);
            let (count, elements) = record_counts(c.units, r.unit_bits, r.mode, self.bits);
            params.extend_from_slice(
                concat_record(
                    first,
                    count as u32,
                    elements.min(u64::from(u32::MAX)) as u32,
                    r.mode,
                    self.bits,
                    (&c.dims, r.strides.0, read),
                    (&c.dims, r.strides.1, write),
                    0,
                    0,
                )
                .words(),
            );
            first += (count as u32).div_ceil(per);
            if self.in_output_buffer(r.input) {
                writable |= 1 << slot;
            }
            bindings.push((slot as u32 + 2, Side::Each(r.input), r.reads.clone()));
        }
        PermutedDispatch {
            module: PermuteModule::Concat {
                slots: records.len(),
                units,
                writable,
            },
            params,
            bindings,
            workgroups: first.div_ceil(WORKGROUP_SIZE),
        }
    }
}

/// `records` dealt in order into dispatches: each joins the last one
/// where `joins` (its records so far, the record) says so, else opens one.
fn deal<R>(records: Vec<R>, joins: impl Fn(&[R], &R) -> bool) -> Vec<Vec<R>> {
    let mut groups: Vec<Vec<R>> = Vec::new();
    for record in records {
        match groups.last_mut() {
            Some(open) if joins(open, &record) => open.push(record),
            _ => groups.push(vec![record]),
        }
    }
    groups
}

/// The binding over `spans`: from their first byte, aligned down to
/// `align`, to their last.
fn spanning<'r>(spans: impl Iterator<Item = &'r Range<u64>>, align: u64) -> Range<u64> {
    let (start, end) = spans.fold((u64::MAX, 0), |(s, e), r| (s.min(r.start), e.max(r.end)));
    start / align * align..end
}

/// True when `invocations` (counted in `u32`) fit one dispatch's grid.
fn on_one_grid(invocations: u64, limits: &PlanLimits) -> bool {
    invocations <= u64::from(u32::MAX)
        && limits
            .grid(invocations.div_ceil(u64::from(WORKGROUP_SIZE)))
            .is_some()
}

/// A windowed record's count (the units its invocations walk: words,
/// vec4s, or for elements the words they fill) and its elements, for a
/// sub-view of `units` units of `unit_bits` over elements of `bits`.
fn record_counts(units: u64, unit_bits: u64, mode: RecordMode, bits: u32) -> (u64, u64) {
    match mode {
        RecordMode::Elements => ((units * unit_bits).div_ceil(32), units),
        RecordMode::Words => (units, units * unit_bits / u64::from(bits)),
    }
}

/// The invocations of a record of `count` units of `unit_bits`, at
/// `words_per_invocation` words each.
fn record_invocations(count: u64, unit_bits: u64, words_per_invocation: u32) -> u64 {
    let unit_bytes = if unit_bits == 128 { 16 } else { 4 };
    count.div_ceil(u64::from(words_per_invocation * 4 / unit_bytes).max(1))
}

/// Appends `binding`'s dispatches to `recording`: each module once, the
/// parameters of each dispatch at the next multiple of 256 bytes of the
/// parameters' buffer (pushed last), the workgroups laid out over x and y
/// as the encode lays them.
fn record_dispatches(
    recording: &mut Recording,
    binding: &PermutedBinding,
    buffer: impl Fn(Side) -> usize,
    limits: &PlanLimits,
) {
    let params_buffer = recording.buffers.len();
    debug_assert!(recording.table.is_empty());
    let mut modules: Vec<PermuteModule> = Vec::new();
    for d in &binding.dispatches {
        let module = match modules.iter().position(|m| *m == d.module) {
            Some(k) => k,
            None => {
                modules.push(d.module);
                recording.modules.push(RecordedModule {
                    wgsl: d.module.source(),
                    entry_point: d.module.entry_point(),
                    layout: d.module.layout(),
                });
                modules.len() - 1
            }
        };
        let offset = (recording.table.len() as u64).next_multiple_of(256);
        recording.table.resize(offset as usize, 0);
        recording
            .table
            .extend(d.params.iter().flat_map(|w| w.to_le_bytes()));
        let mut bindings = vec![RecordedBinding {
            binding: 0,
            buffer: params_buffer,
            offset,
            size: d.module.params_bytes(),
        }];
        bindings.extend(d.bindings.iter().map(|(number, b, bytes)| RecordedBinding {
            binding: *number,
            buffer: buffer(*b),
            offset: bytes.start,
            size: bytes.end - bytes.start,
        }));
        recording.commands.push(RecordedCommand::Dispatch {
            module,
            bindings,
            workgroups: dispatch_grid(d.workgroups, limits),
        });
    }
    // The parameters' buffer is the table, second to last as in a split's
    // recording; no spare buffer is bound, but its place is kept.
    recording.buffers.push(RecordedBuffer {
        label: "table".to_string(),
        size: (recording.table.len() as u64).max(16),
        usages: vec!["UNIFORM"],
    });
    recording.buffers.push(RecordedBuffer {
        label: "spare".to_string(),
        size: 16,
        usages: vec!["STORAGE"],
    });
}

/// A permuted dispatch's workgroups laid out as every dispatch's are
/// ([`PlanLimits::grid`]; a permuted plan's dispatch fits the grid: a
/// tensor past it moves in windows, each dispatch's records on one grid).
pub(crate) fn dispatch_grid(workgroups: u32, limits: &PlanLimits) -> [u32; 3] {
    let max = limits.max_compute_workgroups_per_dimension.max(1);
    let [x, y] = limits
        .grid(u64::from(workgroups))
        .unwrap_or([max, workgroups.div_ceil(max)]);
    [x, y, 1]
}
