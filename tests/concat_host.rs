//! The host concat against the naive per-element oracle, for every element
//! type, ranks 1 to 6, every axis, stacks and flattens, zero-length and
//! skipped inputs; its checks of the tensors it is given.

mod common;

use common::concat::{Join, canonical, check_concat};
use common::{Rng, random_tensor};
use wgpu_split::error::{ConcatError, TensorError};
use wgpu_split::frameworks::{Candle, Numpy, Torch};
use wgpu_split::{
    ElementType, Error, HostTensor, OnnxConcat, OnnxConcatFromSequence, ResolvedConcat,
};

fn random_dims(rng: &mut Rng, rank: usize) -> Vec<usize> {
    (0..rank)
        .map(|_| rng.below(4) + usize::from(rng.below(8) != 0))
        .collect()
}

#[test]
fn every_type_every_rank_every_axis_against_the_oracle() {
    let mut rng = Rng::new(31);
    let mut cases = 0;
    for element_type in ElementType::ALL {
        for rank in 1..=6 {
            for axis in 0..rank {
                let base = random_dims(&mut rng, rank);
                let count = rng.below(4) + 1;
                let inputs: Vec<HostTensor> = (0..count)
                    .map(|_| {
                        let mut shape = base.clone();
                        shape[axis] = rng.below(5); // zero-length inputs too
                        random_tensor(&mut rng, element_type, &shape)
                    })
                    .collect();
                let shapes: Vec<&[usize]> = inputs.iter().map(HostTensor::shape).collect();
                let concat = ResolvedConcat::new(&shapes, axis).unwrap();
                let context = format!("{element_type} {shapes:?} axis {axis}");
                check_concat(&inputs, &concat, Join::Cat(axis), &context);
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 26 * 21);
}

#[test]
fn stacks_of_every_type_on_every_new_axis() {
    let mut rng = Rng::new(32);
    for element_type in ElementType::ALL {
        for rank in 0..=4 {
            let shape = random_dims(&mut rng, rank);
            let count = rng.below(4) + 1;
            let inputs: Vec<HostTensor> = (0..count)
                .map(|_| random_tensor(&mut rng, element_type, &shape))
                .collect();
            let shapes: Vec<&[usize]> = inputs.iter().map(HostTensor::shape).collect();
            for axis in 0..=rank {
                let concat = Torch::stack(&shapes, axis as i64).unwrap();
                let context = format!("{element_type} stack {shape:?} x{count} axis {axis}");
                check_concat(&inputs, &concat, Join::Stack(axis), &context);
            }
        }
    }
}

#[test]
fn flattening_concats_of_every_type() {
    let mut rng = Rng::new(33);
    for element_type in ElementType::ALL {
        let shapes = [vec![2, 3], vec![], vec![5], vec![0, 4], vec![3, 1, 3]];
        let inputs: Vec<HostTensor> = shapes
            .iter()
            .map(|s| random_tensor(&mut rng, element_type, s))
            .collect();
        let concat = Numpy::concatenate(&shapes, None).unwrap();
        check_concat(
            &inputs,
            &concat,
            Join::Flatten,
            &format!("{element_type} flatten"),
        );
        // candle's single-tensor cat is a copy through the same 1-D view.
        let single = Candle::cat(&shapes[..1], 9).unwrap();
        let y = HostTensor::concat(&[&inputs[0]], &single).unwrap();
        assert_eq!(y, canonical(&inputs[0]), "{element_type}");
    }
}

#[test]
fn sub_byte_outputs_are_packed_from_element_0_with_zero_padding() {
    // int4 [2, 1] (1, 2) and [2, 2] (3, 4, 5, 6) on axis 1: rows (1, 3, 4), (2, 5, 6).
    let a = HostTensor::from_raw(ElementType::Int4, &[2, 1], vec![0x21]).unwrap();
    let b = HostTensor::from_raw(ElementType::Int4, &[2, 2], vec![0x43, 0x65]).unwrap();
    let concat = OnnxConcat::new(13)
        .axis(1)
        .resolve(&[[2, 1], [2, 2]])
        .unwrap();
    let y = HostTensor::concat(&[&a, &b], &concat).unwrap();
    assert_eq!(y.as_bytes().unwrap(), &[0x31, 0x24, 0x65]);
    // Odd counts with garbage in the inputs' padding: the output's last
    // byte ends in zero bits.
    let a = HostTensor::from_raw(ElementType::Uint4, &[1], vec![0xE7]).unwrap();
    let b = HostTensor::from_raw(ElementType::Uint4, &[2], vec![0x98]).unwrap();
    let concat = OnnxConcat::new(13).axis(0).resolve(&[[1], [2]]).unwrap();
    let y = HostTensor::concat(&[&a, &b], &concat).unwrap();
    assert_eq!(y.as_bytes().unwrap(), &[0x87, 0x09]);
    // 2-bit: four per byte.
    let a = HostTensor::from_raw(ElementType::Int2, &[3], vec![0b11_10_01_00]).unwrap();
    let b = HostTensor::from_raw(ElementType::Int2, &[2], vec![0b11_11_01_11]).unwrap();
    let concat = OnnxConcat::new(13).axis(0).resolve(&[[3], [2]]).unwrap();
    let y = HostTensor::concat(&[&a, &b], &concat).unwrap();
    assert_eq!(y.as_bytes().unwrap(), &[0b11_10_01_00, 0b00_00_00_01]);
}

#[test]
fn bits_survive_nan_payloads_and_negative_zero() {
    let a = HostTensor::from_slice(&[2], &[f32::from_bits(0x7FC0_1234), -0.0]).unwrap();
    let b = HostTensor::from_slice(&[1], &[f32::from_bits(0xFF80_0001)]).unwrap();
    let y = wgpu_split::ConcatOperator::from(OnnxConcat::new(13).axis(0))
        .concat_on_host(&[&a, &b])
        .unwrap();
    let bits: Vec<u32> = y
        .to_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(f32::to_bits)
        .collect();
    assert_eq!(bits, [0x7FC0_1234, 0x8000_0000, 0xFF80_0001]);
}

#[test]
fn strings_concatenate_on_the_host() {
    let a = HostTensor::from_strings(&[2, 1], &["a", ""]).unwrap();
    let b = HostTensor::from_strings(&[2, 2], &["bb", "c", "dddd", "é"]).unwrap();
    let y = wgpu_split::ConcatOperator::from(OnnxConcat::new(13).axis(1))
        .concat_on_host(&[&a, &b])
        .unwrap();
    assert_eq!(y.shape(), &[2, 3]);
    assert_eq!(
        y.to_strings().unwrap(),
        vec!["a", "bb", "c", "", "dddd", "é"]
    );
    let op = OnnxConcatFromSequence::new(11).axis(0).new_axis(1);
    let y = wgpu_split::ConcatOperator::from(op)
        .concat_on_host(&[&a, &a])
        .unwrap();
    assert_eq!(y.shape(), &[2, 2, 1]);
    assert_eq!(y.to_strings().unwrap(), vec!["a", "", "a", ""]);
}

#[test]
fn skipped_inputs_are_not_read_and_need_not_share_the_type() {
    let skipped = HostTensor::from_slice(&[0], &[0i64; 0]).unwrap();
    let x = HostTensor::from_slice(&[2, 2], &[1.0f32, 2., 3., 4.]).unwrap();
    let concat = Torch::cat(&[skipped.shape(), x.shape(), skipped.shape(), x.shape()], 1).unwrap();
    let y = HostTensor::concat(&[&skipped, &x, &skipped, &x], &concat).unwrap();
    assert_eq!(
        y.to_vec::<f32>().unwrap(),
        vec![1., 2., 1., 2., 3., 4., 3., 4.]
    );
    // Only skipped tensors: an empty result of the first one's type.
    let concat = Torch::cat(&[[0], [0]], 3).unwrap();
    let y = HostTensor::concat(&[&skipped, &skipped], &concat).unwrap();
    assert_eq!(
        (y.shape(), y.element_type()),
        (&[0][..], ElementType::Int64)
    );
}

#[test]
fn tensors_that_do_not_fit_the_concat_are_typed_errors() {
    let a = HostTensor::from_slice(&[2, 1], &[1u8, 2]).unwrap();
    let b = HostTensor::from_slice(&[2, 2], &[3u8, 4, 5, 6]).unwrap();
    let concat = ResolvedConcat::new(&[[2, 1], [2, 2]], 1).unwrap();
    assert_eq!(
        HostTensor::concat(&[&a], &concat),
        Err(Error::Concat(ConcatError::InputCountMismatch {
            expected: 2,
            actual: 1
        }))
    );
    assert_eq!(
        HostTensor::concat(&[&b, &a], &concat),
        Err(Error::Concat(ConcatError::InputShapeMismatch {
            index: 0,
            expected: vec![2, 1],
            actual: vec![2, 2]
        }))
    );
    let wide = HostTensor::from_slice(&[2, 2], &[3u16, 4, 5, 6]).unwrap();
    assert_eq!(
        HostTensor::concat(&[&a, &wide], &concat),
        Err(Error::Concat(ConcatError::ElementTypeMismatch {
            index: 1,
            element_type: ElementType::Uint16,
            reference: 0,
            expected: ElementType::Uint8
        }))
    );
    let e = wgpu_split::ConcatOperator::from(OnnxConcat::new(13).axis(0))
        .concat_on_host(&[&a, &b])
        .unwrap_err();
    assert!(
        matches!(e, Error::Concat(ConcatError::DimMismatch { .. })),
        "{e}"
    );
}

#[test]
fn concat_into_writes_a_buffer_of_the_exact_length() {
    let mut rng = Rng::new(34);
    let inputs: Vec<HostTensor> = [[3, 2], [3, 5]]
        .iter()
        .map(|s| random_tensor(&mut rng, ElementType::Int4, s))
        .collect();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let concat = ResolvedConcat::new(&[[3, 2], [3, 5]], 1).unwrap();
    let expected = HostTensor::concat(&refs, &concat).unwrap();
    // A dirty buffer: every bit is written, padding included.
    let mut buffer = vec![0xFF; 11];
    HostTensor::concat_into(&refs, &concat, &mut buffer).unwrap();
    assert_eq!(buffer, expected.as_bytes().unwrap());
    let e = HostTensor::concat_into(&refs, &concat, &mut [0u8; 12]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor(TensorError::DataLength {
                expected: 11,
                actual: 12,
                ..
            })
        ),
        "{e}"
    );
    let s = HostTensor::from_strings(&[1], &["x"]).unwrap();
    let strings = ResolvedConcat::new(&[[1], [1]], 0).unwrap();
    let e = HostTensor::concat_into(&[&s, &s], &strings, &mut [0u8; 2]).unwrap_err();
    assert!(
        matches!(e, Error::Tensor(TensorError::NoPackedBytes { .. })),
        "{e}"
    );
    // A whole-byte type into a dirty buffer too.
    let f: Vec<HostTensor> = [[2, 3], [1, 3]]
        .iter()
        .map(|s| random_tensor(&mut rng, ElementType::Float16, s))
        .collect();
    let concat = ResolvedConcat::new(&[[2, 3], [1, 3]], 0).unwrap();
    let mut buffer = vec![0xAB; 18];
    HostTensor::concat_into(&[&f[0], &f[1]], &concat, &mut buffer).unwrap();
    assert_eq!(
        buffer,
        HostTensor::concat(&[&f[0], &f[1]], &concat)
            .unwrap()
            .as_bytes()
            .unwrap()
    );
}

#[test]
fn large_concats_use_every_core_and_stay_exact() {
    let mut rng = Rng::new(35);
    for (element_type, shapes, axis) in [
        // C2f's channel concat, smaller: one long run per input.
        (ElementType::Float, vec![vec![1, 64, 160, 80]; 3], 1),
        (
            ElementType::Float,
            vec![vec![2100, 333], vec![2100, 0], vec![2100, 667]],
            1,
        ),
        (
            ElementType::Float,
            vec![vec![25_001, 4], vec![25_001, 1], vec![25_001, 80]],
            1,
        ),
        (
            ElementType::Uint8,
            vec![vec![9, 550, 1000], vec![9, 549, 1000], vec![9, 1, 1000]],
            1,
        ),
        (
            ElementType::Complex128,
            vec![vec![24, 10_000], vec![32, 10_000]],
            0,
        ),
    ] {
        let inputs: Vec<HostTensor> = shapes
            .iter()
            .map(|s| random_tensor(&mut rng, element_type, s))
            .collect();
        let concat = ResolvedConcat::new(&shapes, axis).unwrap();
        let total: usize = inputs.iter().map(|t| t.as_bytes().unwrap().len()).sum();
        // Past the host path's 8 MiB threshold: every core takes a share.
        assert!(total >= 8 << 20);
        check_concat(
            &inputs,
            &concat,
            Join::Cat(axis),
            &format!("{element_type} {shapes:?}"),
        );
    }
}

#[test]
fn zero_size_outputs_with_huge_outer_dims_cost_nothing() {
    for element_type in [ElementType::Int4, ElementType::Float, ElementType::String] {
        let input = random_tensor(&mut Rng::new(9), element_type, &[1 << 33, 0]);
        let concat = ResolvedConcat::new(&[[1 << 33, 0], [1 << 33, 0]], 1).unwrap();
        let started = std::time::Instant::now();
        let y = HostTensor::concat(&[&input, &input], &concat).unwrap();
        assert_eq!(y.shape(), &[1 << 33, 0]);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
