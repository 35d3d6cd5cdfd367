//! Every concat rule and decision of SEMANTICS.md ("Concat"), errors
//! included, one test each: ONNX Concat 1/4/11/13, ConcatFromSequence 11,
//! OpenVINO Concat-1, the frameworks' cat/stack calls and direct concats.

use wgpu_split::frameworks::{Burn, Candle, Numpy, Torch};
use wgpu_split::{
    ConcatError, ConcatOperator, FrameworkCall, OnnxConcat, OnnxConcatFromSequence, OpId, OpKind,
    OpenVinoConcat, ResolvedConcat,
};

type Resolve = Box<dyn Fn(&[Vec<usize>], i64) -> Result<ResolvedConcat, ConcatError>>;

/// Every operator and call that concatenates along an existing axis, each
/// with the axis wrapping from `-rank`.
fn cat_ops() -> Vec<(&'static str, Resolve)> {
    vec![
        (
            "Concat-4",
            Box::new(|s, a| OnnxConcat::new(4).axis(a).resolve(s)),
        ),
        (
            "Concat-11",
            Box::new(|s, a| OnnxConcat::new(11).axis(a).resolve(s)),
        ),
        (
            "Concat-13",
            Box::new(|s, a| OnnxConcat::new(13).axis(a).resolve(s)),
        ),
        (
            "Concat-1",
            Box::new(|s, a| OnnxConcat::new(1).axis(a).resolve(s)),
        ),
        (
            "ConcatFromSequence new_axis 0",
            Box::new(|s, a| OnnxConcatFromSequence::new(11).axis(a).resolve(s)),
        ),
        (
            "OpenVINO",
            Box::new(|s, a| OpenVinoConcat::new(a).resolve(s)),
        ),
        ("torch.cat", Box::new(Torch::cat)),
        ("torch.concat", Box::new(Torch::concat)),
        (
            "numpy.concatenate",
            Box::new(|s, a| Numpy::concatenate(s, Some(a))),
        ),
        ("candle cat", Box::new(Candle::cat)),
        ("burn cat", Box::new(Burn::cat)),
    ]
}

/// Every operator and call that stacks on a new axis.
fn stack_ops() -> Vec<(&'static str, Resolve)> {
    vec![
        (
            "ConcatFromSequence new_axis 1",
            Box::new(|s, a| {
                OnnxConcatFromSequence::new(11)
                    .axis(a)
                    .new_axis(1)
                    .resolve(s)
            }),
        ),
        ("torch.stack", Box::new(Torch::stack)),
        ("numpy.stack", Box::new(Numpy::stack)),
        ("candle stack", Box::new(Candle::stack)),
        ("burn stack", Box::new(Burn::stack)),
    ]
}

fn shapes(list: &[&[usize]]) -> Vec<Vec<usize>> {
    list.iter().map(|s| s.to_vec()).collect()
}

// ---- concatenation along an existing axis --------------------------------------

#[test]
fn cat_is_the_split_of_the_output_into_the_inputs_lengths() {
    let inputs = shapes(&[&[2, 3, 4], &[2, 1, 4], &[2, 5, 4]]);
    for (name, resolve) in cat_ops() {
        for axis in [1, -2] {
            let concat = resolve(&inputs, axis).unwrap();
            assert_eq!(concat.output_shape(), &[2, 9, 4], "{name}");
            assert_eq!(concat.input_shapes(), inputs.as_slice(), "{name}");
            let mirror = concat.mirror();
            assert_eq!(mirror.input_shape(), &[2, 9, 4], "{name}");
            assert_eq!((mirror.axis(), concat.axis()), (1, 1), "{name}");
            assert_eq!(mirror.lengths(), &[3, 1, 5], "{name}");
            assert_eq!(mirror.starts(), &[0, 3, 4], "{name}");
            assert!(mirror.keep_axis() && mirror.is_contiguous(), "{name}");
            assert_eq!(concat.mirror_outputs(), &[Some(0), Some(1), Some(2)]);
            for (i, input) in inputs.iter().enumerate() {
                assert_eq!(&mirror.output_shape(i), input, "{name} input {i}");
                assert_eq!(concat.mirror_output(i), Some(i));
            }
            assert_eq!(concat.mirror_output(3), None);
        }
    }
}

#[test]
fn zero_length_inputs_are_zero_length_windows_and_one_input_is_a_copy() {
    let inputs = shapes(&[&[2, 0], &[2, 3], &[2, 0]]);
    for (name, resolve) in cat_ops() {
        let concat = resolve(&inputs, 1).unwrap();
        assert_eq!(concat.output_shape(), &[2, 3], "{name}");
        assert_eq!(concat.mirror().lengths(), &[0, 3, 0], "{name}");
        assert_eq!(concat.mirror().starts(), &[0, 0, 3], "{name}");
        // A zero-size output: every window empty.
        let concat = resolve(&shapes(&[&[0, 2], &[0, 5]]), 1).unwrap();
        assert_eq!(concat.output_shape(), &[0, 7], "{name}");
        let single = resolve(&shapes(&[&[4, 2]]), 0).unwrap();
        assert_eq!(single.output_shape(), &[4, 2], "{name}");
        assert_eq!(single.mirror_outputs(), &[Some(0)], "{name}");
    }
}

#[test]
fn cat_axis_range_is_minus_rank_to_rank_minus_one() {
    let inputs = shapes(&[&[2, 3, 4], &[2, 3, 4]]);
    for (name, resolve) in cat_ops() {
        for axis in -3..=2 {
            let concat = resolve(&inputs, axis).unwrap();
            assert_eq!(concat.axis() as i64, (axis + 3) % 3, "{name}");
        }
        for axis in [-4, 3, i64::MAX, i64::MIN] {
            let e = resolve(&inputs, axis).unwrap_err();
            assert_eq!(
                e,
                ConcatError::AxisOutOfRange {
                    op: concat_op_id(&e),
                    axis,
                    rank: 3,
                    min: -3,
                    max: 2
                },
                "{name}"
            );
        }
    }
}

/// The operator an error names (every resolution error names one).
fn concat_op_id(e: &ConcatError) -> OpId {
    match e {
        ConcatError::AxisOutOfRange { op, .. }
        | ConcatError::NoInputs { op }
        | ConcatError::ScalarInput { op, .. }
        | ConcatError::RankMismatch { op, .. }
        | ConcatError::DimMismatch { op, .. }
        | ConcatError::UnequalShapes { op, .. }
        | ConcatError::TooManyInputs { op, .. }
        | ConcatError::InputOverflow { op, .. }
        | ConcatError::OutputOverflow { op, .. }
        | ConcatError::MissingAxis { op }
        | ConcatError::NewAxisOutOfRange { op, .. } => *op,
        other => panic!("{other} names no operator"),
    }
}

#[test]
fn inputs_must_agree_in_rank() {
    for (name, resolve) in cat_ops() {
        let e = resolve(&shapes(&[&[2, 3], &[2, 3], &[6]]), 0).unwrap_err();
        assert!(
            matches!(
                e,
                ConcatError::RankMismatch {
                    index: 2,
                    rank: 1,
                    reference: 0,
                    expected: 2,
                    ..
                }
            ),
            "{name}: {e}"
        );
    }
}

#[test]
fn inputs_must_agree_on_every_dimension_but_the_axis() {
    for (name, resolve) in cat_ops() {
        let e = resolve(&shapes(&[&[2, 3, 4], &[2, 5, 4], &[2, 3, 7]]), 1).unwrap_err();
        assert!(
            matches!(
                e,
                ConcatError::DimMismatch {
                    axis: 1,
                    index: 2,
                    dim: 2,
                    size: 7,
                    reference: 0,
                    expected: 4,
                    ..
                }
            ),
            "{name}: {e}"
        );
        // The axis itself may differ, nothing else.
        assert!(resolve(&shapes(&[&[2, 3, 4], &[2, 5, 4]]), 1).is_ok());
        let e = resolve(&shapes(&[&[2, 3, 4], &[2, 5, 4]]), 0).unwrap_err();
        assert!(
            matches!(e, ConcatError::DimMismatch { dim: 1, .. }),
            "{name}: {e}"
        );
    }
}

#[test]
fn scalars_cannot_be_concatenated() {
    for (name, resolve) in cat_ops().into_iter().filter(|(n, _)| *n != "candle cat") {
        for axis in [0, -1] {
            let e = resolve(&shapes(&[&[], &[]]), axis).unwrap_err();
            assert!(
                matches!(e, ConcatError::ScalarInput { index: 0, .. }),
                "{name}: {e}"
            );
        }
        // A scalar after a tensor: a rank mismatch, except for torch, which
        // names the scalar's position.
        let e = resolve(&shapes(&[&[2], &[]]), 0).unwrap_err();
        if name.starts_with("torch") {
            assert!(
                matches!(e, ConcatError::ScalarInput { index: 1, .. }),
                "{name}: {e}"
            );
        } else {
            assert!(
                matches!(
                    e,
                    ConcatError::RankMismatch {
                        index: 1,
                        rank: 0,
                        ..
                    }
                ),
                "{name}: {e}"
            );
        }
    }
}

#[test]
fn no_inputs_is_an_error_for_every_operator_and_call() {
    let none: &[Vec<usize>] = &[];
    let mut ops = cat_ops();
    ops.extend(stack_ops());
    ops.push((
        "numpy axis=None",
        Box::new(|s, _| Numpy::concatenate(s, None)),
    ));
    ops.push((
        "direct",
        Box::new(|s, a| ResolvedConcat::new(s, a as usize)),
    ));
    ops.push((
        "direct stack",
        Box::new(|s, a| ResolvedConcat::stack(s, a as usize)),
    ));
    for (name, resolve) in ops {
        let e = resolve(none, 0).unwrap_err();
        assert!(matches!(e, ConcatError::NoInputs { .. }), "{name}: {e}");
        assert!(e.to_string().contains("no inputs"), "{name}: {e}");
    }
}

#[test]
fn counts_and_sizes_past_the_limits_are_errors() {
    // Zero-sized shapes: a list of 2^24 + 1 inputs costs no memory.
    let many = vec![[0usize; 0]; wgpu_split::ResolvedSplit::MAX_OUTPUTS + 1];
    let e = OnnxConcat::new(13).axis(0).resolve(&many).unwrap_err();
    assert!(matches!(e, ConcatError::TooManyInputs { inputs, limit, .. }
        if inputs == wgpu_split::ResolvedSplit::MAX_OUTPUTS + 1 && limit == wgpu_split::ResolvedSplit::MAX_OUTPUTS));
    let e = Torch::stack(&many, 0).unwrap_err();
    assert!(matches!(e, ConcatError::TooManyInputs { .. }));

    let huge = usize::MAX / 2 + 1;
    let e = OnnxConcat::new(13)
        .axis(0)
        .resolve(&[[huge, 3]])
        .unwrap_err();
    assert!(
        matches!(e, ConcatError::InputOverflow { index: 0, .. }),
        "{e}"
    );
    // Each input fits, their concatenation does not.
    let e = OnnxConcat::new(13)
        .axis(0)
        .resolve(&[[huge], [huge]])
        .unwrap_err();
    assert!(
        matches!(&e, ConcatError::OutputOverflow { shape, .. } if shape == &[2 * huge as u128]),
        "{e}"
    );
    let e = Numpy::concatenate(&[[huge], [huge]], None).unwrap_err();
    assert!(matches!(e, ConcatError::OutputOverflow { .. }), "{e}");
    let e = Torch::stack(&[[huge], [huge]], 0).unwrap_err();
    assert!(matches!(e, ConcatError::OutputOverflow { .. }), "{e}");
    // A zero dimension does not excuse the others: [0, 2^63, 4] is refused
    // as its input is.
    let e = OnnxConcat::new(13)
        .axis(0)
        .resolve(&[[0, huge, 4]])
        .unwrap_err();
    assert!(matches!(e, ConcatError::InputOverflow { .. }), "{e}");
}

// ---- stacking on a new axis -----------------------------------------------------

#[test]
fn stack_is_the_mirror_of_unbind() {
    let inputs = shapes(&[&[2, 3], &[2, 3], &[2, 3], &[2, 3]]);
    for (name, resolve) in stack_ops() {
        for (axis, output) in [
            (0, [4, 2, 3]),
            (1, [2, 4, 3]),
            (2, [2, 3, 4]),
            (-1, [2, 3, 4]),
        ] {
            let concat = resolve(&inputs, axis).unwrap();
            assert_eq!(concat.output_shape(), &output, "{name} axis {axis}");
            let mirror = concat.mirror();
            assert_eq!(mirror.input_shape(), &output);
            assert!(!mirror.keep_axis(), "{name}");
            assert_eq!(mirror.lengths(), &[1; 4]);
            assert_eq!(mirror.output_shapes(), inputs, "{name}");
            assert_eq!(
                mirror,
                &Torch::unbind(&output, axis).unwrap(),
                "{name} axis {axis}"
            );
        }
    }
}

#[test]
fn stack_axis_range_is_minus_rank_minus_one_to_rank() {
    let inputs = shapes(&[&[2, 3], &[2, 3]]);
    for (name, resolve) in stack_ops() {
        for axis in -3..=2 {
            assert_eq!(
                resolve(&inputs, axis).unwrap().axis() as i64,
                (axis + 3) % 3
            );
        }
        for axis in [-4, 3] {
            let e = resolve(&inputs, axis).unwrap_err();
            assert!(
                matches!(e, ConcatError::AxisOutOfRange { axis: a, rank: 2, min: -3, max: 2, .. } if a == axis),
                "{name}: {e}"
            );
        }
    }
}

#[test]
fn stacked_inputs_must_have_equal_shapes() {
    for (name, resolve) in stack_ops() {
        for other in [&[2, 4][..], &[3, 3], &[6], &[2, 3, 1]] {
            let e = resolve(&shapes(&[&[2, 3], &[2, 3], other]), 0).unwrap_err();
            assert!(
                matches!(&e, ConcatError::UnequalShapes { index: 2, shape, reference: 0, expected, .. }
                    if shape == other && expected == &[2, 3]),
                "{name}: {e}"
            );
        }
    }
}

#[test]
fn scalars_stack_into_a_vector_and_empty_tensors_stack() {
    for (name, resolve) in stack_ops() {
        let concat = resolve(&shapes(&[&[], &[], &[]]), 0).unwrap();
        assert_eq!(concat.output_shape(), &[3], "{name}");
        assert_eq!(
            concat.mirror().output_shapes(),
            vec![Vec::<usize>::new(); 3]
        );
        assert_eq!(resolve(&shapes(&[&[]]), -1).unwrap().output_shape(), &[1]);
        assert!(matches!(
            resolve(&shapes(&[&[], &[]]), 1),
            Err(ConcatError::AxisOutOfRange {
                rank: 0,
                min: -1,
                max: 0,
                ..
            })
        ));
        let concat = resolve(&shapes(&[&[0, 3], &[0, 3]]), 1).unwrap();
        assert_eq!(concat.output_shape(), &[0, 2, 3], "{name}");
    }
}

// ---- ONNX Concat ------------------------------------------------------------------

#[test]
fn concat_opsets_select_versions_1_4_11_13() {
    for (opset, version) in [
        (1, 1),
        (3, 1),
        (4, 4),
        (10, 4),
        (11, 11),
        (12, 11),
        (13, 13),
        (24, 13),
    ] {
        let id = OnnxConcat::new(opset).op_id().unwrap();
        assert_eq!(
            id,
            OpId {
                kind: OpKind::OnnxConcat,
                version
            },
            "opset {opset}"
        );
    }
    for opset in [0, -1] {
        let e = OnnxConcat::new(opset).axis(0).resolve(&[[1]]).unwrap_err();
        assert_eq!(
            e,
            ConcatError::UnsupportedOpset {
                kind: OpKind::OnnxConcat,
                opset
            }
        );
    }
    assert_eq!(
        OnnxConcat::new(13)
            .axis(0)
            .resolve(&[[1]])
            .unwrap()
            .op()
            .to_string(),
        "ONNX Concat-13"
    );
}

#[test]
fn concat_1_axis_defaults_to_1_and_later_opsets_require_it() {
    let inputs = shapes(&[&[2, 3], &[2, 4]]);
    let concat = OnnxConcat::new(1).resolve(&inputs).unwrap();
    assert_eq!((concat.axis(), concat.output_shape()), (1, &[2, 7][..]));
    // The default is 1 even where it does not exist: a rank-1 input.
    let e = OnnxConcat::new(1).resolve(&[[2], [3]]).unwrap_err();
    assert!(
        matches!(
            e,
            ConcatError::AxisOutOfRange {
                axis: 1,
                rank: 1,
                ..
            }
        ),
        "{e}"
    );
    for opset in [4, 10, 11, 13, 21] {
        let e = OnnxConcat::new(opset).resolve(&inputs).unwrap_err();
        assert!(
            matches!(e, ConcatError::MissingAxis { .. }),
            "opset {opset}: {e}"
        );
        assert!(e.to_string().contains("axis is required"));
    }
}

#[test]
fn negative_axes_are_accepted_at_every_opset() {
    // Decision: ONNX documents negative axes from Concat-11; onnxruntime
    // (from its Concat-4 kernel) and onnx.reference accept them at every
    // opset, as this crate's Split does.
    for opset in [1, 4, 10, 11, 13] {
        let concat = OnnxConcat::new(opset)
            .axis(-1)
            .resolve(&[[2, 3], [2, 4]])
            .unwrap();
        assert_eq!(concat.output_shape(), &[2, 7], "opset {opset}");
    }
}

#[test]
fn an_axis_equal_to_the_rank_is_an_error_not_a_reshape() {
    // Decision: onnx.reference reshapes inputs to rank axis + 1 and
    // concatenates [2, 3] and [2, 3] on axis 2 into [2, 3, 2]; the
    // specification's range [-r, r-1], shape inference and onnxruntime
    // refuse.
    let e = OnnxConcat::new(13)
        .axis(2)
        .resolve(&[[2, 3], [2, 3]])
        .unwrap_err();
    assert!(
        matches!(
            e,
            ConcatError::AxisOutOfRange {
                axis: 2,
                rank: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn empty_inputs_follow_the_same_shape_rules() {
    // Decision: onnxruntime skips empty inputs whose other dimensions do
    // not match ([2, 3] and [0, 5] on axis 0 give [2, 3]; an empty [0, 0, 0]
    // passes next to rank-2 inputs); the specification, shape inference and
    // onnx.reference refuse, and so does this crate.
    for (inputs, axis) in [
        (shapes(&[&[2, 3], &[0, 5]]), 0),
        (shapes(&[&[0, 5], &[2, 3]]), 0),
        (shapes(&[&[0, 3], &[2, 0]]), 1),
    ] {
        let e = OnnxConcat::new(13).axis(axis).resolve(&inputs).unwrap_err();
        assert!(
            matches!(e, ConcatError::DimMismatch { index: 1, .. }),
            "{inputs:?}: {e}"
        );
    }
    let e = OnnxConcat::new(13)
        .axis(1)
        .resolve(&[vec![2, 3], vec![0, 0, 0]])
        .unwrap_err();
    assert!(
        matches!(
            e,
            ConcatError::RankMismatch {
                index: 1,
                rank: 3,
                ..
            }
        ),
        "{e}"
    );
}

// ---- ONNX ConcatFromSequence --------------------------------------------------------

#[test]
fn concat_from_sequence_is_opset_11_with_a_required_axis() {
    let op = OnnxConcatFromSequence::new(11).axis(0);
    assert_eq!(
        op.op_id().unwrap(),
        OpId {
            kind: OpKind::OnnxConcatFromSequence,
            version: 11
        }
    );
    assert_eq!(OnnxConcatFromSequence::new(24).op_id().unwrap().version, 11);
    let e = OnnxConcatFromSequence::new(10)
        .axis(0)
        .resolve(&[[1]])
        .unwrap_err();
    assert!(matches!(e, ConcatError::UnsupportedOpset { opset: 10, .. }));
    let e = OnnxConcatFromSequence::new(11).resolve(&[[1]]).unwrap_err();
    assert!(matches!(e, ConcatError::MissingAxis { .. }));
    let e = OnnxConcatFromSequence::new(11)
        .new_axis(1)
        .resolve(&[[1]])
        .unwrap_err();
    assert!(matches!(e, ConcatError::MissingAxis { .. }));
}

#[test]
fn new_axis_0_concatenates_and_1_stacks() {
    let seq = shapes(&[&[2, 3], &[2, 3]]);
    let cat = OnnxConcatFromSequence::new(11)
        .axis(1)
        .resolve(&seq)
        .unwrap();
    assert_eq!(cat.output_shape(), &[2, 6]);
    let stacked = OnnxConcatFromSequence::new(11)
        .axis(1)
        .new_axis(1)
        .resolve(&seq)
        .unwrap();
    assert_eq!(stacked.output_shape(), &[2, 2, 3]);
    // The axis ranges: [-r, r-1] concatenating, [-r-1, r] stacking.
    let e = OnnxConcatFromSequence::new(11)
        .axis(2)
        .resolve(&seq)
        .unwrap_err();
    assert!(matches!(
        e,
        ConcatError::AxisOutOfRange {
            min: -2,
            max: 1,
            ..
        }
    ));
    let stacked = OnnxConcatFromSequence::new(11)
        .axis(2)
        .new_axis(1)
        .resolve(&seq)
        .unwrap();
    assert_eq!(stacked.output_shape(), &[2, 3, 2]);
    let stacked = OnnxConcatFromSequence::new(11)
        .axis(-3)
        .new_axis(1)
        .resolve(&seq)
        .unwrap();
    assert_eq!(stacked.output_shape(), &[2, 2, 3]);
}

#[test]
fn new_axis_other_than_0_and_1_is_an_error() {
    // Decision: onnxruntime stacks for any non-zero value, onnx.reference
    // concatenates for anything but 1, and ONNX shape inference rejects
    // ("new_axis must be either 0 or 1"): such a node has no one meaning.
    for new_axis in [2, -1, i64::MAX] {
        let e = OnnxConcatFromSequence::new(11)
            .axis(0)
            .new_axis(new_axis)
            .resolve(&[[2, 3], [2, 3]])
            .unwrap_err();
        assert!(
            matches!(e, ConcatError::NewAxisOutOfRange { new_axis: n, .. } if n == new_axis),
            "{e}"
        );
    }
}

#[test]
fn an_empty_sequence_is_an_error() {
    // onnxruntime: "Must have 1 or more inputs"; onnx.reference: "need at
    // least one array to concatenate". The output's shape is unknown.
    let empty: &[Vec<usize>] = &[];
    for new_axis in [0, 1] {
        let op = OnnxConcatFromSequence::new(11).axis(0).new_axis(new_axis);
        let e = op.resolve(empty).unwrap_err();
        assert!(matches!(e, ConcatError::NoInputs { .. }), "{e}");
        let e = ConcatOperator::from(op).resolve(empty).unwrap_err();
        assert!(matches!(e, ConcatError::NoInputs { .. }));
    }
}

// ---- OpenVINO Concat-1 ----------------------------------------------------------------

#[test]
fn openvino_concat_takes_negative_axes_and_refuses_scalars() {
    let concat = OpenVinoConcat::new(-3).resolve(&[[1, 8, 50], [1, 16, 50], [1, 32, 50]]);
    let e = concat.unwrap_err();
    assert!(matches!(e, ConcatError::DimMismatch { dim: 1, .. }));
    let concat = OpenVinoConcat::new(1)
        .resolve(&[[1, 8, 50], [1, 16, 50], [1, 32, 50]])
        .unwrap();
    assert_eq!(concat.output_shape(), &[1, 56, 50]);
    assert_eq!(concat.op(), OpenVinoConcat::OP);
    let e = OpenVinoConcat::new(0).resolve(&[[0usize; 0]]).unwrap_err();
    assert!(matches!(e, ConcatError::ScalarInput { .. }));
}

// ---- torch ------------------------------------------------------------------------------

#[test]
fn torch_cat_skips_1d_empty_tensors_whatever_the_others_rank() {
    let concat = Torch::cat(&shapes(&[&[0], &[2, 3], &[0], &[2, 2]]), 1).unwrap();
    assert_eq!(concat.output_shape(), &[2, 5]);
    assert_eq!(concat.mirror_outputs(), &[None, Some(0), None, Some(1)]);
    assert_eq!(concat.mirror().output_count(), 2);
    assert_eq!(concat.input_count(), 4);
    // The dimension wraps against the first tensor that takes part.
    let concat = Torch::cat(&shapes(&[&[0], &[2, 3, 1]]), -1).unwrap();
    assert_eq!(concat.output_shape(), &[2, 3, 1]);
    let e = Torch::cat(&shapes(&[&[0], &[2, 3]]), 2).unwrap_err();
    assert!(matches!(e, ConcatError::AxisOutOfRange { rank: 2, .. }));
    // Only 1-D empty tensors are skipped: [0, 3] takes part and must match.
    let e = Torch::cat(&shapes(&[&[0, 3], &[2, 4]]), 0).unwrap_err();
    assert!(matches!(
        e,
        ConcatError::DimMismatch {
            index: 1,
            dim: 1,
            size: 4,
            expected: 3,
            ..
        }
    ));
}

#[test]
fn torch_cat_of_only_skipped_tensors_is_empty_whatever_the_dimension() {
    for dim in [0, 1, 5, -1, -2] {
        let concat = Torch::cat(&shapes(&[&[0], &[0]]), dim).unwrap();
        assert_eq!(concat.output_shape(), &[0], "dim {dim}");
        assert_eq!(concat.mirror_outputs(), &[None, None]);
        assert_eq!(concat.mirror().output_count(), 0);
    }
}

#[test]
fn torch_names_the_position_of_a_scalar_and_the_call() {
    for (list, index) in [
        (shapes(&[&[], &[2]]), 0),
        (shapes(&[&[0], &[]]), 1),
        (shapes(&[&[2], &[]]), 1),
    ] {
        let e = Torch::cat(&list, 0).unwrap_err();
        assert_eq!(
            e,
            ConcatError::ScalarInput {
                op: OpId::call(FrameworkCall::TorchCat),
                index
            }
        );
    }
    let e = Torch::concat(&shapes(&[&[2], &[]]), 0).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("torch.concat: input 1 is a scalar"),
        "{e}"
    );
    let e = Torch::stack(&shapes(&[&[2, 3], &[2, 4]]), 0).unwrap_err();
    assert!(e.to_string().starts_with("torch.stack:"), "{e}");
}

// ---- numpy ------------------------------------------------------------------------------

#[test]
fn numpy_concatenate_axis_none_flattens_every_input() {
    let concat = Numpy::concatenate(&shapes(&[&[2, 3], &[4], &[], &[0, 7]]), None).unwrap();
    assert_eq!(concat.output_shape(), &[11]);
    let mirror = concat.mirror();
    assert_eq!((mirror.input_shape(), mirror.axis()), (&[11][..], 0));
    assert_eq!(mirror.lengths(), &[6, 4, 1, 0]);
    // Each mirror output is its input flattened: same elements, same order.
    for (i, shape) in concat.input_shapes().iter().enumerate() {
        let w = concat.mirror_output(i).unwrap();
        assert_eq!(
            mirror.output_shape(w),
            vec![shape.iter().product::<usize>()]
        );
    }
    // Any ranks, no axis check.
    assert!(Numpy::concatenate(&shapes(&[&[2, 3, 4], &[5]]), None).is_ok());
}

#[test]
fn numpy_refuses_a_scalar_first_array_and_names_a_later_one_by_rank() {
    let e = Numpy::concatenate(&shapes(&[&[], &[2]]), Some(0)).unwrap_err();
    assert!(matches!(e, ConcatError::ScalarInput { index: 0, .. }));
    let e = Numpy::concatenate(&shapes(&[&[2], &[]]), Some(0)).unwrap_err();
    assert!(matches!(
        e,
        ConcatError::RankMismatch {
            index: 1,
            rank: 0,
            expected: 1,
            ..
        }
    ));
    assert_eq!(
        Numpy::stack(&shapes(&[&[], &[]]), 0)
            .unwrap()
            .output_shape(),
        &[2]
    );
}

// ---- candle -----------------------------------------------------------------------------

#[test]
fn candle_cat_returns_one_tensor_unchanged_whatever_the_dimension() {
    for shape in [&[2, 3][..], &[], &[0, 4]] {
        for dim in [0, 7, -9] {
            let concat = Candle::cat(&[shape], dim).unwrap();
            assert_eq!(concat.output_shape(), shape);
            assert_eq!(concat.mirror_outputs(), &[Some(0)]);
            let count: usize = shape.iter().product();
            assert_eq!(concat.mirror().input_shape(), &[count]);
            assert_eq!(concat.mirror().lengths(), &[count]);
        }
    }
    // Two or more are checked.
    let e = Candle::cat(&shapes(&[&[2, 3], &[2, 3]]), 7).unwrap_err();
    assert!(matches!(e, ConcatError::AxisOutOfRange { .. }));
}

#[test]
fn candle_stack_minus_one_appends() {
    let concat = Candle::stack(&shapes(&[&[2, 3], &[2, 3]]), -1).unwrap();
    assert_eq!(concat.output_shape(), &[2, 3, 2]);
    let concat = Candle::stack(&shapes(&[&[2, 3]]), 0).unwrap();
    assert_eq!(concat.output_shape(), &[1, 2, 3]);
}

// ---- burn -------------------------------------------------------------------------------

#[test]
fn burn_cat_and_stack_wrap_negative_dimensions() {
    let concat = Burn::cat(&shapes(&[&[2, 4], &[2, 3]]), -1).unwrap();
    assert_eq!(concat.output_shape(), &[2, 7]);
    let concat = Burn::stack(&shapes(&[&[2, 3], &[2, 3], &[2, 3]]), -1).unwrap();
    assert_eq!(concat.output_shape(), &[2, 3, 3]);
    let e = Burn::cat(&shapes(&[&[2, 4], &[3, 3]]), 1).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("burn cat: input 1 has size 3 on dimension 0"),
        "{e}"
    );
}

// ---- direct concats and the inverse of a split ------------------------------------------

#[test]
fn direct_concats_and_their_checks() {
    let concat = ResolvedConcat::new(&[[2, 3], [2, 1]], 1).unwrap();
    assert_eq!(concat.op(), OpId::DIRECT_CONCAT);
    assert_eq!(concat.op().to_string(), "direct concat");
    assert!(matches!(
        ResolvedConcat::new(&[[2, 3]], usize::MAX),
        Err(ConcatError::AxisOutOfRange { axis: i64::MAX, .. })
    ));
    let stack = ResolvedConcat::stack(&[[2], [2]], 1).unwrap();
    assert_eq!(stack.output_shape(), &[2, 2]);
    concat.check_input_shapes(&[[2, 3], [2, 1]]).unwrap();
    assert_eq!(
        concat.check_input_shapes(&[[2, 3]]),
        Err(ConcatError::InputCountMismatch {
            expected: 2,
            actual: 1
        })
    );
    assert_eq!(
        concat.check_input_shapes(&[[2, 3], [2, 2]]),
        Err(ConcatError::InputShapeMismatch {
            index: 1,
            expected: vec![2, 1],
            actual: vec![2, 2]
        })
    );
}

#[test]
fn the_inverse_of_a_tiling_split_mirrors_it_exactly() {
    let split = Torch::split_with_sizes(&[7, 2], &[3, 0, 4], 0).unwrap();
    let concat = ResolvedConcat::inverse_of(&split).unwrap();
    assert_eq!(concat.mirror(), &split);
    assert_eq!(concat.output_shape(), &[7, 2]);
    let unbind = Torch::unbind(&[3, 2], 1).unwrap();
    assert_eq!(
        ResolvedConcat::inverse_of(&unbind).unwrap().mirror(),
        &unbind
    );
    // Windows that do not tile the axis have no inverse.
    for split in [
        Torch::tensor_split(&[5], &[3, 1], 0).unwrap(),
        Torch::narrow(&[5, 2], 0, 1, 2).unwrap(),
        split18_fewer_outputs(),
        Torch::unbind(&[0, 2], 0).unwrap(),
    ] {
        assert!(ResolvedConcat::inverse_of(&split).is_none(), "{split:?}");
    }
}

/// A Split-18 node declaring fewer outputs than `num_outputs`.
fn split18_fewer_outputs() -> wgpu_split::ResolvedSplit {
    wgpu_split::OnnxSplit::new(18, 2)
        .num_outputs(3)
        .resolve(&[10, 2])
        .unwrap()
}

// ---- messages -----------------------------------------------------------------------------

#[test]
fn messages_name_the_operator_the_input_the_axis_and_the_dims() {
    let e = OnnxConcat::new(13)
        .axis(1)
        .resolve(&[[2, 3], [4, 5]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ONNX Concat-13: input 1 has size 4 on dimension 0, but input 0 has 2; only axis 1 may differ"
    );
    let e = OnnxConcatFromSequence::new(11)
        .axis(3)
        .new_axis(1)
        .resolve(&[[2, 3]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ONNX ConcatFromSequence-11: axis 3 is out of range for rank-2 inputs (valid: -3..=2)"
    );
    let e = Numpy::concatenate(&shapes(&[&[2, 3], &[3]]), Some(0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "numpy.concatenate: input 1 has rank 1, but input 0 has rank 2; all inputs must have the same rank"
    );
    let e = ResolvedConcat::stack(&[[2], [3]], 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "direct concat: input 1 has shape [3], but input 0 has shape [2]; stacked inputs must have equal shapes"
    );
}

#[test]
fn inputs_that_take_part_share_one_element_type() {
    use wgpu_split::ElementType::{Float, Int64, Uint8};
    let concat = Torch::cat(&shapes(&[&[0], &[2, 3], &[2, 1]]), 1).unwrap();
    // The skipped input's type does not count; the output's is input 1's.
    assert_eq!(
        concat.check_element_types(&[Int64, Float, Float]),
        Ok(Float)
    );
    assert_eq!(
        concat.check_element_types(&[Float, Float, Uint8]),
        Err(ConcatError::ElementTypeMismatch {
            index: 2,
            element_type: Uint8,
            reference: 1,
            expected: Float
        })
    );
    assert_eq!(
        concat.check_element_types(&[Float]),
        Err(ConcatError::InputCountMismatch {
            expected: 3,
            actual: 1
        })
    );
    let skipped = Torch::cat(&shapes(&[&[0], &[0]]), 0).unwrap();
    assert_eq!(skipped.check_element_types(&[Int64, Float]), Ok(Int64));
}

#[test]
fn the_mirror_splits_the_output_or_its_1d_view() {
    let inputs = shapes(&[&[2, 3], &[2, 3]]);
    let mut all: Vec<ResolvedConcat> = cat_ops()
        .iter()
        .chain(&stack_ops())
        .map(|(_, resolve)| resolve(&inputs, 1).unwrap())
        .collect();
    all.push(Numpy::concatenate(&inputs, None).unwrap());
    all.push(Candle::cat(&inputs[..1], 0).unwrap());
    for concat in all {
        let count: usize = concat.output_shape().iter().product();
        let view = concat.mirror().input_shape();
        assert!(
            view == concat.output_shape() || view == [count],
            "{concat:?}"
        );
        for (i, shape) in concat.input_shapes().iter().enumerate() {
            let w = concat.mirror_output(i).unwrap();
            let part: usize = concat.mirror().output_shape(w).iter().product();
            assert_eq!(part, shape.iter().product::<usize>(), "{concat:?}");
        }
    }
}
