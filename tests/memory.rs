//! Dropped buffers free their memory: the splitter keeps no reference to a
//! caller's buffer (bind groups are made per encode; the cache holds only
//! the splitter's own tables). Alone in its test binary, so that resident
//! memory is this test's.

mod common;

use common::{encode_fresh, gpu, resident_bytes};
use wgpu_split::plan::Placement;
use wgpu_split::plan::{PlanOptions, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

#[test]
fn dropped_buffers_free_their_memory() {
    let Some(gpu) = gpu("dropped_buffers_free_their_memory") else {
        return;
    };
    // f32 [1024, 1024] (4 MiB) split on the last axis into 4: the gather.
    let split = ResolvedSplit::new(&[1024, 1024], 1, vec![256; 4], true).unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = gpu.plan_with(&split, ElementType::Float, &gather).unwrap();
    let arena_plan = gpu
        .plan_with(
            &split,
            ElementType::Float,
            &PlanOptions::default().placement(Placement::Arena),
        )
        .unwrap();
    for _ in 0..5 {
        encode_fresh(gpu, &plan);
        encode_fresh(gpu, &arena_plan);
    }
    let start = resident_bytes();
    for _ in 0..100 {
        encode_fresh(gpu, &plan);
        encode_fresh(gpu, &arena_plan);
    }
    let grown = resident_bytes().saturating_sub(start);
    println!(
        "200 encodes of fresh 4 MiB inputs and outputs: resident memory grew {} MiB; cached tables {} bytes",
        grown >> 20,
        gpu.cache().usage().table_bytes
    );
    assert!(grown < 64 << 20, "resident memory grew {grown} bytes");
}
