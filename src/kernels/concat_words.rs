//! The concat kernel for pieces at any bit offset: each invocation owns one
//! word of the tensor and assembles it from the pieces whose runs overlap
//! it (`shaders/concat_words.wgsl`). A concat whose runs, offsets and rows
//! are whole vec4s or words takes the split's kernels the other way (row
//! copies, row words, vec4, words: `move_<slot>` reads the piece and writes
//! the tensor); this one takes the rest: sub-word element types, odd
//! lengths (on GPUs, runs of 128 bits or more whose pieces tile the row
//! take the funnel's concat streams first, [`super::concat_streams`]).
//! Consecutive lanes write consecutive tensor words (whole
//! sectors) and read consecutive piece words, whatever the lane order, so
//! it has one.

use super::{
    ClassRates, Form, GeneratedLayout, Grouped, Kernel, KernelLayout, KernelSpec, Moves, Order,
    SampleSplit,
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
        grouped: Some(Grouped {
            layout: grouped,
            max_outputs: MAX_PIECES,
        }),
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
        // More pieces, of more lengths, than one module assembles or a
        // plan's modules of fixed groups hold: groups whose module reads
        // the pieces' places from the table.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[4, 595],
                axis: 1,
                lengths: &ONE_TO_34,
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

/// Lengths 1 to 34: 34 pieces, no two alike (595 elements).
const ONE_TO_34: [usize; 34] = {
    let mut lengths = [0; 34];
    let mut i = 0;
    while i < 34 {
        lengths[i] = i + 1;
        i += 1;
    }
    lengths
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

/// The layout of `live` (one group of many) whose module reads the
/// pieces' places from the table, so that every group of as many pieces
/// shares it.
fn grouped(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    _window_start_bits: u64,
) -> Option<GeneratedLayout> {
    if g.input_bytes * 8 + 64 > i32::MAX as u64 {
        return None;
    }
    ConcatWords::read_from_table(&live, g.outer).map(GeneratedLayout::ConcatWords)
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

/// Where a concat-words layout's pieces lie in the tensor's row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConcatPieces {
    /// Every piece's place and run, constants of the module.
    Fixed(Vec<ConcatPiece>),
    /// `count` pieces whose places and runs the module reads from the
    /// table: piece `j`'s run starts its entry's `src_bit` less entry 0's
    /// after piece 0's and holds its entry's `run_bits`. One module then
    /// serves every group of `count` pieces of a concat cut into more
    /// groups than [`crate::plan::internals::MAX_GROUP_MODULES`] modules
    /// (or into more pieces than one module assembles).
    FromTable {
        /// Pieces in the dispatch.
        count: u32,
    },
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
    pub pieces: ConcatPieces,
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
        Some(ConcatWords {
            block_bits: block_bits as u32,
            pieces: ConcatPieces::Fixed(pieces),
            ends_rows: ends_rows(live)?,
        })
    }

    /// The layout of `live` (non-empty pieces in order) with `outer` rows
    /// that reads the pieces' places from the table: `None` past
    /// [`MAX_PIECES`] or when a row passes i32's range.
    pub(crate) fn read_from_table(live: &[(usize, &OutputGeometry)], outer: u64) -> Option<Self> {
        let block_bits = i32::try_from(live.first()?.1.block_bits).ok()?;
        if live.len() > MAX_PIECES || outer == 0 {
            return None;
        }
        Some(ConcatWords {
            block_bits: block_bits as u32,
            pieces: ConcatPieces::FromTable {
                count: live.len() as u32,
            },
            ends_rows: ends_rows(live)?,
        })
    }

    /// How many pieces the module assembles.
    fn piece_count(&self) -> usize {
        match &self.pieces {
            ConcatPieces::Fixed(pieces) => pieces.len(),
            ConcatPieces::FromTable { count } => *count as usize,
        }
    }

    /// Each piece's place in the module: constants, or reads of its
    /// table entry.
    fn piece_places(&self) -> Vec<PiecePlace> {
        let block = self.block_bits;
        match &self.pieces {
            ConcatPieces::Fixed(pieces) => pieces
                .iter()
                .map(|p| PiecePlace {
                    about: format!(
                        "{} bits, {} bits after piece 0's run in each {block}-bit row",
                        p.run_bits, p.delta_bits
                    ),
                    delta: p.delta_bits.to_string(),
                    run: p.run_bits.to_string(),
                    reach: (32 + p.run_bits).div_ceil(block).to_string(),
                })
                .collect(),
            ConcatPieces::FromTable { count } => (0..*count)
                .map(|j| PiecePlace {
                    about: "its place and run from its entry".to_string(),
                    delta: format!("i32(table.entries[{j}u].src_bit - src0)"),
                    run: "i32(e.run_bits)".to_string(),
                    reach: format!("(32 + run + {}) / {block}", block - 1),
                })
                .collect(),
        }
    }

    /// The tensor's rows, a WGSL i32 expression: piece 0's bits over its
    /// run.
    fn rows(&self) -> String {
        match &self.pieces {
            ConcatPieces::Fixed(pieces) => {
                format!("i32(table.entries[0u].len_bits / {}u)", pieces[0].run_bits)
            }
            ConcatPieces::FromTable { .. } => {
                "i32(table.entries[0u].len_bits / table.entries[0u].run_bits)".to_string()
            }
        }
    }

    /// Where the last piece's run ends in row 0 (from piece 0's run), a
    /// WGSL i32 expression.
    fn row_end(&self) -> Option<String> {
        match &self.pieces {
            ConcatPieces::Fixed(pieces) => pieces
                .last()
                .map(|p| (p.delta_bits + p.run_bits).to_string()),
            ConcatPieces::FromTable { count } => count.checked_sub(1).map(|j| {
                format!("i32(table.entries[{j}u].src_bit - src0 + table.entries[{j}u].run_bits)")
            }),
        }
    }
}

/// One piece's place in a module, as WGSL: a comment on it, its run's
/// start after piece 0's, its run (i32 expressions) and the rows of a
/// period that can reach one word.
struct PiecePlace {
    about: String,
    delta: String,
    run: String,
    reach: String,
}

/// True when the last of `live` ends the tensor's row.
fn ends_rows(live: &[(usize, &OutputGeometry)]) -> Option<bool> {
    let last = live.last()?.1;
    Some(last.offset_bits + last.run_bits == last.block_bits)
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

    /// A lane per word of the window (a group's: from its first run to
    /// where its last run ends in the last row), and no more than the
    /// whole tensor's.
    fn window_invocations(&self, outer: u64, window_bits: u64) -> Option<u64> {
        Some(self.invocations(outer).min(window_bits.div_ceil(32) + 1))
    }

    fn output_entries(&self) -> Option<usize> {
        Some(self.piece_count())
    }

    fn path(&self) -> Option<&'static str> {
        matches!(self.pieces, ConcatPieces::FromTable { .. }).then_some("from_table")
    }

    fn wgsl(&self, variant: &Variant) -> String {
        let block = self.block_bits;
        let pieces: String = self
            .piece_places()
            .iter()
            .enumerate()
            .map(|(j, place)| {
                WGSL.fill(
                    "piece",
                    &[
                        ("unless_skipped", &variant.unless_skipped(j)),
                        ("j", &j),
                        ("about", &place.about),
                        ("reach", &place.reach),
                        ("delta", &place.delta),
                        ("run", &place.run),
                        ("block", &block),
                        ("slot", &variant.placement.slot_of_entry(j)),
                    ],
                )
            })
            .collect();
        let pad = match self.row_end() {
            Some(end) if self.ends_rows => WGSL.fill("pad", &[("block", &block), ("end", &end)]),
            _ => String::new(),
        };
        let slots = WGSL.repeat("piece_bits", 0..variant.slots, |s| {
            vec![("slot", s.to_string())]
        });
        let body = WGSL.fill(
            "body",
            &[
                ("rows", &self.rows()),
                ("pieces", &pieces),
                ("pad", &pad),
            ],
        );
        slots + &entry_point(variant, &body)
    }
}
