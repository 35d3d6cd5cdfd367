//! [`PermutedConcatPlan`]: how a [`PermutedConcat`] (the mirror of a
//! [`crate::PermutedSplit`]) runs on a device, as plain data: per input,
//! what the kernel reads of it and where it writes in the output, in the
//! kernel's units (whole words, or elements assembled a word at a time),
//! the views each lane order walks, and how many inputs a dispatch binds.
//! It shares the split's device arithmetic
//! ([`super::permuted_plan`]: bindings, windows, units).

use std::ops::Range;

use crate::element::ElementType;
use crate::kernels::lanes::LaneOrder;
use crate::kernels::permute_records::{ConcatRecord, RecordMode, TileRecord, Words};
use crate::kernels::permute_tile::TileWalk;
use crate::plan::binding::regions::{PlainRegion, check_storage_region, overlap};
use crate::plan::binding::usages::BufferRole;
use crate::plan::error::{EncodeError, PlanError};
use crate::plan::limits::PlanLimits;
use crate::plan::permuted_plan::{
    Windows, binding_most, binding_of, fits_buffer, gpu_bits, in_units, past_one_binding,
    slots_per_dispatch, units_view, window_room, words_per_invocation, words_view,
};
use crate::plan::permuted_tiles::{common_dims, tile_walk};
use crate::plan::permuted_windows::{Cut, CutSide, cut_views};
use crate::semantics::{PermutedConcat, StridedView};

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
    /// windows ([`crate::plan::PermutedPlan::is_windowed`]), each dispatch binding a
    /// stretch of the output that its records write and the stretches of
    /// the inputs they read; the zeroing too, a window at a time.
    pub fn is_windowed(&self) -> bool {
        self.windowed
    }

    /// The same plan with its invocations laid over each input's words as
    /// `lanes` says ([`crate::plan::PermutedPlan::lanes`]).
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
    /// ([`crate::plan::PermutedPlan::moves_through_tiles`]).
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
