//! The concat kernel for pieces at any bit offset: each invocation owns one
//! word of the tensor and assembles it from the pieces whose runs overlap
//! it (`shaders/concat_words.wgsl`). A concat whose runs, offsets and rows
//! are whole vec4s or words takes the split's kernels the other way (row
//! copies, row words, vec4, words: `move_<slot>` reads the piece and writes
//! the tensor); this one takes the rest: sub-word element types, odd
//! lengths. Consecutive lanes write consecutive tensor words (whole
//! sectors) and read consecutive piece words, whatever the lane order, so
//! it has one.

use super::{
    ClassRates, Form, GeneratedLayout, Kernel, KernelLayout, KernelSpec, Moves, Order, SampleSplit,
};
use crate::element::ElementType;
use crate::kernels::work::Work;
use crate::kernels::work::Direction;
use crate::kernels::work::OutputGeometry;
use crate::kernels::template::Template;
use crate::kernels::wgsl::{Variant, entry_point};

const WGSL: Template = Template::new(
    "concat_words.wgsl",
    include_str!("../../shaders/concat_words.wgsl"),
);

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "concat_words",
    unit_bits: 32,
    // With the words kernel, what a concat falls back to: it moves any
    // concat whose tensor fits one window (the words kernel moves whole
    // words only when concatenating).
    order: Order::Last,
    templates: &[WGSL],
    moves: Moves {
        per_layout: Some(layout),
        table: None,
    },
    prices_output: |_| false,
    probe: PROBE,
    samples: &[
        (Form::PerLayout, SUB_BYTE),
        // Nibbles at odd offsets, three pieces.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[64, 99],
                axis: 1,
                lengths: &[33, 1, 65],
                element_type: ElementType::Int4,
            },
        ),
        // Rows shorter than a word: two-bit elements, three per row.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[96, 3],
                axis: 1,
                lengths: &[1, 2],
                element_type: ElementType::Int2,
            },
        ),
    ],
    // Lavapipe: median of three release calibrations (2026-11-25: 1.4, 1.3,
    // 1.3 GB/s). GPUs: 1.00-1.19x the ideal sectors (access_trace
    // --concat), but more ALU per word than any other kernel: measured on
    // an NVIDIA H200 (docs/gpu/nvidia-h200.md) at 0.48-0.54 of a vec4
    // shader copy on split_bench's sub-word concats (u8, i4, odd words),
    // 0.03 on 31 one-element f16 columns and in its calibration probe:
    // 0.45 (was 0.8 before a GPU measured it).
    rates: ClassRates::on_gpus(1.3e9, 0.45),
    inherits: Some(Kernel::Words),
    per_layout_name: None,
    directions: &[Direction::Concat],
};

/// u8 rows of 37 bytes into 5 and 32: no run on a word boundary.
/// The calibration probe: u8 rows of 37 bytes into 5 and 32, 8,192 rows
/// (300 KiB: large enough that the dispatch's fixed cost is a small part).
const PROBE: SampleSplit = SampleSplit {
    shape: &[8192, 37],
    axis: 1,
    lengths: &[5, 32],
    element_type: ElementType::Uint8,
};

const SUB_BYTE: SampleSplit = SampleSplit {
    shape: &[256, 37],
    axis: 1,
    lengths: &[5, 32],
    element_type: ElementType::Uint8,
};

/// Most pieces one module assembles words from (each is a loop every lane
/// runs).
const MAX_PIECES: usize = 32;

/// The layout of `live` (a pass's pieces): whole outputs in one window.
fn layout(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    _window_start_bits: u64,
) -> Option<GeneratedLayout> {
    // Bit positions in the tensor are i32 in the kernel.
    if g.input_bytes * 8 + 64 > i32::MAX as u64 {
        return None;
    }
    ConcatWords::new(&live, g.outer).map(GeneratedLayout::ConcatWords)
}

/// One piece of a concat-words layout: where its run lies in a row, from
/// piece 0's run, and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConcatPiece {
    /// Bits from piece 0's run start to this piece's, in every row.
    pub delta_bits: u32,
    /// Bits of its run in each row.
    pub run_bits: u32,
}

/// A concat-words layout: the tensor's row, every piece's place in it
/// relative to the first piece's, and whether the last piece ends the row
/// (its dispatch then writes the tensor's last word's zero bits). The row
/// count and where the pieces lie in the tensor are not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConcatWords {
    /// Bits per tensor row.
    pub block_bits: u32,
    /// The pass's pieces, in order.
    pub pieces: Vec<ConcatPiece>,
    /// The last piece's run ends each row (the tensor ends with it).
    pub ends_rows: bool,
}

impl ConcatWords {
    /// The layout of `live` (non-empty pieces in order) with `outer` rows:
    /// `None` past [`MAX_PIECES`] or when a row passes i32's range.
    pub(crate) fn new(live: &[(usize, &OutputGeometry)], outer: u64) -> Option<Self> {
        let first = live.first()?.1;
        let block_bits = i32::try_from(first.block_bits).ok()?;
        if live.len() > MAX_PIECES || outer == 0 {
            return None;
        }
        let pieces = live
            .iter()
            .map(|(_, g)| {
                Some(ConcatPiece {
                    delta_bits: u32::try_from(g.offset_bits.checked_sub(first.offset_bits)?)
                        .ok()?,
                    run_bits: u32::try_from(g.run_bits).ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let last = live.last()?.1;
        Some(ConcatWords {
            block_bits: block_bits as u32,
            pieces,
            ends_rows: last.offset_bits + last.run_bits == last.block_bits,
        })
    }
}

impl KernelLayout for ConcatWords {
    fn kernel(&self) -> Kernel {
        Kernel::ConcatWords
    }

    /// A lane per tensor word of the whole tensor (a group's window starts
    /// later; the lanes past its end write nothing).
    fn invocations(&self, outer: u64) -> u64 {
        (outer * u64::from(self.block_bits)).div_ceil(32) + 1
    }

    fn output_entries(&self) -> Option<usize> {
        Some(self.pieces.len())
    }

    fn wgsl(&self, variant: &Variant) -> String {
        let block = self.block_bits;
        let pieces: String = self
            .pieces
            .iter()
            .enumerate()
            .map(|(j, p)| {
                WGSL.fill(
                    "piece",
                    &[
                        ("unless_skipped", &variant.unless_skipped(j)),
                        ("j", &j),
                        ("run", &p.run_bits),
                        ("delta", &p.delta_bits),
                        ("block", &block),
                        // Rows whose runs can reach one word: the word and
                        // the run span 32 + run bits of a row period.
                        ("rows", &(32 + p.run_bits).div_ceil(block)),
                        ("slot", &variant.placement.slot_of_entry(j)),
                    ],
                )
            })
            .collect();
        let pad = match self.pieces.last() {
            Some(last) if self.ends_rows => WGSL.fill(
                "pad",
                &[
                    ("block", &block),
                    ("end", &(last.delta_bits + last.run_bits)),
                ],
            ),
            _ => String::new(),
        };
        let slots = WGSL.repeat("piece_bits", 0..variant.slots, |s| {
            vec![("slot", s.to_string())]
        });
        let body = WGSL.fill(
            "body",
            &[
                ("run0", &self.pieces[0].run_bits),
                ("pieces", &pieces),
                ("pad", &pad),
            ],
        );
        slots + &entry_point(variant, &body)
    }
}
