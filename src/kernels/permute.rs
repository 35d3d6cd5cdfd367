//! The permuted-move kernel: one 32-bit word of a destination per
//! invocation, gathered through the destination's strided view of the
//! source (`shaders/permute.wgsl`). A module per number of destinations a
//! dispatch binds; everything else is in its parameters, one record per
//! destination ([`record`]), so a module serves every shape.

use crate::kernels::permute_records::{
    ConcatRecord, PermuteHeader, PermuteRecord, RecordMode, Words, consts, padded,
};
use crate::kernels::template::Template;
use crate::kernels::wgsl::TraceHooks;

const WGSL: Template = Template::new("permute.wgsl", include_str!("../../shaders/permute.wgsl"));

/// The access sites of the gather modules' trace variants: whole words (or
/// vec4s) loaded and stored, elements loaded and their words stored.
const SITE_WORD_LOAD: u32 = 0;
const SITE_WORD_STORE: u32 = 1;
const SITE_ELEMENT_LOAD: u32 = 2;
const SITE_ELEMENT_STORE: u32 = 3;

/// How a module binds the buffers a dispatch reads: read-only, except
/// those sharing a buffer another binding of the dispatch writes (WebGPU
/// forbids one buffer bound read-only and writable in one dispatch, and
/// allows writable bindings that do not overlap).
pub(crate) fn access(writable: bool) -> &'static str {
    if writable { "read_write" } else { "read" }
}

/// The WGSL module for dispatches that bind `destinations` destinations, in
/// units of 32-bit words (whole words, or elements assembled into them) or
/// of vec4s (`vec4`: whole vec4s only)
/// (bindings 2 and up; 0 the parameters, a uniform block of
/// [`PermuteHeader`] and a [`PermuteRecord`] per destination, 1 the source, bound
/// writable when `writable_source`: a destination shares its buffer),
/// with `trace`'s hooks (its trace variant: binding `destinations + 2`).
pub(crate) fn module(
    destinations: usize,
    vec4: bool,
    writable_source: bool,
    trace: TraceHooks,
) -> String {
    let unit = if vec4 { "vec4<u32>" } else { "u32" };
    let bytes = if vec4 { 16 } else { 4 };
    let bindings = WGSL.repeat("binding", 0..destinations, |&slot| {
        let binding = slot as u32 + 2;
        let note = trace.record(
            SITE_WORD_LOAD,
            bytes,
            1,
            false,
            "at + k * s_last + src_shift",
        ) + &trace.record(SITE_WORD_STORE, bytes, binding, true, "w + k + dst_shift");
        vec![
            ("binding", binding.to_string()),
            ("slot", slot.to_string()),
            ("unit", unit.to_string()),
            ("note", note),
        ]
    });
    let word_calls = WGSL.repeat("word_call", 0..destinations, |slot| {
        vec![("slot", slot.to_string())]
    });
    // Elements are assembled into 32-bit words: a module of vec4 units
    // moves whole vec4s only.
    let (elements, element_fns) = if vec4 {
        (String::new(), String::new())
    } else {
        let stores = WGSL.repeat("store", 0..destinations, |&slot| {
            let note = trace.record(SITE_ELEMENT_STORE, 4, slot as u32 + 2, true, "at");
            vec![("slot", slot.to_string()), ("note", note)]
        });
        let note_load = trace.record(SITE_ELEMENT_LOAD, 4, 1, false, "bit / 32u + src_shift");
        (
            WGSL.fill("elements", &[("note_load", &note_load)]),
            WGSL.fill("element_fns", &[("stores", &stores)]),
        )
    };
    let vec4s = (PermuteHeader::WORDS + destinations * PermuteRecord::WORDS) / 4;
    WGSL.fill(
        "module",
        &[
            ("consts", &consts::<PermuteRecord>()),
            ("vec4s", &vec4s),
            ("src_access", &access(writable_source)),
            ("unit", &unit),
            ("bindings", &bindings),
            ("word_calls", &word_calls),
            ("elements", &elements),
            ("element_fns", &element_fns),
            ("trace", &trace.binding(destinations as u32 + 2)),
            ("trace_start", &trace.start("index")),
        ],
    )
}

/// How a concat module binds the tensor it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ConcatUnits {
    /// 32-bit atomics: pieces of elements OR into words others write, after
    /// the `clear` entry point zeroed them.
    Atomic,
    /// Plain 32-bit words, each written whole by one piece.
    Words,
    /// Whole vec4s, each written by one piece.
    Vec4,
}

/// The WGSL module for concat dispatches that read `pieces` pieces
/// (bindings 2 and up; 0 the parameters, 1 the tensor written) in
/// `units`, with the entry point `main` (the pieces into the tensor) and,
/// unless in vec4s, `clear` (the tensor's words zeroed, before pieces of
/// elements are ORed in). Piece `k` is bound writable where bit `k` of
/// `writable` is set (it shares the tensor's buffer). With `trace`'s hooks
/// (its trace variant: binding `pieces + 2`).
pub(crate) fn concat_module(
    pieces: usize,
    units: ConcatUnits,
    writable: u32,
    trace: TraceHooks,
) -> String {
    let (unit, bytes) = if units == ConcatUnits::Vec4 {
        ("vec4<u32>", 16)
    } else {
        ("u32", 4)
    };
    let bindings = WGSL.repeat("concat_binding", 0..pieces, |&slot| {
        let binding = slot as u32 + 2;
        let note = trace.record(
            SITE_WORD_LOAD,
            bytes,
            binding,
            false,
            "read.at + piece_shift",
        );
        vec![
            ("binding", binding.to_string()),
            ("access", access(writable >> slot & 1 == 1).to_string()),
            ("slot", slot.to_string()),
            ("unit", unit.to_string()),
            ("note", note),
        ]
    });
    let word_calls = WGSL.repeat("concat_word_call", 0..pieces, |slot| {
        vec![("slot", slot.to_string())]
    });
    let note_put = trace.record(SITE_WORD_STORE, bytes, 1, true, "i");
    let note_or = trace.record(SITE_ELEMENT_STORE, bytes, 1, true, "i");
    let notes: [(&str, &dyn std::fmt::Display); 2] =
        [("note_put", &note_put), ("note_or", &note_or)];
    let (dst_type, access) = match units {
        ConcatUnits::Atomic => ("array<atomic<u32>>", WGSL.fill("concat_atomic", &notes)),
        ConcatUnits::Words => ("array<u32>", WGSL.fill("concat_plain", &notes)),
        ConcatUnits::Vec4 => ("array<vec4<u32>>", WGSL.fill("concat_vec4", &notes[..1])),
    };
    let (elements, element_fns) = if units == ConcatUnits::Vec4 {
        (String::new(), String::new())
    } else {
        let loads = WGSL.repeat("concat_load", 0..pieces, |&slot| {
            let note = trace.record(SITE_ELEMENT_LOAD, 4, slot as u32 + 2, false, "i");
            vec![("slot", slot.to_string()), ("note", note)]
        });
        (
            WGSL.fill("concat_elements", &[]),
            WGSL.fill(
                "concat_element_fns",
                &[("loads", &loads), ("trace_start", &trace.start("index"))],
            ),
        )
    };
    let vec4s = (PermuteHeader::WORDS + pieces * ConcatRecord::WORDS) / 4;
    WGSL.fill(
        "concat_module",
        &[
            ("consts", &consts::<ConcatRecord>()),
            ("vec4s", &vec4s),
            ("dst_type", &dst_type),
            ("bindings", &bindings),
            ("access", &access),
            ("word_calls", &word_calls),
            ("elements", &elements),
            ("element_fns", &element_fns),
            ("trace", &trace.binding(pieces as u32 + 2)),
            ("trace_start", &trace.start("index")),
        ],
    )
}

/// One destination's record: its first invocation in the dispatch, its
/// words and elements, its mode and element bits, its view (`dims` and
/// `strides` outermost first, at most [`RECORD_RANK`], in units: words, or
/// elements), the view's first unit, and the word shifts between each
/// binding's start and its region's.
///
/// [`RECORD_RANK`]: crate::kernels::permute_records::RECORD_RANK
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    first: u32,
    words: u32,
    elements: u32,
    mode: RecordMode,
    bits: u32,
    view: (&[u32], &[u32], u32),
    src_shift: u32,
    dst_shift: u32,
) -> PermuteRecord {
    let (dims, strides, offset) = view;
    PermuteRecord {
        first,
        words,
        elements,
        mode: mode as u32,
        bits,
        rank: dims.len() as u32,
        offset,
        src_shift,
        dst_shift,
        padding: [0; 3],
        dims: padded(dims),
        strides: padded(strides),
    }
}

/// One piece's record in a concat: its first invocation, words and
/// elements, mode and element bits, the view that reads it (in its
/// units) and the view that writes the output, and the word shifts of its
/// binding and the output's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn concat_record(
    first: u32,
    words: u32,
    elements: u32,
    mode: RecordMode,
    bits: u32,
    read: (&[u32], &[u32], u32),
    write: (&[u32], &[u32], u32),
    piece_shift: u32,
    dst_shift: u32,
) -> ConcatRecord {
    ConcatRecord {
        first,
        words,
        elements,
        mode: mode as u32,
        bits,
        read_rank: read.0.len() as u32,
        read_offset: read.2,
        piece_shift,
        dst_shift,
        write_rank: write.0.len() as u32,
        write_offset: write.2,
        padding: 0,
        read_dims: padded(read.0),
        read_strides: padded(read.1),
        write_dims: padded(write.0),
        write_strides: padded(write.1),
    }
}

#[cfg(test)]
mod tests {
    use super::{ConcatUnits, RecordMode, concat_module, module, record};
    use crate::kernels::permute_records::Words;
    use crate::kernels::wgsl::TraceHooks;
    use naga::valid::{Capabilities, ValidationFlags, Validator};

    #[test]
    fn every_module_validates_and_binds_what_the_encode_binds() {
        // Every piece writable, none, or every other one.
        let mask = |n: usize, k: usize| match k {
            0 => 0,
            1 => u32::MAX >> (32 - n),
            _ => 0x5555_5555 >> (32 - n),
        };
        let modules = (1..=32).flat_map(|n| {
            (0..3).flat_map(move |k| {
                [false, true].into_iter().flat_map(move |on| {
                    let t = TraceHooks { on };
                    [
                        (n, on, module(n, false, k == 1, t)),
                        (n, on, module(n, true, k == 1, t)),
                        (n, on, concat_module(n, ConcatUnits::Words, mask(n, k), t)),
                        (n, on, concat_module(n, ConcatUnits::Atomic, mask(n, k), t)),
                        (n, on, concat_module(n, ConcatUnits::Vec4, mask(n, k), t)),
                    ]
                })
            })
        });
        for (destinations, traced, source) in modules {
            let parsed = naga::front::wgsl::parse_str(&source)
                .unwrap_or_else(|e| panic!("x{destinations}: {}", e.emit_to_string(&source)));
            Validator::new(ValidationFlags::all(), Capabilities::empty())
                .validate(&parsed)
                .unwrap_or_else(|e| panic!("x{destinations}: {e:?}"));
            let mut bindings: Vec<(u32, naga::AddressSpace)> = parsed
                .global_variables
                .iter()
                .filter_map(|(_, v)| v.binding.as_ref().map(|b| (b.binding, v.space)))
                .collect();
            bindings.sort_by_key(|b| b.0);
            // The trace variant binds its trace after the slots.
            let traced = usize::from(traced);
            assert_eq!(bindings.len(), destinations + 2 + traced, "x{destinations}");
            assert_eq!(traced == 1, source.contains("fn record("));
            assert_eq!(bindings[0].1, naga::AddressSpace::Uniform);
            for (k, (binding, space)) in bindings.iter().enumerate() {
                assert_eq!(*binding as usize, k);
                if k >= 1 {
                    assert!(matches!(space, naga::AddressSpace::Storage { .. }));
                }
            }
        }
    }

    #[test]
    fn a_record_holds_its_view_where_the_kernel_reads_it() {
        let r = record(
            7,
            3,
            12,
            RecordMode::Elements,
            16,
            (&[2, 6][..], &[40, 1][..], 5),
            2,
            4,
        );
        let r = r.words();
        assert_eq!(&r[..9], &[7, 3, 12, 1, 16, 2, 5, 2, 4]);
        assert_eq!((&r[12..14], &r[20..22]), (&[2, 6][..], &[40, 1][..]));
    }
}
