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
