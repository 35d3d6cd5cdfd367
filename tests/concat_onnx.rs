//! Concat nodes at the ONNX edge: the conformance directories (12 upstream,
//! 46 generated) on the host path, node tests that must fail when a concat
//! is wrong or has no executor, and models the reader must refuse.

mod common;

use std::path::PathBuf;

use common::{data_dirs, run_on_host};
use prost::Message;
use wgpu_split::onnx::SplitModel;
use wgpu_split::onnx::node_test::{Failure, NodeTest, Summary, run_directories};
use wgpu_split::onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use wgpu_split::onnx::tensor_to_proto;
use wgpu_split::{ConcatOperator, Error, HostTensor, OnnxConcat, OnnxConcatFromSequence};

/// The directories of `set` whose names start with one of `prefixes`.
fn concat_dirs(set: &str, prefixes: &[&str]) -> Vec<PathBuf> {
    data_dirs(set)
        .into_iter()
        .filter(|d| {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            prefixes.iter().any(|prefix| name.starts_with(prefix))
        })
        .collect()
}

#[test]
fn the_12_upstream_concat_node_tests_pass_on_the_host() {
    let dirs = concat_dirs("onnx-node", &["test_concat_"]);
    assert_eq!(dirs.len(), 12);
    let (summary, text) = run_on_host(&dirs);
    assert_eq!(
        summary,
        Summary {
            passed: 12,
            failed: 0
        },
        "{text}"
    );
}

#[test]
fn the_46_generated_concat_node_tests_pass_on_the_host() {
    let dirs = concat_dirs("onnx-extra", &["concat", "cfs"]);
    assert_eq!(dirs.len(), 46);
    let (summary, text) = run_on_host(&dirs);
    assert_eq!(
        summary,
        Summary {
            passed: 46,
            failed: 0
        },
        "{text}"
    );
    // Every opset and both ConcatFromSequence modes are among them.
    let test = |name: &str| {
        NodeTest::load(&dirs[dirs.iter().position(|d| d.ends_with(name)).unwrap()]).unwrap()
    };
    for (name, opset) in [
        ("concat1_default_axis_float", 1),
        ("concat4_int64", 4),
        ("concat11_negative_axis_int16_rank4", 11),
        ("concat13_int4", 13),
    ] {
        assert_eq!(test(name).model().opset(), opset);
    }
    let stack = test("cfs11_stack_scalars_double");
    let (op, inputs) = stack
        .model()
        .bind_concat(&stack.data_sets()[0].inputs)
        .unwrap();
    assert_eq!(
        op,
        ConcatOperator::from(OnnxConcatFromSequence::new(11).axis(0).new_axis(1))
    );
    assert_eq!(inputs.len(), 4);
}

#[test]
fn concat_node_tests_check_what_they_claim() {
    let dir = &concat_dirs("onnx-node", &["test_concat_2d_axis_1"])[0];
    let test = NodeTest::load(dir).unwrap();
    assert!(test.model().is_concat());
    // Without a concat executor: a typed failure, not a pass.
    assert_eq!(
        test.run(wgpu_split::Operator::split_on_host),
        Err(Failure::NoConcatExecutor {
            op_type: "Concat".into()
        })
    );
    let mut out = Vec::new();
    let summary = run_directories(
        std::slice::from_ref(dir),
        wgpu_split::Operator::split_on_host,
        &mut out,
    )
    .unwrap();
    assert_eq!(summary.failed, 1);
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains("needs a concat executor")
    );
    // A concat that flips a bit, or concatenates on the wrong axis, fails.
    let flipped = test.run_with(
        wgpu_split::Operator::split_on_host,
        |op: &ConcatOperator, inputs: &[&HostTensor]| {
            let y = op.concat_on_host(inputs)?;
            let mut bytes = y.as_bytes()?.to_vec();
            bytes[3] ^= 0x10;
            Ok(HostTensor::from_raw(y.element_type(), y.shape(), bytes)?)
        },
    );
    assert!(
        matches!(flipped, Err(Failure::OutputMismatch { output: 0, .. })),
        "{flipped:?}"
    );
    let wrong_axis = test.run_with(
        wgpu_split::Operator::split_on_host,
        |_: &ConcatOperator, inputs: &[&HostTensor]| {
            wgpu_split::ConcatOperator::from(OnnxConcat::new(13).axis(0)).concat_on_host(inputs)
        },
    );
    assert!(
        matches!(wrong_axis, Err(Failure::OutputMismatch { .. })),
        "{wrong_axis:?}"
    );
    assert_eq!(
        test.run_with(
            wgpu_split::Operator::split_on_host,
            wgpu_split::ConcatOperator::concat_on_host
        ),
        Ok(1)
    );
}

// ---- models the reader builds or refuses -----------------------------------------

fn attr_int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(value),
        r#type: Some(2),
        ..AttributeProto::default()
    }
}

// The struct update keeps this building when ValueInfoProto grows fields
// (the whole-model reader adds its type).
#[allow(clippy::needless_update)]
fn value_info(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        ..ValueInfoProto::default()
    }
}

/// A one-node model whose graph inputs are `graph_inputs`.
fn model(
    op_type: &str,
    opset: i64,
    inputs: &[&str],
    graph_inputs: &[&str],
    attrs: Vec<AttributeProto>,
) -> ModelProto {
    let node = NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec!["y".into()],
        op_type: Some(op_type.into()),
        attribute: attrs,
        ..NodeProto::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        graph: Some(GraphProto {
            node: vec![node],
            input: graph_inputs.iter().map(|n| value_info(n)).collect(),
            output: vec![value_info("y")],
            ..GraphProto::default()
        }),
    }
}

fn load(m: &ModelProto) -> SplitModel {
    SplitModel::from_bytes(&m.encode_to_vec()).unwrap()
}

#[test]
fn concat_inputs_come_from_graph_inputs_and_initializers() {
    let a = HostTensor::from_slice(&[1, 2], &[1u16, 2]).unwrap();
    let b = HostTensor::from_slice(&[2, 2], &[3u16, 4, 5, 6]).unwrap();
    let mut m = model(
        "Concat",
        13,
        &["a", "b", "a"],
        &["a"],
        vec![attr_int("axis", 0)],
    );
    m.graph
        .as_mut()
        .unwrap()
        .initializer
        .push(tensor_to_proto("b", &b));
    let with_initializer = load(&m);
    assert_eq!(with_initializer.graph_inputs(), &["a".to_string()]);
    let feeds = [a];
    let (op, inputs) = with_initializer.bind_concat(&feeds).unwrap();
    assert_eq!(op, ConcatOperator::from(OnnxConcat::new(13).axis(0)));
    let y = op.concat_on_host(&inputs).unwrap();
    assert_eq!(y.shape(), &[4, 2]);
    assert_eq!(y.to_vec::<u16>().unwrap(), vec![1, 2, 3, 4, 5, 6, 1, 2]);
    // Opset 1 without an axis: the operator carries none, resolution uses 1.
    let opset1 = load(&model("Concat", 1, &["a"], &["a"], vec![]));
    let (op, _) = opset1.bind_concat(&feeds).unwrap();
    assert_eq!(op, ConcatOperator::from(OnnxConcat::new(1)));
}

#[test]
fn malformed_concat_models_are_typed_errors() {
    let x = HostTensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
    let feeds = [x.clone()];
    let cases: Vec<(&str, ModelProto, &str)> = vec![
        (
            "unknown attribute",
            model("Concat", 13, &["x"], &["x"], vec![attr_int("new_axis", 1)]),
            "unknown attribute",
        ),
        (
            "axis as INTS",
            model(
                "Concat",
                13,
                &["x"],
                &["x"],
                vec![AttributeProto {
                    name: Some("axis".into()),
                    ints: vec![0],
                    r#type: Some(7),
                    ..AttributeProto::default()
                }],
            ),
            "kind",
        ),
        (
            "an input with no value",
            model(
                "Concat",
                13,
                &["x", "nowhere"],
                &["x"],
                vec![attr_int("axis", 0)],
            ),
            "no value",
        ),
        (
            "an empty input name",
            model("Concat", 13, &["x", ""], &["x"], vec![attr_int("axis", 0)]),
            "no value",
        ),
        (
            "a sequence that is not the graph input",
            model(
                "ConcatFromSequence",
                11,
                &["s"],
                &["x"],
                vec![attr_int("axis", 0)],
            ),
            "one sequence",
        ),
        (
            "two sequences",
            model(
                "ConcatFromSequence",
                11,
                &["x", "x"],
                &["x"],
                vec![attr_int("axis", 0)],
            ),
            "one sequence",
        ),
        (
            "keepdims on ConcatFromSequence",
            model(
                "ConcatFromSequence",
                11,
                &["x"],
                &["x"],
                vec![attr_int("keepdims", 0)],
            ),
            "unknown attribute",
        ),
    ];
    for (what, m, expect) in cases {
        let e = load(&m).bind_concat(&feeds).unwrap_err();
        assert!(matches!(e, Error::Onnx(_)), "{what}: {e}");
        assert!(e.to_string().contains(expect), "{what}: {e}");
    }
    // Binding a concat as a split, or a split as a concat, is refused.
    let concat = load(&model(
        "Concat",
        13,
        &["x"],
        &["x"],
        vec![attr_int("axis", 0)],
    ));
    assert!(
        concat
            .bind(&feeds)
            .unwrap_err()
            .to_string()
            .contains("bind_concat")
    );
    let split = load(&model("Split", 13, &["x"], &["x"], vec![]));
    assert!(!split.is_concat());
    assert!(
        split
            .bind_concat(&feeds)
            .unwrap_err()
            .to_string()
            .contains("not a concat")
    );
    // A missing axis is the operator's own error when it resolves.
    let no_axis = load(&model("Concat", 13, &["x"], &["x"], vec![]));
    let (op, inputs) = no_axis.bind_concat(&feeds).unwrap();
    let e = op.concat_on_host(&inputs).unwrap_err();
    assert!(e.to_string().contains("axis is required"), "{e}");
}
