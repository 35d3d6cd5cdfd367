//! The row-stream layout, the funnel kernel's per-layout form, for long
//! runs at any bit offset. Blocked lanes
//! (lavapipe): each invocation owns, in every output, one stretch of whole
//! vec4s that lies inside one input row, and streams it with one funnel
//! shift (one vec4 load and one store per 16 bytes); the vec4s that
//! straddle two rows are shared out among the row's invocations. Striped
//! lanes (GPUs): each output's invocations on its consecutive vec4s
//! ([`RowStreams::striped`]).
//!
//! A run shorter than a vec4 (whole words at whole-word offsets, as the
//! one-word objectness column of YOLOv5's [4, 1, 80] head) is gathered
//! instead: invocation `g` builds the output's vec4 `g` from the four words
//! it holds, stepping through rows by selects (with the word kernel that
//! head ran at about 0.2 of a copy on lavapipe; with the gather, 0.89);
//! on GPUs (striped lanes), a few short runs at any bit offset are gathered
//! too, at most 32 bits a step ([`SHORT_BITS_SHARE`]). A
//! stretch that can lie wholly past its row is skipped with its loads
//! ([`StreamOutput::may_be_empty`]: YOLOv5 0.98-1.03). Past one dispatch's
//! slots each group of outputs is a dispatch of its own, as with row copies.
//!
//! Every invocation runs the same straight-line code: stretch, run and
//! block lengths and invocations per row are constants of the generated
//! entry point (`shaders/row_streams.wgsl`), so no lane loops longer than
//! another (lavapipe runs every branch and loop to its longest lane: the
//! table-driven funnel measured 0.55 of a copy on `u8 [4096, 4097]`, this
//! kernel about 0.8; `docs/journal/2026-11-22-lavapipe-kernels.md`).

use super::{GeneratedLayout, Kernel, KernelLayout};
use crate::kernels::lanes::LaneOrder;
use crate::kernels::template::Template;
use crate::kernels::wgsl::{VEC4_BITS, Variant, entry_point, read_entries, select_by};
use crate::kernels::work::OutputGeometry;
use crate::kernels::work::Work;

/// The template of the row-stream layouts.
pub(super) const WGSL: Template = Template::new(
    "row_streams.wgsl",
    include_str!("../../shaders/row_streams.wgsl"),
);

/// The layout of `live` from `window_start_bits`: every gathered output
/// from the input's start, or one group's outputs from the group's window.
pub(super) fn layout(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    window_start_bits: u64,
) -> Option<GeneratedLayout> {
    RowStreams::new(live, g.input_bytes, window_start_bits, g.lanes)
        .map(GeneratedLayout::RowStreams)
}

/// Vec4s of the longest output an invocation streams per row: the
/// invocations per row are chosen so that it gets about this many. (On
/// lavapipe 4 and 8 measured alike and 16 a third slower, with the same
/// code unrolled; 8 pays the per-invocation setup over more stores.)
pub const STREAM_VEC4S: u64 = 8;

/// One gathered output of a row-stream layout, the `j`th of its pass
/// (table entry and destination slot `j`); which output it is, is not part
/// of the layout, so groups of equal shape share a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamOutput {
    /// Where its run starts in each input row, in bits from the start of
    /// the pass's input window: the table's `src_bit` (a generated pass
    /// binds the input from a fixed start to its end), compiled in as the
    /// row-copy kernel's run starts are (blocked lanes); 0 with striped
    /// lanes, whose modules read it from the table.
    pub src_bit: u32,
    /// Bits of its run in each input row: at least 128, or a short run of
    /// whole words ([`StreamOutput::is_short`]).
    pub run_bits: u32,
    /// Vec4s each invocation streams for it per row (0 for a short run,
    /// whose vec4s are gathered word by word, one per invocation).
    pub vec4s: u32,
    /// A short run gathered at most 32 bits a step from any bit offset
    /// (striped lanes; [`SHORT_BITS_SHARE`]), not a word at a time.
    pub any_offset: bool,
}

/// With striped lanes, short runs that are not whole words at whole-word
/// offsets (an int8 byte between two runs of 511) are gathered from any bit
/// offset, at most 32 bits a step, when all of them together hold at most
/// this share of the input's bits: each step is a load of its own, so they
/// are kept to a small part of the dispatch's requests (the int8 511/1/511
/// split, one bit in 1,023, moved from the words kernel).
pub const SHORT_BITS_SHARE: u64 = 16;

impl StreamOutput {
    /// True for a run shorter than a vec4 (whole words at whole-word
    /// offsets): invocation `g` gathers the output's vec4 `g` from the
    /// rows it spans, one word at a time.
    pub fn is_short(&self) -> bool {
        self.run_bits < 128
    }

    /// True when some row's stretch `part` (of `per_row`) may hold no whole
    /// vec4 of the run: a row holds at least `run_bits / 128 - 1` of them.
    /// Such stretches are skipped whole, their loads included.
    pub fn may_be_empty(&self, per_row: u32) -> bool {
        let fewest = (self.run_bits / 128).saturating_sub(1);
        per_row.saturating_sub(1) * self.vec4s >= fewest
    }
}

/// A row-stream layout: the lane order, the input row length, how many
/// invocations share a row (blocked), and every gathered output's run,
/// where it starts and its stretch. The row count is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowStreams {
    /// Blocked: each invocation a stretch of every output in its row;
    /// striped: each output's entry owns a range of invocations, one of the
    /// output's vec4s each.
    pub lanes: LaneOrder,
    /// Bits per input row.
    pub block_bits: u32,
    /// Invocations per input row (blocked; 0 striped).
    pub per_row: u32,
    /// The gathered outputs, in order (empty outputs have none).
    pub outputs: Vec<StreamOutput>,
}

impl RowStreams {
    /// The layout of `live` (non-empty outputs, every one gathered) in a
    /// dispatch whose input window starts at `window_start_bits` (0, or a
    /// group's, a multiple of 128): `None` unless every run is at least 128
    /// bits (a vec4 straddles at most two rows) or whole words at
    /// whole-word offsets in rows of whole words (or, with striped lanes,
    /// short runs at any offset holding at most 1/[`SHORT_BITS_SHARE`] of
    /// the input's bits), and every output and the input are whole vec4s.
    pub(crate) fn new(
        live: Vec<(usize, &OutputGeometry)>,
        input_bytes: u64,
        window_start_bits: u64,
        lanes: LaneOrder,
    ) -> Option<Self> {
        let block_bits = live.first()?.1.block_bits;
        let in_words = |g: &OutputGeometry| {
            [g.run_bits, g.offset_bits, g.block_bits]
                .iter()
                .all(|b| b.is_multiple_of(32))
        };
        let any_offset = |g: &OutputGeometry| g.run_bits < 128 && !in_words(g);
        // Bits gathered from any offset: few, and u32 bit addresses.
        let gathered: u64 = live
            .iter()
            .filter(|(_, g)| any_offset(g))
            .map(|(_, g)| g.total_bits)
            .sum();
        let bits_gather = gathered == 0
            || (lanes == LaneOrder::Striped
                && gathered * SHORT_BITS_SHARE <= input_bytes * 8
                && input_bytes * 8 < (1 << 32) - 256);
        let fits = |(_, g): &(usize, &OutputGeometry)| {
            g.total_bits.is_multiple_of(128) && g.offset_bits >= window_start_bits
        };
        if !input_bytes.is_multiple_of(16)
            || !window_start_bits.is_multiple_of(128)
            || !bits_gather
            || !live.iter().all(fits)
        {
            return None;
        }
        // A run of r bits holds at most r / 128 whole vec4s in any row.
        let widest = live.iter().map(|(_, g)| g.run_bits / 128).max()?;
        let per_row = match lanes {
            LaneOrder::Blocked => widest.div_ceil(STREAM_VEC4S).max(1),
            LaneOrder::Striped => 0,
        };
        let outputs = live
            .iter()
            .map(|&(_, g)| {
                // Striped modules read run starts from the table: groups of
                // one shape share a module wherever their windows start.
                let src_bit = match lanes {
                    LaneOrder::Blocked => g.offset_bits - window_start_bits,
                    LaneOrder::Striped => 0,
                };
                Some(StreamOutput {
                    src_bit: u32::try_from(src_bit).ok()?,
                    run_bits: u32::try_from(g.run_bits).ok()?,
                    vec4s: if g.run_bits < 128 || per_row == 0 {
                        0
                    } else {
                        u32::try_from((g.run_bits / 128).div_ceil(per_row).max(1)).ok()?
                    },
                    any_offset: any_offset(g),
                })
            })
            .collect::<Option<_>>()?;
        Some(RowStreams {
            lanes,
            block_bits: u32::try_from(block_bits).ok()?,
            per_row: u32::try_from(per_row).ok()?,
            outputs,
        })
    }

    /// The body of the entry point for this layout. Table entry `j`
    /// belongs to gathered output `j`.
    fn body(&self, variant: &Variant) -> String {
        let entries = read_entries(variant, self.outputs.len());
        let streams: String = self
            .outputs
            .iter()
            .enumerate()
            .map(|(j, out)| {
                if out.is_short() {
                    self.gather(j, variant, out)
                } else {
                    self.stream(j, variant, out)
                }
            })
            .collect();
        let straddling: Vec<(usize, &StreamOutput)> = self
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, o)| !o.is_short() && o.run_bits % 128 != 0)
            .collect();
        let rounds = straddling.len().div_ceil(self.per_row as usize);
        let straddles: String = (0..rounds)
            .map(|round| self.straddle_round(&straddling, round, variant))
            .collect();
        WGSL.fill(
            "body",
            &[
                ("per_row", &self.per_row),
                ("entries", &entries),
                ("streams", &streams),
                ("straddles", &straddles),
            ],
        )
    }

    /// Output `j`'s stretch (written to `slot`): the whole vec4s of row
    /// `row`'s run numbered `part` in the row, one funnel shift for all,
    /// unrolled.
    fn stream(&self, j: usize, variant: &Variant, out: &StreamOutput) -> String {
        let slot = variant.placement.slot_of_entry(j);
        let steps = WGSL.repeat("step", 0..out.vec4s, |&k| {
            vec![
                ("k", k.to_string()),
                ("next", (k + 1).to_string()),
                ("slot", slot.to_string()),
            ]
        });
        WGSL.fill(
            "stream",
            &[
                ("unless_skipped", &variant.unless_skipped(j)),
                ("j", &j),
                ("src", &out.src_bit),
                ("run", &out.run_bits),
                ("vec4s", &out.vec4s),
                ("block", &self.block_bits),
                ("steps", &steps),
                (
                    "in_row",
                    &if out.may_be_empty(self.per_row) {
                        "u0 < end"
                    } else {
                        "true"
                    },
                ),
            ],
        )
    }

    /// Output `j`'s vec4 `g` (written to its slot), for a short run: four
    /// words, each from the row and column it lies at, stepping through
    /// the rows by selects (no division past the first word).
    fn gather(&self, j: usize, variant: &Variant, out: &StreamOutput) -> String {
        let slot = variant.placement.slot_of_entry(j);
        let (q, in_range, src_bits) = match self.lanes {
            LaneOrder::Blocked => (
                "g",
                "g < (e.len_bits >> 7u)",
                format!("{}u + source_shift_bits()", out.src_bit),
            ),
            LaneOrder::Striped => (
                "g - e.first_invocation",
                "g >= e.first_invocation && q < (e.len_bits >> 7u)",
                "e.src_bit".to_string(),
            ),
        };
        WGSL.fill(
            "gather",
            &[
                ("unless_skipped", &variant.unless_skipped(j)),
                ("j", &j),
                ("q", &q),
                ("in_range", &in_range),
                ("slot", &slot),
                ("src_bits", &src_bits),
                ("words", &(out.run_bits / 32)),
                ("block_words", &(self.block_bits / 32)),
            ],
        )
    }

    /// Output `j`'s vec4 `g - first_invocation` (striped), for a short run
    /// at any bit offset: at most 32 bits a step, each from the row and
    /// column it lies at, stepping through the rows by selects.
    fn gather_bits(&self, j: usize, variant: &Variant, out: &StreamOutput) -> String {
        // Each step ends at 32 bits (4 of them at most), a run's end (once
        // per row the vec4 spans) or the vec4's end (the last).
        let rows = 127u32.div_ceil(out.run_bits) + 1;
        WGSL.fill(
            "gather_bits",
            &[
                ("unless_skipped", &variant.unless_skipped(j)),
                ("j", &j),
                ("run", &out.run_bits),
                ("block", &self.block_bits),
                ("steps", &(4 + rows)),
                ("slot", &variant.placement.slot_of_entry(j)),
            ],
        )
    }

    /// One round of straddles: invocation `part` writes straddle
    /// `part + round * per_row`, if there is one, choosing its output's
    /// constants by selects (every invocation computes one straddle instead
    /// of every invocation computing all of them).
    fn straddle_round(
        &self,
        straddling: &[(usize, &StreamOutput)],
        round: usize,
        variant: &Variant,
    ) -> String {
        let placement = variant.placement;
        // A WGSL expression: `value` of the output of straddle `c`.
        let pick = |value: &dyn Fn(usize, &StreamOutput) -> String| {
            let values: Vec<String> = straddling.iter().map(|&(j, o)| value(j, o)).collect();
            select_by("c", &values)
        };
        let slots: Vec<usize> = straddling
            .iter()
            .map(|&(j, _)| placement.slot_of_entry(j))
            .collect();
        // One binding for every straddle: one store. Else each straddle
        // stores into its output's binding, inside the writers' `if`.
        let stores = if slots.iter().all(|&s| s == slots[0]) {
            WGSL.fill("store", &[("slot", &slots[0])])
        } else {
            WGSL.repeat("store_if", slots.iter().enumerate(), |(c, slot)| {
                vec![("c", c.to_string()), ("slot", slot.to_string())]
            })
        };
        WGSL.fill(
            "straddle_round",
            &[
                ("offset", &(round * self.per_row as usize)),
                ("run", &pick(&|_, o| format!("{}u", o.run_bits))),
                ("entry", &pick(&|j, _| format!("{j}u"))),
                ("count", &straddling.len()),
                (
                    "written",
                    &if variant.skips {
                        " && (e.flags & FLAG_SKIP) == 0u"
                    } else {
                        ""
                    },
                ),
                ("block", &self.block_bits),
                ("stores", &stores),
            ],
        )
    }

    /// The striped body (GPUs): each output's entry owns a range of
    /// invocations, one of the output's vec4s each, shifted out of its
    /// row's run (the rest from the next row's where the vec4 crosses the
    /// run's end; a short run's vec4 gathered word by word), so that
    /// consecutive lanes touch consecutive vec4s of the output and, inside
    /// a row, of the input.
    fn striped(&self, variant: &Variant) -> String {
        let streams: String = self
            .outputs
            .iter()
            .enumerate()
            .map(|(j, out)| {
                if out.any_offset {
                    return self.gather_bits(j, variant, out);
                }
                if out.is_short() {
                    return self.gather(j, variant, out);
                }
                WGSL.fill(
                    "striped_stream",
                    &[
                        ("unless_skipped", &variant.unless_skipped(j)),
                        ("j", &j),
                        ("run", &out.run_bits),
                        ("block", &self.block_bits),
                        ("gap", &(self.block_bits - out.run_bits)),
                        ("slot", &variant.placement.slot_of_entry(j)),
                    ],
                )
            })
            .collect();
        WGSL.fill(
            "striped_body",
            &[
                ("entries", &read_entries(variant, self.outputs.len())),
                ("streams", &streams),
            ],
        )
    }
}

impl KernelLayout for RowStreams {
    fn kernel(&self) -> Kernel {
        Kernel::Funnel
    }

    fn invocations(&self, outer: u64) -> u64 {
        match self.lanes {
            LaneOrder::Blocked => outer * u64::from(self.per_row),
            // Every output is whole vec4s (`RowStreams::new`).
            LaneOrder::Striped => self
                .outputs
                .iter()
                .map(|o| outer * u64::from(o.run_bits) / 128)
                .sum(),
        }
    }

    fn output_entries(&self) -> Option<usize> {
        Some(self.outputs.len())
    }

    fn wgsl(&self, variant: &Variant) -> String {
        let body = match self.lanes {
            LaneOrder::Blocked => self.body(variant),
            LaneOrder::Striped => self.striped(variant),
        };
        let source_bits = if self.outputs.iter().any(|o| o.any_offset) {
            WGSL.fill("source_bits", &[])
        } else {
            String::new()
        };
        VEC4_BITS.fill("helpers", &[]) + &source_bits + &entry_point(variant, &body)
    }

    fn entry_ranges(&self) -> bool {
        self.lanes == LaneOrder::Striped
    }
}
