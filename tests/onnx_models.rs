//! Real models as they ship (extracted from pinned PyPI wheels by
//! `scripts/capture_onnx_models.py`): the reader lists every split node of
//! each (from the committed graph skeletons), and every node, captured with
//! its real input and onnxruntime's outputs, is bit-exact on the host and
//! on the GPU through every kernel and copy strategy that plans it.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use common::{assert_outputs_equal, gpu};
use wgpu_split::error::PlanError;
use wgpu_split::onnx::node_test::{NodeTest, Summary, compare_outputs, run_directories};
use wgpu_split::onnx::{OnnxModel, SplitOperator};
use wgpu_split::plan::{Placement, PlanOptions, Strategy};

fn root() -> PathBuf {
    common::repo_root().join("tests/data/onnx-models")
}

fn manifest() -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(root().join("models.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every captured node-test directory, in name order.
fn captured_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("nodes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.onnx").exists())
        .collect();
    dirs.sort();
    dirs
}

/// Split nodes per model, operator and opset, as the onnx library counts
/// them in the shipped files (`models.json`).
const COUNTS: &[(&str, &str, i64, usize)] = &[
    ("nudenet_320n", "Split", 17, 9),
    ("layout_cdla", "Split", 13, 4),
    ("silero_vad_op18", "Split", 18, 2),
    ("slanet_plus", "Split", 14, 2),
    ("rotary_embedding", "Split", 23, 2),
    ("rotary_embedding_3d", "Split", 23, 2),
];

#[test]
fn the_reader_lists_every_split_node_of_each_real_model() {
    let models = manifest();
    assert_eq!(models.len(), COUNTS.len());
    for (entry, &(name, op_type, opset, count)) in models.iter().zip(COUNTS) {
        assert_eq!(entry["name"], name);
        let path = root().join("skeletons").join(format!("{name}.onnx"));
        let model = OnnxModel::load(&path).unwrap();
        let nodes = model.split_nodes();
        let mut counts = BTreeMap::new();
        for node in nodes {
            *counts
                .entry((node.op_type.clone(), node.opset))
                .or_insert(0) += 1;
        }
        assert_eq!(
            counts,
            BTreeMap::from([((op_type.to_string(), Some(opset)), count)]),
            "{name}"
        );
        let listed = entry["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), listed.len(), "{name}");
        for (node, expected) in nodes.iter().zip(listed) {
            assert_eq!(node.path.to_string(), expected["path"], "{name}");
            assert_eq!(node.op_type, expected["op_type"], "{name}");
            let at_run_time = matches!(node.operator, Ok(SplitOperator::AtRunTime(_)));
            assert_eq!(
                at_run_time,
                expected["lengths"] == "runtime",
                "{}",
                node.path
            );
            // Every other node's operator is read (no node error).
            assert!(node.operator.is_ok(), "{}: {:?}", node.path, node.operator);
        }
    }
}

#[test]
fn what_the_reader_resolves_matches_the_captured_outputs() {
    for entry in manifest() {
        let name = entry["name"].as_str().unwrap();
        let model = OnnxModel::load(&root().join(format!("skeletons/{name}.onnx"))).unwrap();
        for (node, listed) in model
            .split_nodes()
            .iter()
            .zip(entry["nodes"].as_array().unwrap())
        {
            let dir = root().join("nodes").join(listed["dir"].as_str().unwrap());
            let test = NodeTest::load(&dir).unwrap();
            for set in test.data_sets() {
                let data = &set.inputs[0];
                let operator = match &node.operator {
                    Ok(SplitOperator::Static(op)) => op.clone(),
                    Ok(SplitOperator::AtRunTime(r)) => {
                        r.complete(set.inputs[1].to_param().unwrap())
                    }
                    Err(e) => panic!("{}: {e}", node.path),
                };
                let split = operator.resolve(data.shape()).unwrap();
                let shapes: Vec<Vec<usize>> =
                    set.expected.iter().map(|t| t.shape().to_vec()).collect();
                assert_eq!(split.output_shapes(), shapes, "{}", node.path);
                if let Some(t) = node.element_type {
                    assert_eq!(t, data.element_type(), "{}", node.path);
                }
                // Where the model declares the shape, the captured input
                // has it once the symbolic dimensions are named.
                if let Some(declared) = &node.input_shape {
                    let mut dims = HashMap::new();
                    for (d, &size) in declared.iter().zip(data.shape()) {
                        if let wgpu_split::onnx::Dim::Symbolic(s) = d
                            && !s.contains(['(', '+', '/', '*'])
                        {
                            dims.insert(s.clone(), size);
                        }
                    }
                    if name == "nudenet_320n" {
                        dims.insert("height".into(), 320);
                        dims.insert("width".into(), 320);
                    }
                    assert_eq!(
                        node.shape_with(&dims).unwrap(),
                        data.shape(),
                        "{}",
                        node.path
                    );
                }
            }
        }
    }
}

#[test]
fn every_captured_node_passes_on_the_host() {
    let dirs = captured_dirs();
    assert_eq!(dirs.len(), 21);
    let mut out = Vec::new();
    let summary = run_directories(&dirs, wgpu_split::Operator::split_on_host, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        summary,
        Summary {
            passed: 21,
            failed: 0
        },
        "{text}"
    );
    // Nodes inside If branches and Loop bodies hold one data set per run
    // or iteration.
    let sets: usize = dirs
        .iter()
        .map(|d| NodeTest::load(d).unwrap().data_sets().len())
        .sum();
    assert_eq!(sets, 17 + 4 * 3);
}

/// Every plan the test asks for: each kernel forced in each of its forms (dispatches only) and
/// copies only, each into separate regions and into one arena.
fn forced_plans() -> Vec<(String, PlanOptions)> {
    let mut plans = Vec::new();
    for placement in [Placement::Separate, Placement::Arena] {
        let forms = wgpu_split::plan::internals::kernel_forms();
        for (kernel, form) in forms {
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .kernel(kernel)
                .form(form)
                .placement(placement);
            let name = format!("{} {} {placement:?}", kernel.name(), form.name());
            plans.push((name, options));
        }
        let copies = PlanOptions::default()
            .strategy(Strategy::Copy)
            .placement(placement);
        plans.push((format!("copies {placement:?}"), copies));
    }
    plans
}

#[test]
fn every_captured_node_is_bit_exact_on_the_gpu_under_every_plan_that_fits() {
    let Some(gpu) = gpu("every_captured_node_is_bit_exact_on_the_gpu_under_every_plan_that_fits")
    else {
        return;
    };
    // Plan name -> nodes it ran on.
    let mut ran: BTreeMap<String, usize> = BTreeMap::new();
    for dir in captured_dirs() {
        let test = NodeTest::load(&dir).unwrap();
        for set in test.data_sets() {
            let (operator, data) = test.model().bind(&set.inputs).unwrap();
            let context = format!("{} {}", dir.display(), set.name);
            let actual = common::round_trip(gpu).split(&operator, data).unwrap();
            compare_outputs(&set.name, &set.expected, &actual).expect(&context);
            let split = operator.resolve(data.shape()).unwrap();
            for (name, options) in forced_plans() {
                match gpu.plan_with(&split, data.element_type(), &options) {
                    Ok(plan) => {
                        let actual = common::round_trip(gpu).run_plan(&plan, data).unwrap();
                        assert_outputs_equal(&set.expected, &actual, &format!("{context} {name}"));
                        if set.name == "test_data_set_0" {
                            *ran.entry(name).or_insert(0) += 1;
                        }
                    }
                    Err(PlanError::KernelDoesNotFit { .. } | PlanError::NotCopyable { .. }) => {}
                    Err(e) => panic!("{context} {name}: {e}"),
                }
            }
        }
    }
    eprintln!("plans run, by nodes: {ran:?}");
    // Every form of every kernel that moves splits ran on real shapes, in
    // both placements.
    let forms = wgpu_split::plan::internals::kernel_forms()
        .into_iter()
        .filter(|(k, _)| k.moves_splits());
    for (kernel, form) in forms {
        for placement in ["Separate", "Arena"] {
            let name = format!("{} {} {placement}", kernel.name(), form.name());
            assert!(
                ran.get(&name).copied().unwrap_or(0) > 0,
                "{name} ran on no node: {ran:?}"
            );
        }
    }
}
