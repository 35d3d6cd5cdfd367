//! The generated row kernels that a dispatch's table and layout drive
//! together (row blocks, row copies and row words), as their WGSL does
//! them, and the dispatch state every kernel's emulation shares.

use std::collections::HashSet;
use std::ops::Range;

use wgpu_split::plan::LaneOrder;
use wgpu_split::plan::internals::{RowBlocks, RowCopies, TableEntry};

use super::{PlainRegion, SlotTarget, Way, inside, writes};

/// One dispatch of a pass: its table entries (at its bindings) and
/// bindings, which way it moves bits, and what it has written so far.
pub(super) struct GeneratedPass<'a> {
    pub way: Way,
    /// Bytes per unit of the kernel.
    pub unit_bytes: u64,
    pub invocations: u32,
    pub entries: &'a [TableEntry],
    /// The tensor's region (the source binding's caller region).
    pub tensor: PlainRegion,
    /// The source binding (the tensor's).
    pub src: &'a Range<u64>,
    /// Units the source binding starts before the source window.
    pub src_shift_units: u32,
    /// Per slot: the destination and its binding.
    pub dst: &'a [SlotTarget],
    pub destinations: &'a [PlainRegion],
    /// What this dispatch wrote: (slot, byte) of pieces, (`u32::MAX`,
    /// byte) of the tensor.
    pub owned: HashSet<(u32, u64)>,
}

impl GeneratedPass<'_> {
    /// One entry per gathered output, entry `j` writing slot `j` (slot 0
    /// in an arena).
    pub fn check_entries(&self, outputs: usize) {
        assert_eq!(self.entries.len(), outputs, "one entry per gathered output");
        for (j, e) in self.entries.iter().enumerate() {
            let slot = if self.dst.len() == 1 { 0 } else { j };
            assert_eq!(e.dst_slot as usize, slot);
        }
    }

    /// Where a generated module reads a run that starts at input bit
    /// `layout_bit` (a constant it compiles in) at this pass's source
    /// binding, the binding's shift added; asserted to be where entry
    /// `e` (shift added too) says the run starts.
    pub fn compiled_src_bit(&self, e: &TableEntry, layout_bit: u64) -> u64 {
        let bit = layout_bit + u64::from(self.src_shift_units) * self.unit_bytes * 8;
        assert_eq!(
            u64::from(e.src_bit),
            bit,
            "the layout's run start is the table's"
        );
        bit
    }

    /// The source binding's bytes.
    pub fn src_binding<'m>(&self, memory: &'m [Vec<u8>]) -> &'m [u8] {
        &memory[self.tensor.buffer][self.src.start as usize..self.src.end as usize]
    }

    /// Entry `e`'s piece binding: its destination's region and the bytes
    /// bound.
    fn piece(&self, e: &TableEntry) -> (PlainRegion, Range<u64>) {
        let (destination, range) = self.dst[e.dst_slot as usize]
            .as_ref()
            .expect("an entry moves a spare slot");
        (self.destinations[*destination], range.clone())
    }

    /// `len` bytes of entry `e`'s piece from byte `offset` (counted from
    /// its first unit), asserting they lie inside the binding and the
    /// caller's region.
    pub fn read_piece(
        &self,
        memory: &[Vec<u8>],
        e: &TableEntry,
        offset: u64,
        len: u64,
        what: &str,
    ) -> Vec<u8> {
        let (region, range) = self.piece(e);
        let byte = range.start + u64::from(e.dst_unit) * self.unit_bytes + offset;
        assert!(byte + len <= range.end, "{what} read outside its binding");
        assert!(
            inside(&region, byte) && inside(&region, byte + len - 1),
            "{what} read at {byte} outside the caller's region {region:?}"
        );
        memory[region.buffer][byte as usize..(byte + len) as usize].to_vec()
    }

    /// Writes `bytes` at byte `at` of the source binding (a concat writes
    /// the tensor), asserting they lie inside the binding and the caller's
    /// region and were not written before by this dispatch.
    pub fn write_tensor(&mut self, memory: &mut [Vec<u8>], at: u64, bytes: &[u8], what: &str) {
        let byte = self.src.start + at;
        let last = byte + bytes.len() as u64 - 1;
        assert!(last < self.src.end, "{what} written outside its binding");
        let region = self.tensor;
        assert!(
            inside(&region, byte) && inside(&region, last),
            "{what} at {byte} outside the tensor's region {region:?}"
        );
        assert!(
            self.owned.insert((u32::MAX, byte)),
            "{what} at tensor byte {byte} written twice"
        );
        memory[region.buffer][byte as usize..byte as usize + bytes.len()].copy_from_slice(bytes);
    }

    /// Moves `len` bytes between byte `tensor_at` of the source binding
    /// and byte `offset` of entry `e`'s piece: into the piece in a split,
    /// into the tensor in a concat.
    pub fn transfer(
        &mut self,
        memory: &mut [Vec<u8>],
        e: &TableEntry,
        (offset, tensor_at): (u64, u64),
        len: u64,
        what: &str,
    ) {
        match self.way {
            Way::Split => {
                let binding = self.src_binding(memory);
                assert!(
                    tensor_at + len <= binding.len() as u64,
                    "{what} read outside its binding"
                );
                let bytes = binding[tensor_at as usize..(tensor_at + len) as usize].to_vec();
                self.store(memory, e, offset, &bytes, what);
            }
            Way::Concat => {
                let bytes = self.read_piece(memory, e, offset, len, what);
                self.write_tensor(memory, tensor_at, &bytes, what);
            }
        }
    }

    /// Writes `bytes` at byte `offset` of entry `e`'s destination (counted
    /// from its first unit), asserting that they lie inside the binding and
    /// the caller's region and were not written before.
    pub fn store(
        &mut self,
        memory: &mut [Vec<u8>],
        e: &TableEntry,
        offset: u64,
        bytes: &[u8],
        what: &str,
    ) {
        assert_eq!(
            self.way,
            Way::Split,
            "a {what} written into a concat's piece"
        );
        let (region, range) = self.piece(e);
        let byte = range.start + u64::from(e.dst_unit) * self.unit_bytes + offset;
        let last = byte + bytes.len() as u64 - 1;
        assert!(last < range.end, "{what} written outside its binding");
        assert!(
            inside(&region, byte) && inside(&region, last),
            "{what} at {byte} outside the caller's region {region:?}"
        );
        assert!(
            self.owned.insert((e.dst_slot, byte)),
            "{what} at {byte} written twice"
        );
        let at = byte as usize;
        memory[region.buffer][at..at + bytes.len()].copy_from_slice(bytes);
    }
}

/// The generated row-block kernel, as its WGSL does it: invocation `g`
/// loads block `g` (from the first entry's source bit less its output's
/// offset) and writes each gathered output's share, word by word from the
/// layout's pieces, at its entry's destination unit.
pub(super) fn run_row_blocks(rb: &RowBlocks, pass: &mut GeneratedPass<'_>, memory: &mut [Vec<u8>]) {
    pass.check_entries(rb.outputs.len());
    // Blocked: an invocation per block. Striped: a workgroup per tile of
    // blocks, staged, each lane then writing one output vec4; the bits
    // written are the same.
    let out0_bits = rb.outputs[0].words.len() as u32 * 32;
    let blocks = match rb.lanes {
        LaneOrder::Blocked => pass.invocations,
        LaneOrder::Striped => {
            let blocks = pass.entries[0].len_bits / out0_bits;
            assert_eq!(
                pass.invocations,
                blocks.div_ceil(rb.tile) * 256,
                "a workgroup per tile"
            );
            let staged = if rb.is_looped() { 512 } else { 256 };
            assert!(
                rb.tile * rb.src_vec4s <= staged,
                "a tile fits its workgroup memory"
            );
            blocks
        }
    };
    for (e, out) in pass.entries.iter().zip(&rb.outputs) {
        let per_block = out.words.len() as u64 / 4;
        assert_eq!(e.units_per_invocation, 0, "the layout says the units");
        assert_eq!(u64::from(e.len_bits), u64::from(blocks) * per_block * 128);
        assert_eq!(e.first_bit, 0);
    }
    let base = u64::from(
        pass.entries[0]
            .src_bit
            .wrapping_sub(rb.outputs[0].offset_bits),
    ) / 128;
    if pass.way == Way::Concat {
        return concat_row_blocks(rb, pass, memory, (base, u64::from(blocks)));
    }
    for g in 0..u64::from(blocks) {
        let first_byte = (base + g * u64::from(rb.src_vec4s)) * 16;
        let bytes = 16 * u64::from(rb.src_vec4s);
        let binding = pass.src_binding(memory);
        assert!(
            first_byte + bytes <= binding.len() as u64,
            "block read outside its binding"
        );
        let words: Vec<u32> = binding[first_byte as usize..(first_byte + bytes) as usize]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        for (e, out) in pass
            .entries
            .iter()
            .zip(&rb.outputs)
            .filter(|(e, _)| writes(e))
        {
            let share = g * out.words.len() as u64 * 4;
            for (w, pieces) in out.words.iter().enumerate() {
                let value = pieces.iter().fold(0u32, |v, p| {
                    let mask = field_mask(p.len);
                    v | (((words[p.src_word as usize] >> p.shift) & mask) << p.dst_bit)
                });
                let offset = share + w as u64 * 4;
                pass.store(memory, e, offset, &value.to_le_bytes(), "row block word");
            }
        }
    }
}

/// The low `len` bits (1 to 32).
fn field_mask(len: u32) -> u32 {
    if len == 32 { u32::MAX } else { (1 << len) - 1 }
}

/// The looped row-block concat, as its WGSL does it: each block's tensor
/// words assembled from every written piece's share (each share word's
/// bit fields put back where the split takes them from), then the block's
/// vec4s stored; a dispatch that skips pieces merges only the bits it
/// placed with what the tensor holds. Without skips the pieces cover
/// every bit of the block (the kernel stores whole vec4s).
fn concat_row_blocks(
    rb: &RowBlocks,
    pass: &mut GeneratedPass<'_>,
    memory: &mut [Vec<u8>],
    (base, blocks): (u64, u64),
) {
    assert!(rb.is_looped(), "row blocks join in the looped form only");
    assert_eq!(
        rb.lanes,
        LaneOrder::Striped,
        "row blocks join with striped lanes"
    );
    let words_per_block = rb.src_vec4s as usize * 4;
    let skipping = pass.entries.iter().any(|e| !writes(e));
    for g in 0..blocks {
        let mut tensor = vec![0u32; words_per_block];
        let mut placed = vec![0u32; words_per_block];
        for (e, out) in pass
            .entries
            .iter()
            .zip(&rb.outputs)
            .filter(|(e, _)| writes(e))
        {
            let share = g * out.words.len() as u64 * 4;
            let bytes = out.words.len() as u64 * 4;
            let values = pass.read_piece(memory, e, share, bytes, "row block piece");
            for (w, fields) in out.words.iter().enumerate() {
                let value = u32::from_le_bytes(values[w * 4..w * 4 + 4].try_into().unwrap());
                for p in fields {
                    let mask = field_mask(p.len);
                    let at = p.src_word as usize;
                    assert_eq!(
                        placed[at] & (mask << p.shift),
                        0,
                        "a tensor bit placed twice"
                    );
                    tensor[at] |= ((value >> p.dst_bit) & mask) << p.shift;
                    placed[at] |= mask << p.shift;
                }
            }
        }
        if !skipping {
            assert!(
                placed.iter().all(|&m| m == u32::MAX),
                "the pieces cover the block"
            );
        }
        let first_byte = (base + g * u64::from(rb.src_vec4s)) * 16;
        for v in 0..rb.src_vec4s as usize {
            let range = v * 4..v * 4 + 4;
            if placed[range.clone()].iter().all(|&m| m == 0) {
                continue;
            }
            let at = first_byte + v as u64 * 16;
            let old = pass.src_binding(memory)[at as usize..at as usize + 16].to_vec();
            let mut bytes = Vec::with_capacity(16);
            for (k, w) in range.enumerate() {
                let held = u32::from_le_bytes(old[k * 4..k * 4 + 4].try_into().unwrap());
                let merged = (held & !placed[w]) | (tensor[w] & placed[w]);
                bytes.extend_from_slice(&merged.to_le_bytes());
            }
            pass.write_tensor(memory, at, &bytes, "row block vec4");
        }
    }
}

/// The generated row-copy kernel (vec4s or words), as its WGSL does it (a
/// concat's `move_<slot>` the other way: each tensor unit from the piece's).
/// Blocked: invocation `g` copies units `[part * n, part * n + n)` (n the
/// output's `units`, part `g % per_row`) of row `g / per_row`'s run of
/// every output. Striped: the row's runs laid end to end, invocation `g`
/// copies unit `g % per_row` of them. Every unit of every output is
/// written exactly once, inside its binding and its caller's region.
pub(super) fn run_row_copies(rc: &RowCopies, pass: &mut GeneratedPass<'_>, memory: &mut [Vec<u8>]) {
    pass.check_entries(rc.outputs.len());
    let unit = u64::from(rc.unit_bits);
    let bytes = unit / 8;
    assert_eq!(bytes, pass.unit_bytes);
    let per_row = u64::from(rc.per_row);
    let invocations = u64::from(pass.invocations);
    assert_eq!(invocations % per_row, 0);
    let rows = invocations / per_row;
    assert!(rows <= 1 || rc.block_units > 0, "rows need a stride");
    // Per output: its entry, its run, its place among the row's runs.
    let mut first = 0;
    let mut runs = Vec::new();
    for (e, out) in pass.entries.iter().zip(&rc.outputs) {
        let run = u64::from(out.run_units);
        assert_eq!((e.first_bit, u64::from(e.len_bits)), (0, rows * run * unit));
        let src_row0 = match rc.lanes {
            LaneOrder::Blocked => pass.compiled_src_bit(e, u64::from(out.src_unit) * unit) / unit,
            LaneOrder::Striped => {
                // Read from the (bound) table, not compiled in.
                assert_eq!(out.src_unit, 0, "not compiled in");
                u64::from(e.src_bit) / unit
            }
        };
        runs.push((*e, run, first, src_row0, u64::from(out.units)));
        first += run;
    }
    // Every (invocation, unit of a run) the module's lanes copy.
    let mut copies = Vec::new();
    for g in 0..invocations {
        let (row, lane) = (g / per_row, g % per_row);
        for (k, &(e, run, first, _, n)) in runs.iter().enumerate() {
            let units: Vec<u64> = match rc.lanes {
                LaneOrder::Blocked => {
                    assert!(n * per_row >= run, "the stretches cover the run");
                    (lane * n..lane * n + n).filter(|&u| u < run).collect()
                }
                LaneOrder::Striped => {
                    assert_eq!(per_row, first_end(&runs), "a lane per unit");
                    (lane >= first && lane < first + run)
                        .then(|| lane - first)
                        .into_iter()
                        .collect()
                }
            };
            if writes(&e) {
                copies.extend(units.into_iter().map(|u| (k, row, u)));
            }
        }
    }
    for (k, row, u) in copies {
        let (e, run, _, src_row0, _) = runs[k];
        let tensor_at = (src_row0 + row * u64::from(rc.block_units) + u) * bytes;
        let at = ((row * run + u) * bytes, tensor_at);
        pass.transfer(memory, &e, at, bytes, "row copy unit");
    }
}

/// The units of every run of a row, laid end to end.
fn first_end(runs: &[(TableEntry, u64, u64, u64, u64)]) -> u64 {
    runs.iter().map(|r| r.1).sum()
}
