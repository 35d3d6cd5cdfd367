//! The contract between the planner and the WGSL gather shader: the
//! parameter table's layout, its flags, the kernels (entry points) and the
//! constants both sides share.
//!
//! Rust is the single source of truth. [`wgsl_prelude`] generates the
//! constants and bindings that [`crate::gpu`] prepends to
//! `shaders/split.wgsl` ([`wgsl_module`]), and
//! `tests/shaders.rs` reflects the compiled WGSL structs and fails when a
//! member's offset or size drifts from [`TableHeader`] / [`TableEntry`].

use bytemuck::{Pod, Zeroable};

use super::placement::Outputs;

/// Invocations per workgroup of the gather shader (the WebGPU minimum of
/// `max_compute_invocations_per_workgroup`, so every adapter runs it).
pub const WORKGROUP_SIZE: u32 = 256;

/// Units (words or vec4s) an invocation moves at most: the table lookup and
/// the one division per invocation are paid once per this many units. (8,
/// 16 and 32 measured within noise of each other on lavapipe; 8 keeps more
/// invocations for wide GPUs.)
pub const UNITS_PER_INVOCATION: u64 = 8;

/// Entry flag: the chunk ends its output, so the last word's unused bits are zero.
pub const FLAG_PAD: u32 = 1;
/// Entry flag: every field is word-aligned, so each word is one source word.
pub const FLAG_ALIGNED: u32 = 2;

/// A compute entry point of the gather shader. Each has its own bind group
/// layout and pipeline; the planner picks one per plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kernel {
    /// One `u32` word per unit, assembled from source bits with shifts when
    /// runs do not fall on word boundaries. Moves anything.
    Words,
    /// One `vec4<u32>` (16 bytes) per unit: every run, offset and block is a
    /// multiple of 128 bits.
    Vec4,
    /// One `vec4<u32>` per unit, assembled from two source vec4s with a
    /// funnel shift, so runs that start mid-word still move 16 bytes per
    /// load and store. For runs of at least 128 bits (a unit crosses at most
    /// one run boundary) and outputs of whole vec4s.
    Funnel,
    /// One block of whole input rows per invocation, read as vec4s, every
    /// output's share of it written as whole vec4s, with the shifts and
    /// masks generated per layout ([`crate::plan::RowBlock`]). For short
    /// runs (a few bytes per row).
    Rows,
    /// One `vec4<u32>` per unit like the funnel, but each invocation streams
    /// a stretch of every output that lies inside one input row, with the
    /// row geometry generated per layout ([`crate::plan::RowStreams`]): no
    /// lane switches runs inside its loop. For long runs at any bit offset.
    Streams,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 5] = [
        Kernel::Words,
        Kernel::Vec4,
        Kernel::Funnel,
        Kernel::Rows,
        Kernel::Streams,
    ];

    /// The kernels of `shaders/split.wgsl`, driven by the table alone (the
    /// row-block and row-stream kernels are generated per layout).
    pub const GENERIC: [Kernel; 3] = [Kernel::Words, Kernel::Vec4, Kernel::Funnel];

    /// Width of one unit in bits.
    pub fn unit_bits(self) -> u64 {
        match self {
            Kernel::Words => 32,
            Kernel::Vec4 | Kernel::Funnel | Kernel::Rows | Kernel::Streams => 128,
        }
    }

    /// The WGSL entry point for outputs placed as `outputs`: an arena
    /// pass finds each invocation's entry by search; a pass of separate
    /// destinations runs every slot's entry in every invocation.
    pub fn entry_point(self, outputs: Outputs) -> &'static str {
        match (self, outputs) {
            (Kernel::Words, Outputs::Arena) => "split_words",
            (Kernel::Vec4, Outputs::Arena) => "split_vec4",
            (Kernel::Funnel, Outputs::Arena) => "split_funnel",
            (Kernel::Words, Outputs::Separate) => "split_words_each",
            (Kernel::Vec4, Outputs::Separate) => "split_vec4_each",
            (Kernel::Funnel, Outputs::Separate) => "split_funnel_each",
            (Kernel::Rows, _) => "split_rows",
            (Kernel::Streams, _) => "split_streams",
        }
    }

    /// The name of the per-slot function family in the shader.
    fn family(self) -> &'static str {
        match self {
            Kernel::Words => "split_words",
            Kernel::Vec4 => "split_vec4",
            Kernel::Funnel => "split_funnel",
            Kernel::Rows => "split_rows",
            Kernel::Streams => "split_streams",
        }
    }

    /// The binding of its source array (group 0; the table is binding 0).
    /// Each kernel reads and writes arrays of its own unit (the funnel reads
    /// vec4s too: two loads give the 128 bits at any offset).
    pub fn src_binding(self) -> u32 {
        match self {
            Kernel::Words => 1,
            Kernel::Vec4 | Kernel::Funnel | Kernel::Rows | Kernel::Streams => 2,
        }
    }

    /// The binding of destination `slot` in a shader with `slots`
    /// destination slots.
    pub fn dst_binding(self, slot: u32, slots: u32) -> u32 {
        match self {
            Kernel::Words => 3 + slot,
            Kernel::Vec4 | Kernel::Funnel | Kernel::Rows | Kernel::Streams => 3 + slots + slot,
        }
    }
}

/// The parameter table header of one pass, as the shader reads it
/// (`struct Table` in `shaders/split.wgsl`, before its entries).
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

/// One chunk of one output in a pass, as the shader reads it (`struct
/// Entry`). Bit positions are relative to the pass's source and destination
/// windows.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct TableEntry {
    /// First invocation index of this entry (entries are sorted by it).
    pub first_invocation: u32,
    /// First destination unit (word or vec4) in the destination window.
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
    /// Position of the chunk's first bit inside its run, in bits.
    pub run_phase_bits: u32,
    /// Source bit of the start of the run holding the chunk's first bit,
    /// relative to the source window, modulo 2^32 (it may lie before the
    /// window; adding the phase brings every address back inside).
    pub src_bit: u32,
    /// [`FLAG_PAD`], [`FLAG_ALIGNED`].
    pub flags: u32,
    /// The pass's destination binding this chunk writes (0 in arena plans).
    pub dst_slot: u32,
    /// Units each invocation moves for this entry: [`UNITS_PER_INVOCATION`]
    /// in arena passes; with separate destinations, fewer for the smaller
    /// outputs, so that every slot needs the same invocations and none runs
    /// idle (lavapipe executes an idle slot's code under a mask).
    pub units_per_invocation: u32,
    /// Padding to 48 bytes (a multiple of 16, so the array stride is the size).
    pub padding: u32,
}

/// Marks the part of `shaders/split.wgsl` instantiated once per slot.
const PER_SLOT_BEGIN: &str = "// ---- per destination slot: begin ----";
const PER_SLOT_END: &str = "// ---- per destination slot: end ----";
/// Replaced by the slot number in each instance.
const SLOT_TOKEN: &str = "SLOT_ID";

/// The WGSL module of the gather shader for outputs placed as `outputs`
/// with `slots` destination slots: the generated prelude ([`wgsl_prelude`])
/// and `source` (the text of `shaders/split.wgsl`) with its per-slot part
/// instantiated once per slot.
///
/// Each instance writes one destination binding directly; the generated
/// dispatchers pick the instance once per invocation. (WGSL cannot index a
/// set of bindings, and a switch at every store cost up to half the
/// bandwidth on lavapipe.)
pub fn wgsl_module(outputs: Outputs, slots: u32, source: &str) -> String {
    let (common, per_slot) = match (source.find(PER_SLOT_BEGIN), source.find(PER_SLOT_END)) {
        (Some(begin), Some(end)) if begin < end => (
            format!(
                "{}{}",
                &source[..begin],
                &source[end + PER_SLOT_END.len()..]
            ),
            &source[begin..end],
        ),
        _ => (source.to_string(), ""),
    };
    let mut module = wgsl_prelude(outputs, slots);
    module += &common;
    for slot in 0..slots {
        module += &per_slot.replace(SLOT_TOKEN, &slot.to_string());
    }
    module
}

/// The WGSL that precedes the shader in a module for `outputs` with `slots`
/// destination slots, generated from the Rust values: the shared constants,
/// the parameter table ([`TableHeader`] and [`TableEntry`]s: a read-only
/// storage buffer of any length for the arena, a uniform buffer of `slots`
/// entries for separate destinations, which frees a storage binding for one
/// more destination), the source and destination bindings, and for each
/// kernel the function that runs every slot's entry and its two entry
/// points (arena and separate destinations).
pub fn wgsl_prelude(outputs: Outputs, slots: u32) -> String {
    let (space, entries) = match outputs {
        Outputs::Arena => ("storage, read", "array<Entry>".to_string()),
        Outputs::Separate => ("uniform", format!("array<Entry, {}>", slots.max(1))),
    };
    let mut w = format!(
        "// Generated by wgpu_split::plan::abi::wgsl_prelude({slots}) from the Rust values.\n\
         const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;\n\
         const UNITS_PER_INVOCATION: u32 = {UNITS_PER_INVOCATION}u;\n\
         const FLAG_PAD: u32 = {FLAG_PAD}u;\n\
         const FLAG_ALIGNED: u32 = {FLAG_ALIGNED}u;\n\
         const DESTINATION_SLOTS: u32 = {slots}u;\n\
         struct Table {{\n    invocations: u32,\n    entry_count: u32,\n    pad0: u32,\n    pad1: u32,\n    entries: {entries},\n}}\n\
         @group(0) @binding(0) var<{space}> table: Table;\n\
         @group(0) @binding({}) var<storage, read> src_words: array<u32>;\n\
         @group(0) @binding({}) var<storage, read> src_vec4: array<vec4<u32>>;\n",
        Kernel::Words.src_binding(),
        Kernel::Vec4.src_binding(),
    );
    for (kernel, array, unit) in [
        (Kernel::Words, "dst_words", "u32"),
        (Kernel::Vec4, "dst_vec4", "vec4<u32>"),
    ] {
        for slot in 0..slots {
            let binding = kernel.dst_binding(slot, slots);
            w += &format!(
                "@group(0) @binding({binding}) var<storage, read_write> {array}_{slot}: array<{unit}>;\n"
            );
        }
    }
    for kernel in Kernel::GENERIC {
        // Every slot's entry, in turn: static code per slot, no switch
        // (lavapipe runs every case of a switch under masks, so its cost
        // grows with the slot count). Slots a pass does not use have no
        // entry and cost one uniform test.
        let family = kernel.family();
        let calls: String = (0..slots)
            .map(|slot| {
                format!(
                    "    if ({slot}u < table.entry_count) {{ {family}_{slot}(table.entries[{slot}u], g); }}\n"
                )
            })
            .collect();
        w += &format!("fn {family}_every_slot(g: u32) {{\n{calls}}}\n");
        // Arena passes: each invocation works on the entry whose invocation
        // range holds it (every entry writes the one arena binding, slot 0).
        w += &wgsl_entry_point(
            kernel.entry_point(Outputs::Arena),
            &format!(
                "    if (g >= table.invocations) {{\n        return;\n    }}\n    \
                 let e = table.entries[find_entry(g)];\n    \
                 {family}_0(e, g - e.first_invocation);\n"
            ),
        );
        // Separate destinations: entry k writes slot k, and every invocation
        // does its share of every entry, so none chooses a destination at run
        // time.
        w += &wgsl_entry_point(
            kernel.entry_point(Outputs::Separate),
            &format!(
                "    if (g < table.invocations) {{\n        {family}_every_slot(g);\n    }}\n"
            ),
        );
    }
    w
}

/// A compute entry point `name` of WORKGROUP_SIZE invocations whose `body`
/// has the invocation's index in the dispatch as `g`.
pub(crate) fn wgsl_entry_point(name: &str, body: &str) -> String {
    format!(
        "@compute @workgroup_size(WORKGROUP_SIZE)\n\
         fn {name}(\n    @builtin(workgroup_id) wid: vec3<u32>,\n    \
         @builtin(num_workgroups) groups: vec3<u32>,\n    \
         @builtin(local_invocation_id) lid: vec3<u32>,\n) {{\n    \
         let g = invocation_index(wid, groups, lid);\n{body}}}\n"
    )
}
