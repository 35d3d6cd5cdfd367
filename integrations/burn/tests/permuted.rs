//! Attention heads in one pass on burn tensors: `split_heads` bit-exact
//! against burn's `split_with_sizes` + `reshape` + `swap_dims` + contiguous
//! copy, `merge_heads` against burn's `swap_dims` + `reshape` + `cat`, the
//! general forms against the core crate's host path, and misuse refused.

mod common;

use burn::tensor::{DType, Float, Tensor};
use common::*;
use wgpu_split::{HostTensor, InputMove, PermutedConcat, PermutedSplit, PieceMove, ResolvedSplit};
use wgpu_split_burn::BurnSplitError;

/// burn's own heads: split on the width, each piece `[B, S, H, D]` with
/// heads and sequence swapped (a view; read back in its logical order).
fn burns_heads(x: Tensor<3>, widths: &[usize], d: usize) -> Vec<Tensor<4>> {
    let [b, s, _] = x.dims();
    x.split_with_sizes(widths.to_vec(), 2)
        .into_iter()
        .zip(widths)
        .map(|(p, &w)| p.reshape([b, s, w / d, d]).swap_dims(1, 2))
        .collect()
}

#[test]
fn split_heads_matches_burns_split_reshape_swap_dims_and_copy() {
    let (_, s) = gpu();
    // GPT-2-style QKV (3 x 4 heads of 8), grouped-query (4 + 2 + 2 heads
    // of 16), odd head widths; f32, f16 and bf16.
    for (dtype, shape, widths, d) in [
        (DType::F32, [2, 10, 96], vec![32; 3], 8),
        (DType::F16, [1, 12, 128], vec![64, 32, 32], 16),
        (DType::BF16, [3, 5, 27], vec![9; 3], 3),
        (DType::F16, [2, 7, 15], vec![5; 3], 5),
    ] {
        let count: usize = shape.iter().product();
        let bytes = bytes_for(dtype, count, 39);
        let x: Tensor<3> = tensor(bytes.clone(), shape, dtype);
        let ours = s.split_heads(x.clone(), &widths, d).unwrap();
        // burn's own moves where its kernels take the dtype (cubecl's WGSL
        // has no bf16 on this device), the host path always.
        let host = HostTensor::from_raw(element(dtype), &shape, bytes).unwrap();
        let split = PermutedSplit::split_heads(&shape, &widths, d).unwrap();
        let expected = host.split_permuted(&split).unwrap();
        let theirs = (dtype != DType::BF16).then(|| burns_heads(x, &widths, d));
        assert_eq!(ours.len(), expected.len());
        for (i, a) in ours.into_iter().enumerate() {
            assert_eq!(a.dims().to_vec(), expected[i].shape().to_vec());
            assert_eq!(a.dtype(), dtype);
            let got = bytes_of(a);
            assert_eq!(
                got,
                expected[i].as_bytes().unwrap(),
                "{dtype:?} {shape:?} head {i}"
            );
            if let Some(theirs) = &theirs {
                assert_eq!(
                    got,
                    bytes_of(theirs[i].clone()),
                    "{dtype:?} {shape:?} head {i}, burn"
                );
            }
        }
    }
}

#[test]
fn merge_heads_matches_burns_swap_dims_reshape_and_cat() {
    let (_, s) = gpu();
    for (dtype, shapes) in [
        (DType::F32, vec![[2, 4, 10, 8]; 3]),
        (
            DType::F16,
            vec![[1, 4, 12, 16], [1, 2, 12, 16], [1, 2, 12, 16]],
        ),
        (DType::F16, vec![[3, 3, 5, 3]; 2]),
    ] {
        let heads: Vec<Tensor<4>> = shapes
            .iter()
            .enumerate()
            .map(|(i, sh)| {
                tensor(
                    bytes_for(dtype, sh.iter().product(), 7 + i as u64),
                    *sh,
                    dtype,
                )
            })
            .collect();
        let ours = s.merge_heads(heads.clone()).unwrap();
        let theirs = Tensor::cat(
            heads
                .into_iter()
                .map(|h| {
                    let [b, n, seq, d] = h.dims();
                    h.swap_dims(1, 2).reshape([b, seq, n * d])
                })
                .collect(),
            2,
        );
        assert_eq!(ours.shape(), theirs.shape(), "{dtype:?}");
        assert_eq!(bytes_of(ours), bytes_of(theirs), "{dtype:?} {shapes:?}");
    }
}

#[test]
fn general_permuted_moves_match_the_host_path_and_round_trip() {
    let (device, s) = gpu();
    // Transposes of the fastest axis (the tile kernel on GPUs), f32 and
    // f64 (where the device has it), into two pieces, against the host path and burn's swap_dims;
    // then joined back by the concat that undoes them.
    let shape = [2, 48, 40];
    for dtype in [DType::F32, DType::F64] {
        if !device.supports_dtype(dtype) {
            continue;
        }
        let permuted = PermutedSplit::new(
            ResolvedSplit::new(&shape, 1, vec![16, 32], true).unwrap(),
            vec![
                PieceMove::new(vec![2, 16, 40], vec![0, 2, 1]),
                PieceMove::new(vec![2, 32, 40], vec![0, 2, 1]),
            ],
        )
        .unwrap();
        let bytes = bytes_for(dtype, shape.iter().product(), 3);
        let host = HostTensor::from_raw(element(dtype), &shape, bytes.clone()).unwrap();
        let expected = host.split_permuted(&permuted).unwrap();
        let x: Tensor<3> = tensor(bytes, shape, dtype);
        let out: Vec<Tensor<3>> = s.split_as(x.clone(), &permuted).unwrap();
        let burns = x.clone().split_with_sizes(vec![16, 32], 1);
        for (i, (o, want)) in out.iter().zip(&expected).enumerate() {
            assert_eq!(o.dims().to_vec(), want.shape().to_vec());
            assert_eq!(
                bytes_of(o.clone()),
                want.as_bytes().unwrap(),
                "{dtype:?} {i}"
            );
            let theirs = burns[i].clone().swap_dims(1, 2);
            assert_eq!(bytes_of(o.clone()), bytes_of(theirs), "{dtype:?} {i}, burn");
        }
        let back = PermutedConcat::new(
            &permuted.output_shapes(),
            vec![
                InputMove::new(vec![2, 16, 40], vec![0, 2, 1]),
                InputMove::new(vec![2, 32, 40], vec![0, 2, 1]),
            ],
            1,
        )
        .unwrap();
        let joined: Tensor<3> = s.concat_as(out, &back).unwrap();
        assert_eq!(bytes_of(joined), bytes_of(x), "{dtype:?} round trip");
    }
    // Outputs of two ranks: the general form takes one.
    let mixed = PermutedSplit::new(
        ResolvedSplit::new(&shape, 1, vec![16, 32], true).unwrap(),
        vec![
            PieceMove::new(vec![2, 4, 4, 40], vec![0, 2, 1, 3]),
            PieceMove::new(vec![2, 32, 40], vec![0, 2, 1]),
        ],
    )
    .unwrap();
    let x: Tensor<3> = tensor(bytes_for(DType::F32, 2 * 48 * 40, 5), shape, DType::F32);
    assert!(matches!(
        s.split_as::<3, 4, Float, _>(x, &mixed),
        Err(BurnSplitError::OutputRank {
            asked: 4,
            actual: 3
        })
    ));
}

#[test]
fn misuse_is_refused_typed() {
    let (_, s) = gpu();
    let x: Tensor<3> = tensor(bytes_for(DType::F32, 2 * 3 * 12, 1), [2, 3, 12], DType::F32);
    // Widths past the tensor's, heads that are not whole.
    let e = s.split_heads(x.clone(), &[8, 8], 2).unwrap_err();
    assert!(
        matches!(e, BurnSplitError::Split(wgpu_split::Error::Permute(_))),
        "{e:?}"
    );
    assert!(matches!(
        s.split_heads(x.clone(), &[6, 6], 4),
        Err(BurnSplitError::Split(wgpu_split::Error::Permute(_)))
    ));
    // A split made for another shape.
    let other = PermutedSplit::split_heads(&[2, 3, 24], &[12, 12], 4).unwrap();
    assert!(matches!(
        s.split_as::<3, 4, Float, _>(x.clone(), &other),
        Err(BurnSplitError::Split(_))
    ));
    // Heads that disagree on the sequence, and inputs the concat was not
    // made for.
    let a: Tensor<4> = tensor(
        bytes_for(DType::F32, 2 * 2 * 3 * 4, 2),
        [2, 2, 3, 4],
        DType::F32,
    );
    let b: Tensor<4> = tensor(
        bytes_for(DType::F32, 2 * 2 * 5 * 4, 3),
        [2, 2, 5, 4],
        DType::F32,
    );
    assert!(matches!(
        s.merge_heads(vec![a.clone(), b]),
        Err(BurnSplitError::Split(wgpu_split::Error::Permute(_)))
    ));
    let merge = PermutedConcat::merge_heads(&[[2, 2, 3, 4]; 2]).unwrap();
    assert!(matches!(
        s.concat_as::<4, 3, Float, _>(vec![a.clone()], &merge),
        Err(BurnSplitError::Split(wgpu_split::Error::Concat(
            wgpu_split::ConcatError::InputCountMismatch {
                expected: 2,
                actual: 1
            }
        )))
    ));
    // Inputs of different dtypes.
    let h: Tensor<4> = tensor(
        bytes_for(DType::F16, 2 * 2 * 3 * 4, 4),
        [2, 2, 3, 4],
        DType::F16,
    );
    assert!(matches!(
        s.merge_heads(vec![a, h]),
        Err(BurnSplitError::DTypeMismatch { index: 1, .. })
    ));
}
