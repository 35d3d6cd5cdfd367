//! [`PermutedPlan`]: how a [`PermutedSplit`] runs on a device, as plain
//! data (its mirror's, [`crate::plan::PermutedConcatPlan`], beside it in
//! `permuted_concat_plan.rs`, shares the device arithmetic below): per output, the words it writes and its strided view of the input
//! in the kernel's units (whole 32-bit words where its runs are whole
//! words, else elements assembled a word at a time), and how many
//! destinations a dispatch binds. Which outputs share a dispatch depends on
//! where the caller's regions lie, so the encode groups them
//! ([`PermutedPlan::dispatch_groups`]).

use std::ops::Range;

use crate::element::ElementType;
use crate::kernels::lanes::LaneOrder;
use crate::kernels::permute_records::{
    PermuteHeader, PermuteRecord, RECORD_RANK, RecordMode, TileRecord, Words,
};
use crate::kernels::permute_tile::TileWalk;
use crate::kernels::table::WORKGROUP_SIZE;
use crate::plan::binding::regions::{PlainRegion, check_storage_region, first_overlap, overlap};
use crate::plan::binding::usages::BufferRole;
use crate::plan::error::{EncodeError, PlanError};
use crate::plan::limits::PlanLimits;
use crate::plan::permuted_tiles::tile_walk;
use crate::plan::permuted_windows::{Cut, CutSide, contiguous, cut_views};
use crate::semantics::permuted::row_major_strides;
use crate::semantics::{PermutedSplit, StridedView};

/// One output of a permuted plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PermutedOutput {
    /// Packed bytes of the output.
    pub bytes: u64,
    /// Words the kernel writes (the output rounded up to a word, the bits
    /// past it zero).
    pub words: u32,
    /// Elements of the output.
    pub elements: u32,
    /// How the kernel gathers its words.
    pub mode: RecordMode,
    /// The view in units (words, or elements): dimensions, strides, offset.
    pub dims: Vec<u32>,
    /// Source units per step of each dimension.
    pub strides: Vec<u32>,
    /// The source unit of the output's first.
    pub offset: u32,
    /// The view in vec4s, where the words' runs, strides and offset are
    /// whole vec4s: dimensions, strides, offset.
    pub vec4: Option<(Vec<u32>, Vec<u32>, u32)>,
    /// The tile kernel's walk, for a move across the source's contiguous
    /// axis on a GPU (striped lanes).
    pub tile: Option<TileWalk>,
    /// The input's byte offset of the output, when the output is one run
    /// of the input of whole words at a whole word (a piece kept as it
    /// is): a copy command can move it.
    pub run: Option<u64>,
    /// The view cut into sub-views that one binding holds each, where the
    /// move is past one binding ([`PermutedPlan::is_windowed`]).
    pub windows: Option<Windows>,
}

/// A move's views cut for windows: in its units (words, or elements),
/// and in vec4s where it has vec4 views and those cut too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Windows {
    /// The cut of the views in their units.
    pub units: Cut,
    /// The cut of the vec4 views.
    pub vec4: Option<Cut>,
}

/// A permuted split planned for a device: what
/// [`crate::gpu::GpuSplitter::encode`] records.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{PermutedPlan, PlanLimits};
/// use wgpu_split::{ElementType, PermutedSplit};
///
/// let qkv = PermutedSplit::split_heads(&[8, 1024, 2304], &[768; 3], 64).unwrap();
/// let plan = PermutedPlan::new(&qkv, ElementType::Float16, &PlanLimits::WEBGPU_DEFAULT).unwrap();
/// assert_eq!(plan.output_region_bytes(0), 8 * 12 * 1024 * 64 * 2);
/// assert_eq!(plan.destinations_per_dispatch(), 7);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermutedPlan {
    split: PermutedSplit,
    element_type: ElementType,
    limits: PlanLimits,
    lanes: LaneOrder,
    compute_pass: bool,
    input_bytes: u64,
    outputs: Vec<PermutedOutput>,
    windowed: bool,
}

impl PermutedPlan {
    /// Plans `split` for tensors of `element_type` under `limits`.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::PermutedTooLarge`]
    /// for an input or an output past one buffer or 2^32 elements, or a
    /// view that no cut into windows fits (each row of it spanning more
    /// than a binding).
    pub fn new(
        split: &PermutedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
    ) -> Result<Self, PlanError> {
        let bits = gpu_bits(element_type)?;
        let elements: u64 = split.split().input_shape().iter().product::<usize>() as u64;
        let input_bytes = (elements * bits).div_ceil(8);
        fits_buffer("input", input_bytes, elements, limits)?;
        let mut outputs: Vec<PermutedOutput> = (0..split.output_count())
            .map(|i| {
                let mut output = output_of(split.view(i), bits);
                fits_buffer("output", output.bytes, u64::from(output.elements), limits)?;
                let view = split.view(i);
                let written = StridedView::new(view.dims(), &row_major_strides(view.dims()), 0);
                output.tile = tile_walk(view, &written, bits, limits);
                Ok(output)
            })
            .collect::<Result<_, PlanError>>()?;
        let most = binding_most(
            limits,
            outputs.iter().any(|o| o.mode == RecordMode::Elements),
        );
        let windowed = past_one_binding(input_bytes, most, limits)
            || outputs
                .iter()
                .any(|o| past_one_binding(o.bytes, most, limits));
        if windowed {
            for o in &mut outputs {
                o.tile = None;
                let room = window_room(most, limits);
                o.windows = Some(
                    windows_of(o, bits, room).ok_or(PlanError::PermutedTooLarge {
                        what: "output",
                        bytes: o.bytes.next_multiple_of(4),
                        max: most,
                    })?,
                );
            }
        }
        Ok(PermutedPlan {
            split: split.clone(),
            element_type,
            limits: *limits,
            lanes: LaneOrder::Striped,
            compute_pass: false,
            input_bytes,
            outputs,
            windowed,
        })
    }

    /// True when the input or an output is past one storage binding (with
    /// room for a region's offset aligned down): the move then runs in
    /// windows, each dispatch binding a stretch of the source that its
    /// records read and the stretches of the outputs they write (each
    /// output's view cut into sub-views of whole rows; no tiles).
    pub fn is_windowed(&self) -> bool {
        self.windowed
    }

    /// The same plan for recording inside the caller's compute pass
    /// ([`crate::plan::PlanOptions::in_compute_pass`]): every output through
    /// the kernels, a kept piece too, no copy command.
    pub fn in_compute_pass(self) -> Self {
        PermutedPlan {
            compute_pass: true,
            ..self
        }
    }

    /// True when the plan records no copy command (planned for the
    /// caller's compute pass).
    pub fn is_for_compute_pass(&self) -> bool {
        self.compute_pass
    }

    /// The same plan with its invocations laid over words as `lanes` says:
    /// striped (the default; GPUs: consecutive lanes on consecutive words,
    /// a word each) or blocked (software adapters: each invocation a
    /// stretch of [`BLOCKED_WORDS`] words, the view unravelled once per
    /// run).
    pub fn lanes(self, lanes: LaneOrder) -> Self {
        PermutedPlan { lanes, ..self }
    }

    /// Words each invocation writes.
    pub fn words_per_invocation(&self) -> u32 {
        words_per_invocation(self.lanes)
    }

    /// True when output `i` moves through workgroup tiles: a move that
    /// carries the input's contiguous axis across the output's rows (a
    /// transpose of the fastest axis), on striped lanes (GPUs), both axes
    /// at least 16 elements long; elements under 32 bits where every output
    /// row is whole 32-bit words (an f16 K^T of an even sequence length).
    /// Each workgroup then loads a 32 x 32 tile along the input's rows and
    /// stores it along the output's, so that consecutive lanes touch
    /// consecutive elements on both sides. (A region whose offset is not a
    /// whole element from its binding's start falls back to the gather.)
    pub fn moves_through_tiles(&self, i: usize) -> bool {
        self.lanes == LaneOrder::Striped && self.outputs[i].tile.is_some()
    }

    /// True when output `i` is one run of the input of whole 32-bit words
    /// at a whole word (a piece the move keeps as it is, such as YOLOv8's
    /// class scores beside its distribution head):
    /// [`crate::gpu::GpuSplitter::encode`] moves it with one copy
    /// command where the input's buffer has `COPY_SRC` and the output's
    /// (another buffer) `COPY_DST`; the kernel moves it otherwise, and
    /// always inside a caller's compute pass.
    pub fn copies_output(&self, i: usize) -> bool {
        !self.compute_pass && self.outputs[i].run.is_some()
    }

    /// Output slots one tile dispatch binds.
    pub(crate) fn tile_destinations_per_dispatch(&self) -> usize {
        slots_per_dispatch(&self.limits, TileRecord::WORDS)
    }

    /// The permuted split planned.
    pub fn split(&self) -> &PermutedSplit {
        &self.split
    }

    /// The element type planned for.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The limits planned under.
    pub fn limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// Packed bytes of the input.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// Bytes output `i`'s region must hold: the packed output rounded up
    /// to the word the kernel writes last (the bits past the output are
    /// written zero); 0 for an empty output, whose region is ignored.
    pub fn output_region_bytes(&self, i: usize) -> u64 {
        self.outputs[i].bytes.next_multiple_of(4)
    }

    /// Destinations one dispatch binds: the device's storage buffers per
    /// stage less the source's, as many records as its uniform block holds,
    /// at most 32 (a module each).
    pub fn destinations_per_dispatch(&self) -> usize {
        slots_per_dispatch(&self.limits, PermuteRecord::WORDS)
    }

    pub(crate) fn outputs(&self) -> &[PermutedOutput] {
        &self.outputs
    }

    /// Checks the caller's regions: one per output, usable as storage, at
    /// offsets of whole words, holding what the plan writes, inside their
    /// buffers, destinations disjoint, and none overlapping the input.
    pub(crate) fn check_regions(
        &self,
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> Result<(), EncodeError> {
        if destinations.len() != self.outputs().len() {
            return Err(EncodeError::RegionCount {
                expected: self.outputs().len(),
                actual: destinations.len(),
            });
        }
        let live = |i: usize| self.outputs()[i].words > 0;
        check_storage_region(
            BufferRole::Input,
            input,
            self.input_bytes(),
            self.input_bytes().next_multiple_of(4),
            || format!("the packed {} input", self.element_type()),
        )?;
        for i in (0..destinations.len()).filter(|&i| live(i)) {
            let bytes = self.output_region_bytes(i);
            check_storage_region(
                BufferRole::Output(i),
                &destinations[i],
                bytes,
                bytes,
                || "the packed output rounded up to the 4-byte word the move writes last".into(),
            )?;
        }
        let span = |i: usize| {
            let r = &destinations[i];
            r.offset..r.offset + self.output_region_bytes(i)
        };
        let live: Vec<usize> = (0..destinations.len()).filter(|&i| live(i)).collect();
        let input_span = input.offset..input.offset + self.input_bytes().next_multiple_of(4);
        if let Some(&i) = live
            .iter()
            .find(|&&i| destinations[i].buffer == input.buffer && overlap(&span(i), &input_span))
        {
            return Err(EncodeError::InputSharesBuffer {
                which: BufferRole::Output(i),
                why: "the regions overlap; give the output bytes the input does not use".into(),
            });
        }
        match first_overlap(live.iter().map(|&i| (i, destinations[i].buffer, span(i)))) {
            Some((first, second)) => Err(EncodeError::OverlappingRegions { first, second }),
            None => Ok(()),
        }
    }

    /// The binding of a region: from its offset aligned down to the
    /// device's storage offset alignment to the end of `bytes` from the
    /// offset.
    pub(crate) fn binding(&self, region: &PlainRegion, bytes: u64) -> Range<u64> {
        binding_of(&self.limits, region, bytes)
    }

    /// The non-empty outputs dealt into dispatches: at most
    /// [`PermutedPlan::destinations_per_dispatch`] each, none whose binding
    /// overlaps another's in one buffer or the input's (WebGPU refuses a
    /// writable binding that aliases another), in output order, each into
    /// the first dispatch that takes it. `None` when an output's binding
    /// overlaps the input's (its region does not, but the alignment makes
    /// them share bytes; give it its own buffer or an aligned offset).
    pub(crate) fn dispatch_groups(
        &self,
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> Result<Vec<Vec<usize>>, EncodeError> {
        let input_binding = self.binding(input, self.input_bytes.next_multiple_of(4));
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in (0..self.outputs.len()).filter(|&i| self.outputs[i].words > 0) {
            let bound = self.binding(&destinations[i], self.output_region_bytes(i));
            if destinations[i].buffer == input.buffer && overlap(&bound, &input_binding) {
                return Err(EncodeError::InputSharesBuffer {
                    which: BufferRole::Output(i),
                    why: format!(
                        "its binding {bound:?} (from the offset aligned down to {}) overlaps the input's {input_binding:?}",
                        self.limits.min_storage_buffer_offset_alignment
                    ),
                });
            }
            let fits = |group: &Vec<usize>| {
                group.len() < self.destinations_per_dispatch()
                    && group.iter().all(|&j| {
                        destinations[j].buffer != destinations[i].buffer
                            || !overlap(
                                &bound,
                                &self.binding(&destinations[j], self.output_region_bytes(j)),
                            )
                    })
            };
            match groups.iter_mut().find(|g| fits(g)) {
                Some(group) => group.push(i),
                None => groups.push(vec![i]),
            }
        }
        Ok(groups)
    }
}

/// The output whose view of the input (in elements of `bits`) is `view`:
/// in whole words where every run, stride and offset is whole words
/// (always for elements of 32 bits or more), else in elements.
fn output_of(view: &StridedView, bits: u64) -> PermutedOutput {
    let elements = view.len() as u64;
    let (mode, unit_view) = match words_view(view, bits) {
        Some(v) => (RecordMode::Words, v),
        None => (RecordMode::Elements, view.clone()),
    };
    let vec4 = (mode == RecordMode::Words)
        .then(|| units_view(&unit_view, 32, 128))
        .flatten()
        .map(|v| in_units(&v));
    let (dims, strides, offset) = in_units(&unit_view);
    PermutedOutput {
        bytes: (elements * bits).div_ceil(8),
        words: (elements * bits).div_ceil(32) as u32,
        elements: elements as u32,
        mode,
        dims,
        strides,
        offset,
        vec4,
        tile: None,
        run: one_run(view, bits),
        windows: None,
    }
}

/// Bytes a window's sub-views may span of a binding of at most `most`
/// bytes: room for its start aligned down and its end rounded up, and no
/// more words than one dispatch's grid reaches.
pub(super) fn window_room(most: u64, limits: &PlanLimits) -> u64 {
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(16));
    (most.saturating_sub(2 * align + 16) / 16 * 16).min(grid_words(limits) * 4)
}

/// Output `o`'s views cut into sub-views that windows of `room` bytes
/// (past a binding's start aligned down) hold: each sub-view's source
/// footprint in half a window (so that a dispatch's records, stretches of
/// rows of several outputs, share one), its destination in a whole one,
/// elements in whole words.
fn windows_of(o: &PermutedOutput, bits: u64, room: u64) -> Option<Windows> {
    let cut = |(dims, strides, offset): (&[u32], &[u32], u32), unit_bits: u64, granule: u64| {
        let units = |bytes: u64| bytes * 8 / unit_bits;
        let dest = contiguous(dims);
        let sides = [
            CutSide {
                strides,
                offset: u64::from(offset),
                most: units(room / 2),
            },
            CutSide {
                strides: &dest,
                offset: 0,
                most: units(room),
            },
        ];
        Some(Cut {
            chunks: cut_views(dims, &sides, granule)?,
            strides: vec![strides.to_vec(), dest],
        })
    };
    let (unit_bits, granule) = match o.mode {
        RecordMode::Words => (32, 1),
        RecordMode::Elements => (bits, 32 / bits),
    };
    Some(Windows {
        units: cut((&o.dims, &o.strides, o.offset), unit_bits, granule)?,
        vec4: o
            .vec4
            .as_ref()
            .and_then(|(d, s, offset)| cut((d, s, *offset), 128, 1)),
    })
}

/// The byte offset in the input of `view` (in elements of `bits`) when it
/// is one run of whole 32-bit words starting at a whole word.
fn one_run(view: &StridedView, bits: u64) -> Option<u64> {
    let contiguous = view.dims().len() <= 1 && view.strides().iter().all(|&s| s == 1);
    let bytes = view.len() as u64 * bits;
    let offset = view.offset() as u64 * bits;
    (contiguous && bytes.is_multiple_of(32) && offset.is_multiple_of(32) && bytes > 0)
        .then_some(offset / 8)
}

/// `view` (in elements of `bits`) in whole 32-bit words, when every run,
/// stride and offset of it is whole words (always for elements of 32 bits
/// or more: each is `bits / 32` words, one more dimension of stride 1).
pub(super) fn words_view(view: &StridedView, bits: u64) -> Option<StridedView> {
    units_view(view, bits, 32)
}

/// `view` (in elements of `bits`) in units of `unit` bits, when every
/// run, stride and offset of it is whole units (always for elements of a
/// multiple of `unit` bits: each is `bits / unit` units, one more
/// dimension of stride 1).
pub(super) fn units_view(view: &StridedView, bits: u64, unit: u64) -> Option<StridedView> {
    let (dims, strides, offset) = (view.dims(), view.strides(), view.offset() as u64);
    if bits.is_multiple_of(unit) {
        let k = (bits / unit) as usize;
        let mut d = dims.to_vec();
        let mut s: Vec<usize> = strides.iter().map(|&x| x * k).collect();
        d.push(k);
        s.push(1);
        return Some(StridedView::new(&d, &s, (offset * k as u64) as usize));
    }
    let whole = |x: u64| (x * bits).is_multiple_of(unit);
    let run = view.run_len() as u64;
    let inner_runs = !dims.is_empty() && strides.last() == Some(&1) && whole(run);
    let outer_whole = strides[..strides.len().saturating_sub(1)]
        .iter()
        .all(|&s| whole(s as u64));
    (inner_runs && outer_whole && whole(offset)).then(|| {
        let per = |x: usize| (x as u64 * bits / unit) as usize;
        let mut d = dims.to_vec();
        let last = d.len() - 1;
        d[last] = per(d[last]);
        let mut s: Vec<usize> = strides.iter().map(|&x| per(x)).collect();
        s[last] = 1;
        StridedView::new(&d, &s, per(offset as usize))
    })
}

/// A view's dimensions, strides and offset as the kernel's words (the
/// plan checked they fit).
pub(super) fn in_units(view: &StridedView) -> (Vec<u32>, Vec<u32>, u32) {
    debug_assert!(view.dims().len() <= RECORD_RANK);
    let to_u32 = |v: &[usize]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
    (
        to_u32(view.dims()),
        to_u32(view.strides()),
        view.offset() as u32,
    )
}

/// The bits of a fixed-width element type (strings have no GPU layout).
pub(super) fn gpu_bits(element_type: ElementType) -> Result<u64, PlanError> {
    element_type
        .bit_width()
        .map(u64::from)
        .ok_or(PlanError::NotOnGpu { element_type })
}

/// A tensor of `bytes` and `elements` that a permuted move moves: in one
/// buffer, its elements counted in `u32`.
pub(super) fn fits_buffer(
    what: &'static str,
    bytes: u64,
    elements: u64,
    limits: &PlanLimits,
) -> Result<(), PlanError> {
    let bound = bytes.next_multiple_of(4);
    let most = limits.max_buffer_size.min(u64::from(u32::MAX));
    if bound > limits.max_buffer_size || elements > u64::from(u32::MAX) {
        return Err(PlanError::PermutedTooLarge {
            what,
            bytes: bound,
            max: most,
        });
    }
    Ok(())
}

/// The most bytes a permuted dispatch binds of one region: one storage
/// binding, counted in `u32` words; 512 MiB where elements are gathered
/// one by one (their bit index is a `u32`).
pub(super) fn binding_most(limits: &PlanLimits, elements: bool) -> u64 {
    let most = limits
        .max_storage_buffer_binding_size
        .min(u64::from(u32::MAX) * 4);
    if elements { most.min(1 << 29) } else { most }
}

/// Invocations one dispatch's grid reaches.
fn grid_words(limits: &PlanLimits) -> u64 {
    u64::from(limits.max_compute_workgroups_per_dimension).pow(2) * u64::from(WORKGROUP_SIZE)
}

/// True when a tensor of `bytes` does not bind whole: from an offset
/// aligned down, rounded up to a word, past `most` bytes, or more words
/// than one dispatch's grid reaches (a word an invocation).
pub(super) fn past_one_binding(bytes: u64, most: u64, limits: &PlanLimits) -> bool {
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
    bytes.next_multiple_of(4) + align - 4 > most || bytes.div_ceil(4) > grid_words(limits)
}

/// Words an invocation of a blocked (software adapter's) plan moves: on
/// lavapipe, a long stretch per lane (permute_bench, GPT-2's QKV f16
/// [8, 1024, 2304]: 31 ms at 64 words, 16 ms at 256, 15 ms at 1,024).
pub const BLOCKED_WORDS: u32 = 1024;

pub(super) fn words_per_invocation(lanes: LaneOrder) -> u32 {
    match lanes {
        LaneOrder::Striped => 1,
        LaneOrder::Blocked => BLOCKED_WORDS,
    }
}

/// Destinations (or pieces) one permuted-move dispatch binds under
/// `limits`, with records of `record_words`: the storage buffers per stage
/// less one, as many records as the uniform block holds, at most 32 (a
/// module each).
pub(super) fn slots_per_dispatch(limits: &PlanLimits, record_words: usize) -> usize {
    let records = (limits
        .max_uniform_buffer_binding_size
        .saturating_sub(PermuteHeader::WORDS as u64 * 4)
        / (record_words as u64 * 4)) as usize;
    (limits
        .max_storage_buffers_per_shader_stage
        .saturating_sub(1) as usize)
        .min(records)
        .clamp(1, 32)
}

/// A region's binding: from its offset aligned down to the storage offset
/// alignment to `bytes` past its offset.
pub(super) fn binding_of(limits: &PlanLimits, region: &PlainRegion, bytes: u64) -> Range<u64> {
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
    region.offset / align * align..region.offset + bytes
}
