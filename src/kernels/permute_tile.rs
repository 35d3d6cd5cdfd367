//! The permuted-move tile kernel (`shaders/permute_tile.wgsl`): for moves
//! that carry the source's contiguous axis across the destination's rows
//! (a transpose of the fastest axis), where the word-per-lane gather of
//! [`super::permute`] would put consecutive lanes a stride apart in the
//! source. Each workgroup moves a [`TILE`] x [`TILE`] tile of elements of
//! 32, 64 or 128 bits: it loads the tile along the axis the source is
//! contiguous on and stores it along the axis the destination is
//! contiguous on, through workgroup memory, so that both sides put
//! consecutive lanes on consecutive elements. Elements of 2 to 16 bits are
//! taken out of their words one per lane and stored a whole word per lane
//! (the plan makes every output row of such a move whole words). One module per number of
//! slots a dispatch binds and direction; everything else is in one record
//! per slot ([`record`]).

use crate::kernels::permute::access;
use crate::kernels::permute_records::{PermuteHeader, TileRecord, Words, consts, padded};
use crate::kernels::template::Template;
use crate::kernels::wgsl::TraceHooks;

const WGSL: Template = Template::new(
    "permute_tile.wgsl",
    include_str!("../../shaders/permute_tile.wgsl"),
);

/// Elements along each side of a tile.
pub const TILE: u32 = 32;

// The largest tile (of vec4 elements) fits WebGPU's default 16 KiB of
// workgroup memory (`maxComputeWorkgroupStorageSize`).
const _: () = assert!(TILE * TILE * 16 <= 16384);

/// What a tile dispatch binds: which side has one buffer per slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TileSide {
    /// A split: one source (binding 1), a destination per slot.
    Split,
    /// A concat: one destination (binding 1), a source (piece) per slot.
    Concat,
}

/// The WGSL module of tile dispatches binding `slots` slots on `side`, in
/// elements of `bits` bits: 32, 64 or 128 (units `u32`, `vec2<u32>`,
/// `vec4<u32>`), or 2 to 16 packed in `u32` words; binding 0 is the
/// parameters, a uniform block of a header and a record per slot. The
/// buffers read are bound writable where bit `k` of `writable` is set (a
/// split's one source: bit 0; a concat's piece in slot `k`): they share a
/// buffer the dispatch writes. With `trace`'s hooks (its trace variant:
/// binding `slots + 2`; site 0 the loads, 1 the stores).
pub(crate) fn module(
    slots: usize,
    side: TileSide,
    bits: u32,
    writable: u32,
    trace: TraceHooks,
) -> String {
    let unit = match bits {
        64 => "vec2<u32>",
        128 => "vec4<u32>",
        _ => "u32",
    };
    let bytes = bits.max(32) / 8;
    let load = |binding: u32| trace.record(0, bytes, binding, false, "i");
    let store = |binding: u32| trace.record(1, bytes, binding, true, "i");
    let phases = if bits >= 32 {
        WGSL.fill("whole_phases", &[])
    } else {
        WGSL.fill("packed_phases", &[("bits", &bits)])
    };
    let destinations = WGSL.repeat("split_destination", 0..slots, |slot| {
        vec![
            ("binding", (slot + 2).to_string()),
            ("slot", slot.to_string()),
            ("unit", unit.to_string()),
        ]
    });
    let pieces = WGSL.repeat("concat_piece", 0..slots, |slot| {
        vec![
            ("binding", (slot + 2).to_string()),
            ("access", access(writable >> slot & 1 == 1).to_string()),
            ("slot", slot.to_string()),
            ("unit", unit.to_string()),
        ]
    });
    let only_slot = |fragment: &'static str, note: &dyn Fn(u32) -> String| {
        WGSL.repeat(fragment, 0..slots, |&slot| {
            vec![("slot", slot.to_string()), ("note", note(slot as u32 + 2))]
        })
    };
    let bindings = match side {
        TileSide::Split => WGSL.fill(
            "split_bindings",
            &[
                ("src_access", &access(writable & 1 == 1)),
                ("unit", &unit),
                ("destinations", &destinations),
                ("stores", &only_slot("split_store", &store)),
                ("note_load", &load(1)),
            ],
        ),
        TileSide::Concat => WGSL.fill(
            "concat_bindings",
            &[
                ("unit", &unit),
                ("pieces", &pieces),
                ("loads", &only_slot("concat_load", &load)),
                ("note_store", &store(1)),
            ],
        ),
    };
    let vec4s = (PermuteHeader::WORDS + slots * TileRecord::WORDS) / 4;
    WGSL.fill(
        "module",
        &[
            ("consts", &consts::<TileRecord>()),
            ("tile", &TILE),
            ("tile_cells", &(TILE * TILE)),
            ("vec4s", &vec4s),
            ("bindings", &bindings),
            ("unit", &unit),
            ("phases", &phases),
            ("trace", &trace.binding(slots as u32 + 2)),
            ("trace_start", &trace.start("group * 256u + lid")),
        ],
    )
}

/// A move's view as the tile kernel walks it, in elements: the dimensions
/// (outermost first), the strides it reads and writes each with, from
/// which offsets, the axis the reads are contiguous on and the one the
/// writes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileWalk {
    /// Elements per dimension, outermost first.
    pub dims: Vec<u32>,
    /// Elements of the source per step of each dimension.
    pub read_strides: Vec<u32>,
    /// Elements of the destination per step of each dimension.
    pub write_strides: Vec<u32>,
    /// The source element of the walk's first.
    pub read_offset: u32,
    /// The destination element of the walk's first.
    pub write_offset: u32,
    /// The dimension the reads step 1 element along (a tile's columns
    /// when loading).
    pub read_axis: usize,
    /// The dimension the writes step 1 element along (a tile's columns
    /// when storing).
    pub write_axis: usize,
}

impl TileWalk {
    /// Tiles along the read axis and along the write axis.
    pub fn tiles(&self) -> (u32, u32) {
        (
            self.dims[self.read_axis].div_ceil(TILE),
            self.dims[self.write_axis].div_ceil(TILE),
        )
    }

    /// Workgroups the walk takes: a tile each, over every batch (the
    /// other dimensions).
    pub fn workgroups(&self) -> u64 {
        let (r, w) = self.tiles();
        let batches: u64 = (0..self.dims.len())
            .filter(|&k| k != self.read_axis && k != self.write_axis)
            .map(|k| u64::from(self.dims[k]))
            .product();
        u64::from(r) * u64::from(w) * batches
    }
}

/// One slot's record: its first workgroup in the dispatch, its walk, the
/// shifts between each binding's start and its region's (in elements, or
/// words for elements under 32 bits), and the element bits.
pub(crate) fn record(
    first: u32,
    walk: &TileWalk,
    read_shift: u32,
    write_shift: u32,
    bits: u32,
) -> TileRecord {
    let (tiles_read, tiles_write) = walk.tiles();
    TileRecord {
        first,
        workgroups: walk.workgroups() as u32,
        tiles_read,
        tiles_write,
        read_axis: walk.read_axis as u32,
        write_axis: walk.write_axis as u32,
        rank: walk.dims.len() as u32,
        read_at: walk.read_offset,
        write_at: walk.write_offset,
        read_shift,
        write_shift,
        bits,
        dims: padded(&walk.dims),
        read_strides: padded(&walk.read_strides),
        write_strides: padded(&walk.write_strides),
    }
}

#[cfg(test)]
mod tests {
    use super::{TileSide, TileWalk, module, record};
    use crate::kernels::permute_records::Words;
    use crate::kernels::wgsl::TraceHooks;
    use naga::valid::{Capabilities, ValidationFlags, Validator};

    #[test]
    fn every_tile_module_validates_and_binds_what_the_encode_binds() {
        for slots in 1..=32 {
            for side in [TileSide::Split, TileSide::Concat] {
                for (bits, writable) in [
                    (32, 0),
                    (64, u32::MAX),
                    (128, 0x5555_5555),
                    (16, 0),
                    (8, u32::MAX),
                    (4, 0),
                    (2, 0x5555_5555),
                ] {
                    // The trace variant (every other slot count) binds its
                    // trace after the slots.
                    let on = slots % 2 == 0;
                    let writable = writable >> (32 - slots);
                    let source = module(slots, side, bits, writable, TraceHooks { on });
                    let parsed = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| {
                        panic!("{side:?} x{slots}: {}", e.emit_to_string(&source))
                    });
                    let info = Validator::new(ValidationFlags::all(), Capabilities::empty())
                        .validate(&parsed)
                        .unwrap_or_else(|e| panic!("{side:?} x{slots} {bits}: {e:?}"));
                    drop(info);
                    let mut bindings: Vec<u32> = parsed
                        .global_variables
                        .iter()
                        .filter_map(|(_, v)| v.binding.as_ref().map(|b| b.binding))
                        .collect();
                    bindings.sort_unstable();
                    let expected: Vec<u32> = (0..slots as u32 + 2 + u32::from(on)).collect();
                    assert_eq!(bindings, expected, "{side:?} x{slots}");
                }
            }
        }
    }

    #[test]
    fn a_record_holds_the_walk_where_the_kernel_reads_it() {
        // f32 [1, 32, 7600] as (0, 2, 1): the output [7600, 32] reads
        // source element c * 7600 + s.
        let walk = TileWalk {
            dims: vec![7600, 32],
            read_strides: vec![1, 7600],
            write_strides: vec![32, 1],
            read_offset: 0,
            write_offset: 0,
            read_axis: 0,
            write_axis: 1,
        };
        assert_eq!(walk.tiles(), (238, 1));
        assert_eq!(walk.workgroups(), 238);
        let r = record(5, &walk, 2, 3, 32);
        let r = r.words();
        assert_eq!(&r[..12], &[5, 238, 238, 1, 0, 1, 2, 0, 0, 2, 3, 32]);
        assert_eq!(&r[12..14], &[7600, 32]);
        assert_eq!(&r[20..22], &[1, 7600]);
        assert_eq!(&r[28..30], &[32, 1]);
    }
}
