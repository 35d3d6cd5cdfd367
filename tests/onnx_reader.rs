//! The whole-model reader on models built here: where lengths come from
//! (initializers, `Constant` forms, `Identity`, graph and subgraph inputs,
//! computed values), subgraphs and their paths, declared and symbolic
//! shapes, external data, per-node errors that leave the model readable,
//! malformed models; and node tests whose split sits among constant
//! feeders, with several data sets.

use std::collections::HashMap;

use prost::Message;
use wgpu_split::error::OnnxError;
use wgpu_split::onnx::node_test::NodeTest;
use wgpu_split::onnx::proto::{
    AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, TypeProtoTensor,
    ValueInfoProto,
};
use wgpu_split::onnx::{Dim, LengthsSource, OnnxModel, SplitOperator, tensor_to_proto};
use wgpu_split::{Error, HostTensor, ParamTensor};

fn node(
    op_type: &str,
    inputs: &[&str],
    outputs: &[&str],
    attribute: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        op_type: Some(op_type.into()),
        name: outputs.first().map(|o| format!("{op_type}_{o}")),
        attribute,
        ..NodeProto::default()
    }
}

fn attr(name: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        ..AttributeProto::default()
    }
}

fn ints(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        ints: values.to_vec(),
        r#type: Some(7),
        ..attr(name)
    }
}

fn int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        i: Some(value),
        r#type: Some(2),
        ..attr(name)
    }
}

fn tensor_attr(name: &str, t: TensorProto) -> AttributeProto {
    AttributeProto {
        t: Some(t),
        r#type: Some(4),
        ..attr(name)
    }
}

fn graph_attr(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        g: Some(g),
        r#type: Some(5),
        ..attr(name)
    }
}

fn lengths(name: &str, values: &[i64]) -> TensorProto {
    tensor_to_proto(
        name,
        &HostTensor::from_slice(&[values.len()], values).unwrap(),
    )
}

/// A float value of shape `dims` (numbers, or names for symbolic ones).
fn info(name: &str, dims: &[&str]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| match d.parse::<i64>() {
            Ok(v) => Dimension {
                dim_value: Some(v),
                ..Dimension::default()
            },
            Err(_) => Dimension {
                dim_param: Some(d.to_string()),
                ..Dimension::default()
            },
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeProtoTensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto { dim }),
            }),
            ..TypeProto::default()
        }),
    }
}

fn graph(name: &str, nodes: Vec<NodeProto>, inputs: Vec<ValueInfoProto>) -> GraphProto {
    GraphProto {
        name: Some(name.into()),
        node: nodes,
        input: inputs,
        ..GraphProto::default()
    }
}

fn model(g: GraphProto, opset: Option<i64>) -> Vec<u8> {
    ModelProto {
        ir_version: Some(8),
        graph: Some(g),
        opset_import: opset
            .map(|v| OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(v),
            })
            .into_iter()
            .collect(),
    }
    .encode_to_vec()
}

fn static_lengths(op: &Result<SplitOperator, Error>, shape: &[usize]) -> Vec<usize> {
    match op {
        Ok(SplitOperator::Static(op)) => op.resolve(shape).unwrap().lengths().to_vec(),
        other => panic!("not static: {other:?}"),
    }
}

#[test]
fn lengths_come_from_initializers_constants_identity_or_run_time() {
    let x = info("x", &["N", "6"]);
    let value_t = tensor_attr("value", lengths("", &[1, 5]));
    let nodes = vec![
        node("Split", &["x", "init"], &["a0", "a1"], vec![int("axis", 1)]),
        node("Constant", &[], &["c_tensor"], vec![value_t]),
        node(
            "Split",
            &["x", "c_tensor"],
            &["b0", "b1"],
            vec![int("axis", 1)],
        ),
        node(
            "Constant",
            &[],
            &["c_ints"],
            vec![ints("value_ints", &[4, 2])],
        ),
        node(
            "Split",
            &["x", "c_ints"],
            &["c0", "c1"],
            vec![int("axis", 1)],
        ),
        node("Constant", &[], &["c_int"], vec![int("value_int", 3)]),
        node(
            "SplitToSequence",
            &["x", "c_int"],
            &["seq"],
            vec![int("axis", 1)],
        ),
        node("Identity", &["init"], &["alias"], vec![]),
        node(
            "Split",
            &["x", "alias"],
            &["d0", "d1"],
            vec![int("axis", 1)],
        ),
        node("Split", &["x", "fed"], &["e0", "e1"], vec![int("axis", 1)]),
        node("Shape", &["x"], &["computed"], vec![]),
        node(
            "Split",
            &["x", "computed"],
            &["f0", "f1"],
            vec![int("axis", 1)],
        ),
        node(
            "Split",
            &["x"],
            &["g0", "g1", "g2"],
            vec![int("axis", 1), int("num_outputs", 3)],
        ),
    ];
    let mut g = graph("g", nodes, vec![x, info("fed", &["2"])]);
    g.initializer.push(lengths("init", &[2, 4]));
    let m = OnnxModel::from_bytes(&model(g, Some(18))).unwrap();
    assert_eq!(m.node_count(), 13);
    let nodes = m.split_nodes();
    assert_eq!(nodes.len(), 8);
    let shape = [3, 6];
    assert_eq!(static_lengths(&nodes[0].operator, &shape), [2, 4]);
    assert_eq!(static_lengths(&nodes[1].operator, &shape), [1, 5]);
    assert_eq!(static_lengths(&nodes[2].operator, &shape), [4, 2]);
    assert_eq!(static_lengths(&nodes[3].operator, &shape), [3, 3]);
    assert_eq!(static_lengths(&nodes[4].operator, &shape), [2, 4]);
    assert_eq!(static_lengths(&nodes[7].operator, &shape), [2, 2, 2]);
    let Ok(SplitOperator::AtRunTime(fed)) = &nodes[5].operator else {
        panic!("{:?}", nodes[5].operator)
    };
    assert_eq!(
        fed.source(),
        &LengthsSource::GraphInput { name: "fed".into() }
    );
    let completed = fed.complete(ParamTensor::int64_1d(&[5, 1]));
    assert_eq!(completed.resolve(&shape).unwrap().lengths(), &[5, 1]);
    let Ok(SplitOperator::AtRunTime(computed)) = &nodes[6].operator else {
        panic!("{:?}", nodes[6].operator)
    };
    assert_eq!(
        computed.source(),
        &LengthsSource::NodeOutput {
            name: "computed".into(),
            op_type: "Shape".into()
        }
    );
    // Resolving statically says why not.
    let dims = HashMap::from([("N".to_string(), 3)]);
    assert!(matches!(
        nodes[6].resolve(&dims),
        Err(Error::Onnx(OnnxError::LengthsAtRunTime { .. }))
    ));
    // Symbolic shapes: named, then given.
    assert_eq!(
        nodes[0].input_shape,
        Some(vec![Dim::Symbolic("N".into()), Dim::Known(6)])
    );
    assert_eq!(nodes[0].resolve(&dims).unwrap().input_shape(), &[3, 6]);
    assert!(matches!(
        nodes[0].resolve(&HashMap::new()),
        Err(Error::Onnx(OnnxError::ShapeUnknown { .. }))
    ));
}

#[test]
fn splits_inside_if_branches_and_loop_bodies_nested_are_listed_with_paths() {
    // Loop body: a Split of a body input, lengths from the body's own
    // input (bound at run time), and an If whose branches hold splits with
    // lengths from a Constant of the outermost graph.
    let then_branch = graph(
        "then",
        vec![node("Split", &["v", "outer_c"], &["t0", "t1"], vec![])],
        vec![],
    );
    let else_branch = graph(
        "else",
        vec![node(
            "Split",
            &["v"],
            &["e0", "e1"],
            vec![int("num_outputs", 2)],
        )],
        vec![],
    );
    let body = graph(
        "body",
        vec![
            node("Split", &["v", "body_len"], &["s0", "s1"], vec![]),
            node(
                "If",
                &["cond"],
                &["r"],
                vec![
                    graph_attr("then_branch", then_branch),
                    graph_attr("else_branch", else_branch),
                ],
            ),
        ],
        vec![
            info("iter", &[]),
            info("cond", &[]),
            info("body_len", &["2"]),
        ],
    );
    let nodes = vec![
        node(
            "Constant",
            &[],
            &["outer_c"],
            vec![ints("value_ints", &[1, 3])],
        ),
        node(
            "Loop",
            &["", "", "len0"],
            &["out"],
            vec![graph_attr("body", body)],
        ),
    ];
    let m =
        OnnxModel::from_bytes(&model(graph("", nodes, vec![info("v", &["4"])]), Some(18))).unwrap();
    let paths: Vec<String> = m.split_nodes().iter().map(|n| n.path.to_string()).collect();
    assert_eq!(
        paths,
        [
            "main/Loop_out.body/Split_s0",
            "main/Loop_out.body/If_r.then_branch/Split_t0",
            "main/Loop_out.body/If_r.else_branch/Split_e0",
        ]
    );
    let nodes = m.split_nodes();
    assert!(matches!(
        &nodes[0].operator,
        Ok(SplitOperator::AtRunTime(r)) if r.source() == &LengthsSource::SubgraphInput { name: "body_len".into() }
    ));
    assert_eq!(static_lengths(&nodes[1].operator, &[4]), [1, 3]);
    // Outer shapes are seen from inside.
    assert_eq!(nodes[2].input_shape, Some(vec![Dim::Known(4)]));
    assert_eq!(
        nodes[2].resolve(&HashMap::new()).unwrap().lengths(),
        &[2, 2]
    );
}

#[test]
fn a_node_that_cannot_be_read_is_its_own_error_never_the_models() {
    let nodes = vec![
        node("Split", &["x", "nowhere"], &["a0", "a1"], vec![]),
        node("Split", &["x"], &["b0", "b1"], vec![ints("axis", &[0])]),
        node("Split", &["x"], &["c0", "c1"], vec![int("axes", 0)]),
        node("Split", &["x", "", "z"], &["d0"], vec![]),
        node("Constant", &[], &["text"], vec![attr("value_string")]),
        node("Split", &["x", "text"], &["e0", "e1"], vec![]),
        node("Split", &[], &["f0"], vec![]),
        node("Split", &["x"], &["ok0", "ok1"], vec![]),
    ];
    let mut other_domain = node("Split", &["x"], &["h0"], vec![]);
    other_domain.domain = Some("com.example".into());
    let mut all = nodes;
    all.push(other_domain);
    let g = graph("g", all, vec![info("x", &["4"])]);
    let m = OnnxModel::from_bytes(&model(g.clone(), Some(13))).unwrap();
    let nodes = m.split_nodes();
    assert_eq!(nodes.len(), 7, "the com.example Split is not listed");
    assert!(
        matches!(&nodes[0].operator, Err(Error::Onnx(OnnxError::UndefinedValue { name })) if name == "nowhere")
    );
    for n in &nodes[1..6] {
        assert!(
            matches!(
                &n.operator,
                Err(Error::Onnx(OnnxError::MalformedModel { .. }))
            ),
            "{}: {:?}",
            n.path,
            n.operator
        );
    }
    assert_eq!(static_lengths(&nodes[6].operator, &[4]), [2, 2]);
    // No default-domain opset: every node says so; the model still reads.
    let m = OnnxModel::from_bytes(&model(g, None)).unwrap();
    assert!(
        m.split_nodes()
            .iter()
            .all(|n| n.opset.is_none() && n.operator.is_err())
    );
}

#[test]
fn identity_cycles_initializer_inputs_and_float_constants() {
    let nodes = vec![
        node("Identity", &["loop_b"], &["loop_a"], vec![]),
        node("Identity", &["loop_a"], &["loop_b"], vec![]),
        node("Split", &["x", "loop_a"], &["a0", "a1"], vec![]),
        node("Split", &["x", "both"], &["b0", "b1"], vec![]),
        node(
            "Constant",
            &[],
            &["floats"],
            vec![AttributeProto {
                floats: vec![3.0, 1.0],
                r#type: Some(6),
                ..attr("value_floats")
            }],
        ),
        node("Split", &["x", "floats"], &["c0", "c1"], vec![]),
    ];
    // "both" is a graph input with an initializer: the initializer counts.
    let mut g = graph("g", nodes, vec![info("x", &["4"]), info("both", &["2"])]);
    g.initializer.push(lengths("both", &[1, 3]));
    // Split-1 takes lengths of the data's float type.
    let m = OnnxModel::from_bytes(&model(g, Some(1))).unwrap();
    let nodes = m.split_nodes();
    assert!(matches!(
        &nodes[0].operator,
        Err(Error::Onnx(OnnxError::MalformedModel { .. }))
    ));
    assert!(matches!(&nodes[1].operator, Ok(SplitOperator::Static(_))));
    assert_eq!(static_lengths(&nodes[2].operator, &[4]), [3, 1]);
}

#[test]
fn malformed_models_are_typed_errors() {
    assert!(matches!(
        OnnxModel::from_bytes(&[0x0A, 0xFF]),
        Err(Error::Onnx(OnnxError::ProtobufDecode { .. }))
    ));
    let no_graph = ModelProto::default().encode_to_vec();
    assert!(matches!(
        OnnxModel::from_bytes(&no_graph),
        Err(Error::Onnx(OnnxError::MalformedModel { .. }))
    ));
    // Subgraphs nested 40 deep: refused by the walk or the decoder, typed.
    let mut g = graph("g", vec![node("Split", &["x"], &["y"], vec![])], vec![]);
    for _ in 0..40 {
        g = graph(
            "g",
            vec![node(
                "If",
                &["c"],
                &["y"],
                vec![graph_attr("then_branch", g)],
            )],
            vec![],
        );
    }
    let result = OnnxModel::from_bytes(&model(g, Some(13)));
    assert!(
        matches!(
            result,
            Err(Error::Onnx(
                OnnxError::MalformedModel { .. } | OnnxError::ProtobufDecode { .. }
            ))
        ),
        "{result:?}"
    );
    let missing = std::path::Path::new("/nonexistent/model.onnx");
    assert!(matches!(
        OnnxModel::load(missing),
        Err(Error::Onnx(OnnxError::Io { .. }))
    ));
}

fn external(name: &str, location: &str, offset: u64, len: Option<u64>) -> TensorProto {
    let mut entries = vec![
        ("location", location.to_string()),
        ("offset", offset.to_string()),
    ];
    if let Some(len) = len {
        entries.push(("length", len.to_string()));
    }
    TensorProto {
        dims: vec![2],
        data_type: Some(7),
        name: Some(name.into()),
        data_location: Some(1),
        external_data: entries
            .into_iter()
            .map(|(k, v)| StringStringEntryProto {
                key: Some(k.into()),
                value: Some(v),
            })
            .collect(),
        ..TensorProto::default()
    }
}

#[test]
fn external_data_is_read_relative_to_the_model_or_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = vec![0xAAu8; 8];
    bytes.extend([1i64, 3].iter().flat_map(|v| v.to_le_bytes()));
    std::fs::create_dir(dir.path().join("w")).unwrap();
    std::fs::write(dir.path().join("w/lengths.bin"), &bytes).unwrap();
    let cases = [
        external("good", "w/lengths.bin", 8, Some(16)),
        external("missing", "w/absent.bin", 0, None),
        external("escapes", "../lengths.bin", 0, None),
        external("absolute", "/etc/passwd", 0, None),
        external("short", "w/lengths.bin", 16, None),
        external("wrong_length", "w/lengths.bin", 8, Some(8)),
    ];
    let mut g = graph("g", vec![], vec![info("x", &["4"])]);
    for t in cases {
        let name = t.name.clone().unwrap();
        g.node.push(node(
            "Split",
            &["x", &name],
            &[&format!("{name}0"), &format!("{name}1")],
            vec![],
        ));
        g.initializer.push(t);
    }
    let path = dir.path().join("model.onnx");
    std::fs::write(&path, model(g, Some(13))).unwrap();
    let m = OnnxModel::load(&path).unwrap();
    let nodes = m.split_nodes();
    assert_eq!(static_lengths(&nodes[0].operator, &[4]), [1, 3]);
    for n in &nodes[1..] {
        assert!(
            matches!(
                &n.operator,
                Err(Error::Onnx(OnnxError::ExternalData { .. }))
            ),
            "{}: {:?}",
            n.path,
            n.operator
        );
    }
    // From bytes there is no directory: a typed error for that node.
    let m = OnnxModel::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    assert!(matches!(
        &m.split_nodes()[0].operator,
        Err(Error::Onnx(OnnxError::ExternalData { .. }))
    ));
}

#[test]
fn node_tests_take_constant_feeders_and_several_data_sets() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = vec![
        node("Identity", &["init"], &["alias"], vec![]),
        node("Constant", &[], &["unused"], vec![ints("value_ints", &[9])]),
        node("Split", &["x", "alias"], &["y0", "y1"], vec![]),
    ];
    let mut g = graph("g", nodes, vec![info("x", &["5"])]);
    g.initializer.push(lengths("init", &[2, 3]));
    g.output = vec![info("y0", &["2"]), info("y1", &["3"])];
    std::fs::write(dir.path().join("model.onnx"), model(g.clone(), Some(13))).unwrap();
    for (k, base) in [0.0f32, 10.0].into_iter().enumerate() {
        let set = dir.path().join(format!("test_data_set_{k}"));
        std::fs::create_dir(&set).unwrap();
        let x: Vec<f32> = (0..5).map(|i| base + i as f32).collect();
        let write = |file: &str, shape: &[usize], v: &[f32]| {
            let t = tensor_to_proto(file, &HostTensor::from_slice(shape, v).unwrap());
            std::fs::write(set.join(file), t.encode_to_vec()).unwrap();
        };
        write("input_0.pb", &[5], &x);
        write("output_0.pb", &[2], &x[..2]);
        write("output_1.pb", &[3], &x[2..]);
    }
    let test = NodeTest::load(dir.path()).unwrap();
    assert_eq!(test.data_sets().len(), 2);
    assert_eq!(test.run(wgpu_split::Operator::split_on_host).unwrap(), 4);
    // A node that computes something is not a constant feeder.
    g.node.insert(0, node("Relu", &["x"], &["r"], vec![]));
    std::fs::write(dir.path().join("model.onnx"), model(g, Some(13))).unwrap();
    assert!(matches!(
        NodeTest::load(dir.path()),
        Err(Error::Onnx(OnnxError::UnsupportedOperator { .. }))
    ));
}
