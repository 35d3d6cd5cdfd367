//! Misuse is a typed error or handled, never a wrong result: tensors of
//! another device, views, ranks the split does not make, shapes a split
//! was not resolved for, bad call arguments. Also: a device the caller
//! made and registered with burn.

mod common;

use burn::tensor::{DType, Float, Tensor};
use common::*;
use wgpu_split::error::FrameworkError;
use wgpu_split::frameworks::Torch;
use wgpu_split_burn::BurnSplitError;

#[test]
fn a_device_the_caller_registered_with_burn_splits_its_tensors() {
    let (device, splitter) = registered_device();
    let bytes = bytes_for(DType::F32, 60, 1);
    let x: Tensor<2> = Tensor::from_data(
        burn::tensor::TensorData::from_bytes_vec(bytes.clone(), [6, 10], DType::F32),
        device,
    );
    let outputs = splitter.chunk(x, 3, 1).unwrap();
    let expected = host_split(
        &bytes,
        &[6, 10],
        element(DType::F32),
        &Torch::chunk(&[6, 10], 3, 1).unwrap(),
    );
    for (out, want) in outputs.into_iter().zip(expected) {
        assert_eq!(bytes_of(out), want);
    }
}

#[test]
fn a_tensor_of_another_device_is_a_typed_error() {
    let (_, splitter) = gpu();
    let (other, other_splitter) = registered_device();
    let x: Tensor<2> = Tensor::from_data(
        burn::tensor::TensorData::from_bytes_vec(bytes_for(DType::F32, 8, 2), [2, 4], DType::F32),
        other,
    );
    let err = splitter.chunk(x.clone(), 2, 1).unwrap_err();
    assert!(matches!(err, BurnSplitError::OtherDevice { .. }), "{err}");
    let y: Tensor<2> = tensor(bytes_for(DType::F32, 8, 2), [2, 4], DType::F32);
    let err = other_splitter.chunk(y, 2, 1).unwrap_err();
    assert!(matches!(err, BurnSplitError::OtherDevice { .. }), "{err}");
}

#[test]
fn views_are_made_contiguous_first() {
    let (_, s) = gpu();
    let bytes = bytes_for(DType::F32, 6 * 10, 3);
    let x: Tensor<2> = tensor(bytes, [6, 10], DType::F32);
    // A transposed view, a narrowed one (a sub-range of the buffer), a
    // strided slice: each split equals burn's own split of the same view.
    let views: Vec<Tensor<2>> = vec![
        x.clone().transpose(),
        x.clone().narrow(0, 2, 3),
        x.clone().narrow(1, 3, 5),
        x.clone().slice([0..6, 0..10]).flip([1]),
    ];
    for (v, view) in views.into_iter().enumerate() {
        let dims = view.shape().to_vec();
        let ours = s.split(view.clone(), 2, 1).unwrap();
        let burns = view.split(2, 1);
        assert_eq!(ours.len(), burns.len(), "view {v} {dims:?}");
        for (a, b) in ours.into_iter().zip(burns) {
            assert_eq!(bytes_of(a), bytes_of(b), "view {v} {dims:?}");
        }
    }
}

#[test]
fn wrong_ranks_shapes_and_arguments_are_typed_errors() {
    let (_, s) = gpu();
    let x: Tensor<3> = tensor(bytes_for(DType::F32, 24, 4), [2, 3, 4], DType::F32);
    // unbind drops the axis: asking for rank 3 is refused.
    let err = s.unbind::<3, 3, Float>(x.clone(), 0).unwrap_err();
    assert_eq!(
        err,
        BurnSplitError::OutputRank {
            asked: 3,
            actual: 2
        }
    );
    // A split resolved for another shape.
    let split = Torch::chunk(&[2, 3, 5], 2, 2).unwrap();
    let err = s.split_as::<3, 3, Float, _>(x.clone(), &split).unwrap_err();
    assert!(
        matches!(err, BurnSplitError::Split(wgpu_split::Error::Resolve(_))),
        "{err}"
    );
    // Calls' own errors.
    let err = s.chunk(x.clone(), 0, 0).unwrap_err();
    assert!(
        matches!(
            err,
            BurnSplitError::Split(wgpu_split::Error::Framework(
                FrameworkError::ChunksNotPositive { .. }
            ))
        ),
        "{err}"
    );
    let err = s.chunk(x.clone(), 2, 3).unwrap_err();
    assert!(
        matches!(
            err,
            BurnSplitError::Split(wgpu_split::Error::Framework(
                FrameworkError::DimOutOfRange {
                    dim: 3,
                    rank: 3,
                    ..
                }
            ))
        ),
        "{err}"
    );
    let err = s.split(x.clone(), 2, -4).unwrap_err();
    assert!(
        matches!(
            err,
            BurnSplitError::Split(wgpu_split::Error::Framework(
                FrameworkError::DimOutOfRange { dim: -4, .. }
            ))
        ),
        "{err}"
    );
    let err = s.split(x.clone(), 0, 1).unwrap_err();
    assert!(
        matches!(
            err,
            BurnSplitError::Split(wgpu_split::Error::Framework(
                FrameworkError::SplitSizeZero { .. }
            ))
        ),
        "{err}"
    );
    let err = s.split_with_sizes(x.clone(), &[1, 1], 1).unwrap_err();
    assert!(
        matches!(
            err,
            BurnSplitError::Split(wgpu_split::Error::Framework(
                FrameworkError::SizesSum { .. }
            ))
        ),
        "{err}"
    );
    // The input is untouched by every refusal.
    assert_eq!(bytes_of(x), bytes_for(DType::F32, 24, 4));
}

#[test]
fn quantized_tensors_are_refused_with_the_reason() {
    let err = wgpu_split_burn::element_type(DType::QFloat(Default::default())).unwrap_err();
    assert!(
        matches!(err, BurnSplitError::UnsupportedDType { .. }),
        "{err}"
    );
}

#[test]
fn burns_views_start_where_every_plan_can_read_them() {
    let (_, s) = gpu();
    let bytes = bytes_for(DType::F32, 6 * 10, 5);
    let x: Tensor<2> = tensor(bytes, [6, 10], DType::F32);
    // Rows of 40 bytes: a view from row 1 would start 40 bytes into burn's
    // allocation, a multiple of 4 but not of the 16 a vec4 plan needs
    // (axis-0 halves of 80 bytes are whole vec4s). burn binds its views, so
    // it makes one only at the device's binding alignment and copies
    // otherwise; the splitter relies on that (its plans need at most 16).
    let views: Vec<Tensor<2>> = [(1, 4), (3, 2), (1, 2)]
        .into_iter()
        .map(|(start, len)| x.clone().narrow(0, start, len))
        .collect();
    let offsets: Vec<u64> = views
        .iter()
        .map(|v| {
            let cube = <Float as wgpu_split_burn::SplitKind>::into_cube(v.clone()).unwrap();
            let client = cube.client.clone();
            client
                .get_resource::<burn_cubecl::cubecl::wgpu::WgpuServer<burn_cubecl::cubecl::wgpu::AutoCompiler>>(cube.handle)
                .unwrap()
                .resource()
                .offset
        })
        .collect();
    assert!(
        offsets.iter().all(|o| o % 16 == 0),
        "burn made a view off a vec4 boundary: {offsets:?}"
    );
    for view in views {
        for (chunks, dim) in [(2, 0), (2, 1), (5, 1)] {
            let ours = s.chunk(view.clone(), chunks, dim).unwrap();
            let burns = view.clone().chunk(chunks, dim);
            for (a, b) in ours.into_iter().zip(burns) {
                assert_eq!(bytes_of(a), bytes_of(b));
            }
        }
    }
}
