//! Expected bytes made elsewhere, checked on the browser's WebGPU: the
//! ONNX node tests (the onnx wheel's backend tests, expected outputs from
//! numpy; the generated tests, from `onnx.reference`; real models' split
//! nodes, captured with onnxruntime), numpy's permuted moves
//! (`tests/data/permuted/cases.json`), and the ONNX reader on the real
//! models' bytes (`OnnxModel::from_bytes`) against the node list the
//! Python capture wrote (`models.json`).

use std::collections::BTreeSet;
use std::path::Path;

use wgpu_split::gpu::{BufferRegion, RoundTrip};
use wgpu_split::onnx::node_test::{NodeTest, compare_outputs};
use wgpu_split::onnx::{OnnxModel, SplitOperator};
use wgpu_split::{ElementType, HostTensor, PermutedSplit, PieceMove, ResolvedSplit};

use super::moves::undoing;
use super::{Files, Report, why};
use crate::device::{Gpu, buffer_with, read};
use crate::ensure;

/// The node-test directories the suite runs, under `tests/data/`.
const NODE_TEST_ROOTS: [&str; 3] = ["onnx-node", "onnx-extra", "onnx-models/nodes"];

/// Runs every check of expected bytes.
pub async fn run(gpu: &Gpu, files: &Files, report: &mut Report) {
    for root in NODE_TEST_ROOTS {
        let dirs: BTreeSet<&str> = files
            .under(root)
            .filter_map(|p| p[root.len() + 1..].split('/').next())
            .collect();
        if dirs.is_empty() {
            report.check(root, Err("the page gave no node tests".to_string()));
        }
        for dir in dirs {
            let path = format!("{root}/{dir}");
            report.check(
                &format!("ONNX node test {path}"),
                node_test(gpu, files, &path).await,
            );
        }
    }
    match numpy_cases(files) {
        Ok(cases) => {
            for case in cases {
                let result = numpy_case(gpu, &case).await;
                report.check(&format!("numpy permuted move {}", case.name), result);
            }
        }
        Err(e) => report.check("numpy permuted moves", Err(e)),
    }
    match models(files) {
        Ok(models) => {
            for model in models {
                let result = read_model(files, &model);
                report.check(
                    &format!("ONNX reader on {}.onnx's bytes", model["name"]),
                    result,
                );
            }
        }
        Err(e) => report.check("ONNX models", Err(e)),
    }
}

/// One node-test directory: every data set on the GPU (strings, which have
/// no GPU layout, on the host path as every runtime would), compared with
/// the expected outputs.
async fn node_test(gpu: &Gpu, files: &Files, dir: &str) -> Result<(), String> {
    let data_sets: BTreeSet<String> = files
        .under(dir)
        .filter_map(|p| p[dir.len() + 1..].split_once('/'))
        .map(|(set, _)| set.to_string())
        .filter(|set| set.starts_with("test_data_set_"))
        .collect();
    let data_sets: Vec<String> = data_sets.into_iter().collect();
    let read = |name: &str| {
        files
            .get(&format!("{dir}/{name}"))
            .map(<[u8]>::to_vec)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotFound, e))
    };
    let test = NodeTest::from_files(Path::new(dir), &data_sets, &read).map_err(why)?;
    let round_trip = RoundTrip::new(&gpu.splitter);
    ensure!(!test.data_sets().is_empty(), "{dir}: no data set");
    for set in test.data_sets() {
        let model = test.model();
        let actual = if model.is_concat() {
            let (op, inputs) = model.bind_concat(&set.inputs).map_err(why)?;
            let strings = inputs
                .iter()
                .any(|t| t.element_type() == ElementType::String);
            vec![if strings {
                op.concat_on_host(&inputs).map_err(why)?
            } else {
                round_trip.concat_async(&op, &inputs).await.map_err(why)?
            }]
        } else {
            let (op, data) = model.bind(&set.inputs).map_err(why)?;
            if data.element_type() == ElementType::String {
                op.split_on_host(data).map_err(why)?
            } else {
                round_trip.split_async(&op, data).await.map_err(why)?
            }
        };
        // An empty sequence has no tensor to compare: its length is.
        compare_outputs(&set.name, &set.expected, &actual).map_err(why)?;
    }
    Ok(())
}

/// One of numpy's permuted moves.
struct NumpyCase {
    name: String,
    input: HostTensor,
    split: PermutedSplit,
    outputs: Vec<Vec<u8>>,
}

fn numpy_cases(files: &Files) -> Result<Vec<NumpyCase>, String> {
    let text = files.get("permuted/cases.json")?;
    let cases: serde_json::Value = serde_json::from_slice(text).map_err(why)?;
    let dims = |v: &serde_json::Value| -> Vec<usize> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|d| d.as_u64())
                    .map(|d| d as usize)
                    .collect()
            })
            .unwrap_or_default()
    };
    let hex = |s: &serde_json::Value| -> Vec<u8> {
        let s = s.as_str().unwrap_or_default().as_bytes();
        s.chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap_or("00"), 16).unwrap_or(0))
            .collect()
    };
    let cases = cases.as_array().ok_or("cases.json holds no array")?;
    cases
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap_or_default().to_string();
            let t = match c["dtype"].as_str().unwrap_or_default() {
                "float16" => ElementType::Float16,
                "float32" => ElementType::Float,
                "float64" => ElementType::Double,
                "uint8" => ElementType::Uint8,
                "int8" => ElementType::Int8,
                "int64" => ElementType::Int64,
                "bool" => ElementType::Bool,
                "complex64" => ElementType::Complex64,
                other => return Err(format!("{name}: dtype {other}")),
            };
            let shape = dims(&c["shape"]);
            let input = HostTensor::from_raw(t, &shape, hex(&c["input_hex"])).map_err(why)?;
            let axis = c["axis"].as_u64().unwrap_or_default() as usize;
            let split = ResolvedSplit::new(&shape, axis, dims(&c["lengths"]), true).map_err(why)?;
            let moves = c["moves"]
                .as_array()
                .ok_or("no moves")?
                .iter()
                .map(|m| PieceMove::new(dims(&m[0]), dims(&m[1])))
                .collect();
            let split = PermutedSplit::new(split, moves).map_err(why)?;
            let outputs = c["outputs_hex"]
                .as_array()
                .ok_or("no outputs")?
                .iter()
                .map(hex)
                .collect();
            Ok(NumpyCase {
                name,
                input,
                split,
                outputs,
            })
        })
        .collect()
}

/// numpy's outputs from the permuted split on the GPU, and the input back
/// from them by the permuted concat that undoes it.
async fn numpy_case(gpu: &Gpu, case: &NumpyCase) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let t = case.input.element_type();
    let plan = splitter.plan(&case.split, t).map_err(why)?;
    let source = buffer_with(
        device,
        case.input.as_bytes().map_err(why)?,
        wgpu::BufferUsages::STORAGE,
    );
    let outputs: Vec<wgpu::Buffer> = (0..case.outputs.len())
        .map(|i| {
            buffer_with(
                device,
                &vec![0; plan.output_region_bytes(i) as usize],
                wgpu::BufferUsages::STORAGE,
            )
        })
        .collect();
    let regions: Vec<BufferRegion> = outputs
        .iter()
        .enumerate()
        .map(|(i, b)| BufferRegion::new(b, 0, plan.output_region_bytes(i)))
        .collect();
    let mut encoder = device.create_command_encoder(&Default::default());
    splitter
        .encode(
            &mut encoder,
            &plan,
            BufferRegion::new(&source, 0, plan.input_bytes()),
            &regions,
        )
        .map_err(why)?;
    queue.submit([encoder.finish()]);
    for (i, (buffer, want)) in outputs.iter().zip(&case.outputs).enumerate() {
        let got = read(device, queue, buffer).await?;
        ensure!(
            &got[..want.len()] == want.as_slice(),
            "output {i} differs from numpy's"
        );
    }
    let concat = undoing(&case.split)?;
    let plan = splitter.plan(&concat, t).map_err(why)?;
    let back = buffer_with(
        device,
        &vec![0; plan.output_region_bytes() as usize],
        wgpu::BufferUsages::STORAGE,
    );
    let inputs: Vec<BufferRegion> = outputs
        .iter()
        .enumerate()
        .map(|(i, b)| BufferRegion::new(b, 0, plan.input_bytes(i)))
        .collect();
    let mut encoder = device.create_command_encoder(&Default::default());
    splitter
        .encode(
            &mut encoder,
            &plan,
            &inputs,
            BufferRegion::new(&back, 0, plan.output_region_bytes()),
        )
        .map_err(why)?;
    queue.submit([encoder.finish()]);
    let got = read(device, queue, &back).await?;
    let want = case.input.as_bytes().map_err(why)?;
    ensure!(
        &got[..want.len()] == want,
        "the concat undoing it differs from numpy's input"
    );
    Ok(())
}

fn models(files: &Files) -> Result<Vec<serde_json::Value>, String> {
    let text = files.get("onnx-models/models.json")?;
    let models: serde_json::Value = serde_json::from_slice(text).map_err(why)?;
    let models = models
        .as_array()
        .ok_or("models.json holds no array")?
        .clone();
    ensure!(!models.is_empty(), "models.json lists no model");
    Ok(models)
}

/// The reader on a real model's bytes lists the nodes the Python capture
/// listed (path, operator type, where the lengths come from), and each
/// resolves to the shapes onnxruntime gave the captured outputs.
fn read_model(files: &Files, entry: &serde_json::Value) -> Result<(), String> {
    let name = entry["name"].as_str().ok_or("a model without a name")?;
    let bytes = files.get(&format!("onnx-models/skeletons/{name}.onnx"))?;
    let model = OnnxModel::from_bytes(bytes).map_err(why)?;
    let listed = entry["nodes"].as_array().ok_or("no nodes listed")?;
    let nodes = model.split_nodes();
    ensure!(
        nodes.len() == listed.len(),
        "{} split nodes read, {} listed",
        nodes.len(),
        listed.len()
    );
    for (node, want) in nodes.iter().zip(listed) {
        ensure!(
            node.path.to_string() == want["path"],
            "{} read where {} is listed",
            node.path,
            want["path"]
        );
        ensure!(
            node.op_type == want["op_type"],
            "{}: operator {}",
            node.path,
            node.op_type
        );
        let operator = node
            .operator
            .as_ref()
            .map_err(|e| format!("{}: {e}", node.path))?;
        let at_run_time = matches!(operator, SplitOperator::AtRunTime(_));
        ensure!(
            at_run_time == (want["lengths"] == "runtime"),
            "{}: where the lengths come from",
            node.path
        );
        let dir = format!(
            "onnx-models/nodes/{}",
            want["dir"].as_str().unwrap_or_default()
        );
        let input =
            wgpu_split::onnx::read_tensor(files.get(&format!("{dir}/test_data_set_0/input_0.pb"))?)
                .map_err(why)?;
        let op = match operator {
            SplitOperator::Static(op) => op.clone(),
            SplitOperator::AtRunTime(r) => {
                let lengths = wgpu_split::onnx::read_tensor(
                    files.get(&format!("{dir}/test_data_set_0/input_1.pb"))?,
                )
                .map_err(why)?;
                r.complete(lengths.to_param().map_err(why)?)
            }
        };
        let split = op.resolve(input.shape()).map_err(why)?;
        for (i, shape) in split.output_shapes().iter().enumerate() {
            let output = wgpu_split::onnx::read_tensor(
                files.get(&format!("{dir}/test_data_set_0/output_{i}.pb"))?,
            )
            .map_err(why)?;
            ensure!(
                output.shape() == shape.as_slice(),
                "{}: output {i} resolves to {shape:?}, onnxruntime gave {:?}",
                node.path,
                output.shape()
            );
        }
    }
    Ok(())
}
