//! How a permuted move binds its caller's regions, as plain data: the
//! copy commands (kept pieces), then the dispatches, each its module, its
//! parameters, its bindings (a region's buffer from an offset aligned down,
//! and how many bytes) and its workgroups. The GPU path records exactly
//! this ([`crate::gpu::GpuSplitter::encode_permuted`]); the Dawn replay and
//! the browser suite run the same as a [`Recording`].

use std::ops::Range;

use crate::kernels::permute::{
    CONCAT_RECORD_WORDS, ConcatUnits, HEADER_WORDS, MODE_ELEMENTS, concat_record, record,
};
use crate::kernels::permute_module::PermuteModule;
use crate::kernels::permute_tile::{self, TileSide, TileWalk};
use crate::kernels::table::WORKGROUP_SIZE;
use crate::plan::binding::regions::PlainRegion;
use crate::plan::error::EncodeError;
use crate::plan::permuted_plan::{PermutedConcatPlan, PermutedPlan, overlap};
use crate::plan::recording::{
    RecordedBinding, RecordedBuffer, RecordedCommand, RecordedModule, Recording,
};

/// The region a binding takes its buffer from: the one on the move's
/// single side (a split's input, a concat's output), or region `i` on the
/// other (a split's output, a concat's input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
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
    pub bindings: Vec<(u32, Bound, Range<u64>)>,
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
    bindings: Vec<(u32, Bound, Range<u64>)>,
) -> PermutedDispatch {
    let mut params = vec![walks.len() as u32, 0, 0, 0];
    let mut first = 0u32;
    for &(walk, read_shift, write_shift) in walks {
        params.extend(permute_tile::record(
            first,
            walk,
            read_shift,
            write_shift,
            bits,
        ));
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
    /// `copies` allows them and the buffers take them, then a dispatch per
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
        copies: bool,
    ) -> Result<PermutedBinding, EncodeError> {
        self.check_regions(input, destinations)?;
        let outputs = self.outputs();
        // One run of the input into another buffer that takes copies: a
        // copy command (memcpy on a software adapter, the copy path on a
        // GPU) instead of the kernel.
        let copied = |i: usize| {
            copies
                && outputs[i].run.is_some()
                && outputs[i].bytes.is_multiple_of(4)
                && input.usages.copy_src
                && destinations[i].usages.copy_dst
                && destinations[i].buffer != input.buffer
        };
        let mut binding = PermutedBinding {
            copies: (0..outputs.len())
                .filter(|&i| outputs[i].words > 0 && copied(i))
                .filter_map(|i| Some((i, input.offset + outputs[i].run?, outputs[i].bytes)))
                .collect(),
            dispatches: Vec::new(),
        };
        let groups: Vec<Vec<usize>> = self
            .dispatch_groups(input, destinations)?
            .into_iter()
            .map(|g| g.into_iter().filter(|&i| !copied(i)).collect::<Vec<_>>())
            .filter(|g| !g.is_empty())
            .collect();
        let bits = self.element_type().bit_width().unwrap_or(32);
        let src = self.binding(input, self.input_bytes().next_multiple_of(4));
        let bound = |i: usize| self.binding(&destinations[i], self.output_region_bytes(i));
        // The tile kernel's unit: its element, or a word for packed ones.
        let tile_bytes = u64::from(bits.max(32) / 8);
        // A dispatch writing into the input's buffer binds the input
        // writable too.
        let writes_input_buffer = |group: &[usize]| {
            group
                .iter()
                .any(|&i| destinations[i].buffer == input.buffer)
        };
        for group in &groups {
            // Outputs moved through tiles: their own dispatches.
            let (tiled, group): (Vec<usize>, Vec<usize>) = group.iter().partition(|&&i| {
                self.moves_through_tiles(i)
                    && (input.offset - src.start).is_multiple_of(tile_bytes)
                    && (destinations[i].offset - bound(i).start).is_multiple_of(tile_bytes)
            });
            for chunk in tiled.chunks(self.tile_destinations_per_dispatch()) {
                let read_shift = ((input.offset - src.start) / tile_bytes) as u32;
                let mut bindings = vec![(1, Bound::Single, src.clone())];
                let mut walks = Vec::with_capacity(chunk.len());
                for (slot, &i) in chunk.iter().enumerate() {
                    let write_shift =
                        ((destinations[i].offset - bound(i).start) / tile_bytes) as u32;
                    if let Some(walk) = &outputs[i].tile {
                        walks.push((walk, read_shift, write_shift));
                    }
                    bindings.push((slot as u32 + 2, Bound::Each(i), bound(i)));
                }
                let writable = u32::from(writes_input_buffer(chunk));
                binding.dispatches.push(tile_dispatch(
                    TileSide::Split,
                    bits,
                    writable,
                    &walks,
                    bindings,
                ));
            }
            if group.is_empty() {
                continue;
            }
            // Whole vec4s where every output of the dispatch moves them and
            // every binding starts a whole vec4 before its region.
            let vec4 = (input.offset - src.start).is_multiple_of(16)
                && group.iter().all(|&i| {
                    outputs[i].vec4.is_some()
                        && (destinations[i].offset - bound(i).start).is_multiple_of(16)
                });
            let unit_bytes: u64 = if vec4 { 16 } else { 4 };
            let per = (self.words_per_invocation() * 4 / unit_bytes as u32).max(1);
            let mut params = vec![group.len() as u32, per, 0, 0];
            let mut first = 0u32;
            let mut bindings = vec![(1, Bound::Single, src.clone())];
            let src_shift = ((input.offset - src.start) / unit_bytes) as u32;
            for (slot, &i) in group.iter().enumerate() {
                let o = &outputs[i];
                let dst_shift = ((destinations[i].offset - bound(i).start) / unit_bytes) as u32;
                let (units, view) = match (&o.vec4, vec4) {
                    (Some(v), true) => (o.words / 4, (&v.0[..], &v.1[..], v.2)),
                    _ => (o.words, (&o.dims[..], &o.strides[..], o.offset)),
                };
                params.extend(record(
                    first, units, o.elements, o.mode, bits, view, src_shift, dst_shift,
                ));
                first += units.div_ceil(per);
                bindings.push((slot as u32 + 2, Bound::Each(i), bound(i)));
            }
            binding.dispatches.push(PermutedDispatch {
                module: PermuteModule::Split {
                    slots: group.len(),
                    vec4,
                    writable_source: writes_input_buffer(&group),
                },
                params,
                bindings,
                workgroups: first.div_ceil(WORKGROUP_SIZE),
            });
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
            let binding = self.bind(input, destinations, true)?;
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
            let buffer = |b: Bound| match b {
                Bound::Single => input.buffer,
                Bound::Each(i) => destinations[i].buffer,
            };
            record_dispatches(&mut recording, &binding, buffer, self.limits().max_compute_workgroups_per_dimension);
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
        let pieces = self.pieces();
        let out = self.binding(output, self.output_region_bytes());
        let in_output_buffer = |i: usize| inputs[i].buffer == output.buffer;
        let bound = |i: usize| self.binding(&inputs[i], pieces[i].bytes.next_multiple_of(4));
        let groups: Vec<Vec<usize>> = groups
            .iter()
            .flat_map(|group| {
                let mut dealt: Vec<Vec<usize>> = Vec::new();
                for &i in group {
                    let fits = |d: &Vec<usize>| {
                        !in_output_buffer(i)
                            || d.iter()
                                .all(|&j| !in_output_buffer(j) || !overlap(&bound(i), &bound(j)))
                    };
                    match dealt.iter_mut().find(|d| fits(d)) {
                        Some(d) => d.push(i),
                        None => dealt.push(vec![i]),
                    }
                }
                dealt
            })
            .collect();
        let writable = |group: &[usize]| {
            group
                .iter()
                .enumerate()
                .filter(|&(_, &i)| in_output_buffer(i))
                .fold(0u32, |mask, (slot, _)| mask | 1 << slot)
        };
        let out_shift = output.offset - out.start;
        let mut binding = PermutedBinding::default();
        if self.zeroes_output() {
            let words = (self.output_region_bytes() / 4) as u32;
            // The module's block holds a header and one record.
            let mut params = vec![0, 1, words, (out_shift / 4) as u32];
            params.resize(HEADER_WORDS + CONCAT_RECORD_WORDS, 0);
            binding.dispatches.push(PermutedDispatch {
                module: PermuteModule::Clear,
                params,
                bindings: vec![(1, Bound::Single, out.clone())],
                workgroups: words.div_ceil(WORKGROUP_SIZE),
            });
        }
        let bits = self.element_type().bit_width().unwrap_or(32);
        // The tile kernel's unit: its element, or a word for packed ones.
        let tile_bytes = u64::from(bits.max(32) / 8);
        for group in &groups {
            // Inputs moved through tiles: their own dispatches.
            let (tiled, group): (Vec<usize>, Vec<usize>) = group.iter().partition(|&&i| {
                self.moves_through_tiles(i)
                    && out_shift.is_multiple_of(tile_bytes)
                    && (inputs[i].offset - bound(i).start).is_multiple_of(tile_bytes)
            });
            for chunk in tiled.chunks(self.tile_inputs_per_dispatch()) {
                let write_shift = (out_shift / tile_bytes) as u32;
                let mut bindings = vec![(1, Bound::Single, out.clone())];
                let mut walks = Vec::with_capacity(chunk.len());
                for (slot, &i) in chunk.iter().enumerate() {
                    let read_shift = ((inputs[i].offset - bound(i).start) / tile_bytes) as u32;
                    if let Some(walk) = &pieces[i].tile {
                        walks.push((walk, read_shift, write_shift));
                    }
                    bindings.push((slot as u32 + 2, Bound::Each(i), bound(i)));
                }
                binding.dispatches.push(tile_dispatch(
                    TileSide::Concat,
                    bits,
                    writable(chunk),
                    &walks,
                    bindings,
                ));
            }
            if group.is_empty() {
                continue;
            }
            let units = self.concat_units(&group, inputs, out_shift);
            let unit_bytes: u64 = if units == ConcatUnits::Vec4 { 16 } else { 4 };
            let per = (self.words_per_invocation() * 4 / unit_bytes as u32).max(1);
            let mut params = vec![group.len() as u32, per, 0, 0];
            let mut bindings = vec![(1, Bound::Single, out.clone())];
            let mut first = 0u32;
            for (slot, &i) in group.iter().enumerate() {
                let piece = &pieces[i];
                let (count, read, write) = match (&piece.vec4, units) {
                    (Some((r, w)), ConcatUnits::Vec4) => (piece.words / 4, r, w),
                    _ => (piece.words, &piece.read, &piece.write),
                };
                params.extend(concat_record(
                    first,
                    count,
                    piece.elements,
                    piece.mode,
                    bits,
                    (&read.0, &read.1, read.2),
                    (&write.0, &write.1, write.2),
                    ((inputs[i].offset - bound(i).start) / unit_bytes) as u32,
                    (out_shift / unit_bytes) as u32,
                ));
                first += count.div_ceil(per);
                bindings.push((slot as u32 + 2, Bound::Each(i), bound(i)));
            }
            binding.dispatches.push(PermutedDispatch {
                module: PermuteModule::Concat {
                    slots: group.len(),
                    units,
                    writable: writable(&group),
                },
                params,
                bindings,
                workgroups: first.div_ceil(WORKGROUP_SIZE),
            });
        }
        Ok(binding)
    }

    /// How a concat dispatch of `group` writes the output (whose binding
    /// starts `out_shift` bytes before its region): atomics where a piece
    /// of elements ORs into words others write; whole vec4s where every
    /// piece moves them and every binding starts a whole vec4 before its
    /// region; else words.
    fn concat_units(&self, group: &[usize], inputs: &[PlainRegion], out_shift: u64) -> ConcatUnits {
        let pieces = self.pieces();
        if group.iter().any(|&i| pieces[i].mode == MODE_ELEMENTS) {
            return ConcatUnits::Atomic;
        }
        let vec4 = out_shift.is_multiple_of(16)
            && group.iter().all(|&i| {
                let bound = self.binding(&inputs[i], pieces[i].bytes.next_multiple_of(4));
                pieces[i].vec4.is_some() && (inputs[i].offset - bound.start).is_multiple_of(16)
            });
        if vec4 {
            ConcatUnits::Vec4
        } else {
            ConcatUnits::Words
        }
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
            let buffer = |b: Bound| match b {
                Bound::Single => output.buffer,
                Bound::Each(i) => inputs[i].buffer,
            };
            record_dispatches(&mut recording, &binding, buffer, self.limits().max_compute_workgroups_per_dimension);
            Ok(recording)
        }
    }
}

/// Appends `binding`'s dispatches to `recording`: each module once, the
/// parameters of each dispatch at the next multiple of 256 bytes of the
/// parameters' buffer (pushed last), the workgroups laid out over x and y
/// as the encode lays them (x at most `max_x`).
fn record_dispatches(
    recording: &mut Recording,
    binding: &PermutedBinding,
    buffer: impl Fn(Bound) -> usize,
    max_x: u32,
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
            workgroups: dispatch_grid(d.workgroups, max_x),
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

/// Workgroups laid out over x (at most `max_x`) and y.
pub(crate) fn dispatch_grid(workgroups: u32, max_x: u32) -> [u32; 3] {
    let x = workgroups.clamp(1, max_x);
    [x, workgroups.div_ceil(x), 1]
}
