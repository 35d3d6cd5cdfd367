//! Rows of measurements, the ratios the targets are stated in, and their
//! reports: JSON, the README's markdown table and `docs/PERFORMANCE.md`'s
//! full one (the console's are in `console.rs`).

use crate::method::Method;
use crate::work::median;

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Row {
    pub case: String,
    pub method: Method,
    pub bytes: u64,
    pub seconds: f64,
    pub gbps: f64,
    /// Host seconds from the encoder's creation to `submit` returning
    /// (GPU methods).
    pub record_seconds: Option<f64>,
    /// Device seconds of each round, in round order (GPU methods timed
    /// round-robin; empty otherwise), which [`ratio`] pairs.
    pub samples: Vec<f64>,
    pub note: String,
}

impl Row {
    pub fn new(
        case: &str,
        method: Method,
        bytes: u64,
        seconds: f64,
        note: impl Into<String>,
    ) -> Row {
        Row {
            case: case.to_string(),
            method,
            bytes,
            seconds,
            gbps: 2.0 * bytes as f64 / seconds / 1e9,
            record_seconds: None,
            samples: Vec::new(),
            note: note.into(),
        }
    }

    /// The same row with the host time its commands took to record.
    pub fn recorded_in(mut self, seconds: f64) -> Row {
        self.record_seconds = Some(seconds);
        self
    }

    /// The same row with the device seconds of each round.
    pub fn sampled(mut self, samples: Vec<f64>) -> Row {
        self.samples = samples;
        self
    }
}

/// The ratios the targets are stated in: (column, numerator, denominator).
const RATIOS: [(&str, Method, Method); 9] = [
    ("plan/best_fixed", Method::Plan, Method::BestFixed),
    (
        "plan_calibrated/best_fixed",
        Method::PlanCalibrated,
        Method::BestFixed,
    ),
    (
        "gpu_discrete/shader_copy",
        Method::GpuDiscrete,
        Method::ShaderCopy,
    ),
    (
        "gpu_integrated/shader_copy",
        Method::GpuIntegrated,
        Method::ShaderCopy,
    ),
    ("gather/shader_copy", Method::Gather, Method::ShaderCopy),
    ("destinations/plan", Method::Destinations, Method::Plan),
    ("plan/copy_limit", Method::Plan, Method::CopyLimit),
    ("plan/shader_copy", Method::Plan, Method::ShaderCopy),
    ("host/host_memcpy", Method::Host, Method::HostMemcpy),
];

/// The ratio columns of the full table (`docs/PERFORMANCE.md`).
const TABLE_RATIOS: [(Method, Method); 8] = [
    (Method::Plan, Method::BestFixed),
    (Method::PlanCalibrated, Method::BestFixed),
    (Method::Plan, Method::CopyLimit),
    (Method::Plan, Method::ShaderCopy),
    (Method::GpuDiscrete, Method::ShaderCopy),
    (Method::GpuIntegrated, Method::ShaderCopy),
    (Method::Gather, Method::ShaderCopy),
    (Method::Host, Method::HostMemcpy),
];

fn find<'r>(rows: &'r [Row], case: &str, method: Method) -> Option<&'r Row> {
    rows.iter().find(|r| r.case == case && r.method == method)
}

/// How many times faster `a` ran than `b` on `case`: the median of the
/// per-round ratios where both were timed in the same rounds (each pair ran
/// milliseconds apart, so lavapipe's swings between one and two worker
/// threads hit both alike), else the ratio of the medians.
pub fn ratio(rows: &[Row], case: &str, a: Method, b: Method) -> Option<f64> {
    let (a, b) = (find(rows, case, a)?, find(rows, case, b)?);
    if a.samples.is_empty() || a.samples.len() != b.samples.len() {
        return Some(b.seconds / a.seconds);
    }
    let per_round = a.samples.iter().zip(&b.samples).map(|(x, y)| y / x);
    Some(median(per_round.collect()))
}

/// The ratio of the medians, reported beside the paired [`ratio`].
fn ratio_of_medians(rows: &[Row], case: &str, a: Method, b: Method) -> Option<f64> {
    Some(find(rows, case, b)?.seconds / find(rows, case, a)?.seconds)
}

/// The cases of `rows`, in order.
pub fn cases_of(rows: &[Row]) -> Vec<&str> {
    let mut cases: Vec<&str> = rows.iter().map(|r| r.case.as_str()).collect();
    cases.dedup();
    cases
}

/// The methods whose ratio to `best_fixed` is also reported counting host
/// time: the planners, which minimise what the runtime waits for.
const WITH_HOST: [Method; 2] = [Method::Plan, Method::PlanCalibrated];

/// What the runtime waits for, host and device: how many times faster
/// `method` ran than the fastest forced strategy, counting each method's
/// host time to record and submit as well as its device time.
fn over_best_fixed_with_host(rows: &[Row], case: &str, method: Method) -> Option<f64> {
    let total = |r: &Row| Some(r.seconds + r.record_seconds?);
    let plan = total(find(rows, case, method)?)?;
    let best = rows
        .iter()
        .filter(|r| r.case == case && Method::FORCED.contains(&r.method))
        .filter_map(total)
        .min_by(f64::total_cmp)?;
    Some(best / plan)
}

/// The summary ratios as JSON, per case.
pub fn summary_json(rows: &[Row]) -> serde_json::Value {
    cases_of(rows)
        .into_iter()
        .map(|case| {
            let mut ratios: serde_json::Map<String, serde_json::Value> = RATIOS
                .iter()
                .map(|(name, a, b)| {
                    (
                        name.to_string(),
                        serde_json::json!(ratio(rows, case, *a, *b)),
                    )
                })
                .collect();
            for m in WITH_HOST {
                ratios.insert(
                    format!("{m}/best_fixed_with_host"),
                    serde_json::json!(over_best_fixed_with_host(rows, case, m)),
                );
            }
            for (name, a, b) in RATIOS {
                ratios.insert(
                    format!("{name}_of_medians"),
                    serde_json::json!(ratio_of_medians(rows, case, a, b)),
                );
            }
            (case.to_string(), serde_json::Value::Object(ratios))
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The rows as JSON results.
pub fn results_json(rows: &[Row]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "case": r.case, "method": r.method.name(), "bytes": r.bytes,
                "seconds": r.seconds, "gbps": r.gbps, "record_seconds": r.record_seconds,
                "samples": r.samples, "note": r.note,
            })
        })
        .collect()
}

/// Rows read back from a JSON report's results (unknown methods skipped).
pub fn rows_from_json(report: &serde_json::Value) -> Result<Vec<Row>, String> {
    let results = report["results"]
        .as_array()
        .ok_or("the JSON has no results array")?;
    Ok(results
        .iter()
        .filter_map(|r| {
            let method = Method::from_name(r["method"].as_str()?)?;
            Some(Row {
                case: r["case"].as_str()?.to_string(),
                method,
                bytes: r["bytes"].as_u64()?,
                seconds: r["seconds"].as_f64()?,
                gbps: r["gbps"].as_f64()?,
                record_seconds: r["record_seconds"].as_f64(),
                samples: r["samples"]
                    .as_array()
                    .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
                    .unwrap_or_default(),
                note: r["note"].as_str().unwrap_or_default().to_string(),
            })
        })
        .collect())
}

/// The README's table, what a runtime engineer reads: what the planner
/// moves and what the device's copy moves, the planner's speed against the
/// device's copy, a plain compute copy and the best forced strategy, and
/// the kernels a discrete GPU's model chooses against a plain compute copy.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| case | plan GB/s | copy_limit GB/s | plan / copy_limit | plan / shader_copy \
         | plan / best_fixed | gpu_discrete / shader_copy |\n",
    );
    out += "|---|---:|---:|---:|---:|---:|---:|\n";
    let two = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.2}"));
    for case in cases_of(rows) {
        let speed = |m| two(find(rows, case, m).map(|r| r.gbps));
        let cells = [
            speed(Method::Plan),
            speed(Method::CopyLimit),
            two(ratio(rows, case, Method::Plan, Method::CopyLimit)),
            two(ratio(rows, case, Method::Plan, Method::ShaderCopy)),
            two(ratio(rows, case, Method::Plan, Method::BestFixed)),
            two(ratio(rows, case, Method::GpuDiscrete, Method::ShaderCopy)),
        ];
        out += &format!("| `{case}` | {} |\n", cells.join(" | "));
    }
    out
}

/// The full table (`docs/PERFORMANCE.md`): GB/s per method, then the
/// ratios, one line per case.
pub fn markdown_full(rows: &[Row]) -> String {
    let mut header: Vec<String> = Method::TABLE.iter().map(|m| m.to_string()).collect();
    header.extend(TABLE_RATIOS.iter().map(|(a, b)| format!("{a} / {b}")));
    header.push("plan_calibrated / best_fixed, with host".to_string());
    let mut out = format!("| case | {} |\n", header.join(" | "));
    out += &format!("|---|{}\n", "---:|".repeat(header.len()));
    for case in cases_of(rows) {
        let mut cells: Vec<String> = Method::TABLE
            .iter()
            .map(|&m| find(rows, case, m).map_or("n/a".to_string(), |r| format!("{:.2}", r.gbps)))
            .collect();
        cells.extend(TABLE_RATIOS.iter().map(|&(a, b)| {
            ratio(rows, case, a, b).map_or("n/a".to_string(), |r| format!("{r:.2}"))
        }));
        cells.push(
            over_best_fixed_with_host(rows, case, Method::PlanCalibrated)
                .map_or("n/a".to_string(), |r| format!("{r:.2}")),
        );
        out += &format!("| `{case}` | {} |\n", cells.join(" | "));
    }
    out
}

/// The cases as data, for a peer that times the same moves another way
/// (`scripts/torch_peer.py`): each split's input shape, axis and pieces
/// (where each output starts on the axis, its length and its shape), each
/// concat's inputs the same way (`stack`: joined on a new axis), and the
/// bytes the GB/s figures count (read + written = 2 x `moved_bytes`).
pub fn cases_json(
    cases: &[crate::cases::Case],
    quick: bool,
) -> wgpu_split::Result<serde_json::Value> {
    let mut out = Vec::new();
    for case in cases {
        let split = case.op.resolve(&case.shape)?;
        let (op, shapes, stack) = match case.concat()? {
            Some(concat) => {
                let stack = concat.input_shapes()[0].len() < concat.output_shape().len();
                ("concat", concat.input_shapes().to_vec(), stack)
            }
            None => ("split", split.output_shapes(), false),
        };
        let t = case.element_type;
        let bytes = |shape: &[usize]| t.byte_len(shape.iter().product()).unwrap_or(0) as u64;
        let pieces: Vec<serde_json::Value> = (split.starts().iter())
            .zip(split.lengths())
            .zip(&shapes)
            .map(|((start, length), shape)| {
                serde_json::json!({"start": start, "length": length, "shape": shape})
            })
            .collect();
        let moved = shapes
            .iter()
            .map(|s| bytes(s))
            .sum::<u64>()
            .max(bytes(&case.shape));
        out.push(serde_json::json!({
            "name": case.name, "op": op, "dtype": t.name(), "bits": t.bit_width(),
            "shape": case.shape, "axis": split.axis(), "pieces": pieces,
            "stack": stack, "moved_bytes": moved,
        }));
    }
    Ok(serde_json::json!({ "quick": quick, "cases": out }))
}
