//! The row-copy layout, the per-layout form of the vec4 kernel (and, over
//! 32-bit words, the row-word kernel) for runs of whole units: each input row is shared by
//! a fixed number of invocations, and invocation `part` copies a stretch of
//! consecutive vec4s of the row's run of every output. The stretch length,
//! the lanes per row, the run lengths and the row stride are constants of
//! the generated entry point (`shaders/row_copies.wgsl`), so every
//! invocation runs the same straight-line code: one vec4 load and one store
//! per 16 bytes, no run-end test inside a stretch, no division per unit.
//!
//! It moves what the vec4 kernel's table-driven form moves, when every
//! output fits one dispatch, and is tried first. Into separate destinations past one
//! dispatch's slots (WebGPU's 7), each group of outputs is a dispatch of a
//! module of its own, whose run starts count from the group's input
//! window (its first run aligned down), so groups of one shape share a
//! module. How it measured against the vec4 kernel on lavapipe:
//! `docs/DEVICE.md`, "Lavapipe's speeds".

use super::{GeneratedLayout, Kernel, KernelLayout};
use crate::kernels::lanes::LaneOrder;
use crate::kernels::template::Template;
use crate::kernels::wgsl::{Variant, chain_test, entry_point, read_entries};
use crate::kernels::work::{Direction, OutputGeometry, Work};

/// The template of the row-copy layouts (both units).
pub(super) const WGSL: Template = Template::new(
    "row_copies.wgsl",
    include_str!("../../shaders/row_copies.wgsl"),
);

/// The layout of `live` from `window_start_bits` in units of `unit_bits`
/// (row copies: 128, row words: 32): every gathered output from the input's
/// start, or one group's outputs from the group's window.
pub(super) fn layout(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    window_start_bits: u64,
    unit_bits: u32,
) -> Option<GeneratedLayout> {
    RowCopies::new(live, g.outer, window_start_bits, unit_bits, g.lanes)
        .map(GeneratedLayout::RowCopies)
}

/// Bits of the longest output one invocation copies per row: 256, 32
/// bytes, a GPU's memory sector (two vec4s, eight words). (On lavapipe two
/// vec4s beat 1, 4 and 8, and consecutive lanes on consecutive vec4s ran
/// slower than each lane on its own stretch; `docs/DEVICE.md`.)
pub const COPY_STRETCH_BITS: u64 = 256;

/// Vec4s of the longest output one row-copy invocation copies per row.
pub const COPY_VEC4S: u64 = COPY_STRETCH_BITS / 128;

/// Least share of a row's steps that copy a unit, in percent (see
/// `RowCopies::new`). Below it the table-driven kernel, which spreads
/// every output's units evenly, keeps the layout: `f32 [1, 8400, 84]`
/// split `[4, 80]` (70 %) measured no faster with row copies (0.95 and 0.96
/// of `shader_copy` against 1.00 and 0.96), where the split_bench cases at
/// 100 % gained 5-25 %.
pub const MIN_WORKING_PERCENT: u64 = 80;

/// Most outputs one module copies: every invocation runs every output's
/// code, so past it (an arena of many outputs) the table-driven vec4 kernel
/// moves them instead.
pub const MAX_COPY_OUTPUTS: usize = 32;

/// One gathered output of a row-copy layout, the `j`th of its pass (table
/// entry and destination slot `j`). Which output it is, is not part of
/// the layout: groups of equal shape share a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CopyOutput {
    /// Where its run starts in each input row, in units from the start of
    /// the pass's input window: the table's `src_bit` / unit (a generated
    /// pass binds the input from a fixed start to its end), compiled in
    /// with blocked lanes because on lavapipe runtime source bases cost
    /// 3-4 % (`docs/DEVICE.md`); 0 with striped lanes, whose modules read
    /// it from the table.
    pub src_unit: u32,
    /// Units of its run in each input row.
    pub run_units: u32,
    /// Units each invocation copies of it per row.
    pub units: u32,
}

/// A row-copy layout: the unit (vec4s for row copies, words for row
/// words), the lane order, the input row stride, the invocations per row
/// and every gathered output's run and where it starts in the pass's input
/// window. The row count is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowCopies {
    /// Bits per unit: 128 ([`Kernel::Vec4`]) or 32 ([`Kernel::RowWords`]).
    pub unit_bits: u32,
    /// Blocked: each invocation a stretch of every output's run in its row;
    /// striped: each invocation one unit of the row's runs laid end to end.
    pub lanes: LaneOrder,
    /// Units per input row (0 with a single row, where it is never used).
    pub block_units: u32,
    /// Invocations per input row (striped: the units of every run).
    pub per_row: u32,
    /// The gathered outputs, in order (empty outputs have none).
    pub outputs: Vec<CopyOutput>,
}

impl RowCopies {
    /// The layout of `live` (non-empty outputs, every one gathered) in a
    /// dispatch whose input window starts at `window_start_bits`, in units
    /// of `unit_bits`: every output of the plan from the input's start, or
    /// one group of a plan whose outputs take several dispatches (separate
    /// destinations past the slots of one). `None` unless every run, its
    /// offset and the row stride are whole units; past
    /// [`MAX_COPY_OUTPUTS`] outputs; or, blocked, when under
    /// [`MIN_WORKING_PERCENT`] of the steps copy a unit (striped, every
    /// lane copies one unit).
    pub(crate) fn new(
        live: Vec<(usize, &OutputGeometry)>,
        outer: u64,
        window_start_bits: u64,
        unit_bits: u32,
        lanes: LaneOrder,
    ) -> Option<Self> {
        let unit = u64::from(unit_bits);
        let block_bits = live.first()?.1.block_bits;
        let fits = |(_, g): &(usize, &OutputGeometry)| {
            g.is_aligned_to(unit, outer) && g.offset_bits >= window_start_bits
        };
        if live.len() > MAX_COPY_OUTPUTS
            || !window_start_bits.is_multiple_of(unit)
            || !live.iter().all(fits)
        {
            return None;
        }
        let widest = live.iter().map(|(_, g)| g.run_bits / unit).max()?;
        let per_row = match lanes {
            LaneOrder::Blocked => widest.div_ceil(COPY_STRETCH_BITS / unit).max(1),
            LaneOrder::Striped => live.iter().map(|(_, g)| g.run_bits / unit).sum(),
        };
        let outputs: Vec<CopyOutput> = live
            .iter()
            .map(|&(_, g)| {
                let run_units = g.run_bits / unit;
                // Striped modules read run starts from the table: groups of
                // one shape share a module wherever their windows start.
                let src_unit = match lanes {
                    LaneOrder::Blocked => (g.offset_bits - window_start_bits) / unit,
                    LaneOrder::Striped => 0,
                };
                Some(CopyOutput {
                    src_unit: u32::try_from(src_unit).ok()?,
                    run_units: u32::try_from(run_units).ok()?,
                    units: u32::try_from(run_units.div_ceil(per_row)).ok()?,
                })
            })
            .collect::<Option<_>>()?;
        // Lanes that copy nothing at a step cost what working ones do (on
        // lavapipe under a mask, on a GPU as idle SIMD slots): an output
        // much shorter than the longest (YOLO's 4-of-84 split: 70 % of the
        // steps work) gains nothing over the table-driven kernel.
        let steps: u64 = outputs.iter().map(|o| u64::from(o.units)).sum();
        let work: u64 = outputs.iter().map(|o| u64::from(o.run_units)).sum();
        if lanes == LaneOrder::Blocked && work * 100 < steps * per_row * MIN_WORKING_PERCENT {
            return None;
        }
        let block_units = if outer > 1 { block_bits / unit } else { 0 };
        Some(RowCopies {
            unit_bits,
            lanes,
            block_units: u32::try_from(block_units).ok()?,
            per_row: u32::try_from(per_row).ok()?,
            outputs,
        })
    }

    /// Output `j`'s stretch of a row (written to its slot), each step
    /// guarded unless every stretch of the run is whole.
    fn copy(&self, j: usize, variant: &Variant, out: &CopyOutput) -> String {
        let slot = variant.placement.slot_of_entry(j);
        let whole = out.run_units == self.per_row * out.units;
        let stretch: String = (0..out.units)
            .map(|k| {
                if whole {
                    WGSL.fill("step", &[("slot", &slot), ("k", &k)])
                } else {
                    let run = out.run_units;
                    WGSL.fill("guarded_step", &[("k", &k), ("run", &run), ("slot", &slot)])
                }
            })
            .collect();
        WGSL.fill(
            "copy",
            &[
                ("unless_skipped", &variant.unless_skipped(j)),
                ("j", &j),
                ("steps", &out.units),
                ("src", &out.src_unit),
                ("run", &out.run_units),
                ("stretch", &stretch),
            ],
        )
    }
}

impl RowCopies {
    /// The striped body: unit `w` of the row's runs laid end to end, moved
    /// between its output and where its run lies in the input row. The
    /// lane picks its run first, then touches the tensor at one site (one
    /// request a warp, whatever runs its units belong to); the outputs'
    /// side is one site a slot.
    fn striped(&self, variant: &Variant) -> String {
        WGSL.fill(
            "striped_body",
            &[
                ("per_row", &self.per_row),
                ("entries", &read_entries(variant, self.outputs.len())),
                ("picks", &self.striped_picks()),
                ("moves", &self.striped_moves(variant)),
            ],
        )
    }

    /// The if-else chain that finds the run holding unit `w`: its entry
    /// `j`, its unit in the tensor `s` and in its output `d`.
    fn striped_picks(&self) -> String {
        let count = self.outputs.len();
        let mut first = 0u32;
        let mut picks = String::new();
        for (j, out) in self.outputs.iter().enumerate() {
            let end = first + out.run_units;
            picks += &WGSL.fill(
                "striped_pick",
                &[
                    ("test", &chain_test(j, count, &format!("w < {end}u"))),
                    ("j", &j),
                    ("block", &self.block_units),
                    ("first", &first),
                    ("run", &out.run_units),
                ],
            );
            first = end;
        }
        picks
    }

    /// The move of the picked unit: in a split one load from the tensor
    /// and a store into entry `j`'s slot; in a concat a load from the
    /// slot and one store into the tensor. Where every entry shares a slot
    /// (an arena), that side is one site too.
    fn striped_moves(&self, variant: &Variant) -> String {
        let count = self.outputs.len();
        let slot = |j: usize| variant.placement.slot_of_entry(j);
        let one_slot = (1..count).all(|j| slot(j) == slot(0));
        let skipped = if variant.skips { "if (writes(j)) " } else { "" };
        match variant.direction {
            Direction::Split => {
                let stores: String = if one_slot {
                    WGSL.fill(
                        "striped_store_one",
                        &[("unless_skipped", &skipped), ("slot", &slot(0))],
                    )
                } else {
                    let and_writes = if variant.skips { " && writes(j)" } else { "" };
                    (0..count)
                        .map(|j| {
                            WGSL.fill(
                                "striped_store",
                                &[("j", &j), ("and_writes", &and_writes), ("slot", &slot(j))],
                            )
                        })
                        .collect()
                };
                WGSL.fill("striped_split", &[("stores", &stores)])
            }
            Direction::Concat => {
                let loads: String = if one_slot {
                    WGSL.fill("striped_load_one", &[("slot", &slot(0))])
                } else {
                    (0..count)
                        .map(|j| WGSL.fill("striped_load", &[("j", &j), ("slot", &slot(j))]))
                        .collect()
                };
                let unit = if self.unit_bits == 128 {
                    "vec4<u32>"
                } else {
                    "u32"
                };
                WGSL.fill(
                    "striped_concat",
                    &[
                        ("unit", &unit),
                        ("loads", &loads),
                        ("unless_skipped", &skipped),
                    ],
                )
            }
        }
    }
}

impl KernelLayout for RowCopies {
    fn kernel(&self) -> Kernel {
        if self.unit_bits == 128 {
            Kernel::Vec4
        } else {
            Kernel::RowWords
        }
    }

    fn invocations(&self, outer: u64) -> u64 {
        outer * u64::from(self.per_row)
    }

    fn output_entries(&self) -> Option<usize> {
        Some(self.outputs.len())
    }

    /// Table entry `j` belongs to gathered output `j`.
    fn wgsl(&self, variant: &Variant) -> String {
        if self.lanes == LaneOrder::Striped {
            return entry_point(variant, &self.striped(variant));
        }
        let entries = read_entries(variant, self.outputs.len());
        let copies: String = self
            .outputs
            .iter()
            .enumerate()
            .map(|(j, out)| self.copy(j, variant, out))
            .collect();
        entry_point(
            variant,
            &WGSL.fill(
                "body",
                &[
                    ("per_row", &self.per_row),
                    ("block", &self.block_units),
                    ("entries", &entries),
                    ("copies", &copies),
                ],
            ),
        )
    }
}
