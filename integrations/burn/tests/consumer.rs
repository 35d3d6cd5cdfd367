//! burn computation consuming the outputs: attention scores from the Q and
//! K of a QKV split equal the same computation on burn's own split.

mod common;

use burn::tensor::activation::softmax;
use burn::tensor::{DType, Tensor};
use common::*;

const B: usize = 2;
const T: usize = 16;
const H: usize = 2;
const DH: usize = 8;

/// softmax(Q K^T / sqrt(d)) V for heads laid out as [B, T, H * DH].
fn attention(q: Tensor<3>, k: Tensor<3>, v: Tensor<3>) -> Tensor<4> {
    let heads = |t: Tensor<3>| t.reshape([B, T, H, DH]).swap_dims(1, 2);
    let scores = heads(q)
        .matmul(heads(k).swap_dims(2, 3))
        .div_scalar((DH as f32).sqrt());
    softmax(scores, 3).matmul(heads(v))
}

#[test]
fn attention_on_our_qkv_split_matches_attention_on_burns() {
    let (_, s) = gpu();
    let bytes = bytes_for(DType::F32, B * T * 3 * H * DH, 21);
    // Scale the values down so softmax is not saturated.
    let qkv: Tensor<3> =
        tensor::<3, burn::tensor::Float>(bytes, [B, T, 3 * H * DH], DType::F32).div_scalar(300.0);
    let ours = s.chunk(qkv.clone(), 3, 2).unwrap();
    let burns = qkv.chunk(3, 2);
    for (a, b) in ours.iter().zip(&burns) {
        assert_eq!(bytes_of(a.clone()), bytes_of(b.clone()), "the split itself");
    }
    let [q, k, v]: [Tensor<3>; 3] = ours.try_into().unwrap();
    let [bq, bk, bv]: [Tensor<3>; 3] = burns.try_into().unwrap();
    let got = attention(q, k, v).into_data();
    let want = attention(bq, bk, bv).into_data();
    let values = got.as_slice::<f32>().unwrap();
    assert_eq!(values.len(), B * H * T * DH);
    assert!(
        values.iter().any(|&x| x != 0.0),
        "a computation that produced something"
    );
    // Bit for bit: burn's kernels read our contiguous outputs and its own
    // strided views in the same order.
    assert_eq!(got.as_bytes(), want.as_bytes());
}
