//! The ONNX reader on arbitrary and mutated bytes: a typed error or a value,
#![allow(unsafe_code)] // the counting global allocator
//! never a panic, and no allocation larger than the input justifies
//! (measured with a counting global allocator in this test binary).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::Rng;
use proptest::prelude::*;
use wgpu_split::onnx::{OnnxModel, SplitModel, read_sequence, read_tensor};

/// Tracks the largest single allocation while armed.
struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Every reader on `bytes`; returns the largest allocation it made.
fn read_all(bytes: &[u8]) -> usize {
    LARGEST.store(0, Ordering::Relaxed);
    let _ = read_tensor(bytes);
    let _ = read_sequence(bytes);
    if let Ok(model) = SplitModel::from_bytes(bytes) {
        let _ = model.bind(&[]);
        if let Ok((op, inputs)) = model.bind_concat(&[]) {
            let _ = op.concat_on_host(&inputs);
        }
    }
    if let Ok(model) = OnnxModel::from_bytes(bytes) {
        let dims = std::collections::HashMap::from([("N".to_string(), 3)]);
        for node in model.split_nodes() {
            let _ = node.resolve(&dims);
        }
    }
    LARGEST.load(Ordering::Relaxed)
}

fn seeds() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files = Vec::new();
    for set in ["onnx-node", "onnx-extra"] {
        for dir in std::fs::read_dir(root.join(set)).unwrap() {
            let dir = dir.unwrap().path();
            files.push(std::fs::read(dir.join("model.onnx")).unwrap());
            for f in std::fs::read_dir(dir.join("test_data_set_0")).unwrap() {
                files.push(std::fs::read(f.unwrap().path()).unwrap());
            }
        }
    }
    // The split nodes of real models, with their Constant feeders.
    for dir in std::fs::read_dir(root.join("onnx-models/nodes")).unwrap() {
        let model = dir.unwrap().path().join("model.onnx");
        if model.exists() {
            files.push(std::fs::read(model).unwrap());
        }
    }
    for model in std::fs::read_dir(root.join("onnx-models/whole")).unwrap() {
        files.push(std::fs::read(model.unwrap().path()).unwrap());
    }
    files
}

#[test]
fn ten_thousand_arbitrary_and_mutated_inputs_never_panic_or_over_allocate() {
    let seeds = seeds();
    let mut rng = Rng::new(0xBADC0DE);
    let mut worst_ratio = 0.0f64;
    let cases = 10_000;
    for case in 0..cases {
        let bytes = if case % 4 == 0 {
            // Pure noise of random length.
            let n = rng.below(512);
            rng.bytes(n)
        } else {
            // A real model or tensor with a few bytes flipped, inserted,
            // truncated or overwritten with large varints.
            let mut b = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(4) {
                if b.is_empty() {
                    break;
                }
                let at = rng.below(b.len());
                match rng.below(4) {
                    0 => b[at] ^= 1 << rng.below(8),
                    1 => b.truncate(at),
                    2 => b
                        .splice(at..at, [0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
                        .for_each(drop),
                    _ => b[at] = rng.next_u64() as u8,
                }
            }
            b
        };
        let largest = read_all(&bytes);
        // A decoded value never needs more than a small multiple of its
        // encoding (plus fixed overhead); dims claiming terabytes must fail
        // before allocating.
        let bound = 64 * bytes.len() + (64 << 10);
        assert!(
            largest <= bound,
            "case {case}: allocated {largest} bytes for {} input bytes",
            bytes.len()
        );
        worst_ratio = worst_ratio.max(largest as f64 / (bytes.len().max(1)) as f64);
    }
    println!("onnx fuzz: {cases} inputs, largest allocation {worst_ratio:.1}x the input size");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// Arbitrary bytes: a typed error or a value, within the same allocation bound.
    #[test]
    fn arbitrary_bytes_are_read_safely(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let largest = read_all(&bytes);
        prop_assert!(largest <= 64 * bytes.len() + (64 << 10), "allocated {} for {} bytes", largest, bytes.len());
    }
}
