//! The row-block kernel for short runs: each invocation owns a block of
//! whole input rows, loads it with vec4 loads and writes whole vec4s of
//! every output. The block is chosen so that each output's share of it is a
//! whole number of vec4s; how the block divides is known when planning, so
//! the kernel is generated per layout (`shaders/row_blocks.wgsl`) with every shift
//! and mask a constant: no division, no table walk per element.
//!
//! On GPUs (striped lanes) a workgroup stages a tile of blocks in
//! workgroup memory with consecutive lanes on consecutive vec4s, then
//! writes each output's share with consecutive lanes on consecutive vec4s.
//! A block too large for constant bit fields (past [`MAX_ROW_BLOCK_BITS`],
//! up to [`MAX_LOOPED_VEC4S`] vec4s) is staged the same way and each output
//! word computed from the block's geometry in a loop (`looped`): narrow
//! pieces beside long ones and rows of a few hundred bytes, when one
//! dispatch moves every output.
//!
//! A runtime sees one layout per split node (the row count does not enter
//! it), so a model compiles a handful of these. Into separate destinations
//! past one dispatch's slots, each group of outputs is a dispatch of its
//! own module, every group reading whole blocks (f32 into 8 columns: 0.77
//! of a copy, against 0.24 with the word kernel; `docs/DEVICE.md`).

use super::{
    ClassRates, Form, GeneratedLayout, Kernel, KernelLayout, KernelSpec, Moves, Order, SampleSplit,
};
use crate::element::ElementType;
use crate::kernels::work::Work;
use crate::kernels::work::Direction;
use crate::kernels::work::OutputGeometry;
use crate::kernels::lanes::LaneOrder;
use crate::kernels::table::WORKGROUP_SIZE;
use crate::kernels::template::Template;
use crate::kernels::wgsl::{Variant, chain_test, entry_point, workgroup_entry_point};

const WGSL: Template = Template::new(
    "row_blocks.wgsl",
    include_str!("../../shaders/row_blocks.wgsl"),
);

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "row_blocks",
    unit_bits: 128,
    order: Order::ByRate,
    templates: &[WGSL],
    moves: Moves {
        per_layout: Some(layout),
        table: None,
        grouped: None,
    },
    prices_output: |_| false,
    probe: SampleSplit {
        shape: &[1 << 20, 6],
        axis: 1,
        lengths: &[1, 2, 3],
        element_type: ElementType::Float16,
    },
    samples: &[
        // split_bench's f16 case, few rows.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[512, 6],
                axis: 1,
                lengths: &[1, 2, 3],
                element_type: ElementType::Float16,
            },
        ),
        // Nibbles: 32 rows of 7 make whole vec4s.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[256, 7],
                axis: 1,
                lengths: &[3, 4],
                element_type: ElementType::Int4,
            },
        ),
        // Looped (striped lanes only): a word beside 128 of them, 4 rows a
        // block, 7 blocks a tile.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[256, 130],
                axis: 1,
                lengths: &[2, 128],
                element_type: ElementType::Float16,
            },
        ),
        // Looped: thirds of 3,000 bytes, 2 rows (375 vec4s) a block.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[64, 3000],
                axis: 1,
                lengths: &[1000; 3],
                element_type: ElementType::Uint8,
            },
        ),
    ],
    // GPUs: 0.994 of the ideal sectors, staged in workgroup memory (0.985 to row words' 0.939 and
    // row streams' 0.611 where both move; tests/coalescing.rs).
    rates: ClassRates::on_gpus(8.1e9, 0.99),
    inherits: None,
    per_layout_name: None,
    // Concats in the looped form only (striped lanes, every piece in one
    // dispatch, the pieces covering the row).
    directions: &[Direction::Split, Direction::Concat],
};

/// The layout of `live`: every gathered output, or one group's outputs.
/// Blocks are read whole from the input's start (each group re-reads the
/// blocks), so every window starts there: `None` for any other start.
fn layout(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    window_start_bits: u64,
) -> Option<GeneratedLayout> {
    if window_start_bits != 0 {
        return None;
    }
    // Every gathered output in this one dispatch (not one group of them).
    let whole = g.generated_outputs().is_some_and(|all| all.len() == live.len());
    RowBlocks::new(live, g.outer, g.lanes, whole, g.direction).map(GeneratedLayout::RowBlocks)
}

/// Largest block the generated kernel holds, in bits: 64 words of source,
/// loaded into registers at once (blocked lanes), or staged with every
/// output word's bit fields compiled in (striped).
pub const MAX_ROW_BLOCK_BITS: u64 = 64 * 32;

/// Most source vec4s a workgroup stages for the looped form (8 KiB of
/// workgroup memory, half of WebGPU's guaranteed 16 KiB; two per lane, so
/// that the dispatch keeps at least half the invocations of a vec4 copy).
pub const MAX_LOOPED_VEC4S: u64 = 2 * WORKGROUP_SIZE as u64;

/// 32 bits of an output word from one source word of the block:
/// `((source[src_word] >> shift) & mask(len)) << dst_bit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitField {
    /// The source word, counted from the block's start.
    pub src_word: u32,
    /// Bits shifted down.
    pub shift: u32,
    /// Bits taken (1 to 32).
    pub len: u32,
    /// Where they go in the output word.
    pub dst_bit: u32,
}

/// One gathered output's share of a block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowOutput {
    /// The output.
    pub output: usize,
    /// Bit offset of the output's run inside an input row (the table's
    /// `src_bit` is the run start; the kernel subtracts this to find the
    /// block start).
    pub offset_bits: u32,
    /// The bit fields of each of its words in a block (a multiple of 4 words).
    pub words: Vec<Vec<BitField>>,
}

/// A row-block layout: the lane order, rows per block, the block's source
/// vec4s and every gathered output's bit fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowBlocks {
    /// Blocked: each invocation loads its block and writes every output's
    /// share of it; striped: each workgroup stages `tile` blocks in
    /// workgroup memory (consecutive lanes on consecutive vec4s), then each
    /// lane writes one output vec4 of them.
    pub lanes: LaneOrder,
    /// Blocks a workgroup stages (striped; 1 blocked).
    pub tile: u32,
    /// Input rows per block (per invocation).
    pub rows: u32,
    /// Source vec4s per block.
    pub src_vec4s: u32,
    /// Staged and written in loops, each word computed from the block's
    /// geometry: a striped block past [`MAX_ROW_BLOCK_BITS`], and every
    /// concat.
    pub looped: bool,
    /// The gathered outputs, in order (empty outputs have none).
    pub outputs: Vec<RowOutput>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Rows after which `bits` per row add up to whole vec4s.
fn rows_for_vec4s(bits: u64) -> u64 {
    128 / gcd(128, bits)
}

impl RowBlocks {
    /// The layout of `live` (non-empty outputs, every one gathered) in
    /// `outer` rows when the rows divide into blocks whose input and output
    /// shares are whole vec4s, and a block is at most
    /// [`MAX_ROW_BLOCK_BITS`], or, striped and `whole` (one dispatch moves
    /// every gathered output: a group would re-read every block), at most
    /// [`MAX_LOOPED_VEC4S`] vec4s; `None` otherwise. A concat takes the
    /// looped form only, and only where its pieces cover the row (the
    /// tensor's vec4s are assembled whole in workgroup memory: a piece
    /// moved by copy commands would be overwritten).
    pub(crate) fn new(
        live: Vec<(usize, &OutputGeometry)>,
        outer: u64,
        lanes: LaneOrder,
        whole: bool,
        direction: Direction,
    ) -> Option<Self> {
        let block_bits = live.first()?.1.block_bits;
        let rows = live.iter().fold(rows_for_vec4s(block_bits), |r, (_, g)| {
            let need = rows_for_vec4s(g.run_bits);
            r / gcd(r, need) * need
        });
        let concat = direction == Direction::Concat;
        let covered: u64 = live.iter().map(|(_, g)| g.run_bits).sum();
        if concat && (lanes != LaneOrder::Striped || !whole || covered != block_bits) {
            return None;
        }
        let looped = concat || rows * block_bits > MAX_ROW_BLOCK_BITS;
        let fits = !looped
            || (lanes == LaneOrder::Striped
                && whole
                && rows * block_bits <= MAX_LOOPED_VEC4S * 128);
        if !outer.is_multiple_of(rows) || !fits {
            return None;
        }
        let outputs: Vec<RowOutput> = live
            .iter()
            .map(|&(output, g)| RowOutput {
                output,
                offset_bits: g.offset_bits as u32,
                words: bit_fields(g, rows),
            })
            .collect();
        let src_vec4s = rows * block_bits / 128;
        let out_vec4s: u64 = outputs.iter().map(|o| o.words.len() as u64 / 4).sum();
        let tile = match lanes {
            LaneOrder::Blocked => 1,
            LaneOrder::Striped if looped => MAX_LOOPED_VEC4S / src_vec4s.max(out_vec4s),
            LaneOrder::Striped => u64::from(WORKGROUP_SIZE) / src_vec4s.max(out_vec4s),
        };
        // Outputs that overlap may write more than a block holds: past
        // what a workgroup stages, another kernel.
        if tile == 0 {
            return None;
        }
        Some(RowBlocks {
            lanes,
            tile: tile as u32,
            rows: rows as u32,
            src_vec4s: src_vec4s as u32,
            looped,
            outputs,
        })
    }

    /// Blocks (invocations) for `outer` rows.
    pub fn blocks(&self, outer: u64) -> u64 {
        outer / u64::from(self.rows)
    }

    /// True for a (striped) block past [`MAX_ROW_BLOCK_BITS`], and for a
    /// concat: lanes load and store in loops, and each output word is
    /// computed from the block's geometry rather than from bit fields
    /// compiled in.
    pub fn is_looped(&self) -> bool {
        self.looped
    }
}

impl KernelLayout for RowBlocks {
    fn kernel(&self) -> Kernel {
        Kernel::RowBlocks
    }

    /// Blocked: one per block; striped: every lane of a workgroup per
    /// `tile` blocks.
    fn invocations(&self, outer: u64) -> u64 {
        match self.lanes {
            LaneOrder::Blocked => self.blocks(outer),
            LaneOrder::Striped => {
                self.blocks(outer).div_ceil(u64::from(self.tile)) * u64::from(WORKGROUP_SIZE)
            }
        }
    }

    /// Row blocks read their table as they go (it has not been measured
    /// in a uniform buffer).
    fn output_entries(&self) -> Option<usize> {
        None
    }

    fn path(&self) -> Option<&'static str> {
        self.is_looped().then_some("looped")
    }

    /// The entry point for this layout: invocation `g` loads block `g` and
    /// writes every output's share of it. Table entry `j` belongs to
    /// gathered output `j`.
    fn wgsl(&self, variant: &Variant) -> String {
        if self.is_looped() {
            return match variant.direction {
                Direction::Split => self.looped_module(variant),
                Direction::Concat => self.looped_concat_module(variant),
            };
        }
        if self.lanes == LaneOrder::Striped {
            return self.staged(variant);
        }
        let loads = WGSL.repeat("load", 0..self.src_vec4s, |v| vec![("v", v.to_string())]);
        let outputs: String = self
            .outputs
            .iter()
            .enumerate()
            .map(|(j, out)| {
                let slot = variant.placement.slot_of_entry(j);
                let stores = WGSL.repeat("store", out.words.chunks(4).enumerate(), |(v, four)| {
                    let words: Vec<String> = four.iter().map(|w| word_expr(w, &src_word)).collect();
                    vec![
                        ("slot", slot.to_string()),
                        ("j", j.to_string()),
                        ("v", v.to_string()),
                        ("words", words.join(", ")),
                    ]
                });
                let vec4s = out.words.len() / 4;
                WGSL.fill(
                    "output",
                    &[
                        ("unless_skipped", &variant.unless_skipped(j)),
                        ("j", &j),
                        ("slot", &slot),
                        ("vec4s", &vec4s),
                        ("stores", &stores),
                    ],
                )
            })
            .collect();
        let body = WGSL.fill(
            "body",
            &[
                ("rows", &self.rows),
                ("offset", &self.outputs[0].offset_bits),
                ("src_vec4s", &self.src_vec4s),
                ("loads", &loads),
                ("outputs", &outputs),
            ],
        );
        entry_point(variant, &body)
    }
}

impl RowBlocks {
    /// The striped (staged) module: the tile's blocks loaded by
    /// consecutive lanes into workgroup memory, then lane `l` writes output
    /// vec4 `l` of the tile (the outputs' shares laid end to end), each
    /// word from constant bit fields of its block.
    fn staged(&self, variant: &Variant) -> String {
        let tile = self.tile;
        let mut first = 0u32;
        let outputs: String = self
            .outputs
            .iter()
            .enumerate()
            .map(|(j, out)| {
                let vec4s = out.words.len() as u32 / 4;
                let cases = WGSL.repeat(
                    "staged_case",
                    out.words.chunks(4).enumerate(),
                    |(v, four)| {
                        let words: Vec<String> = four
                            .iter()
                            .map(|w| word_expr(w, &|s| tile_word(s)))
                            .collect();
                        vec![("v", v.to_string()), ("words", words.join(", "))]
                    },
                );
                let text = WGSL.fill(
                    "staged_output",
                    &[
                        ("unless_skipped", &variant.unless_skipped(j)),
                        ("first", &first),
                        ("vec4s", &vec4s),
                        ("count", &(tile * vec4s)),
                        ("src_vec4s", &self.src_vec4s),
                        ("cases", &cases),
                        ("j", &j),
                        ("slot", &variant.placement.slot_of_entry(j)),
                    ],
                );
                first += tile * vec4s;
                text
            })
            .collect();
        let out0_block_bits = self.outputs[0].words.len() * 32;
        let body = WGSL.fill(
            "staged_body",
            &[
                ("tile", &tile),
                ("rows", &self.rows),
                ("src_vec4s", &self.src_vec4s),
                ("out0_block_bits", &out0_block_bits),
                ("offset", &self.outputs[0].offset_bits),
                ("tile_vec4s", &(tile * self.src_vec4s)),
                ("outputs", &outputs),
            ],
        );
        WGSL.fill("tile", &[("size", &WORKGROUP_SIZE)]) + &workgroup_entry_point(variant, &body)
    }
}

/// One output's share of a looped tile: where its vec4s start in the
/// tile's outputs laid end to end (per block), how many a block holds, its
/// run and offset, the test that finds the lane's share, and whether its
/// words are whole staged words.
struct LoopedShare {
    j: usize,
    first: u32,
    vec4s: u32,
    run: u32,
    offset: u32,
    test: String,
    aligned: bool,
}

impl RowBlocks {
    /// The shares of a looped tile, in order, and their vec4s per block in
    /// all.
    fn looped_shares(&self) -> (Vec<LoopedShare>, u32) {
        let block_bits = self.block_bits();
        let count = self.outputs.len();
        let mut first = 0u32;
        let mut shares = Vec::with_capacity(count);
        for (j, out) in self.outputs.iter().enumerate() {
            let vec4s = out.words.len() as u32 / 4;
            let run = vec4s * 128 / self.rows;
            let end = first + vec4s;
            let test = chain_test(j, count, &format!("i < here * {end}u"));
            let aligned = [run, block_bits, out.offset_bits].iter().all(|b| b % 32 == 0);
            shares.push(LoopedShare {
                j,
                first,
                vec4s,
                run,
                offset: out.offset_bits,
                test,
                aligned,
            });
            first = end;
        }
        (shares, first)
    }

    /// Bits of one input row.
    fn block_bits(&self) -> u32 {
        self.src_vec4s * 128 / self.rows
    }

    /// A looped body, `fragment` (a split's or a concat's) with its own
    /// `holes`: every one opens with the workgroup's tile and where it lies
    /// (`looped_start`) and loops at the workgroup's size.
    fn looped_body(&self, fragment: &str, holes: &[(&str, &dyn std::fmt::Display)]) -> String {
        let start = WGSL.fill(
            "looped_start",
            &[
                ("tile", &self.tile),
                ("out0_block_bits", &(self.outputs[0].words.len() as u32 * 32)),
                ("offset", &self.outputs[0].offset_bits),
                ("src_vec4s", &self.src_vec4s),
            ],
        );
        let mut all: Vec<(&str, &dyn std::fmt::Display)> = vec![
            ("tile", &self.tile),
            ("rows", &self.rows),
            ("src_vec4s", &self.src_vec4s),
            ("start", &start),
            ("size", &WORKGROUP_SIZE),
        ];
        all.extend_from_slice(holes);
        WGSL.fill(fragment, &all)
    }

    /// `fragment` filled for `share`: its geometry and `(name, function)`,
    /// the word function it calls.
    fn share_code(
        &self,
        fragment: &str,
        variant: &Variant,
        share: &LoopedShare,
        function: (&str, &str),
    ) -> String {
        WGSL.fill(
            fragment,
            &[
                ("test", &share.test),
                ("unless_skipped", &variant.unless_skipped(share.j)),
                ("j", &share.j),
                ("first", &share.first),
                ("slot", &variant.placement.slot_of_entry(share.j)),
                ("vec4s", &share.vec4s),
                ("src_bits", &(self.src_vec4s * 128)),
                (function.0, &function.1),
                ("run", &share.run),
                ("block", &self.block_bits()),
                ("offset", &share.offset),
            ],
        )
    }

    /// The looped module: the tile's blocks loaded by consecutive lanes,
    /// looping, into workgroup memory; then every output's vec4s of the
    /// tile laid end to end, lane `l` writing vec4s `l`, `l + 256`, ... of
    /// that stretch into the output that holds each (so that narrow
    /// outputs keep every lane busy), each word computed from the output's
    /// run, offset and the row's length: one staged word where those are
    /// whole words (`aligned_word`), else assembled from bit fields
    /// (`block_word`).
    fn looped_module(&self, variant: &Variant) -> String {
        let (shares, out_vec4s) = self.looped_shares();
        let word = |s: &LoopedShare| if s.aligned { "aligned_word" } else { "block_word" };
        let outputs: String = shares
            .iter()
            .map(|s| self.share_code("looped_output", variant, s, ("word", word(s))))
            .collect();
        let body = self.looped_body("looped_body", &[("out_vec4s", &out_vec4s), ("outputs", &outputs)]);
        let tile = WGSL.fill("tile", &[("size", &(self.tile * self.src_vec4s))]);
        let functions: String = ["aligned_word", "block_word"]
            .into_iter()
            .filter(|f| shares.iter().any(|s| word(s) == *f))
            .map(|f| WGSL.fill(f, &[]))
            .collect();
        tile + &functions + &workgroup_entry_point(variant, &body)
    }

    /// The looped concat, the split's mirror: every piece's vec4s of the
    /// tile laid end to end, lane `l` loading vec4s `l`, `l + 256`, ... of
    /// that stretch from the piece that holds each and putting its words
    /// in place in workgroup memory (one store a word where runs, row and
    /// offset are whole words, `aligned_put`; else its bit fields or-ed in,
    /// `block_put`, on a cleared tile); then consecutive lanes store the
    /// tensor's vec4s. A dispatch that skips pieces (`FLAG_SKIP`: another
    /// dispatch of the pass moves them) also keeps which bits it placed,
    /// and merges its vec4s with what the tensor holds.
    fn looped_concat_module(&self, variant: &Variant) -> String {
        let (shares, out_vec4s) = self.looped_shares();
        let put = |s: &LoopedShare| if s.aligned { "aligned_put" } else { "block_put" };
        let pieces: String = shares
            .iter()
            .map(|s| self.share_code("looped_piece", variant, s, ("put", put(s))))
            .collect();
        let words = self.tile * self.src_vec4s * 4;
        let masked = variant.skips;
        // Or-ed fields need a cleared tile, and so do the holes a skipping
        // dispatch leaves.
        let clear = if masked || shares.iter().any(|s| !s.aligned) {
            let mask = if masked {
                WGSL.fill("clear_mask", &[])
            } else {
                String::new()
            };
            WGSL.fill(
                "looped_clear",
                &[("words", &words), ("size", &WORKGROUP_SIZE), ("mask", &mask)],
            )
        } else {
            String::new()
        };
        let store = WGSL.fill(
            if masked { "looped_store_masked" } else { "looped_store" },
            &[],
        );
        let body = self.looped_body(
            "looped_concat_body",
            &[
                ("clear", &clear),
                ("out_vec4s", &out_vec4s),
                ("pieces", &pieces),
                ("store", &store),
            ],
        );
        let functions: String = ["aligned_put", "block_put"]
            .into_iter()
            .filter(|f| shares.iter().any(|s| put(s) == *f))
            .map(|f| {
                let mark = if masked {
                    WGSL.fill(&format!("{f}_mask"), &[])
                } else {
                    String::new()
                };
                WGSL.fill(f, &[("mask", &mark)])
            })
            .collect();
        let mask_tile = if masked {
            WGSL.fill("mask_tile", &[("words", &words)])
        } else {
            String::new()
        };
        WGSL.fill("word_tile", &[("words", &words)])
            + &mask_tile
            + &functions
            + &workgroup_entry_point(variant, &body)
    }
}

/// Source word `w` of a staged block: component `w % 4` of the tile's vec4
/// `t + w / 4` (`t`, the block's first vec4 in the tile).
fn tile_word(w: u32) -> String {
    format!(
        "tile[t + {}u].{}",
        w / 4,
        ["x", "y", "z", "w"][(w % 4) as usize]
    )
}

/// The bit fields of each word of output `g`'s share of a block of `rows`
/// rows: output bit `q` is row `q / run`, column `q % run`; a field ends at
/// a row end, a source word end or the output word's end.
fn bit_fields(g: &OutputGeometry, rows: u64) -> Vec<Vec<BitField>> {
    let bits = rows * g.run_bits;
    (0..bits / 32)
        .map(|w| {
            let mut word = Vec::new();
            let mut q = w * 32;
            while q < (w + 1) * 32 {
                let (row, col) = (q / g.run_bits, q % g.run_bits);
                let s = row * g.block_bits + g.offset_bits + col;
                let len = ((w + 1) * 32 - q).min(g.run_bits - col).min(32 - s % 32);
                word.push(BitField {
                    src_word: (s / 32) as u32,
                    shift: (s % 32) as u32,
                    len: len as u32,
                    dst_bit: (q - w * 32) as u32,
                });
                q += len;
            }
            word
        })
        .collect()
}

/// A source word of the block by name: word `w` is component `w % 4` of
/// vec4 `s{w / 4}`.
fn src_word(w: u32) -> String {
    format!("s{}.{}", w / 4, ["x", "y", "z", "w"][(w % 4) as usize])
}

/// One output word as a WGSL expression, with the shifts and masks that
/// do nothing left out; `source(w)` names source word `w` of the block.
fn word_expr(fields: &[BitField], source: &dyn Fn(u32) -> String) -> String {
    let terms: Vec<String> = fields
        .iter()
        .map(|p| {
            let mut t = source(p.src_word);
            if p.shift > 0 {
                t = format!("({t} >> {}u)", p.shift);
            }
            if p.shift + p.len < 32 {
                t = format!("({t} & {:#x}u)", (1u64 << p.len) - 1);
            }
            if p.dst_bit > 0 {
                t = format!("({t} << {}u)", p.dst_bit);
            }
            t
        })
        .collect();
    terms.join(" | ")
}
