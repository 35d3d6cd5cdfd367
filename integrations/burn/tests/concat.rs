//! burn's `cat` and `stack` on burn tensors: bit-exact against burn's own
//! calls and the core crate's host concat, on every dimension (negative
//! ones too), for every dtype burn's wgpu backend has, with empty inputs,
//! views, repeated and many inputs; a concat of a split is the tensor.

mod common;

use burn::tensor::{Bool, DType, Float, Int, Tensor};
use common::*;
use wgpu_split::ResolvedConcat;
use wgpu_split::frameworks::Burn as BurnRules;
use wgpu_split::plan::{CostModel, Strategy};
use wgpu_split_burn::{BurnSplitter, SplitKind};

/// Tensors of `shapes` and `dtype` with their bytes and shapes (for the
/// host oracle).
type Inputs<const D: usize, K> = (Vec<(Vec<u8>, Vec<usize>)>, Vec<Tensor<D, K>>);

fn inputs<const D: usize, K: SplitKind>(
    dtype: DType,
    shapes: &[[usize; D]],
    seed: u64,
) -> Inputs<D, K> {
    let host: Vec<(Vec<u8>, Vec<usize>)> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let count = s.iter().product();
            (bytes_for(dtype, count, seed + i as u64), s.to_vec())
        })
        .collect();
    let tensors = host
        .iter()
        .zip(shapes)
        .map(|((bytes, _), &s)| tensor(bytes.clone(), s, dtype))
        .collect();
    (host, tensors)
}

/// `ours` has the concat's output shape and the host concat's bytes, and
/// so does burn's own result.
fn assert_concat<const D: usize, K: SplitKind>(
    host: &[(Vec<u8>, Vec<usize>)],
    dtype: DType,
    concat: &ResolvedConcat,
    ours: Tensor<D, K>,
    burns: Tensor<D, K>,
    what: &str,
) {
    let want = host_concat(host, element(dtype), concat);
    assert_eq!(ours.shape().to_vec(), concat.output_shape(), "{what} shape");
    assert_eq!(burns.shape(), ours.shape(), "{what}: burn's shape");
    assert_eq!(ours.dtype(), burns.dtype(), "{what}: dtype");
    assert_eq!(bytes_of(ours), want, "{what}");
    assert_eq!(bytes_of(burns), want, "{what}: burn's own");
}

/// `base` with `len` on dimension `dim`.
fn with_len<const D: usize>(base: [usize; D], dim: usize, len: usize) -> [usize; D] {
    let mut s = base;
    s[dim] = len;
    s
}

/// `s.cat` of tensors of `shapes` on `dim` against burn's own `cat` and
/// the host concat, the output of the inputs' dtype.
fn check_cat<const D: usize, K: SplitKind>(
    s: &BurnSplitter,
    dtype: DType,
    shapes: &[[usize; D]],
    dim: i64,
    seed: u64,
) {
    let (host, tensors) = inputs::<D, K>(dtype, shapes, seed);
    // What burn reports (its plain backend reports a Flex32 tensor as F32).
    let reported = tensors[0].dtype();
    let concat = BurnRules::cat(shapes, dim).unwrap();
    let ours = s.cat(tensors.clone(), dim).unwrap();
    let what = format!("{dtype:?} cat of {} on {dim}", shapes.len());
    assert_eq!(ours.dtype(), reported, "{what}: dtype");
    assert_concat(
        &host,
        dtype,
        &concat,
        ours,
        Tensor::cat(tensors, dim),
        &what,
    );
}

/// `s.stack` of tensors of `shapes` on `dim` against burn's own `stack`
/// and the host concat.
fn check_stack<const D: usize, const D2: usize, K: SplitKind>(
    s: &BurnSplitter,
    dtype: DType,
    shapes: &[[usize; D]],
    dim: i64,
    seed: u64,
) {
    let (host, tensors) = inputs::<D, K>(dtype, shapes, seed);
    let concat = BurnRules::stack(shapes, dim).unwrap();
    let ours: Tensor<D2, K> = s.stack(tensors.clone(), dim).unwrap();
    let burns: Tensor<D2, K> = Tensor::stack(tensors, dim);
    let what = format!("{dtype:?} stack of {} on {dim}", shapes.len());
    assert_concat(&host, dtype, &concat, ours, burns, &what);
}

#[test]
fn cat_matches_burns_cat_on_every_dim() {
    let (_, s) = gpu();
    let base = [4, 6, 10];
    let mut seed = 0;
    for dim in [0i64, 1, 2, -1, -2, -3] {
        let d = dim.rem_euclid(3) as usize;
        for lengths in [&[1, 3, 2][..], &[5], &[2; 7], &[7, 1], &[1; 3]] {
            seed += 10;
            let shapes: Vec<[usize; 3]> = lengths.iter().map(|&l| with_len(base, d, l)).collect();
            check_cat::<3, Float>(s, DType::F32, &shapes, dim, seed);
        }
    }
}

#[test]
fn stack_matches_burns_stack_on_every_new_dim() {
    let (_, s) = gpu();
    let shapes = [[3, 5, 7]; 4];
    for dim in -4i64..=3 {
        check_stack::<3, 4, Float>(s, DType::F32, &shapes, dim, (110 + dim) as u64);
    }
    // One tensor, and rank 1 into rank 2.
    check_stack::<1, 2, Int>(s, DType::I32, &[[9]], -1, 200);
}

/// Concats of odd widths (pieces at unaligned offsets of every width) on
/// every dim, and a stack, of one dtype.
fn check_dtype<K: SplitKind>(s: &BurnSplitter, dtype: DType) {
    let base = [3, 7, 5];
    for d in 0..3 {
        let shapes: Vec<[usize; 3]> = [1, base[d] - 1, 2]
            .iter()
            .map(|&l| with_len(base, d, l))
            .collect();
        check_cat::<3, K>(s, dtype, &shapes, d as i64, 300 + d as u64);
    }
    check_stack::<3, 4, K>(s, dtype, &[base; 3], 2, 310);
}

#[test]
fn every_dtype_burns_wgpu_backend_has_is_concatenated_bit_exactly() {
    let ((device, default), setup) = gpu_and_setup();
    // The device's own model (on lavapipe: copies, staged where burn put
    // the output in an input's page), a GPU's (dispatches) and the kernels
    // alone.
    let other = |strategy| {
        BurnSplitter::new(device, setup)
            .unwrap()
            .with_strategy(strategy)
    };
    let discrete = other(Strategy::Auto(CostModel::DISCRETE_GPU));
    let gather = other(Strategy::Gather);
    let mut ran = Vec::new();
    let mut unsupported = Vec::new();
    for (dtype, supported) in dtypes(device) {
        if !supported {
            unsupported.push(dtype);
            continue;
        }
        for s in [default, &discrete, &gather] {
            match kind_of(dtype) {
                KindOf::Float => check_dtype::<Float>(s, dtype),
                KindOf::Int => check_dtype::<Int>(s, dtype),
                KindOf::Bool => check_dtype::<Bool>(s, dtype),
            }
        }
        ran.push(dtype);
    }
    eprintln!("concatenated on this device: {ran:?}; the device does not support: {unsupported:?}");
    for must in [DType::F32, DType::I32, DType::U32] {
        assert!(ran.contains(&must), "{must:?} must be tested");
    }
}

#[test]
fn empty_inputs_write_nothing_as_in_burn() {
    let (_, s) = gpu();
    // Empty on the concat dim: burn drops them after checking them.
    let shapes = [[2, 0, 4], [2, 3, 4], [2, 0, 4], [2, 1, 4]];
    check_cat::<3, Float>(s, DType::F32, &shapes, 1, 400);
    // All empty on the dim: an output empty there.
    let shapes = [[2, 0, 4]; 3];
    let (_, tensors) = inputs::<3, Float>(DType::F32, &shapes, 410);
    let ours = s.cat(tensors.clone(), -2).unwrap();
    let burns = Tensor::cat(tensors, -2);
    assert_eq!(ours.shape().to_vec(), [2, 0, 4]);
    assert_eq!(burns.shape(), ours.shape());
    assert!(bytes_of(ours).is_empty());
    // Empty on another dim: the output is empty, its concat dim the sum.
    // (burn 0.22's plain backend panics on such a cat or stack: the
    // contiguity check of its slice_assign subtracts 1 from the empty dim.)
    let shapes = [[0, 3], [0, 5]];
    let (_, tensors) = inputs::<2, Int>(DType::I32, &shapes, 420);
    let ours = s.cat(tensors, 1).unwrap();
    assert_eq!(ours.shape().to_vec(), [0, 8]);
    assert!(bytes_of(ours).is_empty());
    // Stacked empties.
    let shapes = [[0, 4]; 3];
    let (_, tensors) = inputs::<2, Float>(DType::F32, &shapes, 430);
    let ours: Tensor<3> = s.stack(tensors, 1).unwrap();
    assert_eq!(ours.shape().to_vec(), [0, 3, 4]);
    assert!(bytes_of(ours).is_empty());
}

#[test]
fn a_concat_of_a_split_is_the_tensor() {
    let (_, s) = gpu();
    let shape = [4, 6, 10];
    let bytes = bytes_for(DType::I32, 240, 500);
    let x: Tensor<3, Int> = tensor(bytes.clone(), shape, DType::I32);
    let back = |t: Tensor<3, Int>| assert_eq!(bytes_of(t), bytes);
    back(s.cat(s.chunk(x.clone(), 3, 1).unwrap(), 1).unwrap());
    back(s.cat(s.split(x.clone(), 4, -1).unwrap(), -1).unwrap());
    // Zero sizes give empty pieces, which take no part.
    let pieces = s.split_with_sizes(x.clone(), &[0, 1, 0, 3, 0], 0).unwrap();
    back(s.cat(pieces, 0).unwrap());
    // Unbind and stack.
    let rows: Vec<Tensor<2, Int>> = s.unbind(x.clone(), 2).unwrap();
    back(s.stack(rows, 2).unwrap());
    // And burn's own split, whose pieces are views.
    back(s.cat(x.clone().split(2, 1), 1).unwrap());
    // Many pieces: slices of one arena allocation, read at their offsets.
    let bytes = bytes_for(DType::F32, 2 * 40 * 3, 510);
    let y: Tensor<3> = tensor(bytes.clone(), [2, 40, 3], DType::F32);
    let many = s.split(y, 1, 1).unwrap();
    assert!(many.len() > wgpu_split_burn::SHARED_ALLOCATION_ABOVE);
    assert_eq!(bytes_of(s.cat(many, 1).unwrap()), bytes);
}

#[test]
fn views_repeated_and_many_inputs() {
    let (_, s) = gpu();
    let bytes = bytes_for(DType::F32, 6 * 10, 600);
    let x: Tensor<2> = tensor(bytes, [6, 10], DType::F32);
    // Narrowed views, a transposed one, a flipped one; then x three times.
    let views = vec![
        x.clone().narrow(1, 2, 6),
        x.clone().narrow(1, 0, 6).transpose(),
        x.clone().flip([1]),
        x.clone().narrow(1, 7, 3),
    ];
    let ours = s.cat(views.clone(), 1).unwrap();
    let burns = Tensor::cat(views, 1);
    assert_eq!(ours.shape(), burns.shape());
    assert_eq!(bytes_of(ours), bytes_of(burns));
    let ours = s.cat(vec![x.clone(), x.clone(), x.clone()], 0).unwrap();
    assert_eq!(bytes_of(ours), bytes_of(Tensor::cat(vec![x.clone(); 3], 0)));
    // 300 inputs: more than one dispatch can bind.
    check_cat::<3, Int>(s, DType::U32, &[[2, 1, 3]; 300], 1, 700);
}

#[test]
fn a_detection_neck_and_an_attention_head_merge() {
    let (device, s) = gpu();
    // YOLOv8's C2f: three maps concatenated on the channels.
    check_cat::<4, Float>(s, DType::F32, &[[1, 16, 20, 20]; 3], 1, 800);
    // Eight heads merged on the last dim, in f16 where the device has it.
    let dtype = if device.supports_dtype(DType::F16) {
        DType::F16
    } else {
        DType::F32
    };
    check_cat::<3, Float>(s, dtype, &[[2, 16, 8]; 8], -1, 810);
}
