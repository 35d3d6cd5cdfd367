//! The GPU plan: where every output lives in the arena, which access unit the
//! gather shader uses, and the passes (bindings windows, parameter table,
//! workgroup grid) it records. Pure data: no wgpu types, testable anywhere.
//!
//! The shader sees each output as a contiguous bit string (`outer` runs of
//! `run_bits`, packed) and each output bit `p` comes from source bit
//! `(p / run) * block + offset + p % run`. A plan under the device limits is one
//! pass; a tensor or arena larger than one storage binding is cut into chunks
//! whose source and destination fit in windows, grouped greedily into passes.

use std::ops::Range;

use bytemuck::{Pod, Zeroable};

use super::RunLayout;
use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::semantics::ResolvedSplit;

/// Invocations per workgroup of the gather shader (the WebGPU minimum of
/// `max_compute_invocations_per_workgroup`, so every adapter runs it).
pub const WORKGROUP_SIZE: u32 = 256;

/// Units (words or vec4s) each shader invocation moves (`UNITS_PER_INVOCATION`
/// in the shader).
pub const UNITS_PER_INVOCATION: u64 = 8;

/// Largest window bound in one pass: bit offsets inside a window stay below
/// 2^31, so the shader's u32 arithmetic cannot wrap.
const MAX_WINDOW_BYTES: u64 = 1 << 28;

/// The device limits the planner needs, as plain numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanLimits {
    /// `min_storage_buffer_offset_alignment`.
    pub min_storage_buffer_offset_alignment: u32,
    /// `max_storage_buffer_binding_size`.
    pub max_storage_buffer_binding_size: u64,
    /// `max_buffer_size`.
    pub max_buffer_size: u64,
    /// `max_compute_workgroups_per_dimension`.
    pub max_compute_workgroups_per_dimension: u32,
}

impl PlanLimits {
    /// wgpu's default limits (the WebGPU baseline).
    pub const WEBGPU_DEFAULT: PlanLimits = PlanLimits {
        min_storage_buffer_offset_alignment: 256,
        max_storage_buffer_binding_size: 128 << 20,
        max_buffer_size: 256 << 20,
        max_compute_workgroups_per_dimension: 65535,
    };

    /// Lavapipe's limits (see DEVICE.md), handy for tests.
    pub const LAVAPIPE: PlanLimits = PlanLimits {
        min_storage_buffer_offset_alignment: 32,
        max_storage_buffer_binding_size: 128 << 20,
        max_buffer_size: (2 << 30) - 1,
        max_compute_workgroups_per_dimension: 65535,
    };

    /// True when a plan made for `self` is valid on a device with `device`
    /// limits: alignment a multiple of the device's, and no limit above it.
    /// (Tests plan with tiny windows to exercise multi-pass plans cheaply.)
    pub fn fits_within(&self, device: &PlanLimits) -> bool {
        let a = self.min_storage_buffer_offset_alignment;
        let d = device.min_storage_buffer_offset_alignment.max(1);
        a >= d
            && a.is_multiple_of(d)
            && self.max_storage_buffer_binding_size <= device.max_storage_buffer_binding_size
            && self.max_buffer_size <= device.max_buffer_size
            && self.max_compute_workgroups_per_dimension
                <= device.max_compute_workgroups_per_dimension
    }

    fn alignment(&self) -> u64 {
        u64::from(self.min_storage_buffer_offset_alignment.max(4))
    }

    /// The largest window one binding covers: the binding limit, capped so
    /// bit offsets fit in u32, rounded down to the offset alignment.
    ///
    /// A window also holds no more words than a grid of
    /// `max_compute_workgroups_per_dimension`² workgroups can cover, so every
    /// pass fits a 2-D grid.
    fn window(&self) -> u64 {
        let groups = u64::from(self.max_compute_workgroups_per_dimension).pow(2);
        let grid_bytes = (groups * u64::from(WORKGROUP_SIZE) - 1) * 4 * UNITS_PER_INVOCATION;
        let limit = self
            .max_storage_buffer_binding_size
            .min(MAX_WINDOW_BYTES)
            .min(grid_bytes);
        limit / self.alignment() * self.alignment()
    }
}

/// How wide one shader invocation's access is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessUnit {
    /// One `vec4<u32>` (16 bytes) per invocation: every run, offset and block
    /// is a multiple of 128 bits.
    Vec4,
    /// One `u32` per invocation, assembled from source bits with shifts when
    /// runs do not fall on word boundaries.
    Word,
}

impl AccessUnit {
    /// Width in bits.
    pub fn bits(self) -> u64 {
        match self {
            AccessUnit::Vec4 => 128,
            AccessUnit::Word => 32,
        }
    }
}

/// Entry flag: the chunk ends its output, so the last word's unused bits are zero.
pub const FLAG_PAD: u32 = 1;
/// Entry flag: every field is word-aligned, so each word is one source word.
pub const FLAG_ALIGNED: u32 = 2;

/// The parameter table header of one pass, as the shader reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct TableHeader {
    /// Invocations that do work in this pass.
    pub invocations: u32,
    /// Entries that follow.
    pub entry_count: u32,
    /// Padding to 16 bytes.
    pub padding: [u32; 2],
}

/// One chunk of one output in a pass, as the shader reads it. Bit positions
/// are relative to the pass's source and destination windows.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct TableEntry {
    /// First invocation index of this entry (entries are sorted by it).
    pub first_invocation: u32,
    /// First destination unit (word or vec4) in the arena window.
    pub dst_unit: u32,
    /// Bit of the chunk's start inside its first unit (non-zero only where a
    /// chunk starts mid-word).
    pub first_bit: u32,
    /// Length of the chunk in bits.
    pub len_bits: u32,
    /// Bits per run (per outer index); for a chunk inside one run, its length.
    pub run_bits: u32,
    /// Bits per outer block of the source (0 for a chunk inside one run).
    pub block_bits: u32,
    /// Position of the chunk's first bit inside its run.
    pub run_phase: u32,
    /// Source bit of the start of the run holding the chunk's first bit,
    /// relative to the source window, modulo 2^32 (it may lie before the
    /// window; adding the phase brings every address back inside).
    pub src_bit: u32,
    /// [`FLAG_PAD`], [`FLAG_ALIGNED`].
    pub flags: u32,
    /// Padding to 48 bytes.
    pub padding: [u32; 3],
}

/// Where one output lives in the arena.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OutputSlot {
    /// The output's shape.
    pub shape: Vec<usize>,
    /// Byte offset from the arena's start (a multiple of the storage offset alignment).
    pub offset: u64,
    /// Packed length in bytes.
    pub len: u64,
}

impl OutputSlot {
    /// The byte range inside the arena.
    pub fn range(&self) -> Range<u64> {
        self.offset..self.offset + self.len
    }
}

/// One dispatch: the windows it binds, its table slice and its grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pass {
    /// Bytes of the input bound, relative to the input's offset.
    pub src_window: Range<u64>,
    /// Bytes of the arena bound, relative to the arena's offset.
    pub dst_window: Range<u64>,
    /// This pass's table slice in [`SplitPlan::table`].
    pub table: Range<u64>,
    /// Workgroups in x and y (z is 1).
    pub workgroups: [u32; 2],
    /// Invocations that do work.
    pub invocations: u32,
}

/// How the planner moves each output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// Per output, copy commands or the gather dispatch, whichever the cost
    /// model says is cheaper; outputs that are not 4-byte aligned always
    /// gather. The default of [`crate::gpu::GpuSplitter::plan`].
    Auto(CostModel),
    /// Every output through the gather shader: one dispatch under the limits.
    Gather,
    /// The gather shader with one dispatch per output (a naive baseline for
    /// benchmarks).
    GatherPerOutput,
    /// One `copy_buffer_to_buffer` per contiguous run; fails with
    /// [`Error::NotCopyable`] when a run is not 4-byte aligned.
    Copy,
}

/// The planner's cost model: what a copy command and the gather shader cost
/// on a device. `split_bench --calibrate` measures these for an adapter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Copy-engine bandwidth, bytes read + written per second.
    pub copy_bytes_per_second: f64,
    /// Fixed cost of one copy command in seconds.
    pub copy_command_seconds: f64,
    /// Gather bandwidth (read + write) with vec4 access.
    pub gather_vec4_bytes_per_second: f64,
    /// Gather bandwidth with word-aligned runs.
    pub gather_word_bytes_per_second: f64,
    /// Gather bandwidth with runs that start or end mid-word.
    pub gather_bits_bytes_per_second: f64,
    /// Fixed cost of one dispatch in seconds.
    pub dispatch_seconds: f64,
}

impl CostModel {
    /// Measured on lavapipe (Mesa 22.3.6, LLVM 15, 2-core VM) by
    /// `split_bench --calibrate` on 2026-11-22, rounded: 64 MiB copies, 16,384
    /// copies of 4 KiB, gathers of 64 MiB with vec4-aligned, word-aligned and
    /// mid-word runs, and a one-word dispatch.
    pub const LAVAPIPE: CostModel = CostModel {
        copy_bytes_per_second: 19e9,
        copy_command_seconds: 0.9e-6,
        gather_vec4_bytes_per_second: 4.3e9,
        gather_word_bytes_per_second: 1.5e9,
        gather_bits_bytes_per_second: 1.4e9,
        dispatch_seconds: 65e-6,
    };

    /// Modeled seconds to copy `count` runs of `size` bytes.
    fn copy_seconds(&self, count: u64, size: u64) -> f64 {
        count as f64 * self.copy_command_seconds
            + 2.0 * (count * size) as f64 / self.copy_bytes_per_second
    }

    /// Modeled seconds to gather an output of `bytes` with this geometry.
    fn gather_seconds(&self, g: &Geometry, bytes: u64) -> f64 {
        let aligned = |unit: u64| {
            g.run.is_multiple_of(unit)
                && g.offset.is_multiple_of(unit)
                && g.block.is_multiple_of(unit)
        };
        let bandwidth = if aligned(128) {
            self.gather_vec4_bytes_per_second
        } else if aligned(32) {
            self.gather_word_bytes_per_second
        } else {
            self.gather_bits_bytes_per_second
        };
        2.0 * bytes as f64 / bandwidth
    }
}

impl Default for CostModel {
    fn default() -> Self {
        Self::LAVAPIPE
    }
}

/// Copy commands for one output: `count` runs of `size` bytes, run `k` from
/// input byte `src_offset + k * src_stride` to arena byte `dst_offset + k * size`
/// (both relative to the caller's offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CopyRuns {
    /// The output.
    pub output: usize,
    /// Input byte of the first run.
    pub src_offset: u64,
    /// Input bytes from one run to the next.
    pub src_stride: u64,
    /// Arena byte of the first run.
    pub dst_offset: u64,
    /// Bytes per run (a multiple of 4).
    pub size: u64,
    /// Number of runs (copy commands).
    pub count: u64,
}

/// A complete GPU plan for one split.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{AccessUnit, PlanLimits, SplitPlan};
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[4, 10]).unwrap();
/// let plan = SplitPlan::new(&split, ElementType::Float, &PlanLimits::LAVAPIPE).unwrap();
/// assert_eq!(plan.dispatch_count(), 1);
/// assert_eq!(plan.unit(), AccessUnit::Word); // runs of 4, 4, 2 floats
/// assert_eq!(plan.outputs()[1].offset % 32, 0);
/// assert_eq!(plan.outputs()[2].len, 4 * 2 * 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SplitPlan {
    element_type: ElementType,
    input_shape: Vec<usize>,
    limits: PlanLimits,
    unit: AccessUnit,
    input_bytes: u64,
    outputs: Vec<OutputSlot>,
    arena_size: u64,
    passes: Vec<Pass>,
    table: Vec<u8>,
    copies: Vec<CopyRuns>,
    outer: u64,
    offsets_bits: Vec<u64>,
    fingerprint: u64,
}

/// One output's run geometry, in bits.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    run: u64,
    offset: u64,
    block: u64,
    total: u64,
}

impl Geometry {
    fn src_bit(&self, p: u64) -> u64 {
        (p / self.run) * self.block + self.offset + p % self.run
    }
}

/// Chunks gathered into one pass: the union of their windows and their work.
struct PassGroup {
    src: Range<u64>,
    dst: Range<u64>,
    members: Vec<Chunk>,
    invocations: u64,
    /// End (exclusive, in bytes) of the last member's destination units.
    last_dst_end: u64,
}

/// A piece of one output: output bits `[start, end)`.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    output: usize,
    start: u64,
    end: u64,
    /// True when the chunk lies inside one run (its source is contiguous).
    within_run: bool,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

impl SplitPlan {
    /// Plans `split` of a tensor of `element_type` for a device with `limits`.
    ///
    /// Planning cost grows with the number of outputs (and, past the binding
    /// limit, with the number of windows), never with the number of elements.
    ///
    /// # Errors
    ///
    /// [`Error::NotOnGpu`] for strings; [`Error::TooLargeForDevice`] when the
    /// input or the arena exceeds `max_buffer_size`.
    pub fn new(
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
    ) -> Result<Self> {
        Self::with_strategy(split, element_type, limits, &Strategy::Gather)
    }

    /// Plans with an explicit [`Strategy`].
    ///
    /// # Errors
    ///
    /// As [`SplitPlan::new`], and [`Error::NotCopyable`] for
    /// [`Strategy::Copy`] when a run is not 4-byte aligned.
    pub fn with_strategy(
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        strategy: &Strategy,
    ) -> Result<Self> {
        let bits = u64::from(
            element_type
                .bit_width()
                .ok_or(Error::NotOnGpu { element_type })?,
        );
        let layout = RunLayout::new(split);
        let count: u128 = split.input_shape().iter().map(|&d| d as u128).product();
        let input_bytes_wide = (count * u128::from(bits)).div_ceil(8);
        let max = limits.max_buffer_size;
        if align_up_wide(input_bytes_wide, 4) > u128::from(max) {
            return Err(Error::TooLargeForDevice {
                what: "input",
                bytes: input_bytes_wide,
                max,
            });
        }
        // The input fits a buffer, so every bit count below fits u64.
        let input_bytes = input_bytes_wide as u64;
        let outer = layout.outer() as u64;
        let block = layout.block() as u64 * bits;
        let geometry: Vec<Geometry> = layout
            .runs()
            .iter()
            .map(|run| Geometry {
                run: run.len as u64 * bits,
                offset: run.offset as u64 * bits,
                block,
                total: outer * run.len as u64 * bits,
            })
            .collect();

        let align = limits.alignment();
        let mut outputs = Vec::with_capacity(geometry.len());
        let mut end: u128 = 0;
        for (i, g) in geometry.iter().enumerate() {
            let offset = align_up_wide(end, u128::from(align));
            let len = u128::from(g.total.div_ceil(8));
            end = offset + len;
            outputs.push((i, offset, len));
        }
        let arena_wide = align_up_wide(end, 4);
        if arena_wide > u128::from(max) {
            return Err(Error::TooLargeForDevice {
                what: "arena",
                bytes: arena_wide,
                max,
            });
        }
        let outputs: Vec<OutputSlot> = outputs
            .into_iter()
            .map(|(i, offset, len)| OutputSlot {
                shape: split.output_shape(i),
                offset: offset as u64,
                len: len as u64,
            })
            .collect();

        let copyable = |g: &Geometry| {
            g.run.is_multiple_of(32)
                && g.offset.is_multiple_of(32)
                && (outer <= 1 || g.block.is_multiple_of(32))
        };
        let mut copied = vec![false; geometry.len()];
        match strategy {
            Strategy::Gather | Strategy::GatherPerOutput => {}
            Strategy::Copy => {
                for (i, g) in geometry.iter().enumerate() {
                    if g.total > 0 && !copyable(g) {
                        return Err(Error::NotCopyable {
                            output: i,
                            run_bits: g.run,
                            offset_bits: g.offset,
                        });
                    }
                    copied[i] = g.total > 0;
                }
            }
            Strategy::Auto(model) => {
                let candidates: Vec<usize> = (0..geometry.len())
                    .filter(|&i| geometry[i].total > 0 && copyable(&geometry[i]))
                    .collect();
                let copy_cost = |i: usize| {
                    let (count, size) = copy_shape(&geometry[i], outer);
                    model.copy_seconds(count, size)
                };
                let gather_cost = |i: usize| model.gather_seconds(&geometry[i], outputs[i].len);
                for &i in &candidates {
                    copied[i] = copy_cost(i) < gather_cost(i);
                }
                // When only copyable outputs are left to gather, copying them
                // too also saves the dispatch's fixed cost.
                let gathered: Vec<usize> = (0..geometry.len())
                    .filter(|&i| geometry[i].total > 0 && !copied[i])
                    .collect();
                let mut candidate = vec![false; geometry.len()];
                candidates.iter().for_each(|&i| candidate[i] = true);
                if !gathered.is_empty() && gathered.iter().all(|&i| candidate[i]) {
                    let copy: f64 = gathered.iter().map(|&i| copy_cost(i)).sum();
                    let gather: f64 = gathered.iter().map(|&i| gather_cost(i)).sum();
                    if copy < gather + model.dispatch_seconds {
                        gathered.iter().for_each(|&i| copied[i] = true);
                    }
                }
            }
        }
        let copies = (0..geometry.len())
            .filter(|&i| copied[i])
            .map(|i| {
                let g = &geometry[i];
                let (count, size) = copy_shape(g, outer);
                CopyRuns {
                    output: i,
                    src_offset: g.offset / 8,
                    src_stride: g.block / 8,
                    dst_offset: outputs[i].offset,
                    size,
                    count,
                }
            })
            .collect();

        // The access unit only has to suit the outputs the shader moves.
        let vec4_ok = align.is_multiple_of(16)
            && geometry.iter().zip(&copied).all(|(g, &c)| {
                c || g.total == 0
                    || (g.run.is_multiple_of(128)
                        && g.offset.is_multiple_of(128)
                        && (outer <= 1 || g.block.is_multiple_of(128)))
            });
        let unit = if vec4_ok {
            AccessUnit::Vec4
        } else {
            AccessUnit::Word
        };

        let mut plan = SplitPlan {
            element_type,
            input_shape: split.input_shape().to_vec(),
            limits: *limits,
            unit,
            input_bytes,
            outputs,
            arena_size: arena_wide as u64,
            passes: Vec::new(),
            table: Vec::new(),
            copies,
            outer,
            offsets_bits: geometry.iter().map(|g| g.offset).collect(),
            fingerprint: 0,
        };
        let chunks: Vec<Chunk> = plan
            .chunks(&geometry)
            .into_iter()
            .filter(|c| !copied[c.output])
            .collect();
        plan.build_passes(&geometry, &chunks, *strategy == Strategy::GatherPerOutput);
        plan.fingerprint = fnv1a(&plan.table);
        Ok(plan)
    }

    /// Cuts every output into chunks whose source and destination each fit
    /// in one window (one chunk per output when the whole output fits).
    fn chunks(&self, geometry: &[Geometry]) -> Vec<Chunk> {
        let window = self.limits.window();
        let unit = self.unit.bits();
        // Room left in a window once its start is aligned down and its end up.
        let room_bits = (window - 2 * self.limits.alignment()) * 8;
        let mut chunks = Vec::new();
        for (output, g) in geometry.iter().enumerate() {
            if g.total == 0 {
                continue;
            }
            let src_span = g.src_bit(g.total - 1) + 1 - g.src_bit(0);
            if src_span <= room_bits && g.total <= room_bits {
                chunks.push(Chunk {
                    output,
                    start: 0,
                    end: g.total,
                    within_run: false,
                });
                continue;
            }
            // Whole rows per chunk when several blocks fit in a window: a
            // chunk of `rows * run` bits touches at most `rows + 2` blocks.
            let rows = (room_bits / g.block).saturating_sub(2);
            let len = align_down(rows * g.run, unit);
            if len >= unit {
                let mut start = 0;
                while start < g.total {
                    let end = (start + len).min(g.total);
                    chunks.push(Chunk {
                        output,
                        start,
                        end,
                        within_run: false,
                    });
                    start = end;
                }
                continue;
            }
            // A block is too large: chunks stay inside one run, so each has a
            // contiguous source; run boundaries may fall mid-word.
            let piece = align_down(room_bits / 2, unit);
            for row in 0..g.total / g.run {
                let (row_start, row_end) = (row * g.run, (row + 1) * g.run);
                let mut start = row_start;
                while start < row_end {
                    let end = (align_down(start, unit) + piece).min(row_end);
                    chunks.push(Chunk {
                        output,
                        start,
                        end,
                        within_run: true,
                    });
                    start = end;
                }
            }
        }
        chunks
    }

    /// Source and destination byte ranges of a chunk (unaligned).
    fn chunk_ranges(&self, g: &Geometry, c: &Chunk) -> (Range<u64>, Range<u64>) {
        let src = g.src_bit(c.start) / 8..(g.src_bit(c.end - 1) + 1).div_ceil(8);
        let base = self.outputs[c.output].offset * 8;
        let unit = self.unit.bits();
        let dst = (base + align_down(c.start, unit)) / 8..(base + align_up(c.end, unit)) / 8;
        (src, dst)
    }

    /// Groups chunks into passes greedily and writes each pass's table.
    fn build_passes(&mut self, geometry: &[Geometry], chunks: &[Chunk], per_output: bool) {
        let align = self.limits.alignment();
        let window = self.limits.window();
        let widen = |r: &Range<u64>| align_down(r.start, align)..align_up(r.end, 4);
        // Each pass must also fit one grid of max_compute_workgroups_per_dimension².
        let max_invocations = u64::from(self.limits.max_compute_workgroups_per_dimension).pow(2)
            * u64::from(WORKGROUP_SIZE);
        let unit = self.unit.bits();
        let invocations = |c: &Chunk| {
            (c.start % unit + c.end - c.start)
                .div_ceil(unit)
                .div_ceil(UNITS_PER_INVOCATION)
        };
        let mut groups: Vec<PassGroup> = Vec::new();
        for c in chunks {
            let (src, dst) = self.chunk_ranges(&geometry[c.output], c);
            let work = invocations(c);
            if let Some(group) = groups.last_mut() {
                // A chunk that starts in the unit where the previous one ended
                // (a run boundary mid-word) must wait for the next pass: two
                // invocations of one dispatch never write the same unit.
                let shares_unit = dst.start < group.last_dst_end;
                let other_output = per_output && group.members[0].output != c.output;
                let us = widen(&(group.src.start.min(src.start)..group.src.end.max(src.end)));
                let ud = widen(&(group.dst.start.min(dst.start)..group.dst.end.max(dst.end)));
                let fits_grid = group.invocations + work <= max_invocations;
                if fits_grid
                    && !shares_unit
                    && !other_output
                    && us.end - us.start <= window
                    && ud.end - ud.start <= window
                {
                    (group.src, group.dst) = (us, ud);
                    group.members.push(*c);
                    group.invocations += work;
                    group.last_dst_end = dst.end;
                    continue;
                }
            }
            groups.push(PassGroup {
                src: widen(&src),
                dst: widen(&dst),
                members: vec![*c],
                invocations: work,
                last_dst_end: dst.end,
            });
        }
        for g in groups {
            self.push_pass(geometry, g.src, g.dst, &g.members);
        }
    }

    fn push_pass(
        &mut self,
        geometry: &[Geometry],
        src_window: Range<u64>,
        dst_window: Range<u64>,
        members: &[Chunk],
    ) {
        let unit = self.unit.bits();
        let mut entries = Vec::with_capacity(members.len());
        let mut invocations: u64 = 0;
        for c in members {
            let g = &geometry[c.output];
            let dst_bit = self.outputs[c.output].offset * 8 + c.start - dst_window.start * 8;
            let len = c.end - c.start;
            let (run, block, phase) = if c.within_run {
                (len, 0, 0)
            } else {
                (g.run, g.block, c.start % g.run)
            };
            // The shader adds the phase back, so the table holds the source
            // bit of the run start; that may lie before the window, and the
            // shader's u32 arithmetic wraps back into it.
            let src_bit = g.src_bit(c.start) as i64 - phase as i64 - (src_window.start * 8) as i64;
            let first_bit = dst_bit % unit;
            let units = (first_bit + len)
                .div_ceil(unit)
                .div_ceil(UNITS_PER_INVOCATION);
            let mut flags = 0;
            if c.end == g.total {
                flags |= FLAG_PAD;
            }
            if [first_bit, len, run, block, phase]
                .iter()
                .all(|v| v % 32 == 0)
                && src_bit % 32 == 0
            {
                flags |= FLAG_ALIGNED;
            }
            // Window sizes are below 2^28 bytes, so every value fits u32.
            entries.push(TableEntry {
                first_invocation: invocations as u32,
                dst_unit: (dst_bit / unit) as u32,
                first_bit: first_bit as u32,
                len_bits: len as u32,
                run_bits: run as u32,
                block_bits: block as u32,
                run_phase: phase as u32,
                src_bit: src_bit as u32, // two's complement wrap, see above
                flags,
                padding: [0; 3],
            });
            invocations += units;
        }
        let header = TableHeader {
            invocations: invocations as u32,
            entry_count: entries.len() as u32,
            padding: [0; 2],
        };
        let start = align_up(self.table.len() as u64, self.limits.alignment());
        self.table.resize(start as usize, 0);
        self.table.extend_from_slice(bytemuck::bytes_of(&header));
        self.table.extend_from_slice(bytemuck::cast_slice(&entries));
        let end = self.table.len() as u64;
        self.passes.push(Pass {
            src_window,
            dst_window,
            table: start..end,
            workgroups: self.grid(invocations),
            invocations: invocations as u32,
        });
    }

    /// A tight 1-D or 2-D grid of workgroups covering `invocations`.
    fn grid(&self, invocations: u64) -> [u32; 2] {
        let groups = invocations.div_ceil(u64::from(WORKGROUP_SIZE));
        let max = u64::from(self.limits.max_compute_workgroups_per_dimension);
        if groups <= max {
            return [groups as u32, 1];
        }
        let rows = groups.div_ceil(max);
        [groups.div_ceil(rows) as u32, rows as u32]
    }

    /// The element type planned for.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The input shape planned for.
    pub fn input_shape(&self) -> &[usize] {
        &self.input_shape
    }

    /// The limits planned for.
    pub fn limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// The access unit of the gather shader.
    pub fn unit(&self) -> AccessUnit {
        self.unit
    }

    /// Packed size of the input in bytes.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// Bytes of the input buffer the plan binds from the input's offset
    /// (the input size rounded up to 4).
    pub fn input_binding_bytes(&self) -> u64 {
        align_up(self.input_bytes, 4)
    }

    /// Where each output lives in the arena.
    pub fn outputs(&self) -> &[OutputSlot] {
        &self.outputs
    }

    /// Arena size in bytes (a multiple of 4).
    pub fn arena_size(&self) -> u64 {
        self.arena_size
    }

    /// The passes, in recording order.
    pub fn passes(&self) -> &[Pass] {
        &self.passes
    }

    /// Number of dispatches [`crate::gpu::GpuSplitter::encode`] records.
    pub fn dispatch_count(&self) -> usize {
        self.passes.len()
    }

    /// Copy commands, per copied output.
    pub fn copies(&self) -> &[CopyRuns] {
        &self.copies
    }

    /// Number of `copy_buffer_to_buffer` commands [`crate::gpu::GpuSplitter::encode`] records.
    pub fn copy_count(&self) -> u64 {
        self.copies.iter().map(|c| c.count).sum()
    }

    /// View mode: when every output is one contiguous byte range of the input
    /// starting at a bindable offset (axis-0 splits, SplitToSequence on axis
    /// 0), those ranges (relative to the input's offset), so a runtime can bind
    /// them instead of copying. `None` otherwise.
    ///
    /// A storage binding's size must be a multiple of 4: bind
    /// `range.start..align_up(range.end, 4)`; bytes past `range.end` belong to
    /// the next output.
    pub fn input_views(&self) -> Option<Vec<Range<u64>>> {
        let align = self.limits.alignment();
        if self.outer > 1 {
            return None;
        }
        self.outputs
            .iter()
            .zip(&self.offsets_bits)
            .map(|(slot, &offset)| {
                let start = offset / 8;
                let exact = offset.is_multiple_of(8) && start.is_multiple_of(align);
                exact.then_some(start..start + slot.len)
            })
            .collect()
    }

    /// A 64-bit FNV-1a hash (over 8-byte words) of [`SplitPlan::table`], computed once when
    /// planning; the GPU path keys its cache of uploaded tables on it.
    pub fn table_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The parameter tables of all passes, each at its [`Pass::table`] range.
    pub fn table(&self) -> &[u8] {
        &self.table
    }
}

/// Copy commands for an output: `(count, bytes each)`; one command when the
/// runs are back to back in the source.
fn copy_shape(g: &Geometry, outer: u64) -> (u64, u64) {
    let size = g.run / 8;
    if outer <= 1 || g.run == g.block {
        (1, size * outer)
    } else {
        (outer, size)
    }
}

/// FNV-1a over 8-byte words (tables are multiples of 16 bytes), fast enough
/// to run on every plan.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let hash = words.by_ref().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        let word = u64::from_le_bytes(w.try_into().unwrap_or_default());
        (h ^ word).wrapping_mul(0x0100_0000_01b3)
    });
    words.remainder().iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn align_up_wide(x: u128, a: u128) -> u128 {
    x.div_ceil(a) * a
}
