//! [`PermutedPlan`] and [`PermutedConcatPlan`]: how a [`PermutedSplit`]
//! (and a [`PermutedConcat`], its mirror) runs on a device, as plain
//! data: per output, the words it writes and its strided view of the input
//! in the kernel's units (whole 32-bit words where its runs are whole
//! words, else elements assembled a word at a time), and how many
//! destinations a dispatch binds. Which outputs share a dispatch depends on
//! where the caller's regions lie, so the encode groups them
//! ([`PermutedPlan::dispatch_groups`]).

use std::ops::Range;

use crate::element::ElementType;
use crate::kernels::lanes::LaneOrder;
use crate::kernels::permute_records::{
    ConcatRecord, PermuteHeader, PermuteRecord, RECORD_RANK, RecordMode, TileRecord, Words,
};
use crate::kernels::permute_tile::TileWalk;
use crate::kernels::table::WORKGROUP_SIZE;
use crate::plan::binding::regions::{PlainRegion, check_storage_region, first_overlap, overlap};
use crate::plan::binding::usages::BufferRole;
use crate::plan::error::{EncodeError, PlanError};
use crate::plan::limits::PlanLimits;
use crate::plan::permuted_tiles::{common_dims, tile_walk};
use crate::plan::permuted_windows::{Cut, CutSide, contiguous, cut_views};
use crate::semantics::permuted::row_major_strides;
use crate::semantics::{PermutedConcat, PermutedSplit, StridedView};

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
fn window_room(most: u64, limits: &PlanLimits) -> u64 {
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(16));
    (most.saturating_sub(2 * align + 16) / 16 * 16).min(grid_words(limits) * 4)
}

/// Piece `p`'s read and write views cut into sub-views that windows of
/// `room` bytes hold: the read side (a binding per record) in a whole
/// window, the write side in half of one (the records of a dispatch share
/// the output's window). Elements need no whole words: the pieces' words
/// are ORed in.
fn piece_windows(p: &PermutedInput, bits: u64, room: u64) -> Option<Windows> {
    if p.words == 0 {
        let nothing = Cut {
            chunks: Vec::new(),
            strides: Vec::new(),
        };
        return Some(Windows {
            units: nothing,
            vec4: None,
        });
    }
    let cut = |(read, write): (&UnitView, &UnitView), unit_bits: u64| {
        // Both views over one set of dimensions (each view's own merged).
        let view = |(d, s, o): &UnitView| {
            let wide = |v: &[u32]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
            StridedView::new(&wide(d), &wide(s), *o as usize)
        };
        let (dims, read_strides, write_strides) = common_dims(&view(read), &view(write))?;
        let narrow = |v: Vec<usize>| v.into_iter().map(|x| x as u32).collect::<Vec<u32>>();
        let (dims, strides) = (
            narrow(dims),
            vec![narrow(read_strides), narrow(write_strides)],
        );
        let units = |bytes: u64| bytes * 8 / unit_bits;
        let sides = [
            CutSide {
                strides: &strides[0],
                offset: u64::from(read.2),
                most: units(room),
            },
            CutSide {
                strides: &strides[1],
                offset: u64::from(write.2),
                most: units(room / 2),
            },
        ];
        Some(Cut {
            chunks: cut_views(&dims, &sides, 1)?,
            strides,
        })
    };
    let unit_bits = match p.mode {
        RecordMode::Words => 32,
        RecordMode::Elements => bits,
    };
    Some(Windows {
        units: cut((&p.read, &p.write), unit_bits)?,
        vec4: p.vec4.as_ref().and_then(|(r, w)| cut((r, w), 128)),
    })
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
fn words_view(view: &StridedView, bits: u64) -> Option<StridedView> {
    units_view(view, bits, 32)
}

/// `view` (in elements of `bits`) in units of `unit` bits, when every
/// run, stride and offset of it is whole units (always for elements of a
/// multiple of `unit` bits: each is `bits / unit` units, one more
/// dimension of stride 1).
fn units_view(view: &StridedView, bits: u64, unit: u64) -> Option<StridedView> {
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

/// Input `i` of `concat` walked in its own order: read as one run, written
/// through the mirror's view of the output ([`PermutedConcat::mirror`]),
/// in words (both whole words), and in vec4s where `vec4` asks (both whole
/// vec4s; else none at all, so that a piece's dispatch units do not depend
/// on the lanes).
fn in_order_views(
    concat: &PermutedConcat,
    i: usize,
    bits: u64,
    vec4: bool,
) -> Option<(UnitViews, Option<UnitViews>)> {
    let write = concat.mirror().view(i);
    let read = StridedView::new(&[write.len()], &[1], 0);
    let units = |unit: u64| -> Option<UnitViews> {
        Some((
            in_units(&units_view(&read, bits, unit)?),
            in_units(&units_view(write, bits, unit)?),
        ))
    };
    let words = units(32)?;
    if !vec4 {
        return Some((words, None));
    }
    Some((words, Some(units(128)?)))
}

/// A view's dimensions, strides and offset as the kernel's words (the
/// plan checked they fit).
fn in_units(view: &StridedView) -> (Vec<u32>, Vec<u32>, u32) {
    debug_assert!(view.dims().len() <= RECORD_RANK);
    let to_u32 = |v: &[usize]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
    (
        to_u32(view.dims()),
        to_u32(view.strides()),
        view.offset() as u32,
    )
}

/// One input of a permuted concat: what the kernel reads of it and where
/// it writes, in units (words where both views are whole words, else
/// elements).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PermutedInput {
    /// Packed bytes of the input.
    pub bytes: u64,
    /// Words of the input.
    pub words: u32,
    /// Elements of the input.
    pub elements: u32,
    /// How the kernel gathers its words.
    pub mode: RecordMode,
    /// The input's units in the piece's order: dims, strides, offset.
    pub read: (Vec<u32>, Vec<u32>, u32),
    /// The output's units the piece covers, in its order.
    pub write: (Vec<u32>, Vec<u32>, u32),
    /// Both views in vec4s, where both are whole vec4s.
    pub vec4: Option<UnitViews>,
    /// The input walked in its own order instead (its reads one run, its
    /// writes through the mirror's view of the output), in words, and in
    /// vec4s where [`PermutedInput::vec4`] is: what blocked lanes walk, each
    /// lane reading one stretch of the input and writing it where it goes
    /// (in the piece's order a head merge's lane reads from every head at
    /// once, a stream each: 1.4x the time on lavapipe). Only where both
    /// views are whole words, as the piece's.
    pub in_order: Option<(UnitViews, Option<UnitViews>)>,
    /// The tile kernel's walk ([`PermutedOutput::tile`]).
    pub tile: Option<TileWalk>,
    /// Both views cut into sub-views that one binding holds on each side,
    /// where the move is past one binding
    /// ([`PermutedConcatPlan::is_windowed`]): the read side first.
    pub windows: Option<Windows>,
}

impl PermutedInput {
    /// The unit count and the read and write views a dispatch of `units`
    /// walks (vec4s or words), on `lanes`.
    pub(crate) fn walk(&self, vec4: bool, lanes: LaneOrder) -> (u32, &UnitView, &UnitView) {
        let in_order = self
            .in_order
            .as_ref()
            .filter(|_| lanes == LaneOrder::Blocked);
        if let Some(((r, w), in_vec4)) = in_order {
            match (vec4, in_vec4) {
                (false, _) => return (self.words, r, w),
                (true, Some((r, w))) => return (self.words / 4, r, w),
                (true, None) => {}
            }
        }
        match (vec4, &self.vec4) {
            (true, Some((r, w))) => (self.words / 4, r, w),
            _ => (self.words, &self.read, &self.write),
        }
    }
}

/// A view's dimensions, strides and offset, in the kernel's units.
pub(crate) type UnitView = (Vec<u32>, Vec<u32>, u32);
/// A concat piece's read and write views.
pub(crate) type UnitViews = (UnitView, UnitView);

/// A permuted concat planned for a device: what
/// [`crate::gpu::GpuSplitter::encode`] records. Each
/// input's piece of the output is walked in its own order, gathered from
/// the input ([`PermutedConcat::gather`]) and written through the output's
/// layout of the piece ([`PermutedConcat::piece`]): whole words stored
/// where both are whole words, else elements ORed into output words
/// zeroed first.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{PermutedConcatPlan, PlanLimits};
/// use wgpu_split::{ElementType, PermutedConcat};
///
/// let heads = [[8, 12, 1024, 64]; 3];
/// let merge = PermutedConcat::merge_heads(&heads).unwrap();
/// let plan = PermutedConcatPlan::new(&merge, ElementType::Float16, &PlanLimits::WEBGPU_DEFAULT).unwrap();
/// assert_eq!(plan.output_region_bytes(), 8 * 1024 * 2304 * 2);
/// assert!(!plan.zeroes_output());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermutedConcatPlan {
    concat: PermutedConcat,
    element_type: ElementType,
    limits: PlanLimits,
    lanes: LaneOrder,
    output_bytes: u64,
    pieces: Vec<PermutedInput>,
    windowed: bool,
}

impl PermutedConcatPlan {
    /// Plans `concat` for tensors of `element_type` under `limits`.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::PermutedTooLarge`]
    /// for an output or an input past one buffer or 2^32 elements, or a
    /// piece that no cut into windows fits.
    pub fn new(
        concat: &PermutedConcat,
        element_type: ElementType,
        limits: &PlanLimits,
    ) -> Result<Self, PlanError> {
        let bits = gpu_bits(element_type)?;
        let elements = concat.output_shape().iter().product::<usize>() as u64;
        let output_bytes = (elements * bits).div_ceil(8);
        fits_buffer("output", output_bytes, elements, limits)?;
        let mut pieces: Vec<PermutedInput> = (0..concat.input_shapes().len())
            .map(|i| {
                let (read, write) = (concat.gather(i), concat.piece(i));
                let tile = tile_walk(read, &write, bits, limits);
                let elements = read.len() as u64;
                let (mode, read, write) = match (words_view(read, bits), words_view(&write, bits)) {
                    (Some(r), Some(w)) => (RecordMode::Words, r, w),
                    _ => (RecordMode::Elements, read.clone(), write),
                };
                let vec4 = (mode == RecordMode::Words)
                    .then(|| Some((units_view(&read, 32, 128)?, units_view(&write, 32, 128)?)))
                    .flatten()
                    .map(|(r, w)| (in_units(&r), in_units(&w)));
                let in_order = (mode == RecordMode::Words)
                    .then(|| in_order_views(concat, i, bits, vec4.is_some()))
                    .flatten();
                let piece = PermutedInput {
                    bytes: (elements * bits).div_ceil(8),
                    words: (elements * bits).div_ceil(32) as u32,
                    elements: elements as u32,
                    mode,
                    read: in_units(&read),
                    write: in_units(&write),
                    vec4,
                    in_order,
                    tile,
                    windows: None,
                };
                fits_buffer("input", piece.bytes, elements, limits)?;
                Ok(piece)
            })
            .collect::<Result<_, PlanError>>()?;
        let most = binding_most(
            limits,
            pieces.iter().any(|p| p.mode == RecordMode::Elements),
        );
        let windowed = past_one_binding(output_bytes, most, limits)
            || pieces
                .iter()
                .any(|p| past_one_binding(p.bytes, most, limits));
        if windowed {
            let room = window_room(most, limits);
            for p in &mut pieces {
                p.tile = None;
                p.in_order = None;
                p.windows = Some(piece_windows(p, bits, room).ok_or(
                    PlanError::PermutedTooLarge {
                        what: "input",
                        bytes: p.bytes.next_multiple_of(4),
                        max: most,
                    },
                )?);
            }
        }
        Ok(PermutedConcatPlan {
            concat: concat.clone(),
            element_type,
            limits: *limits,
            lanes: LaneOrder::Striped,
            output_bytes,
            pieces,
            windowed,
        })
    }

    /// True when the output or an input is past one storage binding (with
    /// room for a region's offset aligned down): the move then runs in
    /// windows ([`PermutedPlan::is_windowed`]), each dispatch binding a
    /// stretch of the output that its records write and the stretches of
    /// the inputs they read; the zeroing too, a window at a time.
    pub fn is_windowed(&self) -> bool {
        self.windowed
    }

    /// The same plan with its invocations laid over each input's words as
    /// `lanes` says ([`PermutedPlan::lanes`]).
    pub fn lanes(self, lanes: LaneOrder) -> Self {
        PermutedConcatPlan { lanes, ..self }
    }

    /// How its invocations lie over each input's units.
    pub(crate) fn lane_order(&self) -> LaneOrder {
        self.lanes
    }

    /// Words of an input each invocation moves.
    pub fn words_per_invocation(&self) -> u32 {
        words_per_invocation(self.lanes)
    }

    /// True when input `i` moves through workgroup tiles
    /// ([`PermutedPlan::moves_through_tiles`]).
    pub fn moves_through_tiles(&self, i: usize) -> bool {
        self.lanes == LaneOrder::Striped && self.pieces[i].tile.is_some()
    }

    /// Input slots one tile dispatch binds.
    pub(crate) fn tile_inputs_per_dispatch(&self) -> usize {
        slots_per_dispatch(&self.limits, TileRecord::WORDS)
    }

    /// The permuted concat planned.
    pub fn concat(&self) -> &PermutedConcat {
        &self.concat
    }

    /// The element type planned for.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The limits planned under.
    pub fn limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// Bytes input `i` is read from: its packed bytes.
    pub fn input_bytes(&self, i: usize) -> u64 {
        self.pieces[i].bytes
    }

    /// Bytes the output's region must hold: the packed output rounded up
    /// to the word the move writes last (the bits past it written zero).
    pub fn output_region_bytes(&self) -> u64 {
        self.output_bytes.next_multiple_of(4)
    }

    /// True when some input's elements share output words with another's
    /// (sub-word runs) and the gather moves them: the output's words are
    /// zeroed by a dispatch first, and those inputs ORed in. (An input of
    /// packed elements that moves through tiles stores whole words: the
    /// plan tiles it only where its output rows are whole words.)
    pub fn zeroes_output(&self) -> bool {
        self.pieces.iter().enumerate().any(|(i, p)| {
            p.words > 0 && p.mode == RecordMode::Elements && !self.moves_through_tiles(i)
        })
    }

    /// Inputs one dispatch reads: as many as the bindings and the uniform
    /// block hold (at most 32).
    pub fn inputs_per_dispatch(&self) -> usize {
        slots_per_dispatch(&self.limits, ConcatRecord::WORDS)
    }

    pub(crate) fn pieces(&self) -> &[PermutedInput] {
        &self.pieces
    }

    /// Checks the caller's regions: one per input, the output's and the
    /// inputs' usable as storage at offsets of whole words, holding what
    /// is read and written, inside their buffers, and no input's binding
    /// overlapping the output's. Returns the non-empty inputs in groups of
    /// [`PermutedConcatPlan::inputs_per_dispatch`].
    pub(crate) fn check_regions(
        &self,
        inputs: &[PlainRegion],
        output: &PlainRegion,
    ) -> Result<Vec<Vec<usize>>, EncodeError> {
        if inputs.len() != self.pieces().len() {
            return Err(EncodeError::RegionCount {
                expected: self.pieces().len(),
                actual: inputs.len(),
            });
        }
        let out_bytes = self.output_region_bytes();
        check_storage_region(
            BufferRole::ConcatOutput,
            output,
            out_bytes,
            out_bytes,
            || "the packed output rounded up to the 4-byte word the move writes last".into(),
        )?;
        let out_binding = self.binding(output, out_bytes);
        let live: Vec<usize> = (0..inputs.len())
            .filter(|&i| self.pieces()[i].words > 0)
            .collect();
        for &i in &live {
            let bytes = self.pieces()[i].bytes;
            check_storage_region(
                BufferRole::ConcatInput(i),
                &inputs[i],
                bytes,
                bytes.next_multiple_of(4),
                || format!("the packed {} input", self.element_type()),
            )?;
            let bound = self.binding(&inputs[i], bytes.next_multiple_of(4));
            if inputs[i].buffer == output.buffer && overlap(&bound, &out_binding) {
                return Err(EncodeError::InputSharesBuffer {
                    which: BufferRole::ConcatInput(i),
                    why: format!(
                        "its binding {bound:?} overlaps the output's {out_binding:?} (bindings start at offsets aligned down to {})",
                        self.limits().min_storage_buffer_offset_alignment
                    ),
                });
            }
        }
        Ok(live
            .chunks(self.inputs_per_dispatch())
            .map(<[usize]>::to_vec)
            .collect())
    }

    /// The binding of a region holding `bytes` from its offset.
    pub(crate) fn binding(&self, region: &PlainRegion, bytes: u64) -> Range<u64> {
        binding_of(&self.limits, region, bytes)
    }
}

/// The bits of a fixed-width element type (strings have no GPU layout).
fn gpu_bits(element_type: ElementType) -> Result<u64, PlanError> {
    element_type
        .bit_width()
        .map(u64::from)
        .ok_or(PlanError::NotOnGpu { element_type })
}

/// A tensor of `bytes` and `elements` that a permuted move moves: in one
/// buffer, its elements counted in `u32`.
fn fits_buffer(
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
fn binding_most(limits: &PlanLimits, elements: bool) -> u64 {
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
fn past_one_binding(bytes: u64, most: u64, limits: &PlanLimits) -> bool {
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
    bytes.next_multiple_of(4) + align - 4 > most || bytes.div_ceil(4) > grid_words(limits)
}

/// Words an invocation of a blocked (software adapter's) plan moves: on
/// lavapipe, a long stretch per lane (permute_bench, GPT-2's QKV f16
/// [8, 1024, 2304]: 31 ms at 64 words, 16 ms at 256, 15 ms at 1,024).
pub const BLOCKED_WORDS: u32 = 1024;

fn words_per_invocation(lanes: LaneOrder) -> u32 {
    match lanes {
        LaneOrder::Striped => 1,
        LaneOrder::Blocked => BLOCKED_WORDS,
    }
}

/// Destinations (or pieces) one permuted-move dispatch binds under
/// `limits`, with records of `record_words`: the storage buffers per stage
/// less one, as many records as the uniform block holds, at most 32 (a
/// module each).
fn slots_per_dispatch(limits: &PlanLimits, record_words: usize) -> usize {
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
fn binding_of(limits: &PlanLimits, region: &PlainRegion, bytes: u64) -> Range<u64> {
    let align = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
    region.offset / align * align..region.offset + bytes
}

#[cfg(test)]
mod tests {
    use super::{LaneOrder, PermutedConcatPlan, PlanLimits};
    use crate::ElementType;
    use crate::semantics::PermutedConcat;

    #[test]
    fn blocked_lanes_walk_a_head_merge_in_each_inputs_order() {
        // GPT-2's heads [B, H, S, D] merged back into [B, S, 3·H·D]: in the
        // piece's order a lane reads a run of D from each of H heads in
        // turn; in the input's order it reads one run and writes runs of
        // D, one row of the output after another.
        let merge = PermutedConcat::merge_heads(&[[2, 12, 16, 64]; 3]).unwrap();
        let plan =
            PermutedConcatPlan::new(&merge, ElementType::Float16, &PlanLimits::WEBGPU_DEFAULT)
                .unwrap();
        let blocked = plan.clone().lanes(LaneOrder::Blocked);
        for (i, piece) in plan.pieces().iter().enumerate() {
            for vec4 in [false, true] {
                let (units, read, write) = piece.walk(vec4, LaneOrder::Blocked);
                let (striped_units, striped_read, _) = piece.walk(vec4, LaneOrder::Striped);
                assert_eq!(units, striped_units);
                assert_eq!((read.0.len(), read.1[0], read.2), (1, 1, 0), "input {i}");
                // Runs of D (32 words, 8 vec4s), the heads a sequence apart.
                let run = if vec4 { 8 } else { 32 };
                assert_eq!(write.0.last(), Some(&run), "input {i}");
                assert_eq!(*striped_read.0.last().unwrap(), run);
                assert!(striped_read.0.len() > 1);
            }
        }
        assert_eq!(blocked.lane_order(), LaneOrder::Blocked);
        assert_eq!(plan.lane_order(), LaneOrder::Striped);
    }
}
