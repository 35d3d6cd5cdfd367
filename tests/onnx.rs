//! The ONNX edge: the 31 upstream backend node tests (Split,
//! SplitToSequence, Concat), the generated extra tests (every type, opsets
//! 1/2/11, typed storage fields; Concat and ConcatFromSequence), and
//! malformed directories, which must fail with a reason and never panic.

mod common;

use std::path::{Path, PathBuf};

use common::{Rng, data_dirs, random_tensor, run_on_host as run};
use prost::Message;
use wgpu_split::error::{OnnxError, TensorError};
use wgpu_split::onnx::node_test::{Failure, NodeTest, Summary};
use wgpu_split::onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, SequenceProto,
    StringStringEntryProto, TensorProto, ValueInfoProto,
};
use wgpu_split::onnx::{
    SplitModel, read_sequence, read_tensor, tensor_from_proto, tensor_to_proto,
};
use wgpu_split::{ElementType, Error, HostTensor, Operator};

#[test]
fn the_31_upstream_node_tests_pass_on_the_host() {
    let dirs = data_dirs("onnx-node");
    assert_eq!(dirs.len(), 31);
    let (summary, text) = run(&dirs);
    assert_eq!(
        summary,
        Summary {
            passed: 31,
            failed: 0
        },
        "{text}"
    );
    assert!(text.ends_with("31 passed, 0 failed\n"));
}

#[test]
fn the_generated_extra_node_tests_pass_on_the_host() {
    let dirs = data_dirs("onnx-extra");
    assert_eq!(dirs.len(), 79);
    let (summary, text) = run(&dirs);
    assert_eq!(summary.failed, 0, "{text}");
}

#[test]
fn node_tests_check_what_they_claim() {
    // A runner that returns nothing, or the wrong bytes, must fail.
    let dir = &data_dirs("onnx-node")
        .into_iter()
        .find(|d| d.ends_with("test_split_equal_parts_1d_opset13"))
        .unwrap();
    let test = NodeTest::load(dir).unwrap();
    assert!(matches!(
        test.run(|_, _| Ok(vec![])),
        Err(Failure::OutputMismatch { .. })
    ));
    let flipped = test.run(|op: &Operator, data: &HostTensor| {
        let mut outputs = op.split_on_host(data)?;
        let t = &outputs[0];
        let mut bytes = t.as_bytes()?.to_vec();
        bytes[0] ^= 1;
        outputs[0] = HostTensor::from_raw(t.element_type(), t.shape(), bytes)?;
        Ok(outputs)
    });
    assert!(
        matches!(flipped, Err(Failure::OutputMismatch { output: 0, .. })),
        "{flipped:?}"
    );
}

// ---- tensor storage ----------------------------------------------------------

#[test]
fn every_element_type_round_trips_through_tensor_proto() {
    let mut rng = Rng::new(7);
    for t in ElementType::ALL {
        for shape in [vec![3, 5], vec![0], vec![7]] {
            let tensor = random_tensor(&mut rng, t, &shape);
            let bytes = tensor_to_proto("x", &tensor).encode_to_vec();
            assert_eq!(read_tensor(&bytes).unwrap(), tensor, "{t} {shape:?}");
        }
    }
}

fn typed(data_type: ElementType, dims: &[i64]) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: Some(data_type.onnx_code()),
        ..TensorProto::default()
    }
}

#[test]
fn typed_fields_are_read_for_their_types() {
    let mut t = typed(ElementType::Complex64, &[2]);
    t.float_data = vec![1.0, 2.0, 3.0, 4.0];
    assert_eq!(
        tensor_from_proto(&t).unwrap().to_complex64().unwrap(),
        vec![[1.0, 2.0], [3.0, 4.0]]
    );
    let mut t = typed(ElementType::Uint32, &[2]);
    t.uint64_data = vec![7, u32::MAX as u64];
    assert_eq!(
        tensor_from_proto(&t).unwrap().to_vec::<u32>().unwrap(),
        vec![7, u32::MAX]
    );
    let mut t = typed(ElementType::Float16, &[1]);
    t.int32_data = vec![0x3C00];
    assert_eq!(
        tensor_from_proto(&t).unwrap().as_bytes().unwrap(),
        &[0x00, 0x3C]
    );
    let mut t = typed(ElementType::Int4, &[3]);
    t.int32_data = vec![0x21, 0x03];
    assert_eq!(
        tensor_from_proto(&t).unwrap().as_bytes().unwrap(),
        &[0x21, 0x03]
    );
    let mut t = typed(ElementType::Int8, &[2]);
    t.int32_data = vec![-1, 5];
    assert_eq!(
        tensor_from_proto(&t).unwrap().to_vec::<i8>().unwrap(),
        vec![-1, 5]
    );
    let mut t = typed(ElementType::String, &[2]);
    t.string_data = vec![b"ab".to_vec(), vec![0xFF]];
    assert_eq!(
        tensor_from_proto(&t).unwrap().byte_strings().unwrap(),
        &[b"ab".to_vec(), vec![0xFF]]
    );
}

#[test]
fn tensor_data_must_match_its_dims() {
    let mut t = typed(ElementType::Float, &[3]);
    t.float_data = vec![1.0, 2.0];
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Tensor(TensorError::DataLength {
            expected: 3,
            actual: 2,
            ..
        }))
    ));
    let mut t = typed(ElementType::Int4, &[3]);
    t.int32_data = vec![1];
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Tensor(TensorError::DataLength {
            expected: 2,
            actual: 1,
            ..
        }))
    ));
    let mut t = typed(ElementType::Float, &[2]);
    t.raw_data = Some(vec![0; 7]);
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Tensor(TensorError::DataLength {
            expected: 8,
            actual: 7,
            ..
        }))
    ));
    // Dims claiming terabytes are caught before anything is allocated.
    let mut t = typed(ElementType::Double, &[1 << 20, 1 << 20]);
    t.raw_data = Some(vec![0; 16]);
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Tensor(TensorError::DataLength { .. }))
    ));
    let t = typed(ElementType::Double, &[i64::MAX, i64::MAX]);
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Tensor(TensorError::ShapeOverflow { .. }))
    ));
    let t = typed(ElementType::Float, &[-1]);
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Onnx(OnnxError::MalformedTensor { .. }))
    ));
    let mut t = typed(ElementType::Float, &[1]);
    t.external_data = vec![StringStringEntryProto {
        key: Some("location".into()),
        value: Some("w.bin".into()),
    }];
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Onnx(OnnxError::MalformedTensor { .. }))
    ));
    let t = TensorProto {
        data_type: Some(0),
        ..TensorProto::default()
    };
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Tensor(TensorError::UnknownElementType { code: 0 }))
    ));
    let mut t = typed(ElementType::String, &[1]);
    t.raw_data = Some(vec![1]);
    assert!(matches!(
        tensor_from_proto(&t),
        Err(Error::Onnx(OnnxError::MalformedTensor { .. }))
    ));
}

#[test]
fn sequences_are_read_as_lists_of_tensors() {
    let a = HostTensor::from_slice(&[2], &[1i32, 2]).unwrap();
    let seq = SequenceProto {
        name: Some("s".into()),
        elem_type: Some(1),
        tensor_values: vec![tensor_to_proto("a", &a), tensor_to_proto("b", &a)],
    };
    assert_eq!(
        read_sequence(&seq.encode_to_vec()).unwrap(),
        vec![a.clone(), a]
    );
    let maps = SequenceProto {
        elem_type: Some(4),
        ..SequenceProto::default()
    };
    assert!(matches!(
        read_sequence(&maps.encode_to_vec()),
        Err(Error::Onnx(OnnxError::MalformedTensor { .. }))
    ));
    assert!(matches!(
        read_sequence(&[0xFF, 0xFF]),
        Err(Error::Onnx(OnnxError::ProtobufDecode { .. }))
    ));
}

// ---- models ---------------------------------------------------------------------

fn attr_int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(value),
        r#type: Some(2),
        ..AttributeProto::default()
    }
}

fn attr_ints(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        ints: values.to_vec(),
        r#type: Some(7),
        ..AttributeProto::default()
    }
}

fn model(
    op_type: &str,
    opset: i64,
    inputs: &[&str],
    outputs: usize,
    attrs: Vec<AttributeProto>,
) -> ModelProto {
    let node = NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: (0..outputs).map(|i| format!("y{i}")).collect(),
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
            input: inputs
                .iter()
                .map(|n| ValueInfoProto {
                    name: Some(n.to_string()),
                    ..ValueInfoProto::default()
                })
                .collect(),
            output: (0..outputs)
                .map(|i| ValueInfoProto {
                    name: Some(format!("y{i}")),
                    ..ValueInfoProto::default()
                })
                .collect(),
            ..GraphProto::default()
        }),
    }
}

fn bind_and_split(m: &ModelProto, feeds: &[HostTensor]) -> Result<Vec<HostTensor>, Error> {
    let model = SplitModel::from_bytes(&m.encode_to_vec())?;
    let (op, data) = model.bind(feeds)?;
    op.split_on_host(data)
}

#[test]
fn lengths_come_from_an_attribute_a_graph_input_or_an_initializer() {
    let x = HostTensor::from_slice(&[5], &[1u16, 2, 3, 4, 5]).unwrap();
    let from_attr = model("Split", 11, &["x"], 2, vec![attr_ints("split", &[1, 4])]);
    assert_eq!(
        bind_and_split(&from_attr, std::slice::from_ref(&x)).unwrap()[0]
            .to_vec::<u16>()
            .unwrap(),
        vec![1]
    );

    let lengths = HostTensor::from_slice(&[2], &[3i64, 2]).unwrap();
    let from_input = model("Split", 13, &["x", "split"], 2, vec![]);
    let out = bind_and_split(&from_input, &[x.clone(), lengths.clone()]).unwrap();
    assert_eq!(out[1].to_vec::<u16>().unwrap(), vec![4, 5]);

    let mut from_init = model("Split", 13, &["x", "split"], 2, vec![]);
    let graph = from_init.graph.as_mut().unwrap();
    graph.initializer.push(tensor_to_proto("split", &lengths));
    let m = SplitModel::from_bytes(&from_init.encode_to_vec()).unwrap();
    assert_eq!(m.graph_inputs(), &["x".to_string()]);
    let out = bind_and_split(&from_init, &[x]).unwrap();
    assert_eq!(out[0].to_vec::<u16>().unwrap(), vec![1, 2, 3]);
}

#[test]
fn malformed_models_are_typed_errors() {
    let x = HostTensor::from_slice(&[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let feeds = [x];
    let cases: Vec<(&str, ModelProto)> = vec![
        (
            "unsupported operator",
            model("Gather", 13, &["x"], 1, vec![]),
        ),
        (
            "axis given as INTS",
            model("Split", 13, &["x"], 2, vec![attr_ints("axis", &[0])]),
        ),
        (
            "unknown attribute",
            model("Split", 13, &["x"], 2, vec![attr_int("axes", 0)]),
        ),
        (
            "keepdims on Split",
            model("Split", 13, &["x"], 2, vec![attr_int("keepdims", 0)]),
        ),
        (
            "attribute twice",
            model(
                "Split",
                13,
                &["x"],
                2,
                vec![attr_int("axis", 0), attr_int("axis", 0)],
            ),
        ),
        (
            "split input with no value",
            model("Split", 13, &["x", "nowhere"], 2, vec![]),
        ),
        (
            "SplitToSequence at opset 10",
            model("SplitToSequence", 10, &["x"], 1, vec![]),
        ),
        (
            "Split with two many inputs",
            model("Split", 13, &["x", "", "z"], 2, vec![]),
        ),
    ];
    for (what, mut m) in cases {
        if what == "split input with no value" {
            m.graph.as_mut().unwrap().input.truncate(1);
        }
        let result = bind_and_split(&m, &feeds);
        assert!(result.is_err(), "{what}: {result:?}");
    }
    let mut two_nodes = model("Split", 13, &["x"], 2, vec![]);
    let g = two_nodes.graph.as_mut().unwrap();
    g.node.push(g.node[0].clone());
    assert!(matches!(
        SplitModel::from_bytes(&two_nodes.encode_to_vec()),
        Err(Error::Onnx(OnnxError::MalformedModel { .. }))
    ));
    let mut no_opset = model("Split", 13, &["x"], 2, vec![]);
    no_opset.opset_import.clear();
    assert!(matches!(
        SplitModel::from_bytes(&no_opset.encode_to_vec()),
        Err(Error::Onnx(OnnxError::MalformedModel { .. }))
    ));
    let other_domain = {
        let mut m = model("Split", 13, &["x"], 2, vec![]);
        m.graph.as_mut().unwrap().node[0].domain = Some("com.example".into());
        m
    };
    assert!(matches!(
        SplitModel::from_bytes(&other_domain.encode_to_vec()),
        Err(Error::Onnx(OnnxError::UnsupportedOperator { .. }))
    ));
    assert!(matches!(
        SplitModel::from_bytes(&[0x0A, 0xFF]),
        Err(Error::Onnx(OnnxError::ProtobufDecode { .. }))
    ));
}

// ---- malformed directories ----------------------------------------------------------

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn corrupt_directories_are_fail_lines_with_reasons() {
    let work = tempfile::tempdir().unwrap();
    let good = data_dirs("onnx-node")
        .into_iter()
        .find(|d| d.ends_with("test_split_variable_parts_2d_opset13"))
        .unwrap();
    let mut rng = Rng::new(11);
    let mut cases: Vec<(PathBuf, &str)> = Vec::new();
    let mut make = |name: &str, expect: &'static str, corrupt: &dyn Fn(&Path)| {
        let dir = work.path().join(name);
        copy_dir(&good, &dir);
        corrupt(&dir);
        cases.push((dir, expect));
    };
    let model_bytes = std::fs::read(good.join("model.onnx")).unwrap();
    let random: Vec<u8> = rng.bytes(300);
    make("truncated_model", "model", &|d| {
        std::fs::write(d.join("model.onnx"), &model_bytes[..model_bytes.len() / 2]).unwrap()
    });
    make("random_model", "", &|d| {
        std::fs::write(d.join("model.onnx"), &random).unwrap()
    });
    make("missing_model", "cannot read", &|d| {
        std::fs::remove_file(d.join("model.onnx")).unwrap()
    });
    make("missing_input", "input_0.pb", &|d| {
        std::fs::remove_file(d.join("test_data_set_0/input_0.pb")).unwrap()
    });
    make("missing_output", "output_1.pb", &|d| {
        std::fs::remove_file(d.join("test_data_set_0/output_1.pb")).unwrap()
    });
    make("no_data_set", "test_data_set", &|d| {
        std::fs::remove_dir_all(d.join("test_data_set_0")).unwrap()
    });
    make("short_data", "needs", &|d| {
        let mut t =
            TensorProto::decode(&*std::fs::read(d.join("test_data_set_0/input_0.pb")).unwrap())
                .unwrap();
        t.raw_data.as_mut().unwrap().pop();
        std::fs::write(d.join("test_data_set_0/input_0.pb"), t.encode_to_vec()).unwrap();
    });
    make("terabyte_dims", "needs", &|d| {
        let mut t =
            TensorProto::decode(&*std::fs::read(d.join("test_data_set_0/input_0.pb")).unwrap())
                .unwrap();
        t.dims = vec![1 << 20, 1 << 20, 1 << 10];
        std::fs::write(d.join("test_data_set_0/input_0.pb"), t.encode_to_vec()).unwrap();
    });
    make("overflowing_dims", "more elements", &|d| {
        let mut t =
            TensorProto::decode(&*std::fs::read(d.join("test_data_set_0/input_0.pb")).unwrap())
                .unwrap();
        t.dims = vec![i64::MAX, i64::MAX];
        std::fs::write(d.join("test_data_set_0/input_0.pb"), t.encode_to_vec()).unwrap();
    });
    make("unsupported_operator", "unsupported operator", &|d| {
        let mut m = ModelProto::decode(&*std::fs::read(d.join("model.onnx")).unwrap()).unwrap();
        m.graph.as_mut().unwrap().node[0].op_type = Some("Gather".into());
        std::fs::write(d.join("model.onnx"), m.encode_to_vec()).unwrap();
    });
    make("wrong_expected", "differ", &|d| {
        let mut t =
            TensorProto::decode(&*std::fs::read(d.join("test_data_set_0/output_0.pb")).unwrap())
                .unwrap();
        t.raw_data.as_mut().unwrap()[0] ^= 0x80;
        std::fs::write(d.join("test_data_set_0/output_0.pb"), t.encode_to_vec()).unwrap();
    });
    make("garbage_tensor", "cannot decode", &|d| {
        std::fs::write(d.join("test_data_set_0/input_0.pb"), [0x0A, 0xFF, 0x01]).unwrap()
    });
    let dirs: Vec<PathBuf> = cases.iter().map(|(d, _)| d.clone()).collect();
    let (summary, text) = run(&dirs);
    assert_eq!(
        summary,
        Summary {
            passed: 0,
            failed: cases.len()
        },
        "{text}"
    );
    for (dir, expect) in &cases {
        let line = text
            .lines()
            .find(|l| l.contains(&*dir.display().to_string()))
            .unwrap();
        assert!(
            line.starts_with("FAIL ") && line.contains(expect),
            "{line:?} should mention {expect:?}"
        );
    }
}
