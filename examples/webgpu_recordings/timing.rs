//! The browser timing's cases (`tests/browser/timing.mjs`): split_bench's
//! (`examples/split_bench/cases.rs`) at full size, halved along their first
//! dimension until they plan under WebGPU's default limits; each planned
//! with the default strategy into buffers of their own. The page generates
//! the input from a seed (xorshift32, as [`Rng`]) and checks every output
//! by its FNV-1a hash from the host path before it times anything.

use serde_json::json;
use wgpu_split::plan::{PlanLimits, PlanOptions, SplitPlan};
use wgpu_split::{HostTensor, ResolvedSplit, host};

use super::bench_cases::{Case, suite};
use super::contents::{Blobs, Rng};
use super::layout::{Layout, regions};
use super::{blob_path, write};

/// 32-bit FNV-1a of `bytes` (the page computes the same).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// `case` at the largest size that plans under `limits`: its shape, split
/// and plan.
fn fit(
    case: &Case,
    limits: &PlanLimits,
) -> Result<(Vec<usize>, ResolvedSplit, SplitPlan), Box<dyn std::error::Error>> {
    let mut shape = case.shape.clone();
    loop {
        let split = case.op.resolve(&shape)?;
        match SplitPlan::new(&split, case.element_type, limits, &PlanOptions::default()) {
            Ok(plan) => return Ok((shape, split, plan)),
            Err(e) if shape[0] > 1 => {
                eprintln!("{}: {e}; halving its first dimension", case.name);
                shape[0] /= 2;
            }
            Err(e) => return Err(format!("{}: {e}", case.name).into()),
        }
    }
}

/// One case as the page needs it.
fn timing_case(
    index: usize,
    case: &Case,
    blobs: &mut Blobs,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let (shape, split, plan) = fit(case, &PlanLimits::WEBGPU_DEFAULT)?;
    let (input_region, destinations) = regions(&plan, Layout::OwnBuffers);
    let recording = plan
        .recording(&input_region, &destinations)
        .map_err(|e| format!("{}: {e}", case.name))?;
    let seed = 0x5eed_0000 + index as u32;
    let len = plan.input_bytes() as usize;
    let input = HostTensor::from_raw(case.element_type, &shape, Rng::new(seed).bytes(len))?;
    let expected = host::split(&input, &split)?;
    let mut outputs = Vec::new();
    let mut moved = 0;
    for (i, (o, e)) in plan.outputs().iter().zip(&expected).enumerate() {
        let d = &destinations[plan.placement().destination_of(i)];
        let bytes = e.as_bytes()?;
        moved += bytes.len() as u64;
        outputs.push(json!({
            "buffer": d.buffer,
            "offset": d.offset + o.arena_offset_bytes,
            "len": bytes.len(),
            "fnv": fnv1a(bytes),
        }));
    }
    let table = [0, blobs.add(&recording.table), recording.table.len() as u64];
    Ok(json!({
        "name": case.name,
        "shape": shape,
        "element_type": case.element_type.to_string(),
        "kernel": if plan.dispatch_count() == 0 { "copies" } else { plan.kernel().name() },
        "moved": moved.max(plan.input_bytes()),
        "buffers": recording.buffers,
        "modules": recording.modules,
        "commands": recording.commands,
        "table": table,
        "input": {"buffer": input_region.buffer, "offset": input_region.offset, "len": len, "seed": seed},
        "outputs": outputs,
    }))
}

/// Writes the timing's cases (`quick`: split_bench's `--quick` sizes):
/// `path` (JSON) and its bytes (the tables) beside it.
pub fn write_timing(path: &str, quick: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut blobs = Blobs::default();
    let cases = suite(quick)
        .iter()
        .enumerate()
        .map(|(i, c)| timing_case(i, c, &mut blobs))
        .collect::<Result<Vec<_>, _>>()?;
    let blob_name = blob_path(path);
    let doc = json!({
        "format": "wgpu-split timing 1",
        "sizes": if quick { "split_bench --quick" } else { "split_bench" },
        "limits": "WebGPU default",
        "blob": std::path::Path::new(&blob_name).file_name().and_then(|n| n.to_str()),
        "cases": cases,
    });
    write(&blob_name, &blobs.into_bytes())?;
    write(path, serde_json::to_string(&doc)?.as_bytes())?;
    println!("{} timing cases: {path}", cases.len());
    Ok(())
}
