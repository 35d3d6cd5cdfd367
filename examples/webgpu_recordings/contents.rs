//! What every buffer of a recording holds before the split and what it
//! must hold after, as segments of one file of bytes: pseudo-random guard
//! bytes everywhere, the input in its region, and after the split each
//! output's bytes from the host path (`wgpu_split::host::split`) with its
//! padding zero, every other byte unchanged.

use std::collections::HashMap;

use serde_json::{Value, json};
use wgpu_split::plan::SplitPlan;
use wgpu_split::plan::internals::{Recording, Region};

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

/// One recording's data beside its commands: the input, every region (for
/// messages), and every buffer's segments before and after.
pub struct Contents {
    pub input: [u64; 2],
    pub regions: Vec<Value>,
    pub buffers: Vec<Value>,
}

/// A recording's test data: `input` (the tensor's bytes) in its region,
/// `outputs` (the host path's) in theirs.
pub struct Data<'a> {
    pub plan: &'a SplitPlan,
    pub input: &'a [u8],
    pub outputs: Vec<&'a [u8]>,
    pub input_region: &'a Region,
    pub destinations: &'a [Region],
}

/// The contents of every buffer of `recording` (`index` in the suite): the
/// caller's (guards, the input; after the split the outputs and their zero
/// padding), the table (its bytes, unchanged) and the spare buffer (zero,
/// unchanged).
pub fn contents(
    blobs: &mut Blobs,
    guard: &Guard,
    index: usize,
    recording: &Recording,
    data: &Data<'_>,
) -> Contents {
    let plan = data.plan;
    let input_at = blobs.add(data.input);
    let input_segment = [data.input_region.offset, input_at, data.input.len() as u64];
    let zeros = blobs.add(&[0; 16]);
    let mut regions = Vec::new();
    // Per caller buffer: the segments the split writes.
    let mut written: HashMap<usize, Vec<Segment>> = HashMap::new();
    for (i, (o, bytes)) in plan.outputs().iter().zip(&data.outputs).enumerate() {
        assert_eq!(bytes.len() as u64, o.len_bytes, "output {i}: host length");
        let d = &data.destinations[plan.placement().destination_of(i)];
        let start = d.offset + o.arena_offset_bytes;
        regions.push(json!({"what": format!("output {i}"), "buffer": d.buffer, "offset": start, "size": o.region_bytes}));
        if o.len_bytes == 0 {
            continue;
        }
        let segments = written.entry(d.buffer).or_default();
        segments.push([start, blobs.add(bytes), o.len_bytes]);
        let pad = o.region_bytes - o.len_bytes;
        if pad > 0 {
            assert!(pad <= 16, "output {i}: {pad} bytes of padding");
            segments.push([start + o.len_bytes, zeros, pad]);
        }
    }
    for (i, d) in data.destinations.iter().enumerate() {
        let what = if plan.placement().is_shared() {
            "the arena".to_string()
        } else {
            format!("destination {i}")
        };
        regions.push(json!({"what": what, "buffer": d.buffer, "offset": d.offset, "size": d.size}));
    }
    let r = data.input_region;
    regions
        .push(json!({"what": "the input", "buffer": r.buffer, "offset": r.offset, "size": r.size}));
    let caller = recording.buffers.len() - 2;
    let mut buffers = Vec::with_capacity(recording.buffers.len());
    for (b, recorded) in recording.buffers.iter().enumerate() {
        let (before, after) = if b < caller {
            let mut before = vec![guard.segment(index, b, recorded.size)];
            if b == r.buffer {
                before.push(input_segment);
            }
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
        written.is_empty(),
        "outputs written outside the caller's buffers"
    );
    Contents {
        input: [input_at, data.input.len() as u64],
        regions,
        buffers,
    }
}
