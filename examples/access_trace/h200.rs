//! The GPU model of the one GPU that has run this crate, the NVIDIA H200 of
//! docs/gpu/nvidia-h200.json: its calibration's figures (each kernel's
//! probe bandwidth and one dispatch's fixed cost, the report's
//! `cost_models.calibrated`) and the traced work per byte of those probes
//! as 093c280 (the build the H200 ran) planned them
//! (docs/trace/h200-093c280.json, from docs/gpu/trace_h200_plans.sh).
//! Shared by `access_trace` and tests/gpu_model.rs.

use serde_json::Value;
use wgpu_split::plan::Kernel;
use wgpu_split::plan::gpu_model::{GpuModel, KernelProbe, Predicted, WarpWork};

/// A JSON file of the checkout.
pub fn read(path: &str) -> Value {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// What a traced row (an `access_trace --json` row) says of its plan at
/// warp 32: its kernel, its work per byte, its lanes per request, and the
/// bytes its full tensor moves (read + written: twice what a vec4 copy of
/// them moves).
pub struct Traced {
    pub kernel: Kernel,
    pub work: WarpWork,
    pub lanes: f64,
    pub moved_bytes: f64,
}

/// The figures of `row`'s trace at warp 32.
pub fn traced(row: &Value) -> Traced {
    let at32 = row["by_warp"]
        .as_array()
        .and_then(|w| w.iter().find(|c| c["warp"] == 32))
        .expect("warp 32 traced");
    let sum = |field: &str| {
        ["loads", "stores"]
            .iter()
            .map(|k| at32[k][field].as_f64().unwrap())
            .sum::<f64>()
    };
    let name = row["kernel"].as_str().unwrap();
    Traced {
        kernel: Kernel::of_form_name(name).unwrap_or_else(|| panic!("kernel {name}")),
        work: WarpWork {
            requests_per_byte: sum("requests") / sum("bytes"),
            sectors_per_byte: sum("sectors") / sum("bytes"),
        },
        lanes: sum("lanes") / sum("requests"),
        moved_bytes: 2.0 * 16.0 * row["copy_invocations"].as_f64().unwrap(),
    }
}

/// What `model` predicts for a traced row's plan (its kernel, its work at
/// warp 32, its dispatches) and for one vec4 shader copy of the same bytes
/// at that probe's work; `None` for a plan of no dispatch, or of a kernel
/// the model has no probe of.
pub fn against_copy(model: &GpuModel, row: &Value) -> Option<(Predicted, Predicted)> {
    let at32 = row["by_warp"].as_array()?.iter().any(|c| c["warp"] == 32);
    if !at32 {
        return None;
    }
    let t = traced(row);
    let dispatches = row["dispatches"].as_u64()? as usize;
    let vec4 = Kernel::from_name("vec4")?;
    Some((
        model.predict(t.kernel, dispatches, t.moved_bytes, &t.work)?,
        model.at_probe_work(vec4, t.moved_bytes)?,
    ))
}

/// The H200's model: its calibration, and the work of 093c280's probes.
pub fn model() -> GpuModel {
    let report = read("docs/gpu/nvidia-h200.json");
    let trace = read("docs/trace/h200-093c280.json");
    let calibrated = &report["cost_models"]["calibrated"];
    let probes = trace["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let name = r["case"].as_str()?.strip_prefix("probe:")?;
            Some((name, r))
        })
        .map(|(name, row)| {
            let t = traced(row);
            assert_eq!(
                t.kernel.name(),
                name,
                "the probe of {name} planned {:?}",
                t.kernel
            );
            let rate = calibrated["gather_bytes_per_second"][name]
                .as_f64()
                .unwrap();
            KernelProbe {
                kernel: t.kernel,
                moved_bytes: t.moved_bytes,
                seconds: t.moved_bytes / rate,
                work: t.work,
            }
        })
        .collect();
    GpuModel {
        dispatch_seconds: calibrated["dispatch_seconds"].as_f64().unwrap(),
        probes,
    }
}
