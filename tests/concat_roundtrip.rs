//! Concat as split's mirror, as properties over random shapes, element
//! types (sub-byte included) and every split operator and framework call:
//! `concat(split(x)) == x` bit for bit whenever the split's windows tile its
//! axis (and the concat's mirror is that very split), the concatenation of
//! the windows otherwise; and `split(mirror, concat(xs)) == xs` for every
//! concat operator and call.

mod common;

use common::concat::{Join, canonical, check_concat, naive_concat};
use common::{Rng, random_tensor};
use proptest::prelude::*;
use wgpu_split::frameworks::{Burn, Candle, Numpy, Torch};
use wgpu_split::{
    ElementType, HostTensor, OnnxConcat, OnnxConcatFromSequence, OnnxSplit, OnnxSplitToSequence,
    OpenVinoConcat, OpenVinoSplit, OpenVinoVariadicSplit, ParamTensor, ResolvedConcat,
    ResolvedSplit,
};

/// The split operators and calls, by name.
const SPLITS: &[&str] = &[
    "Split-1",
    "Split-2",
    "Split-11",
    "Split-13",
    "Split-13 equal",
    "Split-18 num_outputs",
    "Split-18 lengths",
    "SplitToSequence",
    "SplitToSequence keepdims 0",
    "SplitToSequence scalar",
    "SplitToSequence lengths",
    "SplitToSequence ORT shapes",
    "VariadicSplit",
    "OpenVINO Split",
    "torch.chunk",
    "torch.split",
    "torch.split_with_sizes",
    "torch.tensor_split count",
    "torch.tensor_split indices",
    "torch.unbind",
    "torch.narrow",
    "numpy.array_split",
    "numpy.split",
    "candle chunk",
    "burn chunk",
];

fn ints(values: &[usize]) -> Vec<i64> {
    values.iter().map(|&v| v as i64).collect()
}

/// Split `which` of `shape` along `axis` with random arguments, or `None`
/// when these arguments are refused (an uneven equal split, say).
fn random_split(rng: &mut Rng, which: &str, shape: &[usize], axis: usize) -> Option<ResolvedSplit> {
    let dim = shape[axis];
    let a = axis as i64
        - if rng.below(2) == 0 {
            0
        } else {
            shape.len() as i64
        };
    let count = rng.below(4) + 1;
    let lengths = rng.lengths(dim, count);
    let k = rng.below(5) as i64 + 1;
    let split = match which {
        "Split-1" => OnnxSplit::new(1, count)
            .axis(a)
            .split_attribute(&ints(&lengths))
            .resolve(shape),
        "Split-2" => OnnxSplit::new(2, count)
            .axis(a)
            .split_attribute(&ints(&lengths))
            .resolve(shape),
        "Split-11" => OnnxSplit::new(11, count)
            .axis(a)
            .split_attribute(&ints(&lengths))
            .resolve(shape),
        "Split-13" => OnnxSplit::new(13, count)
            .axis(a)
            .split_input(ParamTensor::int64_1d(&ints(&lengths)))
            .resolve(shape),
        "Split-13 equal" => OnnxSplit::new(13, count).axis(a).resolve(shape),
        "Split-18 num_outputs" => {
            let declared = rng.below(count) + 1; // fewer declared outputs too
            OnnxSplit::new(18, declared)
                .axis(a)
                .num_outputs(count as i64)
                .resolve(shape)
        }
        "Split-18 lengths" => OnnxSplit::new(18, count)
            .axis(a)
            .split_input(ParamTensor::int64_1d(&ints(&lengths)))
            .resolve(shape),
        "SplitToSequence" => OnnxSplitToSequence::new(11).axis(a).resolve(shape),
        "SplitToSequence keepdims 0" => OnnxSplitToSequence::new(24)
            .axis(a)
            .keepdims(0)
            .resolve(shape),
        "SplitToSequence scalar" => OnnxSplitToSequence::new(11)
            .axis(a)
            .split(ParamTensor::int64_scalar(k))
            .resolve(shape),
        "SplitToSequence lengths" => OnnxSplitToSequence::new(11)
            .axis(a)
            .split(ParamTensor::int64_1d(&ints(&lengths)))
            .resolve(shape),
        "SplitToSequence ORT shapes" => OnnxSplitToSequence::new(11)
            .axis(a)
            .keepdims(0)
            .split(ParamTensor::int64_scalar(1))
            .onnxruntime_shapes()
            .resolve(shape),
        "VariadicSplit" => {
            let mut given = ints(&lengths);
            given[rng.below(count)] = -1;
            OpenVinoVariadicSplit::new(ParamTensor::int64_scalar(a), ParamTensor::int64_1d(&given))
                .resolve(shape)
        }
        "OpenVINO Split" => OpenVinoSplit::new(ParamTensor::int64_scalar(a), k).resolve(shape),
        "torch.chunk" => return Torch::chunk(shape, k, a).ok(),
        "torch.split" => return Torch::split(shape, k, a).ok(),
        "torch.split_with_sizes" => return Torch::split_with_sizes(shape, &ints(&lengths), a).ok(),
        "torch.tensor_split count" => return Torch::tensor_split(shape, k, a).ok(),
        "torch.tensor_split indices" => {
            let indices: Vec<i64> = (0..count).map(|_| rng.below(dim + 3) as i64 - 1).collect();
            return Torch::tensor_split(shape, &indices[..], a).ok();
        }
        "torch.unbind" => return Torch::unbind(shape, a).ok(),
        "torch.narrow" => {
            let start = rng.below(dim + 1);
            let length = rng.below(dim - start + 1);
            return Torch::narrow(shape, a, start as i64, length as i64).ok();
        }
        "numpy.array_split" => return Numpy::array_split(shape, k, a).ok(),
        "numpy.split" => return Numpy::split(shape, k, a).ok(),
        "candle chunk" => return Candle::chunk(shape, k as usize, a).ok(),
        "burn chunk" => return Burn::chunk(shape, k as usize, axis).ok(),
        other => panic!("unknown split {other}"),
    };
    split.ok()
}

/// True when the windows tile the axis: contiguous from 0, covering it.
fn tiles(split: &ResolvedSplit) -> bool {
    let dim = split.input_shape()[split.axis()];
    split.output_count() > 0
        && split.is_contiguous()
        && split.lengths().iter().sum::<usize>() == dim
}

/// `concat(split(x))`: `x` itself when the split tiles its axis (through the
/// concat whose mirror is the split), else the concatenation of the windows.
/// Returns whether the split had an inverse.
fn check_round_trip(x: &HostTensor, split: &ResolvedSplit, context: &str) -> bool {
    let outputs = x.split(split).unwrap();
    let refs: Vec<&HostTensor> = outputs.iter().collect();
    match ResolvedConcat::inverse_of(split) {
        Some(concat) => {
            assert_eq!(concat.mirror(), split, "{context}");
            assert!(tiles(split), "{context}");
            let y = HostTensor::concat(&refs, &concat).unwrap();
            assert_eq!(y, canonical(x), "{context}");
            true
        }
        None => {
            assert!(
                !tiles(split) || !split.keep_axis() && outputs.is_empty(),
                "{context}"
            );
            if split.keep_axis() && !outputs.is_empty() {
                let shapes: Vec<&[usize]> = refs.iter().map(|t| t.shape()).collect();
                let concat = ResolvedConcat::new(&shapes, split.axis()).unwrap();
                let y = HostTensor::concat(&refs, &concat).unwrap();
                assert_eq!(y, naive_concat(&refs, Join::Cat(split.axis())), "{context}");
            }
            false
        }
    }
}

#[test]
fn every_split_operator_and_call_is_undone_by_its_inverse_concat() {
    let mut rng = Rng::new(41);
    for which in SPLITS {
        let (mut inverses, mut others) = (0, 0);
        for case in 0..60 {
            let element_type = ElementType::ALL[case % ElementType::ALL.len()];
            let rank = rng.below(4) + 1;
            let shape: Vec<usize> = (0..rank).map(|_| rng.below(6)).collect();
            let axis = rng.below(rank);
            let Some(split) = random_split(&mut rng, which, &shape, axis) else {
                continue;
            };
            let x = random_tensor(&mut rng, element_type, &shape);
            let context = format!("{which} {element_type} {shape:?} {split:?}");
            if check_round_trip(&x, &split, &context) {
                inverses += 1;
            } else {
                others += 1;
            }
        }
        // Every operator's splits tile their axis at least sometimes.
        assert!(inverses > 0, "{which}: no inverse in {others} splits");
        if [
            "torch.narrow",
            "torch.tensor_split indices",
            "Split-18 num_outputs",
        ]
        .contains(which)
        {
            assert!(others > 0, "{which}: every split tiled");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn concat_of_split_is_the_input(
        which in 0..SPLITS.len(),
        t in 0..ElementType::ALL.len(),
        shape in prop::collection::vec(0usize..7, 1..=4),
        axis_seed in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng::new(seed);
        let axis = axis_seed % shape.len();
        if let Some(split) = random_split(&mut rng, SPLITS[which], &shape, axis) {
            let x = random_tensor(&mut rng, ElementType::ALL[t], &shape);
            check_round_trip(&x, &split, &format!("{} {shape:?} {split:?}", SPLITS[which]));
        }
    }

    #[test]
    fn split_of_concat_is_the_inputs(
        which in 0..12usize,
        t in 0..ElementType::ALL.len(),
        base in prop::collection::vec(0usize..5, 0..=4),
        count in 1usize..5,
        axis_seed in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng::new(seed);
        let element_type = ElementType::ALL[t];
        let rank = base.len();
        let stacking = which >= 7;
        if rank == 0 && !stacking && which != 6 {
            return Ok(()); // scalars only stack or flatten
        }
        let positions = if stacking { rank + 1 } else { rank.max(1) };
        let axis = axis_seed % positions;
        let shapes: Vec<Vec<usize>> = (0..count)
            .map(|_| {
                let mut shape = base.clone();
                if !stacking && rank > 0 {
                    shape[axis] = rng.below(5);
                }
                shape
            })
            .collect();
        let a = axis as i64 - if rng.below(2) == 0 { 0 } else { positions as i64 };
        let (concat, join) = match which {
            0 => (OnnxConcat::new(13).axis(a).resolve(&shapes), Join::Cat(axis)),
            1 => (OnnxConcat::new(4).axis(axis as i64).resolve(&shapes), Join::Cat(axis)),
            2 => (OnnxConcatFromSequence::new(11).axis(a).resolve(&shapes), Join::Cat(axis)),
            3 => (OpenVinoConcat::new(a).resolve(&shapes), Join::Cat(axis)),
            4 => (Torch::cat(&shapes, a), Join::Cat(axis)),
            5 => (Candle::cat(&shapes, a), Join::Cat(axis)),
            6 => (Numpy::concatenate(&shapes, None), Join::Flatten),
            7 => (OnnxConcatFromSequence::new(11).axis(a).new_axis(1).resolve(&shapes), Join::Stack(axis)),
            8 => (Torch::stack(&shapes, a), Join::Stack(axis)),
            9 => (Numpy::stack(&shapes, a), Join::Stack(axis)),
            10 => (Candle::stack(&shapes, a), Join::Stack(axis)),
            _ => (Burn::stack(&shapes, a), Join::Stack(axis)),
        };
        let concat = concat.unwrap();
        let inputs: Vec<HostTensor> = shapes
            .iter()
            .map(|s| random_tensor(&mut rng, element_type, s))
            .collect();
        // torch skips [0] inputs: the oracle joins the others.
        let context = format!("{which} {element_type} {shapes:?} axis {axis}");
        check_concat(&inputs, &concat, join, &context);
    }
}
