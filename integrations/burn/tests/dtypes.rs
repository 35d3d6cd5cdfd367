//! Every dtype burn's wgpu backend has, split on burn's device, bit-exact
//! against the core crate's host path and against burn's own split.

mod common;

use burn::tensor::{Bool, DType, Float, Int};
use common::*;
use wgpu_split::frameworks::Torch;
use wgpu_split_burn::SplitKind;

fn check<K: SplitKind>(dtype: DType) {
    let (_, splitter) = gpu();
    // Odd widths, so outputs start at unaligned offsets of every width.
    let shape = [3, 7, 5];
    let count = shape.iter().product();
    let bytes = bytes_for(dtype, count, 7);
    for dim in 0..3 {
        let split =
            Torch::split_with_sizes(&shape, &[1, 0, shape[dim] as i64 - 1], dim as i64).unwrap();
        let expected = host_split(&bytes, &shape, element(dtype), &split);
        let input: burn::tensor::Tensor<3, K> = tensor(bytes.clone(), shape, dtype);
        // What burn reports (its plain backend reports a Flex32 tensor as F32).
        let reported = input.dtype();
        let outputs = splitter
            .split_as::<3, 3, K, _>(input.clone(), &split)
            .unwrap();
        assert_eq!(outputs.len(), 3);
        for (i, (out, want)) in outputs.into_iter().zip(&expected).enumerate() {
            assert_eq!(out.dtype(), reported, "{dtype:?} output {i} dtype");
            assert_eq!(out.shape().to_vec(), split.output_shape(i));
            assert_eq!(&bytes_of(out), want, "{dtype:?} dim {dim} output {i}");
        }
        // burn's own split where burn is right (no zero sizes).
        let sizes = vec![1, shape[dim] - 1];
        let split =
            Torch::split_with_sizes(&shape, &[1, shape[dim] as i64 - 1], dim as i64).unwrap();
        let ours = splitter
            .split_as::<3, 3, K, _>(input.clone(), &split)
            .unwrap();
        let burns = input.split_with_sizes(sizes, dim);
        for (a, b) in ours.into_iter().zip(burns) {
            assert_eq!(bytes_of(a), bytes_of(b), "{dtype:?} dim {dim} against burn");
        }
    }
}

#[test]
fn every_dtype_burns_wgpu_backend_has_is_split_bit_exactly() {
    let (device, _) = gpu();
    let mut ran = Vec::new();
    let mut unsupported = Vec::new();
    for (dtype, supported) in dtypes(device) {
        if !supported {
            unsupported.push(dtype);
            continue;
        }
        match kind_of(dtype) {
            KindOf::Float => check::<Float>(dtype),
            KindOf::Int => check::<Int>(dtype),
            KindOf::Bool => check::<Bool>(dtype),
        }
        ran.push(dtype);
    }
    eprintln!("split on this device: {ran:?}; the device does not support: {unsupported:?}");
    for must in [DType::F32, DType::I32, DType::U32] {
        assert!(ran.contains(&must), "{must:?} must be tested");
    }
}
