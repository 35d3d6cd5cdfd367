//! The permuted moves' recordings run on the CPU, as a WebGPU
//! implementation would run them: each copy, then each dispatch's module
//! (told apart by its WGSL and entry point) interpreted from its
//! parameters exactly as `shaders/permute.wgsl` and `permute_tile.wgsl`
//! read them, every array access through its binding. It asserts what the
//! GPU relies on: bindings inside their buffers and starting aligned,
//! every read inside its binding, every write inside a writable binding
//! and inside one of the regions the caller gave to be written, the grid
//! covering every unit a record moves, no buffer bound read-only beside a
//! writable binding of it, and writable bindings of one dispatch disjoint.

use std::ops::Range;

use wgpu_split::plan::internals::{
    BindingKind, ConcatRecord, PermuteHeader, PermuteRecord, RecordedBinding, RecordedCommand,
    Recording, TileRecord, Words,
};

/// What a permuted module is, read off its WGSL and layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Module {
    /// A split's gather, in units of `unit` bytes (4 or 16).
    Split { unit: u64 },
    /// A concat's gather, in units of `unit` bytes, ORing elements.
    Concat { unit: u64 },
    /// The concat's tensor zeroed.
    Clear,
    /// Tiles of elements of `unit` bytes; `concat`: binding 1 is written.
    Tile { unit: u64, concat: bool },
}

/// The constant a module whose records are `T` declares.
fn record_size<T: Words>() -> String {
    format!("const RECORD: u32 = {}u;", T::WORDS)
}

fn module_of(recording: &Recording, index: usize) -> Module {
    let m = &recording.modules[index];
    let unit = m
        .layout
        .iter()
        .find(|e| e.binding == 1)
        .map_or(4, |e| e.min_binding_size);
    if m.entry_point == "clear" {
        Module::Clear
    } else if m.wgsl.contains(&record_size::<TileRecord>()) {
        Module::Tile {
            unit,
            concat: m.wgsl.contains("var<storage, read_write> dst: array"),
        }
    } else if m.wgsl.contains(&record_size::<ConcatRecord>()) {
        Module::Concat { unit }
    } else if m.wgsl.contains(&record_size::<PermuteRecord>()) {
        Module::Split { unit }
    } else {
        panic!("module {index} is no permuted-move module")
    }
}

/// The emulated memory: every recorded buffer's bytes, and the regions
/// the caller allows to be written (buffer, bytes).
pub struct Memory {
    pub buffers: Vec<Vec<u8>>,
    pub writable: Vec<(usize, Range<u64>)>,
}

/// One dispatch's bindings, checked, by binding number.
struct Bound<'r> {
    bindings: Vec<&'r RecordedBinding>,
    writable: Vec<bool>,
}

impl Bound<'_> {
    fn get(&self, number: u32) -> (&RecordedBinding, bool) {
        let k = self
            .bindings
            .iter()
            .position(|b| b.binding == number)
            .unwrap_or_else(|| panic!("binding {number} is not bound"));
        (self.bindings[k], self.writable[k])
    }
}

impl Memory {
    fn read(&self, bound: &Bound<'_>, number: u32, index: u64, unit: u64) -> Vec<u8> {
        let (b, _) = bound.get(number);
        assert!(
            (index + 1) * unit <= b.size,
            "read of unit {index} past binding {number} ({} bytes)",
            b.size
        );
        let at = (b.offset + index * unit) as usize;
        self.buffers[b.buffer][at..at + unit as usize].to_vec()
    }

    fn write(&mut self, bound: &Bound<'_>, number: u32, index: u64, bytes: &[u8]) {
        let (b, writable) = bound.get(number);
        let unit = bytes.len() as u64;
        assert!(writable, "write through read-only binding {number}");
        assert!(
            (index + 1) * unit <= b.size,
            "write of unit {index} past binding {number} ({} bytes)",
            b.size
        );
        let at = b.offset + index * unit;
        assert!(
            self.writable
                .iter()
                .any(|(buf, r)| *buf == b.buffer && at >= r.start && at + unit <= r.end),
            "write of bytes {at}..{} of buffer {} outside the regions given to be written",
            at + unit,
            b.buffer
        );
        self.buffers[b.buffer][at as usize..(at + unit) as usize].copy_from_slice(bytes);
    }

    fn word(&self, bound: &Bound<'_>, number: u32, index: u64) -> u32 {
        u32::from_le_bytes(self.read(bound, number, index, 4).try_into().unwrap())
    }

    /// Runs `recording`'s commands in order.
    pub fn run(&mut self, recording: &Recording) {
        let params = recording.buffers.len() - 2;
        self.buffers[params][..recording.table.len()].copy_from_slice(&recording.table);
        for command in &recording.commands {
            match command {
                RecordedCommand::Copy {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    size,
                } => {
                    assert_ne!(src, dst, "a copy within one buffer");
                    assert!(
                        self.writable.iter().any(|(b, r)| b == dst
                            && *dst_offset >= r.start
                            && dst_offset + size <= r.end),
                        "a copy outside the regions given to be written"
                    );
                    let bytes = self.buffers[*src]
                        [*src_offset as usize..(src_offset + size) as usize]
                        .to_vec();
                    self.buffers[*dst][*dst_offset as usize..(dst_offset + size) as usize]
                        .copy_from_slice(&bytes);
                }
                RecordedCommand::Dispatch {
                    module,
                    bindings,
                    workgroups,
                } => {
                    let layout = &recording.modules[*module].layout;
                    let writable: Vec<bool> = bindings
                        .iter()
                        .map(|b| {
                            let e = layout.iter().find(|e| e.binding == b.binding).unwrap();
                            assert!(
                                b.size >= e.min_binding_size,
                                "binding {} too small",
                                b.binding
                            );
                            e.kind == BindingKind::Storage
                        })
                        .collect();
                    let bound = Bound {
                        bindings: bindings.iter().collect(),
                        writable,
                    };
                    self.check_bindings(recording, &bound);
                    let invocations =
                        u64::from(workgroups[0] * workgroups[1] * workgroups[2]) * 256;
                    let params: Vec<u32> = {
                        let (b, _) = bound.get(0);
                        let bytes = &self.buffers[b.buffer]
                            [b.offset as usize..(b.offset + b.size) as usize];
                        bytemuck_words(bytes)
                    };
                    match module_of(recording, *module) {
                        Module::Split { unit } => self.split(&bound, &params, unit, invocations),
                        Module::Concat { unit } => self.concat(&bound, &params, unit, invocations),
                        Module::Clear => {
                            let h = header_of(&params);
                            for i in 0..u64::from(h.clear_words) {
                                assert!(i < invocations, "the clear's grid is short");
                                self.write(&bound, 1, i + u64::from(h.clear_shift), &[0; 4]);
                            }
                        }
                        Module::Tile { unit, concat } => {
                            self.tile(&bound, &params, unit, concat, invocations / 256)
                        }
                    }
                }
            }
        }
    }

    /// Bindings inside their buffers, at multiples of 256 (WebGPU's
    /// default alignment), no buffer bound read-only beside a writable
    /// binding of it, writable bindings disjoint.
    fn check_bindings(&self, recording: &Recording, bound: &Bound<'_>) {
        let params = recording.buffers.len() - 2;
        for (k, b) in bound.bindings.iter().enumerate() {
            assert!(
                b.offset + b.size <= self.buffers[b.buffer].len() as u64,
                "binding past its buffer"
            );
            assert!(b.offset % 256 == 0, "binding {} at {}", b.binding, b.offset);
            for (j, c) in bound.bindings.iter().enumerate().skip(k + 1) {
                if b.buffer != c.buffer || b.buffer == params {
                    continue;
                }
                let (wb, wc) = (bound.writable[k], bound.writable[j]);
                assert!(
                    wb == wc,
                    "a buffer bound read-only beside a writable binding of it"
                );
                let overlap = b.offset < c.offset + c.size && c.offset < b.offset + b.size;
                assert!(
                    !(wb && overlap),
                    "writable bindings {} and {} overlap",
                    b.binding,
                    c.binding
                );
            }
        }
    }

    fn split(&mut self, bound: &Bound<'_>, p: &[u32], unit: u64, invocations: u64) {
        let h = header_of(p);
        let (count, per) = (h.records as usize, u64::from(h.units_per_invocation));
        for slot in 0..count {
            let r: PermuteRecord = record_at(p, slot);
            let (first, units, elements, mode, bits) =
                (r.first, r.words, r.elements, r.mode, r.bits);
            let (rank, src_shift, dst_shift) = (r.rank as usize, r.src_shift, r.dst_shift);
            let view = (&r.dims[..rank], &r.strides[..rank], r.offset);
            assert!(
                u64::from(first) + u64::from(units).div_ceil(per) <= invocations,
                "the grid is short of slot {slot}'s units"
            );
            let number = slot as u32 + 2;
            if mode == 0 {
                for w in 0..u64::from(units) {
                    let from = unravel(view, w) + u64::from(src_shift);
                    let bytes = self.read(bound, 1, from, unit);
                    self.write(bound, number, w + u64::from(dst_shift), &bytes);
                }
            } else {
                let per_word = 32 / bits;
                let mask = if bits == 32 {
                    u32::MAX
                } else {
                    (1 << bits) - 1
                };
                for w in 0..u64::from(units) {
                    let mut value = 0u32;
                    for k in 0..per_word {
                        let e = w * u64::from(per_word) + u64::from(k);
                        if e >= u64::from(elements) {
                            break;
                        }
                        let bit = unravel(view, e) * u64::from(bits);
                        let word = self.word(bound, 1, bit / 32 + u64::from(src_shift));
                        value |= ((word >> (bit % 32)) & mask) << (k * bits);
                    }
                    self.write(
                        bound,
                        number,
                        w + u64::from(dst_shift),
                        &value.to_le_bytes(),
                    );
                }
            }
        }
    }

    fn concat(&mut self, bound: &Bound<'_>, p: &[u32], unit: u64, invocations: u64) {
        let h = header_of(p);
        let (count, per) = (h.records as usize, u64::from(h.units_per_invocation));
        for slot in 0..count {
            let r: ConcatRecord = record_at(p, slot);
            let (first, units, elements, mode, bits) =
                (r.first, r.words, r.elements, r.mode, r.bits);
            let (read_rank, write_rank) = (r.read_rank as usize, r.write_rank as usize);
            let read = (
                &r.read_dims[..read_rank],
                &r.read_strides[..read_rank],
                r.read_offset,
            );
            let write = (
                &r.write_dims[..write_rank],
                &r.write_strides[..write_rank],
                r.write_offset,
            );
            let (piece_shift, dst_shift) = (u64::from(r.piece_shift), u64::from(r.dst_shift));
            assert!(
                u64::from(first) + u64::from(units).div_ceil(per) <= invocations,
                "the grid is short of piece {slot}'s units"
            );
            let number = slot as u32 + 2;
            if mode == 0 {
                for w in 0..u64::from(units) {
                    let bytes = self.read(bound, number, unravel(read, w) + piece_shift, unit);
                    self.write(bound, 1, unravel(write, w) + dst_shift, &bytes);
                }
            } else {
                let mask = (1u32 << bits) - 1;
                for e in 0..u64::from(elements) {
                    let from = unravel(read, e) * u64::from(bits);
                    let v =
                        (self.word(bound, number, from / 32 + piece_shift) >> (from % 32)) & mask;
                    let to = unravel(write, e) * u64::from(bits);
                    let at = to / 32 + dst_shift;
                    let old = self.word(bound, 1, at);
                    self.write(bound, 1, at, &(old | v << (to % 32)).to_le_bytes());
                }
            }
        }
    }

    fn tile(&mut self, bound: &Bound<'_>, p: &[u32], unit: u64, concat: bool, groups: u64) {
        let count = header_of(p).records as usize;
        for slot in 0..count {
            let r: TileRecord = record_at(p, slot);
            let (first, workgroups, tiles_read, tiles_write) =
                (r.first, r.workgroups, r.tiles_read, r.tiles_write);
            let (read_axis, write_axis, rank) =
                (r.read_axis as usize, r.write_axis as usize, r.rank as usize);
            let dims = &r.dims[..rank];
            let (read_strides, write_strides) = (&r.read_strides[..rank], &r.write_strides[..rank]);
            let batches: u64 = (0..rank)
                .filter(|&k| k != read_axis && k != write_axis)
                .map(|k| u64::from(dims[k]))
                .product();
            assert_eq!(tiles_read, dims[read_axis].div_ceil(32));
            assert_eq!(tiles_write, dims[write_axis].div_ceil(32));
            assert_eq!(
                u64::from(workgroups),
                u64::from(tiles_read * tiles_write) * batches
            );
            assert!(
                u64::from(first + workgroups) <= groups,
                "the grid is short of slot {slot}'s tiles"
            );
            let bits = r.bits;
            let (from, to) = if concat {
                (slot as u32 + 2, 1)
            } else {
                (1, slot as u32 + 2)
            };
            let len: u64 = dims.iter().map(|&d| u64::from(d)).product();
            if bits >= 32 {
                let read = (dims, read_strides, r.read_at + r.read_shift);
                let write = (dims, write_strides, r.write_at + r.write_shift);
                for e in 0..len {
                    let bytes = self.read(bound, from, unravel(read, e), unit);
                    self.write(bound, to, unravel(write, e), &bytes);
                }
            } else {
                // Packed: offsets count elements, shifts words.
                let read = (dims, read_strides, r.read_at);
                let write = (dims, write_strides, r.write_at);
                let (read_shift, write_shift) = (u64::from(r.read_shift), u64::from(r.write_shift));
                let mask = (1u32 << bits) - 1;
                for e in 0..len {
                    let at = unravel(read, e) * u64::from(bits);
                    let v = (self.word(bound, from, at / 32 + read_shift) >> (at % 32)) & mask;
                    let to_bit = unravel(write, e) * u64::from(bits);
                    let word = to_bit / 32 + write_shift;
                    let old = self.word(bound, to, word);
                    let shift = to_bit % 32;
                    let new = (old & !(mask << shift)) | v << shift;
                    self.write(bound, to, word, &new.to_le_bytes());
                }
            }
        }
    }
}

/// A dispatch's header, read through the library's own struct.
fn header_of(p: &[u32]) -> PermuteHeader {
    bytemuck::pod_read_unaligned(bytemuck::cast_slice(&p[..PermuteHeader::WORDS]))
}

/// Record `slot` of a dispatch's parameters, read through the library's
/// own struct.
fn record_at<T: Words>(p: &[u32], slot: usize) -> T {
    let start = PermuteHeader::WORDS + slot * T::WORDS;
    bytemuck::pod_read_unaligned(bytemuck::cast_slice(&p[start..start + T::WORDS]))
}

/// Unit `index` of a view (dims and strides outermost first, an offset).
fn unravel((dims, strides, offset): (&[u32], &[u32], u32), index: u64) -> u64 {
    let mut rest = index;
    let mut at = u64::from(offset);
    for (&d, &s) in dims.iter().zip(strides).rev() {
        at += (rest % u64::from(d)) * u64::from(s);
        rest /= u64::from(d);
    }
    at
}

fn bytemuck_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
