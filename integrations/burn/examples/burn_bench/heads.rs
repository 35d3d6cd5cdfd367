//! The attention-head cases (issue 39): `BurnSplitter::split_heads`
//! against burn's `split_with_sizes`, `reshape`, `swap_dims` and its
//! contiguous-copy kernel on each piece (what a burn model runs before the
//! attention kernel reads Q, K and V); `BurnSplitter::merge_heads` against
//! `swap_dims`, `reshape` and `Tensor::cat`. Timed from the call to the
//! device having finished, both checked equal byte for byte first.

use burn::tensor::{DType, Tensor, TensorData};
use burn_cubecl::cubecl::wgpu::wgpu;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use wgpu_split_burn::{BurnSplitter, SplitKind};

use super::{Timing, alternate};

/// One case: a fused projection `[B, S, ΣW]` into heads of `head_dim`
/// (`merge`: the heads joined back instead).
pub struct Case {
    pub name: &'static str,
    pub dtype: DType,
    pub shape: [usize; 3],
    pub widths: Vec<usize>,
    pub head_dim: usize,
    pub merge: bool,
}

impl Case {
    /// Bytes of the fused tensor.
    pub fn bytes(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.size()
    }
}

/// Every case; `quick` shrinks them.
pub fn suite(quick: bool) -> Vec<Case> {
    let s = if quick { 128 } else { 1024 };
    let gpt2 = |merge| Case {
        name: if merge {
            "f16_gpt2_merge_heads"
        } else {
            "f16_gpt2_split_heads"
        },
        dtype: DType::F16,
        shape: [8, s, 2304],
        widths: vec![768; 3],
        head_dim: 64,
        merge,
    };
    vec![
        gpt2(false),
        // Grouped-query: 32 query heads, 8 key and 8 value heads of 128.
        Case {
            name: "f16_gqa_split_heads",
            dtype: DType::F16,
            shape: [4, s, 48 * 128],
            widths: vec![4096, 1024, 1024],
            head_dim: 128,
            merge: false,
        },
        gpt2(true),
    ]
}

/// burn's heads: each piece reshaped, heads and sequence swapped, and
/// made contiguous by burn's kernel.
fn burns_heads<K: SplitKind>(x: &Tensor<3, K>, widths: &[usize], d: usize) -> Vec<CubeTensor> {
    let [b, s, _] = x.dims();
    x.clone()
        .split_with_sizes(widths.to_vec(), 2)
        .into_iter()
        .zip(widths)
        .map(|(p, &w)| {
            let h: Tensor<4, K> = p.reshape([b, s, w / d, d]).swap_dims(1, 2);
            into_contiguous(K::into_cube(h).expect("a wgpu tensor"))
        })
        .collect()
}

/// burn's merge: each head's sequence and heads swapped back, reshaped,
/// then concatenated.
fn burns_merge<K: SplitKind>(heads: Vec<Tensor<4, K>>) -> Tensor<3, K> {
    let merged = heads
        .into_iter()
        .map(|h| {
            let [b, n, s, d] = h.dims();
            h.swap_dims(1, 2).reshape([b, s, n * d])
        })
        .collect();
    Tensor::cat(merged, 2)
}

/// Runs `case`: its tensor made on burn's device, checked, then timed.
pub fn run<K: SplitKind>(
    splitter: &BurnSplitter,
    wgpu_device: &wgpu::Device,
    case: &Case,
    runs: usize,
) -> Timing {
    let device = splitter.device();
    let dtype = case.dtype;
    let bytes: Vec<u8> = (0..case.bytes())
        .map(|b| (b * 7 % 251) as u8 & 0x3f)
        .collect();
    let x: Tensor<3, K> = Tensor::from_data(
        TensorData::from_bytes_vec(bytes, case.shape, dtype),
        (device, dtype),
    );
    let (widths, d) = (case.widths.as_slice(), case.head_dim);
    let ours = splitter
        .split_heads(x.clone(), widths, d)
        .expect("split_heads runs");
    let theirs = burns_heads(&x, widths, d);
    for (a, b) in ours.iter().zip(theirs) {
        let b: Tensor<4, K> = K::from_cube(b);
        assert_eq!(
            a.clone().into_data().as_bytes(),
            b.into_data().as_bytes(),
            "wgpu-split and burn disagree on {}",
            case.name
        );
    }
    if !case.merge {
        return alternate(
            device,
            wgpu_device,
            runs,
            || splitter.split_heads(x.clone(), widths, d).unwrap(),
            || burns_heads(&x, widths, d),
        );
    }
    let merged = splitter
        .merge_heads(ours.clone())
        .expect("merge_heads runs");
    assert_eq!(
        merged.into_data().as_bytes(),
        burns_merge(ours.clone()).into_data().as_bytes(),
        "wgpu-split and burn disagree on {}",
        case.name
    );
    alternate(
        device,
        wgpu_device,
        runs,
        || splitter.merge_heads(ours.clone()).unwrap(),
        || burns_merge(ours.clone()),
    )
}
