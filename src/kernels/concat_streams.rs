//! The concat-stream layout, the funnel kernel's per-layout form for
//! concats (the row streams' mirror): the pieces' runs tile each tensor row
//! in order; lane `g` writes the tensor's vec4 `g`, shifted out of the
//! piece whose run holds its first bit and, where that run ends inside the
//! vec4, out of the runs after it, at most [`MAX_FRAGMENTS`] runs a vec4
//! (`shaders/concat_streams.wgsl`): long runs at any bit offset, and short
//! pieces between them (an int8 byte between runs of 511). Every store is
//! a whole, aligned vec4 of the tensor; the loads are the split's funnel
//! loads, the other way. Striped lanes only (GPUs): a software
//! rasteriser's concat keeps the concat-words kernel.

use super::{GeneratedLayout, Kernel, KernelLayout};
use crate::kernels::lanes::LaneOrder;
use crate::kernels::template::Template;
use crate::kernels::wgsl::{VEC4_BITS, Variant, chain_test, entry_point, read_entries, select_by};
use crate::kernels::work::{Direction, OutputGeometry, Work};

/// The template of the concat-stream layouts.
pub(super) const WGSL: Template = Template::new(
    "concat_streams.wgsl",
    include_str!("../../shaders/concat_streams.wgsl"),
);

/// Most pieces one module reads (each is a branch of every lane's pick).
const MAX_PIECES: usize = 32;

/// Most runs one vec4 of the tensor may span (each past the first is a
/// step of every lane's code, taken by the lanes whose vec4 crosses a run's
/// end). Runs of 128 bits or more make it 2; a piece shorter than a vec4
/// between two long ones makes it 3. Past it, many short pieces a vec4,
/// the concat-words kernel assembles the words.
pub const MAX_FRAGMENTS: u32 = 4;

/// The layout of `live` (every piece of the concat, in one pass from the
/// tensor's start), or `None`.
pub(super) fn layout(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    window_start_bits: u64,
) -> Option<GeneratedLayout> {
    let every_piece = live.len() == g.output_indices().len();
    let one_pass = window_start_bits == 0 && every_piece;
    let fits = g.direction == Direction::Concat
        && g.lanes == LaneOrder::Striped
        && g.vec4_bindings()
        && g.input_bytes.is_multiple_of(16)
        // Tensor and piece bits are u32 in the module, with a vec4's
        // bits past a row's end.
        && g.input_bytes * 8 < (1 << 32) - 256;
    if !(one_pass && fits) {
        return None;
    }
    ConcatStreams::new(&live).map(GeneratedLayout::ConcatStreams)
}

/// A concat-stream layout: the tensor's row and the pieces' runs in it, in
/// order from the row's start. The row count is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConcatStreams {
    /// Bits per tensor row (the runs' sum).
    pub block_bits: u32,
    /// Bits of each piece's run in a row, in entry order.
    pub runs: Vec<u32>,
    /// Most runs one vec4 of the tensor spans (2 to [`MAX_FRAGMENTS`]):
    /// the steps of every lane's code.
    pub fragments: u32,
}

impl ConcatStreams {
    /// The layout of `live` (every non-empty piece, in order): `None`
    /// unless their runs tile the row from its start, each piece whole
    /// vec4s, at most [`MAX_PIECES`] of them, and no vec4 spans more than
    /// [`MAX_FRAGMENTS`] runs.
    pub(crate) fn new(live: &[(usize, &OutputGeometry)]) -> Option<Self> {
        let block_bits = live.first()?.1.block_bits;
        if live.len() > MAX_PIECES {
            return None;
        }
        let mut at = 0;
        let mut runs = Vec::with_capacity(live.len());
        for (_, g) in live {
            let tiles = g.offset_bits == at && g.block_bits == block_bits;
            if !tiles || g.run_bits == 0 || !g.total_bits.is_multiple_of(128) {
                return None;
            }
            runs.push(u32::try_from(g.run_bits).ok()?);
            at += g.run_bits;
        }
        (at == block_bits).then_some(())?;
        let fragments = most_fragments(&runs)?;
        Some(ConcatStreams {
            block_bits: u32::try_from(block_bits).ok()?,
            runs,
            fragments,
        })
    }

    /// The if-else chain that finds the run holding the column: its piece,
    /// where it starts in the row, its length and its piece's first bit.
    fn picks(&self) -> String {
        let count = self.runs.len();
        let mut start = 0u32;
        let mut picks = String::new();
        for (j, &run) in self.runs.iter().enumerate() {
            let end = start + run;
            picks += &WGSL.fill(
                "pick",
                &[
                    ("test", &chain_test(j, count, &format!("col < {end}u"))),
                    ("j", &j),
                    ("start", &start),
                    ("run", &run),
                ],
            );
            start = end;
        }
        picks
    }

    /// `piece_bits(j, p)`: 128 bits from bit `p` of piece `j`'s slot.
    fn piece_reads(&self, variant: &Variant) -> String {
        let count = self.runs.len();
        let slot = |j: usize| variant.placement.slot_of_entry(j);
        let reads = if (1..count).all(|j| slot(j) == slot(0)) {
            WGSL.fill("read", &[("test", &""), ("slot", &slot(0))])
        } else {
            WGSL.repeat("read", 0..count, |&j| {
                vec![
                    ("test", chain_test(j, count, &format!("j == {j}u"))),
                    ("slot", slot(j).to_string()),
                ]
            })
        };
        let slots = WGSL.repeat("piece_bits_slot", 0..variant.slots, |s| {
            vec![("slot", s.to_string())]
        });
        slots + &WGSL.fill("piece_bits", &[("reads", &reads)])
    }
}

impl KernelLayout for ConcatStreams {
    fn kernel(&self) -> Kernel {
        Kernel::Funnel
    }

    /// A lane per vec4 of the tensor (whole vec4s: [`layout`]).
    fn invocations(&self, outer: u64) -> u64 {
        outer * u64::from(self.block_bits) / 128
    }

    fn output_entries(&self) -> Option<usize> {
        Some(self.runs.len())
    }

    fn wgsl(&self, variant: &Variant) -> String {
        let count = self.runs.len();
        let runs: Vec<String> = self.runs.iter().map(|r| format!("{r}u")).collect();
        let units: Vec<String> = (0..count).map(|j| format!("e{j}.dst_unit")).collect();
        let (mine, mine_next, store) = if variant.skips {
            let mine_next = WGSL.fill("mine_next", &[]);
            (WGSL.fill("mine", &[]), mine_next, "store_skipping")
        } else {
            (String::new(), String::new(), "store")
        };
        let step = WGSL.fill(
            "fragment",
            &[
                ("count", &count),
                ("run_of_k", &select_by("k", &runs)),
                ("unit_of_k", &select_by("k", &units)),
                ("mine_next", &mine_next),
            ],
        );
        let body = WGSL.fill(
            "body",
            &[
                ("entries", &read_entries(variant, count)),
                ("block", &self.block_bits),
                ("picks", &self.picks()),
                ("mine", &mine),
                ("fragments_code", &step.repeat(self.fragments as usize - 1)),
                ("store", &WGSL.fill(store, &[])),
            ],
        );
        VEC4_BITS.fill("helpers", &[]) + &self.piece_reads(variant) + &entry_point(variant, &body)
    }
}

/// Most runs a vec4 of the tensor spans, rows repeating `runs`: a vec4 that
/// takes one bit of a run's end needs 127 more from the runs after it, in
/// order, wrapping into the next row. `None` past [`MAX_FRAGMENTS`].
fn most_fragments(runs: &[u32]) -> Option<u32> {
    let count = runs.len();
    let mut most = 2;
    for j in 0..count {
        let (mut bits, mut spans) = (1u64, 1u32);
        while bits < 128 {
            spans += 1;
            if spans > MAX_FRAGMENTS {
                return None;
            }
            bits += u64::from(runs[(j + spans as usize - 1) % count]);
        }
        most = most.max(spans);
    }
    Some(most)
}
