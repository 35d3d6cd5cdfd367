//! The permuted moves' parameters: what the planner writes and the permute
//! kernels read (a uniform block: a header, then one record per slot), as
//! plain `#[repr(C)]` structs. Rust is the single source of truth: each
//! module names every word it reads by a constant generated from these
//! structs' field offsets ([`consts`]), and `tests/shaders.rs` reflects
//! the compiled modules' constants against `offset_of!`.

use bytemuck::{Pod, Zeroable};

use crate::kernels::table::WORKGROUP_SIZE;

/// Dimensions a record's views carry (a move's strided dimensions, one
/// more for elements wider than a word).
pub const RECORD_RANK: usize = 8;

/// How a record's destination words are gathered (its `mode` word; the
/// kernel's `MODE_WORDS` is [`RecordMode::Words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum RecordMode {
    /// Each destination word is one source word.
    Words = 0,
    /// Each destination word is assembled from elements of `bits` (2, 4, 8
    /// or 16), each from its own place.
    Elements = 1,
}

/// A dispatch's header, before its records (`H_*` in the modules).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct PermuteHeader {
    /// Records that follow.
    pub records: u32,
    /// Units (words or vec4s) an invocation of a gather moves.
    pub units_per_invocation: u32,
    /// The concat's `clear` entry point: words of the tensor it zeroes.
    pub clear_words: u32,
    /// The concat's `clear`: words from the tensor's binding to its region.
    pub clear_shift: u32,
}

/// A permuted split's gather: one destination's record (`R_*` in the
/// split's module). Views are in units (words, or elements), outermost
/// first.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct PermuteRecord {
    /// The destination's first invocation in the dispatch.
    pub first: u32,
    /// Units of the destination.
    pub words: u32,
    /// Elements of the destination.
    pub elements: u32,
    /// A [`RecordMode`].
    pub mode: u32,
    /// Bits per element.
    pub bits: u32,
    /// Dimensions of the view.
    pub rank: u32,
    /// The view's first source unit.
    pub offset: u32,
    /// Units from the source binding's start to the source region's.
    pub src_shift: u32,
    /// Units from the destination binding's start to its region's.
    pub dst_shift: u32,
    /// Padding to a 16-byte boundary.
    pub padding: [u32; 3],
    /// The view's dimensions.
    pub dims: [u32; RECORD_RANK],
    /// Source units per step of each dimension.
    pub strides: [u32; RECORD_RANK],
}

/// A permuted concat's gather: one piece's record (`R_*` in the concat's
/// module): the view that reads the piece and the view of the tensor it
/// writes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct ConcatRecord {
    /// The piece's first invocation in the dispatch.
    pub first: u32,
    /// Units of the piece.
    pub words: u32,
    /// Elements of the piece.
    pub elements: u32,
    /// A [`RecordMode`].
    pub mode: u32,
    /// Bits per element.
    pub bits: u32,
    /// Dimensions of the read view.
    pub read_rank: u32,
    /// The read view's first unit.
    pub read_offset: u32,
    /// Units from the piece's binding start to its region's.
    pub piece_shift: u32,
    /// Units from the tensor's binding start to its region's.
    pub dst_shift: u32,
    /// Dimensions of the write view.
    pub write_rank: u32,
    /// The write view's first unit.
    pub write_offset: u32,
    /// Padding to a 16-byte boundary.
    pub padding: u32,
    /// The read view's dimensions.
    pub read_dims: [u32; RECORD_RANK],
    /// The piece's units per step of each.
    pub read_strides: [u32; RECORD_RANK],
    /// The write view's dimensions.
    pub write_dims: [u32; RECORD_RANK],
    /// The tensor's units per step of each.
    pub write_strides: [u32; RECORD_RANK],
}

/// A tile move's record, one per slot (`R_*` in the tile module).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct TileRecord {
    /// The slot's first workgroup in the dispatch.
    pub first: u32,
    /// Its workgroups.
    pub workgroups: u32,
    /// Tiles along the read axis.
    pub tiles_read: u32,
    /// Tiles along the write axis.
    pub tiles_write: u32,
    /// The axis the source is contiguous along.
    pub read_axis: u32,
    /// The axis the destination is contiguous along.
    pub write_axis: u32,
    /// Dimensions of the walk.
    pub rank: u32,
    /// The walk's first read element (or word).
    pub read_at: u32,
    /// The walk's first written element (or word).
    pub write_at: u32,
    /// From the read binding's start to its region.
    pub read_shift: u32,
    /// From the written binding's start to its region.
    pub write_shift: u32,
    /// Bits per element.
    pub bits: u32,
    /// The walk's dimensions.
    pub dims: [u32; RECORD_RANK],
    /// Read units per step of each.
    pub read_strides: [u32; RECORD_RANK],
    /// Written units per step of each.
    pub write_strides: [u32; RECORD_RANK],
}

/// The word offsets of a struct's fields, by name.
macro_rules! words_of {
    ($t:ty: $($field:ident),* $(,)?) => {
        &[$((stringify!($field), std::mem::offset_of!($t, $field) / 4)),*]
    };
}

/// A parameter struct the permute modules read as words.
pub trait Words: Pod {
    /// Each field's name and first word, in order.
    const FIELDS: &'static [(&'static str, usize)];
    /// Its size in 32-bit words.
    const WORDS: usize = size_of::<Self>() / 4;

    /// The record as the words the uniform block holds.
    fn words(&self) -> &[u32] {
        bytemuck::cast_slice(bytemuck::bytes_of(self))
    }
}

impl Words for PermuteHeader {
    const FIELDS: &'static [(&'static str, usize)] = words_of!(PermuteHeader:
        records, units_per_invocation, clear_words, clear_shift);
}

impl Words for PermuteRecord {
    const FIELDS: &'static [(&'static str, usize)] = words_of!(PermuteRecord:
        first, words, elements, mode, bits, rank, offset, src_shift, dst_shift, padding,
        dims, strides);
}

impl Words for ConcatRecord {
    const FIELDS: &'static [(&'static str, usize)] = words_of!(ConcatRecord:
        first, words, elements, mode, bits, read_rank, read_offset, piece_shift, dst_shift,
        write_rank, write_offset, padding, read_dims, read_strides, write_dims, write_strides);
}

impl Words for TileRecord {
    const FIELDS: &'static [(&'static str, usize)] = words_of!(TileRecord:
        first, workgroups, tiles_read, tiles_write, read_axis, write_axis, rank, read_at,
        write_at, read_shift, write_shift, bits, dims, read_strides, write_strides);
}

/// The WGSL constants of a module whose records are `R`: the workgroup
/// size, the header's and the record's sizes in words (`HEADER`,
/// `RECORD`), each header field's word (`H_` and its name) and each
/// record field's (`R_` and its name), and `MODE_WORDS`.
pub fn consts<R: Words>() -> String {
    let mut out = format!(
        "const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;\nconst HEADER: u32 = {}u;\n\
         const RECORD: u32 = {}u;\nconst RANK: u32 = {RECORD_RANK}u;\n\
         const MODE_WORDS: u32 = {}u;\n",
        PermuteHeader::WORDS,
        R::WORDS,
        RecordMode::Words as u32,
    );
    for (prefix, fields) in [("H", PermuteHeader::FIELDS), ("R", R::FIELDS)] {
        for (name, word) in fields {
            let name = name.to_uppercase();
            out.push_str(&format!("const {prefix}_{name}: u32 = {word}u;\n"));
        }
    }
    out
}

/// The header of a dispatch of `records` records.
pub fn header(records: usize, units_per_invocation: u32) -> PermuteHeader {
    PermuteHeader {
        records: records as u32,
        units_per_invocation,
        clear_words: 0,
        clear_shift: 0,
    }
}

/// `values` in the first entries of a view's array, zeros after.
pub fn padded(values: &[u32]) -> [u32; RECORD_RANK] {
    let mut out = [0; RECORD_RANK];
    out[..values.len()].copy_from_slice(values);
    out
}

#[cfg(test)]
mod tests {
    use super::{ConcatRecord, PermuteHeader, PermuteRecord, TileRecord, Words, consts};

    #[test]
    fn records_are_whole_vec4s_and_their_fields_named_in_order() {
        assert_eq!(PermuteHeader::WORDS, 4);
        assert_eq!(PermuteRecord::WORDS, 28);
        assert_eq!(ConcatRecord::WORDS, 44);
        assert_eq!(TileRecord::WORDS, 36);
        for fields in [
            PermuteRecord::FIELDS,
            ConcatRecord::FIELDS,
            TileRecord::FIELDS,
        ] {
            assert!(fields.windows(2).all(|w| w[0].1 < w[1].1));
        }
        let wgsl = consts::<PermuteRecord>();
        assert!(wgsl.contains("const R_DIMS: u32 = 12u;\nconst R_STRIDES: u32 = 20u;\n"));
        assert!(wgsl.contains("const H_UNITS_PER_INVOCATION: u32 = 1u;\n"));
    }
}
