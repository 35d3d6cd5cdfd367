//! The host path against the naive per-element oracle, for every element type,
//! ranks 1 to 6, every axis, zero-length outputs and zero-size inputs.

mod common;

use common::{Rng, assert_outputs_equal, naive_split, random_tensor};
use proptest::prelude::*;
use wgpu_split::error::{ResolveError, TensorError};
use wgpu_split::{
    ElementType, Error, HostTensor, OnnxSplit, OnnxSplitToSequence, ParamTensor, ResolvedSplit,
};

fn check(input: &HostTensor, split: &ResolvedSplit, context: &str) {
    let actual = input.split(split).unwrap();
    let expected = naive_split(input, split);
    assert_outputs_equal(&expected, &actual, context);
}

#[test]
fn every_type_every_rank_every_axis_against_the_oracle() {
    let mut rng = Rng::new(1);
    let mut cases = 0;
    for element_type in ElementType::ALL {
        for rank in 1..=6 {
            for axis in 0..rank {
                for _ in 0..3 {
                    // Small dims keep rank 6 cheap; 0 appears now and then.
                    let shape: Vec<usize> = (0..rank)
                        .map(|d| {
                            if d == axis {
                                rng.below(8)
                            } else {
                                rng.below(4) + usize::from(rng.below(8) != 0)
                            }
                        })
                        .collect();
                    let count = rng.below(4) + 1;
                    let lengths = rng.lengths(shape[axis], count);
                    let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
                    let input = random_tensor(&mut rng, element_type, &shape);
                    check(
                        &input,
                        &split,
                        &format!("{element_type} {shape:?} axis {axis} {:?}", split.lengths()),
                    );
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 26 * 21 * 3);
}

#[test]
fn negative_axes_resolve_and_split_like_positive_ones() {
    let mut rng = Rng::new(2);
    let shape = [3, 4, 5];
    let input = random_tensor(&mut rng, ElementType::Int4, &shape);
    for axis in -3i64..0 {
        let op = OnnxSplit::new(13, 1).axis(axis);
        let split = op.resolve(&shape).unwrap();
        let positive = OnnxSplit::new(13, 1)
            .axis(axis + 3)
            .resolve(&shape)
            .unwrap();
        assert_eq!(split, positive);
        check(&input, &split, &format!("axis {axis}"));
    }
}

#[test]
fn zero_length_outputs_and_zero_size_inputs() {
    let mut rng = Rng::new(3);
    for element_type in ElementType::ALL {
        let input = random_tensor(&mut rng, element_type, &[2, 5, 3]);
        let split = ResolvedSplit::new(&[2, 5, 3], 1, vec![0, 5, 0, 0], true).unwrap();
        let outputs = input.split(&split).unwrap();
        assert_eq!(outputs.len(), 4);
        assert!(outputs[0].is_empty() && outputs[2].is_empty() && outputs[3].is_empty());
        check(&input, &split, &format!("{element_type} zero-length"));

        let empty = random_tensor(&mut rng, element_type, &[0, 4]);
        let split = ResolvedSplit::new(&[0, 4], 1, vec![1, 3], true).unwrap();
        let outputs = empty.split(&split).unwrap();
        assert_eq!(outputs[1].shape(), &[0, 3]);
        assert!(outputs.iter().all(HostTensor::is_empty));
        check(&empty, &split, &format!("{element_type} zero-size"));
    }
}

#[test]
fn four_bit_outputs_are_repacked_from_their_own_first_element() {
    // int4 [2, 3]: rows (1, 2, 3) and (4, 5, 6); bytes 0x21 0x43 0x65.
    let input = HostTensor::from_raw(ElementType::Int4, &[2, 3], vec![0x21, 0x43, 0x65]).unwrap();
    let split = ResolvedSplit::new(&[2, 3], 1, vec![1, 2], true).unwrap();
    let out = input.split(&split).unwrap();
    assert_eq!(out[0].as_bytes().unwrap(), &[0x41]); // (1, 4)
    assert_eq!(out[1].as_bytes().unwrap(), &[0x32, 0x65]); // (2, 3, 5, 6)
    // Odd count: the last byte's high nibble is zero even if the input's padding is not.
    let input = HostTensor::from_raw(ElementType::Uint4, &[3], vec![0x21, 0xF3]).unwrap();
    let split = ResolvedSplit::new(&[3], 0, vec![1, 2], true).unwrap();
    let out = input.split(&split).unwrap();
    assert_eq!(out[0].as_bytes().unwrap(), &[0x01]);
    assert_eq!(out[1].as_bytes().unwrap(), &[0x32]);
    // 2-bit: four per byte.
    let input =
        HostTensor::from_raw(ElementType::Int2, &[5], vec![0b11_10_01_00, 0b11_11_11_01]).unwrap();
    let split = ResolvedSplit::new(&[5], 0, vec![3, 2], true).unwrap();
    let out = input.split(&split).unwrap();
    assert_eq!(out[0].as_bytes().unwrap(), &[0b00_10_01_00]);
    assert_eq!(out[1].as_bytes().unwrap(), &[0b00_00_01_11]);
}

#[test]
fn bits_survive_nan_payloads_and_negative_zero() {
    let values = [
        f32::from_bits(0x7FC0_1234),
        -0.0,
        f32::from_bits(0xFF80_0001),
        1.0,
    ];
    let input = HostTensor::from_slice(&[4], &values).unwrap();
    let out = wgpu_split::Operator::from(OnnxSplit::new(13, 2))
        .split_on_host(&input)
        .unwrap();
    let bits: Vec<u32> = out
        .iter()
        .flat_map(|t| t.to_vec::<f32>().unwrap())
        .map(f32::to_bits)
        .collect();
    assert_eq!(bits, values.map(f32::to_bits));
}

#[test]
fn sequences_without_keepdims_drop_the_axis() {
    let input = HostTensor::from_slice(&[2, 3], &[1i64, 2, 3, 4, 5, 6]).unwrap();
    let op = OnnxSplitToSequence::new(11).axis(1).keepdims(0);
    let out = wgpu_split::Operator::from(op)
        .split_on_host(&input)
        .unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[1].shape(), &[2]);
    assert_eq!(out[1].to_vec::<i64>().unwrap(), vec![2, 5]);
}

#[test]
fn strings_split_on_the_host() {
    let input = HostTensor::from_strings(&[2, 2], &["a", "bb", "", "dddd"]).unwrap();
    let op = OnnxSplit::new(13, 2)
        .axis(1)
        .split_input(ParamTensor::int64_1d(&[1, 1]));
    let out = wgpu_split::Operator::from(op)
        .split_on_host(&input)
        .unwrap();
    assert_eq!(out[0].to_strings().unwrap(), vec!["a", ""]);
    assert_eq!(out[1].to_strings().unwrap(), vec!["bb", "dddd"]);
}

#[test]
fn a_tensor_of_another_shape_is_rejected() {
    let input = HostTensor::from_slice(&[4], &[1u8, 2, 3, 4]).unwrap();
    let split = ResolvedSplit::new(&[2, 2], 0, vec![1, 1], true).unwrap();
    assert_eq!(
        input.split(&split),
        Err(Error::Resolve(ResolveError::ShapeMismatch {
            expected: vec![2, 2],
            actual: vec![4]
        }))
    );
}

#[test]
fn larger_tensors_with_mid_byte_runs() {
    let mut rng = Rng::new(4);
    for element_type in [
        ElementType::Int4,
        ElementType::Uint2,
        ElementType::Float16,
        ElementType::Complex128,
    ] {
        let shape = [37, 129];
        let input = random_tensor(&mut rng, element_type, &shape);
        let split = ResolvedSplit::new(&shape, 1, vec![1, 63, 0, 65], true).unwrap();
        check(&input, &split, &format!("{element_type} large"));
    }
}

fn problem() -> impl Strategy<Value = (usize, Vec<usize>, usize, Vec<usize>, u64)> {
    (
        0..ElementType::ALL.len(),
        prop::collection::vec(0usize..6, 1..=5),
        any::<u64>(),
    )
        .prop_flat_map(|(t, shape, seed)| {
            let rank = shape.len();
            (Just(t), Just(shape), 0..rank, 1usize..6, Just(seed))
        })
        .prop_map(|(t, shape, axis, count, seed)| {
            let mut rng = Rng::new(seed);
            let lengths = rng.lengths(shape[axis], count);
            (t, shape, axis, lengths, seed)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_problems_match_the_oracle((t, shape, axis, lengths, seed) in problem()) {
        let element_type = ElementType::ALL[t];
        let mut rng = Rng::new(seed ^ 0xABCD);
        let input = random_tensor(&mut rng, element_type, &shape);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let actual = input.split(&split).unwrap();
        prop_assert_eq!(naive_split(&input, &split), actual);
    }
}

#[test]
fn large_splits_use_every_core_and_stay_exact() {
    let mut rng = Rng::new(5);
    for (element_type, shape, axis, lengths) in [
        (ElementType::Float, vec![2100, 1000], 1, vec![333, 0, 667]),
        (ElementType::Float, vec![2100, 1000], 0, vec![1, 2098, 1]),
        (ElementType::Float, vec![25_001, 85], 1, vec![4, 1, 80]),
        (
            ElementType::Uint8,
            vec![9, 1100, 1000],
            1,
            vec![550, 549, 1],
        ),
        (ElementType::Complex128, vec![56, 10_000], 0, vec![24, 32]),
    ] {
        let input = random_tensor(&mut rng, element_type, &shape);
        // Past the host path's 8 MiB threshold: every core takes a share.
        assert!(input.as_bytes().unwrap().len() >= 8 << 20);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        check(
            &input,
            &split,
            &format!("{element_type} {shape:?} axis {axis}"),
        );
    }
}

#[test]
fn split_into_checks_the_buffers_it_is_given() {
    let input = HostTensor::from_slice(&[2, 3], &[1u16, 2, 3, 4, 5, 6]).unwrap();
    let split = ResolvedSplit::new(&[2, 3], 1, vec![1, 2], true).unwrap();
    let (mut a, mut b) = ([0u8; 4], [0u8; 7]);
    let e = input
        .split_into(&split, &mut [&mut a[..], &mut b[..]])
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor(TensorError::DataLength {
                expected: 8,
                actual: 7,
                ..
            })
        ),
        "{e}"
    );
    let e = input.split_into(&split, &mut [&mut a[..]]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor(TensorError::DataLength {
                expected: 2,
                actual: 1,
                ..
            })
        ),
        "{e}"
    );
    let strings = HostTensor::from_strings(&[2, 3], &["a"; 6]).unwrap();
    let mut c = [0u8; 8];
    assert!(
        strings
            .split_into(&split, &mut [&mut a[..], &mut c[..]])
            .is_err()
    );
}

#[test]
fn empty_runs_of_zero_size_tensors_with_huge_outer_dims_cost_nothing() {
    // Found by the hardening fuzz: [2^33, 0] used to loop 2^33 times.
    for element_type in [ElementType::Int4, ElementType::Float, ElementType::String] {
        let input = random_tensor(&mut Rng::new(9), element_type, &[1 << 33, 0]);
        let split = ResolvedSplit::new(&[1 << 33, 0], 1, vec![0, 0], true).unwrap();
        let started = std::time::Instant::now();
        let outputs = input.split(&split).unwrap();
        assert_eq!(outputs[0].shape(), &[1 << 33, 0]);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
