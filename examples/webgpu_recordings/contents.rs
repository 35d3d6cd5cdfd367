//! What every buffer of a recording holds before the operator runs and
//! what it must hold after, as segments of one file of bytes:
//! pseudo-random guard bytes everywhere, the tensors read in their regions,
//! and after the operator the tensors written, from the host path
//! (`HostTensor::split`, `HostTensor::concat`) with their padding zero,
//! every other byte unchanged.

use std::collections::HashMap;

use serde_json::{Value, json};
use wgpu_split::plan::SplitPlan;
use wgpu_split::plan::internals::{PlainRegion, Recording};

/// Bytes written once each, named by offset and length.
#[derive(Default)]
pub struct Blobs {
    bytes: Vec<u8>,
    known: HashMap<Vec<u8>, u64>,
}

/// `[at, blob offset, length]`: `length` bytes of the blob file, at byte
/// `at` of a buffer.
pub type Segment = [u64; 3];

impl Blobs {
    /// Where `bytes` are in the file (written on first use).
    pub fn add(&mut self, bytes: &[u8]) -> u64 {
        if let Some(&at) = self.known.get(bytes) {
            return at;
        }
        let at = self.bytes.len() as u64;
        self.bytes.extend_from_slice(bytes);
        self.known.insert(bytes.to_vec(), at);
        at
    }

    /// The file's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// xorshift32, from a non-zero seed: the words of generated inputs and
/// guards (the timing page reproduces it).
pub struct Rng(u32);

impl Rng {
    pub fn new(seed: u32) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// `len` bytes: the generator's words, little-endian, the last one cut.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len.next_multiple_of(4));
        while out.len() < len {
            out.extend_from_slice(&self.next_u32().to_le_bytes());
        }
        out.truncate(len);
        out
    }
}

/// Guard bytes: one pseudo-random stretch, each buffer taking it from its
/// own start, so that bytes moved to the wrong buffer or offset show.
pub struct Guard {
    at: u64,
    len: u64,
}

/// Bytes of the guard stretch past the largest buffer, the room for each
/// buffer's own start.
const GUARD_SHIFTS: u64 = 4096;

impl Guard {
    /// A guard for buffers of up to `max_buffer` bytes.
    pub fn new(blobs: &mut Blobs, max_buffer: u64) -> Guard {
        let len = max_buffer + GUARD_SHIFTS;
        let bytes = Rng::new(0x9e37_79b9).bytes(len as usize);
        Guard {
            at: blobs.add(&bytes),
            len,
        }
    }

    /// The guard segment of buffer `buffer` of recording `recording`.
    fn segment(&self, recording: usize, buffer: usize, size: u64) -> Segment {
        let shift = (recording as u64 * 61 + buffer as u64 * 1031) % GUARD_SHIFTS;
        assert!(shift + size <= self.len, "a buffer larger than the guard");
        [0, self.at + shift, size]
    }
}

/// One recording's data beside its commands: every region (for messages),
/// and every buffer's segments before and after.
pub struct Contents {
    pub regions: Vec<Value>,
    pub buffers: Vec<Value>,
}

/// Where a recording's tensors lie in the caller's buffers: bytes they hold
/// before the operator runs (and still after: what it reads), bytes it
/// writes, and every region by name for messages.
#[derive(Default)]
pub struct Placed<'a> {
    /// `(buffer, offset, bytes)`: held before and after.
    pub held: Vec<(usize, u64, &'a [u8])>,
    /// `(buffer, offset, bytes, zero bytes after them)`: written.
    pub written: Vec<(usize, u64, &'a [u8], u64)>,
    /// `{what, buffer, offset, size}` per region.
    pub regions: Vec<Value>,
}

impl<'a> Placed<'a> {
    /// Names a region for messages.
    pub fn region(&mut self, what: impl Into<String>, buffer: usize, offset: u64, size: u64) {
        let what = what.into();
        self.regions
            .push(json!({"what": what, "buffer": buffer, "offset": offset, "size": size}));
    }
}

/// The split's data: `input` (the tensor's bytes) in its region,
/// `outputs` (the host path's) written in theirs with their padding zero.
pub fn split_placed<'a>(
    plan: &SplitPlan,
    input: &'a [u8],
    outputs: &[&'a [u8]],
    input_region: &PlainRegion,
    destinations: &[PlainRegion],
) -> Placed<'a> {
    let mut placed = Placed::default();
    for (i, (o, bytes)) in plan.outputs().iter().zip(outputs).enumerate() {
        assert_eq!(bytes.len() as u64, o.len_bytes, "output {i}: host length");
        let d = &destinations[plan.placement().destination_of(i)];
        let start = d.offset + o.arena_offset_bytes;
        placed.region(format!("output {i}"), d.buffer, start, o.region_bytes);
        if o.len_bytes > 0 {
            let pad = o.region_bytes - o.len_bytes;
            placed.written.push((d.buffer, start, bytes, pad));
        }
    }
    for (i, d) in destinations.iter().enumerate() {
        let what = if plan.placement().is_shared() {
            "the arena".to_string()
        } else {
            format!("destination {i}")
        };
        placed.region(what, d.buffer, d.offset, d.size);
    }
    let r = input_region;
    placed.region("the input", r.buffer, r.offset, r.size);
    // A staged plan's scratch arena, the buffer after the caller's (its
    // guard bytes stay where no output lies): each output at its offset.
    if let Some((stage, _)) = plan.staged_plans() {
        let scratch = destinations
            .iter()
            .chain([input_region])
            .map(|d| d.buffer)
            .max()
            .unwrap_or(0)
            + 1;
        for (i, (o, bytes)) in stage.outputs().iter().zip(outputs).enumerate() {
            if o.len_bytes > 0 {
                let pad = o.region_bytes - o.len_bytes;
                placed
                    .written
                    .push((scratch, o.arena_offset_bytes, bytes, pad));
                placed.region(
                    format!("output {i} in the scratch"),
                    scratch,
                    o.arena_offset_bytes,
                    o.region_bytes,
                );
            }
        }
    }
    placed.held.push((r.buffer, r.offset, input));
    placed
}

/// The contents of every buffer of `recording` (`index` in the suite): the
/// caller's (guards, the bytes `placed` holds; after the operator also the
/// bytes it writes, with their zero padding), the table (its bytes,
/// unchanged) and the spare buffer (zero, unchanged).
pub fn contents(
    blobs: &mut Blobs,
    guard: &Guard,
    index: usize,
    recording: &Recording,
    placed: Placed<'_>,
) -> Contents {
    let zeros = blobs.add(&[0; 16]);
    let segments =
        |blobs: &mut Blobs, list: &mut HashMap<usize, Vec<Segment>>, b, at, bytes: &[u8]| {
            list.entry(b)
                .or_default()
                .push([at, blobs.add(bytes), bytes.len() as u64]);
        };
    let mut held: HashMap<usize, Vec<Segment>> = HashMap::new();
    for &(b, at, bytes) in &placed.held {
        if !bytes.is_empty() {
            segments(blobs, &mut held, b, at, bytes);
        }
    }
    // Per caller buffer: the segments the operator writes.
    let mut written: HashMap<usize, Vec<Segment>> = HashMap::new();
    for &(b, at, bytes, pad) in &placed.written {
        segments(blobs, &mut written, b, at, bytes);
        if pad > 0 {
            assert!(
                pad <= 16,
                "{pad} bytes of padding at byte {at} of buffer {b}"
            );
            written
                .entry(b)
                .or_default()
                .push([at + bytes.len() as u64, zeros, pad]);
        }
    }
    let caller = recording.buffers.len() - 2;
    let mut buffers = Vec::with_capacity(recording.buffers.len());
    for (b, recorded) in recording.buffers.iter().enumerate() {
        let (before, after) = if b < caller {
            let mut before = vec![guard.segment(index, b, recorded.size)];
            before.extend(held.remove(&b).unwrap_or_default());
            let mut after = before.clone();
            after.extend(written.remove(&b).unwrap_or_default());
            (before, after)
        } else if b == caller {
            // The table: what an encode uploads, never written.
            let table = [0, blobs.add(&recording.table), recording.table.len() as u64];
            (vec![table], vec![table])
        } else {
            // The spare buffer: zero (WebGPU clears new buffers); no
            // dispatch writes the slots it binds.
            (Vec::new(), Vec::new())
        };
        buffers.push(json!({"before": before, "after": after}));
    }
    assert!(
        written.is_empty() && held.is_empty(),
        "tensors outside the caller's buffers"
    );
    Contents {
        regions: placed.regions,
        buffers,
    }
}
