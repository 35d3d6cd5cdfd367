//! Concat misuse is a typed error, never a panic or a wrong result: no
//! inputs, a dim out of range, shapes that do not fit, dtypes that differ,
//! ranks the call does not make, tensors a resolved concat was not
//! resolved for, tensors of another device. burn's own `cat` and `stack`
//! panic on the first three.

mod common;

use burn::tensor::{DType, Float, Int, Tensor};
use common::*;
use wgpu_split::frameworks::Burn as BurnRules;
use wgpu_split::{ConcatError, Error, ResolvedConcat};
use wgpu_split_burn::BurnSplitError;

fn f32s<const D: usize>(shape: [usize; D], seed: u64) -> Tensor<D> {
    tensor(
        bytes_for(DType::F32, shape.iter().product(), seed),
        shape,
        DType::F32,
    )
}

/// The core crate's concat error inside the integration's.
fn concat_error(e: BurnSplitError) -> ConcatError {
    match e {
        BurnSplitError::Split(Error::Concat(c)) => c,
        other => panic!("expected a concat error, got {other}"),
    }
}

#[test]
fn no_inputs_is_an_error_where_burn_panics() {
    let (_, s) = gpu();
    let e = concat_error(s.cat(Vec::<Tensor<2>>::new(), 0).unwrap_err());
    assert!(matches!(e, ConcatError::NoInputs { .. }), "{e}");
    assert!(e.to_string().contains("burn cat"), "{e}");
    let e = concat_error(s.stack::<2, 3, Float>(Vec::new(), 0).unwrap_err());
    assert!(matches!(e, ConcatError::NoInputs { .. }), "{e}");
    assert!(e.to_string().contains("burn stack"), "{e}");
    let panics = std::panic::catch_unwind(|| Tensor::<2>::cat(Vec::new(), 0)).is_err();
    assert!(panics, "burn's cat of nothing was expected to panic");
}

#[test]
fn dims_out_of_range_are_errors() {
    let (_, s) = gpu();
    let x = f32s([2, 3, 4], 1);
    for dim in [3i64, -4] {
        let e = concat_error(s.cat(vec![x.clone(), x.clone()], dim).unwrap_err());
        assert!(
            matches!(
                e,
                ConcatError::AxisOutOfRange {
                    axis, rank: 3, min: -3, max: 2, ..
                } if axis == dim
            ),
            "{e}"
        );
    }
    for dim in [4i64, -5] {
        let e = concat_error(
            s.stack::<3, 4, Float>(vec![x.clone(), x.clone()], dim)
                .unwrap_err(),
        );
        assert!(
            matches!(
                e,
                ConcatError::AxisOutOfRange {
                    axis, min: -4, max: 3, ..
                } if axis == dim
            ),
            "{e}"
        );
    }
}

#[test]
fn shapes_that_do_not_fit_are_errors_naming_the_input() {
    let (_, s) = gpu();
    let a = f32s([2, 3, 4], 2);
    let b = f32s([2, 5, 4], 3);
    let c = f32s([2, 3, 5], 4);
    let e = concat_error(s.cat(vec![a.clone(), b.clone(), c.clone()], 1).unwrap_err());
    assert!(
        matches!(
            e,
            ConcatError::DimMismatch {
                axis: 1,
                index: 2,
                dim: 2,
                size: 5,
                reference: 0,
                expected: 4,
                ..
            }
        ),
        "{e}"
    );
    let e = concat_error(
        s.stack::<3, 4, Float>(vec![a.clone(), a.clone(), b.clone()], 0)
            .unwrap_err(),
    );
    assert!(
        matches!(
            e,
            ConcatError::UnequalShapes {
                index: 2,
                reference: 0,
                ..
            }
        ),
        "{e}"
    );
    // The inputs are untouched by every refusal.
    assert_eq!(bytes_of(a), bytes_for(DType::F32, 24, 2));
    assert_eq!(bytes_of(b), bytes_for(DType::F32, 40, 3));
}

#[test]
fn dtypes_that_differ_are_an_error() {
    let (device, s) = gpu();
    let a = f32s([2, 3], 5);
    let other = [DType::F16, DType::F64]
        .into_iter()
        .find(|&d| device.supports_dtype(d))
        .expect("a second float dtype");
    let b: Tensor<2> = tensor(bytes_for(other, 6, 6), [2, 3], other);
    let e = s.cat(vec![a.clone(), a.clone(), b.clone()], 0).unwrap_err();
    assert_eq!(
        e,
        BurnSplitError::DTypeMismatch {
            index: 2,
            dtype: other,
            reference: 0,
            expected: DType::F32,
        }
    );
    let e = s.stack::<2, 3, Float>(vec![b, a], 0).unwrap_err();
    assert!(
        matches!(e, BurnSplitError::DTypeMismatch { index: 1, .. }),
        "{e}"
    );
    // Int tensors of two widths.
    let i: Tensor<1, Int> = tensor(bytes_for(DType::I32, 4, 7), [4], DType::I32);
    let u: Tensor<1, Int> = tensor(bytes_for(DType::U32, 4, 8), [4], DType::U32);
    let e = s.cat(vec![i, u], 0).unwrap_err();
    assert!(
        matches!(
            e,
            BurnSplitError::DTypeMismatch {
                index: 1,
                dtype: DType::U32,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn ranks_and_resolved_concats_that_do_not_fit_are_errors() {
    let (_, s) = gpu();
    let x = f32s([2, 3], 9);
    // stack makes rank 3.
    let e = s
        .stack::<2, 2, Float>(vec![x.clone(), x.clone()], 0)
        .unwrap_err();
    assert_eq!(
        e,
        BurnSplitError::OutputRank {
            asked: 2,
            actual: 3
        }
    );
    let concat = BurnRules::cat(&[[2, 3], [2, 3]], 1).unwrap();
    let e = s
        .concat_as::<2, 3, Float, _>(vec![x.clone(), x.clone()], &concat)
        .unwrap_err();
    assert_eq!(
        e,
        BurnSplitError::OutputRank {
            asked: 3,
            actual: 2
        }
    );
    // Resolved for other tensors.
    let e = concat_error(
        s.concat_as::<2, 2, Float, _>(vec![x.clone()], &concat)
            .unwrap_err(),
    );
    assert_eq!(
        e,
        ConcatError::InputCountMismatch {
            expected: 2,
            actual: 1
        }
    );
    let concat = ResolvedConcat::new(&[[2, 3], [2, 4]], 1).unwrap();
    let e = concat_error(
        s.concat_as::<2, 2, Float, _>(vec![x.clone(), x.clone()], &concat)
            .unwrap_err(),
    );
    assert_eq!(
        e,
        ConcatError::InputShapeMismatch {
            index: 1,
            expected: vec![2, 4],
            actual: vec![2, 3]
        }
    );
    // A concat resolved directly runs like burn's.
    let y = f32s([2, 4], 10);
    let ours = s
        .concat_as::<2, 2, Float, _>(vec![x.clone(), y.clone()], &concat)
        .unwrap();
    assert_eq!(bytes_of(ours), bytes_of(Tensor::cat(vec![x, y], 1)));
}

#[test]
fn a_tensor_of_another_device_is_an_error() {
    let (_, s) = gpu();
    let (other, other_splitter) = registered_device();
    let here = f32s([2, 4], 11);
    let there: Tensor<2> = Tensor::from_data(
        burn::tensor::TensorData::from_bytes_vec(bytes_for(DType::F32, 8, 12), [2, 4], DType::F32),
        other,
    );
    let e = s.cat(vec![here.clone(), there.clone()], 0).unwrap_err();
    assert!(matches!(e, BurnSplitError::OtherDevice { .. }), "{e}");
    let e = other_splitter
        .stack::<2, 3, Float>(vec![there.clone(), here.clone()], 0)
        .unwrap_err();
    assert!(matches!(e, BurnSplitError::OtherDevice { .. }), "{e}");
    // Each device concatenates its own. (Not against burn's own cat here:
    // on the plain backend its slice_assign kernel uses u64, which this
    // device, made without SHADER_INT64, refuses.)
    let ours = other_splitter.cat(vec![there.clone(), there], 1).unwrap();
    let host = vec![(bytes_for(DType::F32, 8, 12), vec![2, 4]); 2];
    let concat = BurnRules::cat(&[[2, 4]; 2], 1).unwrap();
    assert_eq!(
        bytes_of(ours),
        host_concat(&host, element(DType::F32), &concat)
    );
}
