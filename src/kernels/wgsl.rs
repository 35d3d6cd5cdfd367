//! The pieces every kernel's WGSL module is built from: the binding numbers
//! (one table for WGSL and for the bind groups), the prelude (constants,
//! the parameter table, the bindings) and the entry point, and the shared
//! body of the table-driven kernels. Filled from `shaders/*.wgsl` templates;
//! [`crate::plan::ShaderKey::source`] assembles a module.

use crate::kernels::lanes::LaneOrder;
use crate::kernels::table::{
    FLAG_ALIGNED, FLAG_PAD, FLAG_SKIP, TableEntry, TableHeader, UNITS_PER_INVOCATION,
    WORKGROUP_SIZE,
};
use crate::kernels::template::Template;
use crate::kernels::work::Direction;
use crate::kernels::work::Placement;

const PRELUDE: Template = Template::new("prelude.wgsl", include_str!("../../shaders/prelude.wgsl"));
const TABLE_DRIVEN: Template = Template::new(
    "table_driven.wgsl",
    include_str!("../../shaders/table_driven.wgsl"),
);
/// Bit helpers over the vec4 source stream (funnel, row streams).
pub(crate) const VEC4_BITS: Template = Template::new(
    "vec4_bits.wgsl",
    include_str!("../../shaders/vec4_bits.wgsl"),
);

/// What a module is compiled for besides its kernel: where the outputs go,
/// its destination slots, whether its dispatches may skip table entries
/// (`FLAG_SKIP`; only where the caller's destinations would alias, so that
/// the common case pays no test), whether the source is bound `read_write`
/// (where a destination shares the input's buffer), and whether bindings
/// may start before the caller's offsets (`shifted`: offsets that are not
/// multiples of the binding alignment; the shifts cost up to 8 % on the
/// row-block kernel on lavapipe, so aligned offsets compile them out), the
/// table's form: a uniform buffer of `uniform_entries` entries, or
/// (`None`) a read-only storage buffer of any length; how a table-driven
/// kernel lays its invocations over units (`lanes`; a generated layout
/// carries its own); and whether it is the access-trace variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Variant {
    pub placement: Placement,
    pub slots: u32,
    pub uniform_entries: Option<u32>,
    pub skips: bool,
    pub writable_source: bool,
    pub shifted: bool,
    pub lanes: LaneOrder,
    pub traced: bool,
    pub direction: Direction,
}

impl Variant {
    /// The test that opens entry `j`'s block when the module skips entries
    /// (`if (writes(j)) `); nothing otherwise.
    pub fn unless_skipped(&self, j: usize) -> String {
        if self.skips {
            format!("if (writes({j}u)) ")
        } else {
            String::new()
        }
    }
}

/// The binding numbers of every kernel module (group 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bindings;

impl Bindings {
    /// The parameter table.
    pub const TABLE: u32 = 0;
    /// The source (the input, read-only).
    pub const SOURCE: u32 = 1;

    /// Destination slot `slot`.
    pub fn destination(slot: u32) -> u32 {
        2 + slot
    }

    /// The access trace of a module with `slots` destination slots (its
    /// trace variant only).
    pub fn trace(slots: u32) -> u32 {
        Self::destination(slots)
    }
}

/// The placeholder of an access's site number in the templates; every
/// module numbers its sites in source order ([`number_sites`]).
const SITE: &str = "__site__";

/// `source` with every access site numbered, in order (`0u`, `1u`, ...).
pub(crate) fn number_sites(source: &str) -> String {
    let mut parts = source.split(SITE);
    let mut out = parts.next().unwrap_or_default().to_string();
    for (site, part) in parts.enumerate() {
        out.push_str(&format!("{site}u"));
        out.push_str(part);
    }
    out
}

/// The WGSL element type and array names of a kernel's unit.
fn unit_names(unit_bits: u64) -> (&'static str, &'static str, &'static str) {
    if unit_bits == 128 {
        ("vec4<u32>", "src_vec4", "dst_vec4")
    } else {
        ("u32", "src_words", "dst_words")
    }
}

/// The prelude of a module for kernel `kernel` moving `unit_bits` units,
/// in `variant`: its constants, table, bindings and accessors.
pub(crate) fn prelude(kernel: &str, unit_bits: u64, variant: &Variant) -> String {
    let (unit, source, _) = unit_names(unit_bits);
    let (source_writable, destinations_writable) = writability(variant);
    let fields = |names: &[&'static str]| {
        PRELUDE.repeat("field", names.iter(), |n| vec![("name", n.to_string())])
    };
    let (entries, table_space) = match variant.uniform_entries {
        Some(n) => (format!("array<Entry, {n}>"), "uniform"),
        None => ("array<Entry>".to_string(), "storage, read"),
    };
    let (destinations, bound_entries) =
        destination_bindings(variant, unit_bits, destinations_writable);
    let (shifts, source_shift) = if variant.shifted {
        (
            "This module's dispatches have such shifts.",
            format!("(arrayLength(&{source}) - table.source_window_units) * UNIT_BITS"),
        )
    } else {
        (
            "This module's bindings start at the caller's offsets: no shift.",
            "0u".to_string(),
        )
    };
    let trace = if variant.traced {
        PRELUDE.fill(
            "trace",
            &[("trace_binding", &Bindings::trace(variant.slots))],
        )
    } else {
        String::new()
    };
    PRELUDE.fill(
        "prelude",
        &[
            ("kernel", &kernel),
            ("placement", &variant.placement.name()),
            ("slots", &variant.slots),
            ("workgroup_size", &WORKGROUP_SIZE),
            ("unit_bits", &unit_bits),
            ("units_per_invocation", &UNITS_PER_INVOCATION),
            ("flag_pad", &FLAG_PAD),
            ("flag_aligned", &FLAG_ALIGNED),
            ("flag_skip", &FLAG_SKIP),
            ("entry_fields", &fields(&TableEntry::FIELDS)),
            ("header_fields", &fields(&TableHeader::FIELDS)),
            ("entries", &entries),
            ("table_binding", &Bindings::TABLE),
            ("table_space", &table_space),
            ("source_binding", &Bindings::SOURCE),
            ("source", &source),
            ("source_access", &access(source_writable)),
            ("unit", &unit),
            ("destinations", &destinations),
            ("bound_entries", &bound_entries),
            ("shifts", &shifts),
            ("source_shift", &source_shift),
            ("trace", &trace),
            (
                "record_src",
                &record_line(variant, unit_bits, Bindings::SOURCE, false, "i"),
            ),
            ("source_word", &source_word(variant, unit_bits)),
            (
                "accessors",
                &accessors(variant, unit_bits, source_writable, destinations_writable),
            ),
        ],
    )
}

/// Which of the source and the destinations `variant` binds writable. A
/// split writes its destinations; a concat reads them, and writes the
/// source. Where the tensor and a piece share a buffer
/// (`writable_source`), both are bound writable (WebGPU forbids one buffer
/// bound read-only and writable in one dispatch).
fn writability(variant: &Variant) -> (bool, bool) {
    match variant.direction {
        Direction::Split => (variant.writable_source, true),
        Direction::Concat => (true, variant.writable_source),
    }
}

/// WGSL's access mode of a binding.
fn access(writable: bool) -> &'static str {
    if writable { "read_write" } else { "read" }
}

/// The destinations' bindings, and the table entry each slot binds.
fn destination_bindings(variant: &Variant, unit_bits: u64, writable: bool) -> (String, String) {
    let (unit, _, destination) = unit_names(unit_bits);
    let destinations = PRELUDE.repeat("destination", 0..variant.slots, |&slot| {
        vec![
            ("binding", Bindings::destination(slot).to_string()),
            ("array", destination.to_string()),
            ("slot", slot.to_string()),
            ("unit", unit.to_string()),
            ("access", access(writable).to_string()),
        ]
    });
    let bound_entries = PRELUDE.repeat("bound_entry", 0..variant.slots, |&slot| {
        let dst_shift = if variant.shifted {
            format!("arrayLength(&{destination}_{slot}) - window_units")
        } else {
            "0u".to_string()
        };
        vec![("slot", slot.to_string()), ("dst_shift", dst_shift)]
    });
    (destinations, bound_entries)
}

/// The load and store accessors of every slot, each slot's move in the
/// variant's direction, and the source's store where it is writable.
fn accessors(
    variant: &Variant,
    unit_bits: u64,
    source_writable: bool,
    destinations_writable: bool,
) -> String {
    let (unit, source, destination) = unit_names(unit_bits);
    let slots = variant.slots;
    let slot_holes = |slot: u32, store: bool| {
        let binding = Bindings::destination(slot);
        vec![
            ("slot", slot.to_string()),
            ("unit", unit.to_string()),
            ("array", destination.to_string()),
            (
                "record",
                record_line(variant, unit_bits, binding, store, "i"),
            ),
        ]
    };
    let mut accessors = PRELUDE.repeat("load_slot", 0..slots, |&slot| slot_holes(slot, false));
    if destinations_writable {
        accessors += &PRELUDE.repeat("store_slot", 0..slots, |&slot| slot_holes(slot, true));
    }
    let move_fragment = match variant.direction {
        Direction::Split => "split_move",
        Direction::Concat => "concat_move",
    };
    accessors += &PRELUDE.repeat(move_fragment, 0..slots, |&slot| {
        vec![("slot", slot.to_string())]
    });
    if source_writable {
        accessors += &PRELUDE.fill(
            "store_source",
            &[
                ("unit", &unit),
                ("source", &source),
                (
                    "record",
                    &record_line(variant, unit_bits, Bindings::SOURCE, true, "i"),
                ),
            ],
        );
    }
    accessors
}

/// A vec4 module's reader of one 32-bit word of its source
/// (`ld_src_word`); nothing for word modules.
fn source_word(variant: &Variant, unit_bits: u64) -> String {
    if unit_bits != 128 {
        return String::new();
    }
    let (_, source, _) = unit_names(unit_bits);
    PRELUDE.fill(
        "source_word",
        &[
            (
                "record",
                &record_line(variant, 32, Bindings::SOURCE, false, "w"),
            ),
            ("source", &source),
        ],
    )
}

/// The line that records an access of `bytes`-wide units through
/// `binding` (unit index `index`) in the trace variant; nothing elsewhere.
fn record_line(
    variant: &Variant,
    unit_bits: u64,
    binding: u32,
    store: bool,
    index: &str,
) -> String {
    if !variant.traced {
        return String::new();
    }
    PRELUDE.fill(
        "record",
        &[
            ("log2_bytes", &(unit_bits / 8).trailing_zeros()),
            ("binding", &binding),
            ("store", &u32::from(store)),
            ("index", &index),
        ],
    )
}

/// The access trace's hooks in a module outside the table-driven prelude
/// (the permuted moves' gather and tiles): its binding, the start of an
/// invocation, and a record per load and store, each a site number of the
/// module's own. Empty text unless the module is its trace variant
/// (`on`), so the modules plans record carry none of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceHooks {
    pub on: bool,
}

impl TraceHooks {
    /// The trace binding (number `binding`) and its `record` function.
    pub fn binding(&self, binding: u32) -> String {
        if !self.on {
            return String::new();
        }
        PRELUDE.fill("trace", &[("trace_binding", &binding)])
    }

    /// An invocation's start: it is invocation `g` (a WGSL expression) of
    /// the dispatch, with nothing recorded yet.
    pub fn start(&self, g: &str) -> String {
        if !self.on {
            return String::new();
        }
        format!("    trace_g = {g};\n    trace_n = 0u;\n")
    }

    /// The statement recording an access at `site` of `bytes`-wide units
    /// through `binding`, unit `index` (a WGSL expression) from the
    /// binding's start, a store or a load.
    pub fn record(&self, site: u32, bytes: u32, binding: u32, store: bool, index: &str) -> String {
        if !self.on {
            return String::new();
        }
        let code = site << 11 | bytes.trailing_zeros() << 8 | binding << 1 | u32::from(store);
        format!("record({code}u, {index}); ")
    }
}

/// The module's entry point `split`: invocation `g` of the dispatch runs
/// `body` when `g < table.invocations` (in the trace variant, after noting
/// which invocation it is).
pub(crate) fn entry_point(variant: &Variant, body: &str) -> String {
    entry_point_of("entry_point", variant, body)
}

/// The module's entry point `split` for a body every invocation of the
/// workgroup runs (it shares workgroup memory behind a barrier).
pub(crate) fn workgroup_entry_point(variant: &Variant, body: &str) -> String {
    entry_point_of("workgroup_entry_point", variant, body)
}

fn entry_point_of(fragment: &str, variant: &Variant, body: &str) -> String {
    let trace_start = if variant.traced {
        PRELUDE.fill("trace_start", &[])
    } else {
        String::new()
    };
    PRELUDE.fill(fragment, &[("trace_start", &trace_start), ("body", &body)])
}

/// The test opening branch `j` of `count` in an if-else chain that finds
/// which of consecutive stretches holds an index, `within` the `j`th's
/// (`w < 12u`): `if (within) `, `else if (within) `, the last `else `, and
/// nothing for a chain of one.
pub(crate) fn chain_test(j: usize, count: usize, within: &str) -> String {
    match (j, j + 1 == count) {
        (0, true) => String::new(),
        (0, false) => format!("if ({within}) "),
        (_, true) => "else ".to_string(),
        (_, false) => format!("else if ({within}) "),
    }
}

/// A WGSL expression of `values[i]` where `index == i` (u32), folded into
/// selects: no branch and no array, so no lane reads private memory.
pub(crate) fn select_by(index: &str, values: &[String]) -> String {
    values
        .iter()
        .enumerate()
        .skip(1)
        .fold(values[0].clone(), |acc, (i, v)| {
            format!("select({acc}, {v}, {index} == {i}u)")
        })
}

/// `let e<j> = ...;` for entries `0..count`, each bound to its slot: a
/// generated kernel reads every entry once, before its first store (on
/// lavapipe a row-copy module ran 3-8 % faster so, `docs/DEVICE.md`).
pub(crate) fn read_entries(variant: &Variant, count: usize) -> String {
    PRELUDE.repeat("read_entry", 0..count, |&j| {
        vec![
            ("j", j.to_string()),
            ("slot", variant.placement.slot_of_entry(j).to_string()),
        ]
    })
}

/// A table-driven kernel's code: `template`'s fragment `slot` once per
/// destination slot (its functions `<family>_<slot>(e, i)`), and the entry
/// point that runs them for the variant.
pub(crate) fn table_driven(family: &str, template: &Template, variant: &Variant) -> String {
    table_driven_of(family, template, &["slot"], variant)
}

/// [`table_driven`] with the per-slot code made of `fragments`.
pub(crate) fn table_driven_of(
    family: &str,
    template: &Template,
    fragments: &[&str],
    variant: &Variant,
) -> String {
    let slots = variant.slots;
    let per_slot: String = fragments
        .iter()
        .map(|f| template.repeat(f, 0..slots, |&slot| vec![("slot", slot.to_string())]))
        .collect();
    let (search, body) = if variant.placement.chunks_share_a_slot() {
        (
            TABLE_DRIVEN.fill("find_entry", &[]),
            TABLE_DRIVEN.fill("arena_body", &[("family", &family)]),
        )
    } else {
        let call = match variant.lanes {
            LaneOrder::Blocked => "slot_call",
            LaneOrder::Striped => "slot_range_call",
        };
        let calls = TABLE_DRIVEN.repeat(call, 0..slots, |&slot| {
            let written = if variant.skips {
                format!(" && writes({slot}u)")
            } else {
                String::new()
            };
            vec![
                ("slot", slot.to_string()),
                ("family", family.to_string()),
                ("written", written),
            ]
        });
        (String::new(), calls)
    };
    per_slot + &search + &entry_point(variant, &body)
}
