//! burn's split calls and the ONNX operators on burn tensors: bit-exact
//! against the host path always, against burn's own calls where burn is
//! right, and torch's result where burn 0.22 is not.

mod common;

use burn::tensor::{DType, Float, Int, Tensor};
use common::*;
use wgpu_split::frameworks::{Burn as BurnRules, Sections, Torch};
use wgpu_split::{
    OnnxSplit, OnnxSplitToSequence, OpenVinoSplit, OpenVinoVariadicSplit, Operator, ParamTensor,
    ResolvedSplit,
};

const SHAPE: [usize; 3] = [4, 6, 10];

fn input(seed: u64) -> (Vec<u8>, Tensor<3>) {
    let bytes = bytes_for(DType::F32, SHAPE.iter().product(), seed);
    (bytes.clone(), tensor(bytes, SHAPE, DType::F32))
}

/// Outputs equal the host path's bytes for `split`, with its shapes.
fn assert_host<const D2: usize>(bytes: &[u8], split: &ResolvedSplit, outputs: Vec<Tensor<D2>>) {
    let expected = host_split(bytes, &SHAPE, element(DType::F32), split);
    assert_eq!(outputs.len(), expected.len());
    for (i, (out, want)) in outputs.into_iter().zip(expected).enumerate() {
        assert_eq!(
            out.shape().to_vec(),
            split.output_shape(i),
            "output {i} shape"
        );
        assert_eq!(bytes_of(out), want, "output {i}");
    }
}

fn assert_same<const D: usize>(ours: Vec<Tensor<D>>, burns: Vec<Tensor<D>>) {
    assert_eq!(ours.len(), burns.len());
    for (i, (a, b)) in ours.into_iter().zip(burns).enumerate() {
        assert_eq!(a.shape(), b.shape(), "output {i} shape");
        assert_eq!(bytes_of(a), bytes_of(b), "output {i}");
    }
}

#[test]
fn chunk_split_and_split_with_sizes_match_burn_where_burn_is_right() {
    let (_, s) = gpu();
    let (_, x) = input(1);
    for dim in [0i64, 1, 2, -1] {
        let d = if dim < 0 { 2 } else { dim as usize };
        for chunks in [1, 2, 3, 5, 7] {
            let n = SHAPE[d];
            // burn's loop overruns where `chunks - 1` pieces of ceil(n / chunks) pass n.
            if !n.is_multiple_of(chunks) && (chunks - 1) * n.div_ceil(chunks) >= n {
                continue;
            }
            assert_same(
                s.chunk(x.clone(), chunks, dim).unwrap(),
                x.clone().chunk(chunks, dim),
            );
        }
        for size in [1, 3, 4, 20] {
            assert_same(
                s.split(x.clone(), size, dim).unwrap(),
                x.clone().split(size, dim),
            );
        }
    }
    assert_same(
        s.split_with_sizes(x.clone(), &[1, 2, 3], 1).unwrap(),
        x.clone().split_with_sizes(vec![1, 2, 3], 1),
    );
    assert_same(
        s.split_with_sizes(x.clone(), &[10], -1).unwrap(),
        x.clone().split_with_sizes(vec![10], -1),
    );
}

#[test]
fn where_burn_panics_or_drops_pieces_the_result_is_torchs() {
    let (_, s) = gpu();
    let five = tensor::<2, Float>(bytes_for(DType::F32, 10, 3), [5, 2], DType::F32);
    let six = tensor::<2, Float>(bytes_for(DType::F32, 12, 4), [6, 2], DType::F32);
    // burn 0.22 panics on both.
    for t in [&five, &six] {
        let t = t.clone();
        let panics = std::panic::catch_unwind(|| t.chunk(4, 0)).is_err();
        assert!(
            panics,
            "burn's chunk was expected to panic here; if burn fixed it, compare with it"
        );
    }
    let lengths = |v: &[Tensor<2>]| v.iter().map(|t| t.shape()[0]).collect::<Vec<_>>();
    let ours = s.chunk(five.clone(), 4, 0).unwrap();
    assert_eq!(lengths(&ours), [2, 2, 1]);
    assert_eq!(
        ours.into_iter().map(bytes_of).collect::<Vec<_>>().concat(),
        bytes_of(five.clone())
    );
    let ours = s.chunk(six.clone(), 4, 0).unwrap();
    assert_eq!(lengths(&ours), [2, 2, 2]);
    assert_eq!(
        ours.into_iter().map(bytes_of).collect::<Vec<_>>().concat(),
        bytes_of(six)
    );
    // Zero sizes: burn drops them, torch keeps an empty piece each.
    let ours = s
        .split_with_sizes(five.clone(), &[0, 2, 0, 3, 0], 0)
        .unwrap();
    assert_eq!(lengths(&ours), [0, 2, 0, 3, 0]);
    assert_eq!(
        five.clone().split_with_sizes(vec![0, 2, 0, 3, 0], 0).len(),
        2,
        "burn drops zero sizes"
    );
    let (bytes, x) = input(5);
    let split = Torch::split_with_sizes(&SHAPE, &[0, 6, 0], 1).unwrap();
    assert_host(
        &bytes,
        &split,
        s.split_with_sizes(x, &[0, 6, 0], 1).unwrap(),
    );
}

#[test]
fn every_call_matches_the_host_path() {
    let (_, s) = gpu();
    let (bytes, x) = input(9);
    let sh = &SHAPE;
    assert_host(
        &bytes,
        &BurnRules::chunk(sh, 3, 2).unwrap(),
        s.chunk(x.clone(), 3, 2).unwrap(),
    );
    assert_host(
        &bytes,
        &Torch::split(sh, 4, 2).unwrap(),
        s.split(x.clone(), 4, -1).unwrap(),
    );
    assert_host(
        &bytes,
        &Torch::tensor_split(sh, 4, 1).unwrap(),
        s.tensor_split(x.clone(), 4, 1).unwrap(),
    );
    let idx = [3i64, 1, 8];
    assert_host(
        &bytes,
        &Torch::tensor_split(sh, &idx[..], 2).unwrap(),
        s.tensor_split(x.clone(), Sections::Indices(&idx), 2)
            .unwrap(),
    );
    let unbound: Vec<Tensor<2>> = s.unbind(x.clone(), 1).unwrap();
    assert_host(&bytes, &Torch::unbind(sh, 1).unwrap(), unbound);
}

#[test]
fn onnx_and_openvino_operators_run_on_burn_tensors() {
    let (_, s) = gpu();
    let (bytes, x) = input(11);
    let ops: Vec<Operator> = vec![
        OnnxSplit::new(1, 3).axis(1).into(),
        OnnxSplit::new(13, 2)
            .axis(2)
            .split_input(ParamTensor::int64_1d(&[3, 7]))
            .into(),
        OnnxSplit::new(18, 3).axis(-1).num_outputs(3).into(),
        OpenVinoSplit::new(ParamTensor::int64_scalar(0), 2).into(),
        OpenVinoVariadicSplit::new(
            ParamTensor::int64_scalar(2),
            ParamTensor::int64_1d(&[-1, 4]),
        )
        .into(),
        OnnxSplitToSequence::new(11)
            .axis(0)
            .split(ParamTensor::int64_scalar(2))
            .into(),
    ];
    for op in &ops {
        let split = op.resolve(&SHAPE).unwrap();
        assert_host(
            &bytes,
            &split,
            s.operator::<3, 3, Float>(x.clone(), op).unwrap(),
        );
    }
    // SplitToSequence with keepdims 0 drops the axis.
    let op: Operator = OnnxSplitToSequence::new(11).axis(1).keepdims(0).into();
    let split = op.resolve(&SHAPE).unwrap();
    let outputs: Vec<Tensor<2>> = s.operator(x.clone(), &op).unwrap();
    assert_eq!(outputs.len(), 6);
    assert_host(&bytes, &split, outputs);
}

#[test]
fn empty_outputs_and_empty_inputs() {
    let (_, s) = gpu();
    let (bytes, x) = input(13);
    let split = Torch::tensor_split(&SHAPE, &[2i64, 2, 2][..], 0).unwrap();
    let outputs = s.tensor_split(x, Sections::Indices(&[2, 2, 2]), 0).unwrap();
    assert_eq!(
        outputs.iter().map(|t| t.shape()[0]).collect::<Vec<_>>(),
        [2, 0, 0, 2]
    );
    assert_host(&bytes, &split, outputs);
    // An empty input: every output empty.
    let empty = tensor::<2, Float>(Vec::new(), [0, 4], DType::F32);
    let split = BurnRules::chunk(&[0, 4], 3, 1).unwrap();
    let outputs = s.chunk(empty.clone(), 3, 1).unwrap();
    assert_eq!(outputs.len(), 2);
    for (i, out) in outputs.into_iter().enumerate() {
        assert_eq!(out.shape().to_vec(), split.output_shape(i));
        assert!(bytes_of(out).is_empty());
    }
    let outputs = s.split_with_sizes(empty, &[0, 4, 0], 1).unwrap();
    assert_eq!(
        outputs
            .iter()
            .map(|t| t.shape().to_vec())
            .collect::<Vec<_>>(),
        [vec![0, 0], vec![0, 4], vec![0, 0]]
    );
}

#[test]
fn one_thousand_outputs_in_one_call() {
    let (_, s) = gpu();
    let shape = [3, 1000, 5];
    let bytes = bytes_for(DType::I32, 15000, 17);
    let x = tensor::<3, Int>(bytes.clone(), shape, DType::I32);
    let outputs = s.split(x.clone(), 1, 1).unwrap();
    assert_eq!(outputs.len(), 1000);
    let split = Torch::split(&shape, 1, 1).unwrap();
    let expected = host_split(&bytes, &shape, element(DType::I32), &split);
    for (i, (out, want)) in outputs.into_iter().zip(expected).enumerate() {
        assert_eq!(bytes_of(out), want, "output {i}");
    }
    let unbound: Vec<Tensor<2, Int>> = s.unbind(x, 1).unwrap();
    assert_eq!(unbound.len(), 1000);
    assert_eq!(unbound[999].shape().to_vec(), vec![3, 5]);
}
