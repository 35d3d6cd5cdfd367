//! [`PermuteModule`]: which module a permuted-move dispatch runs (the
//! gather of [`super::permute`] or the tiles of [`super::permute_tile`]),
//! and everything that follows from it: its WGSL, entry point, parameter
//! block and bind group layout. The plan's binding names it; the GPU path
//! compiles it; recordings write it out.

use super::permute::{self, ConcatUnits};
use super::permute_records::{ConcatRecord, PermuteHeader, PermuteRecord, TileRecord, Words};
use super::permute_tile::{self, TileSide};
use super::shader::{BindingKind, LayoutEntry};
use super::wgsl::TraceHooks;

/// The module a permuted-move dispatch runs, and everything that picks it:
/// its WGSL ([`PermuteModule::source`]), entry point and bind group layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PermuteModule {
    /// A split's gather: `slots` destinations, in vec4s or words, the
    /// source bound writable where a destination shares its buffer.
    Split {
        slots: usize,
        vec4: bool,
        writable_source: bool,
    },
    /// A concat's gather: `slots` pieces in `units`, piece `k` bound
    /// writable where bit `k` of `writable` is set.
    Concat {
        slots: usize,
        units: ConcatUnits,
        writable: u32,
    },
    /// The concat's tensor zeroed before pieces of elements are ORed in.
    Clear,
    /// The tile kernel ([`permute_tile`]): `slots` slots on `side`,
    /// elements of `bits` bits, the buffers read bound writable as
    /// `writable` says.
    Tile {
        slots: usize,
        side: TileSide,
        bits: u32,
        writable: u32,
    },
}

impl PermuteModule {
    /// Its WGSL.
    pub(crate) fn source(&self) -> String {
        self.source_of(TraceHooks { on: false })
    }

    /// Its access-trace variant's WGSL: every load and store of an
    /// invocation recorded into binding [`PermuteModule::trace_binding`]
    /// (for `crate::gpu::trace`; never recorded by an encode).
    #[cfg_attr(not(feature = "analysis"), allow(dead_code))]
    pub(crate) fn traced_source(&self) -> String {
        self.source_of(TraceHooks { on: true })
    }

    /// The trace variant's trace binding: the one after the slots.
    #[cfg_attr(not(feature = "analysis"), allow(dead_code))]
    pub(crate) fn trace_binding(&self) -> u32 {
        match *self {
            PermuteModule::Split { slots, .. }
            | PermuteModule::Concat { slots, .. }
            | PermuteModule::Tile { slots, .. } => slots as u32 + 2,
            PermuteModule::Clear => 3,
        }
    }

    /// Its WGSL with `trace`'s hooks.
    fn source_of(&self, trace: TraceHooks) -> String {
        match *self {
            PermuteModule::Split {
                slots,
                vec4,
                writable_source,
            } => permute::module(slots, vec4, writable_source, trace),
            PermuteModule::Concat {
                slots,
                units,
                writable,
            } => permute::concat_module(slots, units, writable, trace),
            PermuteModule::Clear => permute::concat_module(1, ConcatUnits::Atomic, 0, trace),
            PermuteModule::Tile {
                slots,
                side,
                bits,
                writable,
            } => permute_tile::module(slots, side, bits, writable, trace),
        }
    }

    /// Its entry point.
    pub(crate) fn entry_point(&self) -> &'static str {
        match self {
            PermuteModule::Clear => "clear",
            _ => "main",
        }
    }

    /// Bytes of its parameters' uniform block.
    pub(crate) fn params_bytes(&self) -> u64 {
        let words = match *self {
            PermuteModule::Split { slots, .. } => {
                PermuteHeader::WORDS + slots * PermuteRecord::WORDS
            }
            PermuteModule::Concat { slots, .. } => {
                PermuteHeader::WORDS + slots * ConcatRecord::WORDS
            }
            PermuteModule::Clear => PermuteHeader::WORDS + ConcatRecord::WORDS,
            PermuteModule::Tile { slots, .. } => PermuteHeader::WORDS + slots * TileRecord::WORDS,
        };
        words as u64 * 4
    }

    /// Its bind group layout: the parameters (binding 0), binding 1 (a
    /// split's source, a concat's tensor) and a binding per slot.
    pub(crate) fn layout(&self) -> Vec<LayoutEntry> {
        let kind = |written: bool| {
            if written {
                BindingKind::Storage
            } else {
                BindingKind::ReadOnlyStorage
            }
        };
        let entry = |binding: u32, kind, min_binding_size| LayoutEntry {
            binding,
            kind,
            min_binding_size,
        };
        let mut entries = vec![entry(0, BindingKind::Uniform, self.params_bytes())];
        match *self {
            PermuteModule::Split {
                slots,
                vec4,
                writable_source,
            } => {
                let unit = if vec4 { 16 } else { 4 };
                entries.push(entry(1, kind(writable_source), unit));
                entries.extend((0..slots).map(|k| entry(k as u32 + 2, BindingKind::Storage, unit)));
            }
            PermuteModule::Concat {
                slots,
                units,
                writable,
            } => {
                let unit = if units == ConcatUnits::Vec4 { 16 } else { 4 };
                entries.push(entry(1, BindingKind::Storage, unit));
                entries.extend(
                    (0..slots).map(|k| entry(k as u32 + 2, kind(writable >> k & 1 == 1), unit)),
                );
            }
            PermuteModule::Clear => entries.push(entry(1, BindingKind::Storage, 4)),
            PermuteModule::Tile {
                slots,
                side,
                bits,
                writable,
            } => {
                let unit = u64::from(bits.max(32) / 8);
                let split = side == TileSide::Split;
                let one = if split {
                    kind(writable & 1 == 1)
                } else {
                    BindingKind::Storage
                };
                entries.push(entry(1, one, unit));
                entries.extend((0..slots).map(|k| {
                    let read = !split && writable >> k & 1 == 0;
                    entry(k as u32 + 2, kind(!read), unit)
                }));
            }
        }
        entries
    }
}
