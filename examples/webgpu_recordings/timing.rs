//! The browser timing's cases (`tests/browser/timing.mjs`): split_bench's
//! (`examples/split_bench/cases.rs`) at full size, halved along their first
//! dimension until they plan under WebGPU's default limits; each planned
//! with the default strategy into buffers of their own. The page generates
//! the input from a seed (xorshift32, as [`Rng`]) and checks every output
//! by its FNV-1a hash from the host path before it times anything. Also
//! `concat_cases` (split_bench's concat cases, each input generated from a
//! seed of its own; `timing.mjs` reads only `cases`) and, per case, the
//! one-node ONNX model it is (`onnx`: Split or Concat, axis, lengths,
//! shapes; null with why not) for `tests/ortweb`.

use serde_json::json;
use wgpu_split::plan::{ConcatPlan, Placement, PlanLimits, PlanOptions, SplitPlan};
use wgpu_split::{HostTensor, ResolvedConcat, ResolvedSplit};

use super::bench_cases::{Case, concat_suite, suite};
use super::concat_layout::{ConcatLayout, concat_regions};
use super::contents::{Blobs, Rng};
use super::layout::{Layout, regions};
use super::onnx_nodes::{onnx_concat, onnx_split};
use super::{blob_path, write};

/// 32-bit FNV-1a of `bytes` (the page computes the same).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// `case` at the largest size whose `plan` succeeds, halving its first
/// dimension until it does: the shape and what `plan` made of it.
fn halved_until<T>(
    case: &Case,
    mut plan: impl FnMut(&[usize]) -> Result<T, Box<dyn std::error::Error>>,
) -> Result<(Vec<usize>, T), Box<dyn std::error::Error>> {
    let mut shape = case.shape.clone();
    loop {
        match plan(&shape) {
            Ok(planned) => return Ok((shape, planned)),
            Err(e) if shape[0] > 1 => {
                eprintln!("{}: {e}; halving its first dimension", case.name);
                shape[0] /= 2;
            }
            Err(e) => return Err(format!("{}: {e}", case.name).into()),
        }
    }
}

/// `case` at the largest size that plans under `limits`: its shape, split
/// and plan.
fn fit(
    case: &Case,
    limits: &PlanLimits,
) -> Result<(Vec<usize>, ResolvedSplit, SplitPlan), Box<dyn std::error::Error>> {
    let (shape, (split, plan)) = halved_until(case, |shape| {
        let split = case.op.resolve(shape)?;
        let plan = SplitPlan::new(&split, case.element_type, limits, &PlanOptions::default())?;
        Ok((split, plan))
    })?;
    Ok((shape, split, plan))
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
    let expected = input.split(&split)?;
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
        "kernel": if plan.dispatch_count() == 0 { "copies" } else { plan.runs() },
        "moved": moved.max(plan.input_bytes()),
        "buffers": recording.buffers,
        "modules": recording.modules,
        "commands": recording.commands,
        "table": table,
        "input": {"buffer": input_region.buffer, "offset": input_region.offset, "len": len, "seed": seed},
        "outputs": outputs,
        "onnx": onnx_split(&split),
    }))
}

/// A concat case at the largest size that plans under `limits` (halving
/// the first dimension of its split's input, as [`fit`]).
fn fit_concat(
    case: &Case,
    limits: &PlanLimits,
) -> Result<(ResolvedConcat, ConcatPlan), Box<dyn std::error::Error>> {
    let op = case.concat.as_ref().ok_or("not a concat case")?;
    let (_, planned) = halved_until(case, |shape| {
        let concat = op.resolve(&case.op.resolve(shape)?.output_shapes())?;
        let plan = ConcatPlan::new(&concat, case.element_type, limits, &PlanOptions::default())?;
        Ok((concat, plan))
    })?;
    Ok(planned)
}

/// One concat case as the page needs it: as a split case, with one
/// generated input per concat input (at its region, or its arena offset).
fn timing_concat_case(
    index: usize,
    case: &Case,
    blobs: &mut Blobs,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let (concat, plan) = fit_concat(case, &PlanLimits::WEBGPU_DEFAULT)?;
    let regions = concat_regions(&plan, &concat, ConcatLayout::OwnBuffers);
    let recording = plan
        .recording(&regions.inputs, &regions.output)
        .map_err(|e| format!("{}: {e}", case.name))?;
    let t = case.element_type;
    let arena = plan.placement() == Placement::Arena;
    let mut tensors = Vec::new();
    let mut inputs = Vec::new();
    for (k, (shape, offset)) in concat
        .input_shapes()
        .iter()
        .zip(plan.arena_offsets())
        .enumerate()
    {
        let seed = 0x5eed_c000 + (index as u32) * 256 + k as u32;
        let len = t
            .byte_len(shape.iter().product())
            .ok_or("a fixed-width type")?;
        tensors.push(HostTensor::from_raw(t, shape, Rng::new(seed).bytes(len))?);
        let r = regions.inputs[if arena { 0 } else { k }];
        let at = r.offset + if arena { offset.unwrap_or(0) } else { 0 };
        inputs.push(json!({"buffer": r.buffer, "offset": at, "len": len, "seed": seed}));
    }
    let refs: Vec<&HostTensor> = tensors.iter().collect();
    let expected = HostTensor::concat(&refs, &concat)?;
    let bytes = expected.as_bytes()?;
    let o = regions.output;
    let table = [0, blobs.add(&recording.table), recording.table.len() as u64];
    Ok(json!({
        "name": case.name,
        "shape": concat.output_shape(),
        "element_type": t.to_string(),
        "kernel": if plan.dispatch_count() == 0 { "copies" } else { plan.runs() },
        "moved": bytes.len(),
        "buffers": recording.buffers,
        "modules": recording.modules,
        "commands": recording.commands,
        "table": table,
        "inputs": inputs,
        "outputs": [{"buffer": o.buffer, "offset": o.offset, "len": bytes.len(), "fnv": fnv1a(bytes)}],
        "onnx": onnx_concat(&concat),
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
    let concat_cases = concat_suite(quick)
        .iter()
        .enumerate()
        .map(|(i, c)| timing_concat_case(i, c, &mut blobs))
        .collect::<Result<Vec<_>, _>>()?;
    let blob_name = blob_path(path);
    let doc = json!({
        "format": "wgpu-split timing 1",
        "sizes": if quick { "split_bench --quick" } else { "split_bench" },
        "limits": "WebGPU default",
        "blob": std::path::Path::new(&blob_name).file_name().and_then(|n| n.to_str()),
        "cases": cases,
        "concat_cases": concat_cases,
    });
    write(&blob_name, &blobs.into_bytes())?;
    write(path, serde_json::to_string(&doc)?.as_bytes())?;
    println!(
        "{} + {} concat timing cases: {path}",
        cases.len(),
        concat_cases.len()
    );
    Ok(())
}
