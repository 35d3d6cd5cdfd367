//! The parameter table: what the planner writes and every kernel reads, as
//! plain `#[repr(C)]` structs. Rust is the single source of truth: the WGSL
//! `Table` and `Entry` structs are generated from [`TableEntry::FIELDS`]
//! ([`crate::kernels::wgsl`]), and `tests/shaders.rs` reflects the compiled
//! WGSL and fails when a member's offset or size drifts from these.

use bytemuck::{Pod, Zeroable};

/// Invocations per workgroup of every kernel (the WebGPU minimum of
/// `max_compute_invocations_per_workgroup`, so every adapter runs it; a
/// multiple of both 32- and 64-wide SIMD groups).
pub const WORKGROUP_SIZE: u32 = 256;

/// Units (words or vec4s) an invocation of a table-driven kernel moves at
/// most: the table lookup and the one division per invocation are paid once
/// per this many units. (8, 16 and 32 measured within noise of each other on
/// lavapipe; 8 keeps more invocations for wide GPUs.)
pub const UNITS_PER_INVOCATION: u64 = 8;

/// Entry flag: the chunk ends its output, so the last word's unused bits are zero.
pub const FLAG_PAD: u32 = 1;
/// Entry flag: every field is word-aligned, so each word is one source word.
pub const FLAG_ALIGNED: u32 = 2;
/// Entry flag: this dispatch does not write the entry (its slot is bound to
/// the spare buffer); another dispatch of the same pass does. Set where two
/// destinations' bindings would overlap in one buffer.
pub const FLAG_SKIP: u32 = 4;

/// The parameter table header of one pass (`struct Table` before its
/// entries).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct TableHeader {
    /// Invocations that do work in this pass.
    pub invocations: u32,
    /// Entries that follow.
    pub entry_count: u32,
    /// Units of the source window the pass reads. The source binding starts
    /// at the caller's offset aligned down, so it holds that shift first:
    /// the shader finds the shift as the binding's length (`arrayLength`)
    /// less this, and the table never depends on the caller's offsets.
    pub source_window_units: u32,
    /// Padding to 16 bytes.
    pub padding: u32,
}

/// One chunk of one output in a pass (`struct Entry`). Bit positions are
/// relative to the pass's source and destination bindings.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct TableEntry {
    /// First invocation index of this entry (entries are sorted by it).
    pub first_invocation: u32,
    /// First destination unit (word or vec4), counted from the start of the
    /// destination window (the caller's offset; the shader adds the shift
    /// between it and the aligned binding, see `window_units`).
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
    /// relative to the source window (the shader adds the binding's shift,
    /// see [`TableHeader::source_window_units`]), modulo 2^32 (it may lie
    /// before the window; adding the phase brings every address back
    /// inside).
    pub src_bit: u32,
    /// [`FLAG_PAD`], [`FLAG_ALIGNED`], [`FLAG_SKIP`].
    pub flags: u32,
    /// The pass's destination slot this chunk writes (0 in arena plans).
    pub dst_slot: u32,
    /// Units each invocation moves for this entry (table-driven kernels:
    /// [`UNITS_PER_INVOCATION`] in arena passes; with separate destinations,
    /// fewer for the smaller outputs, so that every slot needs the same
    /// invocations and none runs idle). 0 for generated kernels, whose
    /// layout says it.
    pub units_per_invocation: u32,
    /// Units of the destination window of the entry's slot. Its binding
    /// starts at the caller's offset aligned down and ends where the window
    /// does, so the shader finds the shift as the binding's length
    /// (`arrayLength`) less this. (It also pads the entry to 48 bytes, a
    /// multiple of 16, so the array stride is the size.)
    pub window_units: u32,
}

impl TableEntry {
    /// The WGSL member names of `struct Entry`, in order: one `u32` each.
    pub const FIELDS: [&'static str; 12] = [
        "first_invocation",
        "dst_unit",
        "first_bit",
        "len_bits",
        "run_bits",
        "block_bits",
        "run_phase_bits",
        "src_bit",
        "flags",
        "dst_slot",
        "units_per_invocation",
        "window_units",
    ];

    /// Size in bytes (the WGSL array stride).
    pub const SIZE: u64 = size_of::<TableEntry>() as u64;
}

impl TableHeader {
    /// The WGSL member names of `struct Table` before `entries`, in order:
    /// one `u32` each.
    pub const FIELDS: [&'static str; 4] = [
        "invocations",
        "entry_count",
        "source_window_units",
        "padding",
    ];

    /// Size in bytes (the offset of the first entry).
    pub const SIZE: u64 = size_of::<TableHeader>() as u64;
}

/// A 64-bit FNV-1a hash over 8-byte words (tables are multiples of 16
/// bytes), fast enough to run on every plan; keys the GPU path's cache of
/// uploaded tables.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let hash = words.by_ref().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        let word = u64::from_le_bytes(w.try_into().unwrap_or_default());
        (h ^ word).wrapping_mul(0x0100_0000_01b3)
    });
    words.remainder().iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
