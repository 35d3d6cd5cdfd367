//! The concat cases: `BurnSplitter::cat` / `stack` against burn's own
//! `Tensor::cat` / `Tensor::stack`, from the call to the device having
//! finished, both checked equal byte for byte first.

use burn::tensor::{DType, Tensor, TensorData};
use burn_cubecl::cubecl::wgpu::wgpu;
use wgpu_split_burn::BurnSplitter;

use super::{Timing, alternate};

/// One concat: tensors of `shapes` concatenated (or stacked) on `dim`.
pub struct Case {
    pub name: &'static str,
    pub dtype: DType,
    pub shapes: Vec<Vec<usize>>,
    pub dim: i64,
    pub stack: bool,
}

impl Case {
    /// Bytes of the output.
    pub fn bytes(&self) -> usize {
        let count: usize = self
            .shapes
            .iter()
            .map(|s| s.iter().product::<usize>())
            .sum();
        count * self.dtype.size()
    }
}

/// Every case; `quick` shrinks them.
pub fn suite(quick: bool) -> Vec<Case> {
    let q = |full: usize, small: usize| if quick { small } else { full };
    vec![
        // YOLOv8's C2f: three maps concatenated on the channels.
        Case {
            name: "f32_3x1x64x80x80_c2f",
            dtype: DType::F32,
            shapes: vec![vec![1, 64, q(80, 40), q(80, 40)]; 3],
            dim: 1,
            stack: false,
        },
        // Attention's head merge: eight heads side by side on the last dim.
        Case {
            name: "f16_8x8x512x64_heads",
            dtype: DType::F16,
            shapes: vec![vec![q(8, 2), 512, 64]; 8],
            dim: -1,
            stack: false,
        },
        // A batcher's stack: images on a new batch dim.
        Case {
            name: "f32_32x3x224x224_batch",
            dtype: DType::F32,
            shapes: vec![vec![3, q(224, 64), q(224, 64)]; q(32, 4)],
            dim: 0,
            stack: true,
        },
    ]
}

/// Times `ours` against `theirs` on `inputs`, alternating, after checking
/// them equal.
fn bench<const D: usize, const D2: usize>(
    device: &burn::tensor::Device,
    wgpu_device: &wgpu::Device,
    inputs: Vec<Tensor<D>>,
    ours: impl Fn(Vec<Tensor<D>>) -> Tensor<D2>,
    theirs: impl Fn(Vec<Tensor<D>>) -> Tensor<D2>,
    runs: usize,
) -> Timing {
    let (a, b) = (ours(inputs.clone()), theirs(inputs.clone()));
    assert_eq!(
        a.shape(),
        b.shape(),
        "wgpu-split and burn disagree on the shape"
    );
    assert_eq!(
        a.into_data().as_bytes(),
        b.into_data().as_bytes(),
        "wgpu-split and burn disagree"
    );
    alternate(
        device,
        wgpu_device,
        runs,
        || ours(inputs.clone()),
        || theirs(inputs.clone()),
    )
}

/// Runs `case`: its inputs made on burn's device, then timed.
pub fn run(
    splitter: &BurnSplitter,
    wgpu_device: &wgpu::Device,
    case: &Case,
    runs: usize,
) -> Timing {
    let device = splitter.device();
    let (dtype, dim) = (case.dtype, case.dim);
    macro_rules! ranked {
        ($d:literal, $d2:literal) => {{
            let inputs: Vec<Tensor<$d>> = case
                .shapes
                .iter()
                .enumerate()
                .map(|(i, shape)| {
                    let dims: [usize; $d] = shape.as_slice().try_into().unwrap();
                    let count = dims.iter().product::<usize>() * dtype.size();
                    let bytes = (0..count).map(|b| ((b + i) * 7 % 251) as u8 & 0x3f);
                    Tensor::from_data(
                        TensorData::from_bytes_vec(bytes.collect(), dims, dtype),
                        (device, dtype),
                    )
                })
                .collect();
            if case.stack {
                bench::<$d, $d2>(
                    device,
                    wgpu_device,
                    inputs,
                    |v| splitter.stack(v, dim).expect("the stack runs"),
                    |v| Tensor::stack(v, dim),
                    runs,
                )
            } else {
                bench::<$d, $d>(
                    device,
                    wgpu_device,
                    inputs,
                    |v| splitter.cat(v, dim).expect("the concat runs"),
                    |v| Tensor::cat(v, dim),
                    runs,
                )
            }
        }};
    }
    match case.shapes[0].len() {
        3 => ranked!(3, 4),
        4 => ranked!(4, 5),
        r => panic!("no concat case of rank {r}"),
    }
}
