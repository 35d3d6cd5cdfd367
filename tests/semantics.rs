//! Every rule and example of SEMANTICS.md, errors included, one test each.

use wgpu_split::{
    ElementType, HostTensor, OnnxSplit, OnnxSplitToSequence, OpKind, OpenVinoSplit,
    OpenVinoVariadicSplit, Operator, ParamTensor, ParamValues, ResolveError, ResolvedSplit,
    TensorError,
};

fn lengths(r: Result<ResolvedSplit, ResolveError>) -> Vec<usize> {
    r.unwrap().lengths().to_vec()
}

fn int_param(element_type: ElementType, dims: &[usize], values: &[i128]) -> ParamTensor {
    ParamTensor::new(
        element_type,
        dims.to_vec(),
        ParamValues::Int(values.to_vec()),
    )
    .unwrap()
}

fn float_param(element_type: ElementType, dims: &[usize], values: &[f64]) -> ParamTensor {
    ParamTensor::new(
        element_type,
        dims.to_vec(),
        ParamValues::Float(values.to_vec()),
    )
    .unwrap()
}

fn split18(n: i64) -> OnnxSplit {
    OnnxSplit::new(18, n as usize).num_outputs(n)
}

// ---- rules shared by every operator ------------------------------------------

#[test]
fn axis_range_is_minus_rank_to_rank_minus_one() {
    for axis in -3..=2 {
        let r = OnnxSplit::new(13, 1)
            .axis(axis)
            .resolve(&[2, 3, 4])
            .unwrap();
        assert_eq!(r.axis() as i64, (axis + 3) % 3);
    }
    for axis in [-4, 3, i64::MAX, i64::MIN] {
        let e = OnnxSplit::new(13, 1)
            .axis(axis)
            .resolve(&[2, 3, 4])
            .unwrap_err();
        assert!(
            matches!(e, ResolveError::AxisOutOfRange { axis: a, rank: 3, .. } if a == axis as i128)
        );
    }
}

#[test]
fn rank_zero_is_an_error_for_every_operator() {
    let ops: Vec<Operator> = vec![
        OnnxSplit::new(1, 1).into(),
        OnnxSplit::new(2, 1).into(),
        OnnxSplit::new(11, 1).into(),
        OnnxSplit::new(13, 1).into(),
        split18(1).into(),
        OnnxSplitToSequence::new(11).into(),
        OnnxSplitToSequence::new(24).into(),
        OpenVinoVariadicSplit::new(ParamTensor::int64_scalar(0), ParamTensor::int64_1d(&[1]))
            .into(),
        OpenVinoSplit::new(ParamTensor::int64_scalar(0), 1).into(),
    ];
    for op in ops {
        let e = op.resolve(&[]).unwrap_err();
        assert!(
            matches!(e, ResolveError::AxisOutOfRange { rank: 0, .. }),
            "{e}"
        );
    }
}

#[test]
fn explicit_lengths_must_be_non_negative_count_n_and_sum_to_d() {
    let op = |l: &[i64]| OnnxSplit::new(13, l.len()).split_input(ParamTensor::int64_1d(l));
    assert_eq!(lengths(op(&[2, 3]).resolve(&[5])), [2, 3]);
    // A negative length is an error even when the sum matches (ORT's choice).
    let e = op(&[6, -1]).resolve(&[5]).unwrap_err();
    assert!(matches!(
        e,
        ResolveError::LengthBelowMinimum {
            index: 1,
            minimum: 0,
            dim: 5,
            ..
        }
    ));
    let e = op(&[2, 2]).resolve(&[5]).unwrap_err();
    assert!(matches!(
        e,
        ResolveError::LengthSumMismatch {
            sum: 4,
            dim: 5,
            inferred: false,
            ..
        }
    ));
    // Count must equal the node's output count.
    let e = OnnxSplit::new(13, 3)
        .split_input(ParamTensor::int64_1d(&[2, 3]))
        .resolve(&[5])
        .unwrap_err();
    assert!(matches!(
        e,
        ResolveError::LengthCountMismatch { outputs: 3, .. }
    ));
}

#[test]
fn zero_lengths_keep_the_output_count() {
    let r = OnnxSplit::new(13, 3)
        .split_input(ParamTensor::int64_1d(&[0, 5, 0]))
        .resolve(&[5, 2])
        .unwrap();
    assert_eq!(r.output_shapes(), vec![vec![0, 2], vec![5, 2], vec![0, 2]]);
}

#[test]
fn zero_size_input_splits_into_zero_size_outputs() {
    let r = OnnxSplit::new(13, 2).axis(1).resolve(&[0, 4]).unwrap();
    assert_eq!(r.output_shapes(), vec![vec![0, 2], vec![0, 2]]);
    let r = OnnxSplit::new(13, 3).resolve(&[0, 4]).unwrap();
    assert_eq!(r.output_shapes(), vec![vec![0, 4]; 3]);
}

#[test]
fn errors_name_operator_axis_dimension_and_values() {
    let e = OnnxSplit::new(13, 2)
        .axis(-1)
        .split_input(ParamTensor::int64_1d(&[2, 2]))
        .resolve(&[3, 5])
        .unwrap_err();
    let msg = e.to_string();
    for part in [
        "ONNX Split-13",
        "axis 1",
        "dimension 5",
        "[2, 2]",
        "sum to 4",
    ] {
        assert!(msg.contains(part), "{msg:?} lacks {part:?}");
    }
    let e = split18(4).resolve(&[5]).unwrap_err().to_string();
    assert!(
        e.contains("ONNX Split-18") && e.contains("num_outputs = 4") && e.contains("dimension 5"),
        "{e}"
    );
    let e = OpenVinoVariadicSplit::new(
        ParamTensor::int64_scalar(0),
        ParamTensor::int64_1d(&[8, -1]),
    )
    .resolve(&[6])
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("OpenVINO VariadicSplit-1")
            && e.contains("[8, -1]")
            && e.contains("dimension 6"),
        "{e}"
    );
}

#[test]
fn opsets_map_to_their_defining_version() {
    for (opset, version) in [
        (1, 1),
        (2, 2),
        (10, 2),
        (11, 11),
        (12, 11),
        (13, 13),
        (17, 13),
        (18, 18),
        (24, 18),
    ] {
        assert_eq!(OnnxSplit::new(opset, 1).op_id().unwrap().version, version);
    }
    for (opset, version) in [(11, 11), (23, 11), (24, 24), (30, 24)] {
        assert_eq!(
            OnnxSplitToSequence::new(opset).op_id().unwrap().version,
            version
        );
    }
    assert_eq!(
        OnnxSplit::new(0, 1).resolve(&[2]),
        Err(ResolveError::UnsupportedOpset {
            kind: OpKind::OnnxSplit,
            opset: 0
        })
    );
    assert_eq!(
        OnnxSplitToSequence::new(10).resolve(&[2]),
        Err(ResolveError::UnsupportedOpset {
            kind: OpKind::OnnxSplitToSequence,
            opset: 10
        })
    );
}

#[test]
fn a_node_with_no_outputs_is_an_error() {
    assert!(matches!(
        OnnxSplit::new(13, 0).resolve(&[4]),
        Err(ResolveError::NoOutputs { .. })
    ));
}

// ---- ONNX Split-1 -------------------------------------------------------------

#[test]
fn split1_lengths_from_attribute() {
    assert_eq!(
        lengths(OnnxSplit::new(1, 2).split_attribute(&[1, 3]).resolve(&[4])),
        [1, 3]
    );
}

#[test]
fn split1_lengths_from_a_whole_valued_float_input() {
    for t in [
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
    ] {
        let op = OnnxSplit::new(1, 2).split_input(float_param(t, &[2], &[1.0, 3.0]));
        assert_eq!(lengths(op.resolve(&[4])), [1, 3]);
    }
    let op = OnnxSplit::new(1, 2).split_input(float_param(ElementType::Float, &[2], &[1.5, 2.5]));
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::NonWholeLength { index: 0, .. })
    ));
    for bad in [f64::NAN, f64::INFINITY, 1e30] {
        let op =
            OnnxSplit::new(1, 2).split_input(float_param(ElementType::Double, &[2], &[bad, 1.0]));
        assert!(
            matches!(op.resolve(&[4]), Err(ResolveError::NonWholeLength { .. })),
            "{bad}"
        );
    }
}

#[test]
fn split1_attribute_and_input_together_is_an_error() {
    let op = OnnxSplit::new(1, 2)
        .split_attribute(&[1, 3])
        .split_input(float_param(ElementType::Float, &[2], &[1.0, 3.0]));
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::ConflictingParameters { .. })
    ));
}

#[test]
fn split1_absent_axis_is_zero_and_equal_split_needs_divisibility() {
    let r = OnnxSplit::new(1, 2).resolve(&[4, 3]).unwrap();
    assert_eq!((r.axis(), r.lengths()), (0, &[2, 2][..]));
    assert!(matches!(
        OnnxSplit::new(1, 3).resolve(&[4]),
        Err(ResolveError::NotEvenlySplittable {
            parts: 3,
            dim: 4,
            ..
        })
    ));
}

// ---- ONNX Split-2 and Split-11 ---------------------------------------------------

#[test]
fn split2_and_11_take_lengths_from_the_attribute_only() {
    for opset in [2, 11] {
        assert_eq!(
            lengths(
                OnnxSplit::new(opset, 2)
                    .axis(1)
                    .split_attribute(&[2, 1])
                    .resolve(&[1, 3])
            ),
            [2, 1]
        );
        let op = OnnxSplit::new(opset, 2).split_input(ParamTensor::int64_1d(&[2, 1]));
        assert!(matches!(
            op.resolve(&[3]),
            Err(ResolveError::NotInOpset {
                what: "input split",
                ..
            })
        ));
        let op = OnnxSplit::new(opset, 2).num_outputs(2);
        assert!(matches!(
            op.resolve(&[4]),
            Err(ResolveError::NotInOpset {
                what: "attribute num_outputs",
                ..
            })
        ));
    }
}

#[test]
fn opsets_2_11_13_reject_uneven_equal_splits() {
    // d = 7, n = 3: the Python reference returns 3,3,1; ONNX and ORT reject.
    for opset in [2, 11, 13] {
        let e = OnnxSplit::new(opset, 3).resolve(&[7]).unwrap_err();
        assert!(
            matches!(
                e,
                ResolveError::NotEvenlySplittable {
                    dim: 7,
                    parts: 3,
                    ..
                }
            ),
            "{opset}"
        );
        assert!(e.to_string().contains("not evenly splittable"));
        assert_eq!(lengths(OnnxSplit::new(opset, 3).resolve(&[9])), [3, 3, 3]);
    }
}

// ---- ONNX Split-13 ------------------------------------------------------------------

#[test]
fn split13_takes_lengths_from_an_integer_input() {
    for t in [
        ElementType::Int64,
        ElementType::Int32,
        ElementType::Int8,
        ElementType::Uint16,
        ElementType::Uint64,
    ] {
        let op = OnnxSplit::new(13, 2).split_input(int_param(t, &[2], &[1, 3]));
        assert_eq!(lengths(op.resolve(&[4])), [1, 3], "{t}");
    }
    let op = OnnxSplit::new(13, 2).split_input(float_param(ElementType::Float, &[2], &[1.0, 3.0]));
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::ParamType { param: "split", .. })
    ));
    let op = OnnxSplit::new(13, 2).split_attribute(&[1, 3]);
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::NotInOpset {
            what: "attribute split",
            ..
        })
    ));
}

#[test]
fn split_input_must_be_one_dimensional_and_non_empty() {
    for opset in [1, 13, 18] {
        let scalar = OnnxSplit::new(opset, 1).split_input(ParamTensor::int64_scalar(4));
        assert!(
            matches!(scalar.resolve(&[4]), Err(ResolveError::ParamShape { .. })),
            "{opset}"
        );
        let rank2 =
            OnnxSplit::new(opset, 2).split_input(int_param(ElementType::Int64, &[1, 2], &[2, 2]));
        assert!(
            matches!(rank2.resolve(&[4]), Err(ResolveError::ParamShape { .. })),
            "{opset}"
        );
        // Empty 1-D split: a count mismatch, as shape inference says (ORT treats it as absent).
        let empty = OnnxSplit::new(opset, 2).split_input(ParamTensor::int64_1d(&[]));
        assert!(
            matches!(
                empty.resolve(&[4]),
                Err(ResolveError::LengthCountMismatch { outputs: 2, .. })
            ),
            "{opset}"
        );
    }
}

// ---- ONNX Split-18 ------------------------------------------------------------------

#[test]
fn split18_num_outputs_examples() {
    for (d, n, expected) in [
        (7, 4, vec![2, 2, 2, 1]),
        (10, 3, vec![4, 4, 2]),
        (10, 4, vec![3, 3, 3, 1]),
        (6, 3, vec![2, 2, 2]),
        (1, 1, vec![1]),
    ] {
        assert_eq!(lengths(split18(n).resolve(&[d])), expected, "d={d} n={n}");
    }
}

#[test]
fn split18_num_outputs_error_examples() {
    // Last chunk empty or negative.
    for (d, n) in [(5, 4), (6, 4), (4, 3)] {
        let e = split18(n).resolve(&[d]).unwrap_err();
        assert!(
            matches!(e, ResolveError::EmptyLastChunk { .. }),
            "d={d} n={n}: {e}"
        );
    }
    // num_outputs > d, num_outputs < 1.
    for (d, n) in [(2, 4), (0, 3), (5, 0), (5, -1)] {
        let op = OnnxSplit::new(18, 1).num_outputs(n);
        let e = op.resolve(&[d]).unwrap_err();
        assert!(
            matches!(
                e,
                ResolveError::PartCountOutOfRange {
                    attribute: "num_outputs",
                    ..
                }
            ),
            "d={d} n={n}: {e}"
        );
    }
    let e = split18(4).resolve(&[5]).unwrap_err();
    assert_eq!(
        e,
        ResolveError::EmptyLastChunk {
            op: OnnxSplit::new(18, 1).op_id().unwrap(),
            axis: 0,
            dim: 5,
            num_outputs: 4,
            chunk: 2,
            last: -1
        }
    );
}

#[test]
fn split18_ceil_is_integer_arithmetic() {
    // ORT's float ceil fails at d = 16,777,217.
    let d = 16_777_217;
    assert_eq!(lengths(split18(2).resolve(&[d])), [8_388_609, 8_388_608]);
    let d = (1usize << 53) + 1;
    assert_eq!(lengths(split18(2).resolve(&[d])), [(1 << 52) + 1, 1 << 52]);
}

#[test]
fn split18_fewer_outputs_receive_the_first_chunks_more_is_an_error() {
    let op = OnnxSplit::new(18, 2).num_outputs(3);
    assert_eq!(lengths(op.resolve(&[10])), [4, 4]);
    let op = OnnxSplit::new(18, 4).num_outputs(3);
    assert!(matches!(
        op.resolve(&[10]),
        Err(ResolveError::MoreOutputsThanNumOutputs {
            num_outputs: 3,
            outputs: 4,
            ..
        })
    ));
}

#[test]
fn split18_split_and_num_outputs_together_is_an_error() {
    let op = OnnxSplit::new(18, 2)
        .num_outputs(2)
        .split_input(ParamTensor::int64_1d(&[2, 2]));
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::ConflictingParameters { .. })
    ));
    let op = OnnxSplit::new(18, 2).split_attribute(&[2, 2]);
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::NotInOpset {
            what: "attribute split",
            ..
        })
    ));
}

#[test]
fn split18_with_neither_is_an_equal_split_over_the_outputs() {
    assert_eq!(lengths(OnnxSplit::new(18, 2).resolve(&[6])), [3, 3]);
    assert!(matches!(
        OnnxSplit::new(18, 4).resolve(&[6]),
        Err(ResolveError::NotEvenlySplittable { .. })
    ));
}

#[test]
fn split18_explicit_lengths() {
    let op = OnnxSplit::new(18, 3)
        .axis(-1)
        .split_input(ParamTensor::int64_1d(&[1, 0, 4]));
    let r = op.resolve(&[2, 5]).unwrap();
    assert_eq!((r.axis(), r.lengths()), (1, &[1, 0, 4][..]));
    assert_eq!(r.starts(), vec![0, 1, 1]);
}

// ---- SplitToSequence ------------------------------------------------------------------

#[test]
fn sequence_without_split_gives_length_one_outputs() {
    let r = OnnxSplitToSequence::new(11)
        .axis(1)
        .resolve(&[2, 3])
        .unwrap();
    assert_eq!(r.lengths(), &[1, 1, 1]);
    assert_eq!(r.output_shapes(), vec![vec![2, 1]; 3]);
    let r = OnnxSplitToSequence::new(11)
        .axis(1)
        .keepdims(0)
        .resolve(&[2, 3, 4])
        .unwrap();
    assert!(!r.keep_axis());
    assert_eq!(r.output_shapes(), vec![vec![2, 4]; 3]);
    // d = 0: an empty sequence.
    let r = OnnxSplitToSequence::new(24).resolve(&[0, 3]).unwrap();
    assert_eq!(r.output_count(), 0);
}

#[test]
fn sequence_scalar_split_chunks_and_remainder() {
    let seq = |s: i64, d: usize| {
        OnnxSplitToSequence::new(11)
            .split(ParamTensor::int64_scalar(s))
            .resolve(&[d])
    };
    assert_eq!(lengths(seq(3, 8)), [3, 3, 2]);
    assert_eq!(lengths(seq(2, 8)), [2, 2, 2, 2]);
    assert_eq!(lengths(seq(9, 8)), [8]); // s > d: one chunk
    assert_eq!(lengths(seq(1, 3)), [1, 1, 1]);
    assert_eq!(lengths(seq(5, 0)), Vec::<usize>::new());
    // ORT dies with SIGFPE on 0; here it is an error, as is any s < 1.
    for s in [0, -1, i64::MIN] {
        let e = seq(s, 8).unwrap_err();
        assert!(
            matches!(e, ResolveError::InvalidScalarSplit { dim: 8, .. }),
            "{s}"
        );
    }
}

#[test]
fn sequence_one_dimensional_split() {
    let op = OnnxSplitToSequence::new(11).axis(-1).split(int_param(
        ElementType::Int32,
        &[3],
        &[1, 0, 2],
    ));
    let r = op.resolve(&[4, 3]).unwrap();
    assert_eq!(r.output_shapes(), vec![vec![4, 1], vec![4, 0], vec![4, 2]]);
    let empty = OnnxSplitToSequence::new(11).split(ParamTensor::int64_1d(&[]));
    assert!(matches!(
        empty.resolve(&[4]),
        Err(ResolveError::EmptyLengths { .. })
    ));
    let rank2 = OnnxSplitToSequence::new(11).split(int_param(ElementType::Int64, &[1, 1], &[4]));
    assert!(matches!(
        rank2.resolve(&[4]),
        Err(ResolveError::ParamShape { .. })
    ));
    let negative = OnnxSplitToSequence::new(11).split(ParamTensor::int64_1d(&[5, -1]));
    assert!(matches!(
        negative.resolve(&[4]),
        Err(ResolveError::LengthBelowMinimum { .. })
    ));
    let sum = OnnxSplitToSequence::new(11).split(ParamTensor::int64_1d(&[1, 1]));
    assert!(matches!(
        sum.resolve(&[4]),
        Err(ResolveError::LengthSumMismatch { .. })
    ));
    let float = OnnxSplitToSequence::new(11).split(float_param(ElementType::Float, &[1], &[4.0]));
    assert!(matches!(
        float.resolve(&[4]),
        Err(ResolveError::ParamType { .. })
    ));
}

#[test]
fn sequence_keepdims_is_ignored_when_split_is_given() {
    for split in [ParamTensor::int64_scalar(1), ParamTensor::int64_1d(&[1, 1])] {
        let r = OnnxSplitToSequence::new(11)
            .keepdims(0)
            .split(split)
            .resolve(&[2, 3])
            .unwrap();
        assert!(r.keep_axis());
        assert_eq!(r.output_shapes(), vec![vec![1, 3]; 2]);
    }
}

#[test]
fn sequence_keepdims_other_than_zero_and_one_keeps_the_axis() {
    // Decision (docs/SEMANTICS.md): non-zero keeps, as ONNX's checker, shape
    // inference and reference implementation and onnxruntime do.
    for keepdims in [2, -1, i64::MAX] {
        let r = OnnxSplitToSequence::new(11)
            .axis(1)
            .keepdims(keepdims)
            .resolve(&[2, 3])
            .unwrap();
        assert!(r.keep_axis(), "{keepdims}");
        assert_eq!(r.output_shapes(), vec![vec![2, 1]; 3], "{keepdims}");
    }
}

#[test]
fn sequence_onnxruntime_shapes_drop_the_axis_on_a_scalar_split_only() {
    use wgpu_split::SequenceShapes;
    // torch.onnx exports unbind as a scalar split of 1 with keepdims = 0.
    let unbind = |keepdims| {
        OnnxSplitToSequence::new(11)
            .axis(1)
            .keepdims(keepdims)
            .split(ParamTensor::int64_scalar(1))
    };
    let spec = unbind(0).resolve(&[5, 2]).unwrap();
    assert_eq!(spec.output_shapes(), vec![vec![5, 1]; 2]);
    let ort = unbind(0).onnxruntime_shapes();
    assert_eq!(ort.shapes, SequenceShapes::OnnxRuntime);
    let r = ort.resolve(&[5, 2]).unwrap();
    assert!(!r.keep_axis());
    assert_eq!(r.output_shapes(), vec![vec![5]; 2]);
    // keepdims = 1 keeps the axis in both modes.
    let r = unbind(1).onnxruntime_shapes().resolve(&[5, 2]).unwrap();
    assert_eq!(r.output_shapes(), vec![vec![5, 1]; 2]);
    // A chunk longer than 1 cannot drop the axis (onnxruntime fails too).
    let e = OnnxSplitToSequence::new(11)
        .keepdims(0)
        .split(ParamTensor::int64_scalar(2))
        .onnxruntime_shapes()
        .resolve(&[5, 2])
        .unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::CannotDropAxis {
                axis: 0,
                dim: 5,
                chunk: 2,
                ..
            }
        ),
        "{e}"
    );
    // A 1-D split ignores keepdims in both modes.
    let r = OnnxSplitToSequence::new(11)
        .keepdims(0)
        .split(ParamTensor::int64_1d(&[1, 4]))
        .onnxruntime_shapes()
        .resolve(&[5, 2])
        .unwrap();
    assert_eq!(r.output_shapes(), vec![vec![1, 2], vec![4, 2]]);
}

// ---- OpenVINO VariadicSplit-1 -----------------------------------------------------------

fn variadic(axis: ParamTensor, l: &[i64]) -> OpenVinoVariadicSplit {
    OpenVinoVariadicSplit::new(axis, ParamTensor::int64_1d(l))
}

#[test]
fn variadic_axis_is_a_scalar_or_shape_one_of_any_integer_type() {
    for t in [
        ElementType::Int8,
        ElementType::Uint8,
        ElementType::Int32,
        ElementType::Uint64,
    ] {
        for dims in [&[][..], &[1][..]] {
            let op = variadic(int_param(t, dims, &[1]), &[1, 2]);
            assert_eq!(op.resolve(&[2, 3]).unwrap().axis(), 1, "{t} {dims:?}");
        }
    }
    assert_eq!(
        variadic(ParamTensor::int64_scalar(-1), &[1, 2])
            .resolve(&[2, 3])
            .unwrap()
            .axis(),
        1
    );
    let op = variadic(int_param(ElementType::Int64, &[2], &[0, 1]), &[1, 1]);
    assert!(matches!(
        op.resolve(&[2, 2]),
        Err(ResolveError::ParamShape { param: "axis", .. })
    ));
    let op = variadic(float_param(ElementType::Float, &[], &[0.0]), &[1, 1]);
    assert!(matches!(
        op.resolve(&[2, 2]),
        Err(ResolveError::ParamType { param: "axis", .. })
    ));
}

#[test]
fn variadic_lengths_are_one_dimensional_integers() {
    let op = OpenVinoVariadicSplit::new(
        ParamTensor::int64_scalar(0),
        float_param(ElementType::Float, &[2], &[1.0, 1.0]),
    );
    assert!(matches!(
        op.resolve(&[2]),
        Err(ResolveError::ParamType {
            param: "split_lengths",
            ..
        })
    ));
    let op = OpenVinoVariadicSplit::new(ParamTensor::int64_scalar(0), ParamTensor::int64_scalar(2));
    assert!(matches!(
        op.resolve(&[2]),
        Err(ResolveError::ParamShape {
            param: "split_lengths",
            ..
        })
    ));
    let op = OpenVinoVariadicSplit::new(
        ParamTensor::int64_scalar(0),
        int_param(ElementType::Int16, &[2], &[1, -1]),
    );
    assert_eq!(lengths(op.resolve(&[5])), [1, 4]);
    // A uint32 "-1" arrives as 4294967295, which is a length, not a -1.
    let minus_one_u32 = HostTensor::from_slice(&[2], &[1u32, u32::MAX])
        .unwrap()
        .to_param()
        .unwrap();
    let op = OpenVinoVariadicSplit::new(ParamTensor::int64_scalar(0), minus_one_u32);
    assert!(matches!(
        op.resolve(&[5]),
        Err(ResolveError::LengthSumMismatch {
            inferred: false,
            ..
        })
    ));
}

#[test]
fn variadic_minus_one_is_inferred() {
    assert_eq!(
        lengths(variadic(ParamTensor::int64_scalar(0), &[2, -1, 1]).resolve(&[6])),
        [2, 3, 1]
    );
    assert_eq!(
        lengths(variadic(ParamTensor::int64_scalar(0), &[6, -1]).resolve(&[6])),
        [6, 0]
    );
    assert_eq!(
        lengths(variadic(ParamTensor::int64_scalar(0), &[-1]).resolve(&[6])),
        [6]
    );
    assert_eq!(
        lengths(variadic(ParamTensor::int64_scalar(0), &[2, 4]).resolve(&[6])),
        [2, 4]
    );
}

#[test]
fn variadic_errors() {
    let ax = || ParamTensor::int64_scalar(0);
    // OpenVINO accepts [8, -1] on d = 6 and reads out of bounds: an error here.
    let e = variadic(ax(), &[8, -1]).resolve(&[6]).unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::LengthSumMismatch {
                sum: 8,
                dim: 6,
                inferred: true,
                ..
            }
        ),
        "{e}"
    );
    assert!(matches!(
        variadic(ax(), &[-1, -1]).resolve(&[6]),
        Err(ResolveError::MultipleInferredLengths { .. })
    ));
    assert!(matches!(
        variadic(ax(), &[-2, 8]).resolve(&[6]),
        Err(ResolveError::LengthBelowMinimum {
            minimum: -1,
            index: 0,
            ..
        })
    ));
    assert!(matches!(
        variadic(ax(), &[2, 2]).resolve(&[6]),
        Err(ResolveError::LengthSumMismatch {
            inferred: false,
            ..
        })
    ));
    assert!(matches!(
        variadic(ax(), &[]).resolve(&[6]),
        Err(ResolveError::EmptyLengths { .. })
    ));
    assert!(matches!(
        variadic(ParamTensor::int64_scalar(2), &[6]).resolve(&[6]),
        Err(ResolveError::AxisOutOfRange { .. })
    ));
}

// ---- OpenVINO Split-1 --------------------------------------------------------------

#[test]
fn openvino_split_equal_parts() {
    for t in [ElementType::Int8, ElementType::Int32, ElementType::Uint64] {
        let op = OpenVinoSplit::new(int_param(t, &[], &[-1]), 2);
        assert_eq!(lengths(op.resolve(&[3, 4])), [2, 2]);
    }
    let e = OpenVinoSplit::new(ParamTensor::int64_scalar(0), 4)
        .resolve(&[6])
        .unwrap_err();
    assert!(matches!(
        e,
        ResolveError::NotEvenlySplittable {
            dim: 6,
            parts: 4,
            ..
        }
    ));
    for n in [0, -3] {
        let e = OpenVinoSplit::new(ParamTensor::int64_scalar(0), n)
            .resolve(&[6])
            .unwrap_err();
        assert!(matches!(
            e,
            ResolveError::PartCountOutOfRange {
                attribute: "num_splits",
                ..
            }
        ));
    }
    // Axis must be a scalar integer.
    let e = OpenVinoSplit::new(ParamTensor::int64_1d(&[0]), 2)
        .resolve(&[6])
        .unwrap_err();
    assert!(matches!(e, ResolveError::ParamShape { param: "axis", .. }));
    let e = OpenVinoSplit::new(float_param(ElementType::Double, &[], &[0.0]), 2)
        .resolve(&[6])
        .unwrap_err();
    assert!(matches!(e, ResolveError::ParamType { param: "axis", .. }));
    // d = 0 splits into zero-size parts.
    assert_eq!(
        lengths(OpenVinoSplit::new(ParamTensor::int64_scalar(0), 3).resolve(&[0])),
        [0, 0, 0]
    );
}

// ---- checked arithmetic -------------------------------------------------------------

#[test]
fn absurd_output_counts_are_errors_not_allocations() {
    let big = 1usize << 41;
    let e = split18(1 << 40).resolve(&[big]).unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::TooManyOutputs {
                limit: ResolvedSplit::MAX_OUTPUTS,
                ..
            }
        ),
        "{e}"
    );
    let e = OnnxSplit::new(13, 1 << 40).resolve(&[big]).unwrap_err();
    assert!(matches!(e, ResolveError::TooManyOutputs { .. }), "{e}");
    let e = OnnxSplitToSequence::new(11).resolve(&[big]).unwrap_err();
    assert!(matches!(e, ResolveError::TooManyOutputs { .. }), "{e}");
    let e = OnnxSplitToSequence::new(11)
        .split(ParamTensor::int64_scalar(1))
        .resolve(&[big])
        .unwrap_err();
    assert!(matches!(e, ResolveError::TooManyOutputs { .. }), "{e}");
    let e = OpenVinoSplit::new(ParamTensor::int64_scalar(0), 1 << 40)
        .resolve(&[big])
        .unwrap_err();
    assert!(matches!(e, ResolveError::TooManyOutputs { .. }), "{e}");
    // Huge lengths that overflow any sum are a mismatch, not a wrap-around.
    let op = OnnxSplit::new(13, 3).split_input(ParamTensor::int64_1d(&[i64::MAX, i64::MAX, 2]));
    assert!(matches!(
        op.resolve(&[4]),
        Err(ResolveError::LengthSumMismatch { .. })
    ));
    let u = int_param(ElementType::Uint64, &[2], &[u64::MAX as i128, 1]);
    assert!(matches!(
        OnnxSplit::new(13, 2).split_input(u).resolve(&[4]),
        Err(ResolveError::LengthSumMismatch { .. })
    ));
}

#[test]
fn shapes_whose_product_overflows_are_errors() {
    let huge = [1usize << 33, 1 << 33, 2];
    assert!(matches!(
        OnnxSplit::new(13, 1).resolve(&huge),
        Err(ResolveError::ShapeOverflow { .. })
    ));
    // Zero-size but with an overflowing product of the other dimensions.
    let zero = [0, usize::MAX, 2];
    assert!(matches!(
        OnnxSplit::new(13, 1).axis(1).resolve(&zero),
        Err(ResolveError::ShapeOverflow { .. })
    ));
    assert!(matches!(
        HostTensor::from_raw(ElementType::Float, &huge, vec![]),
        Err(TensorError::ShapeOverflow { .. })
    ));
}

#[test]
fn resolved_split_can_be_given_directly_and_is_validated() {
    let r = ResolvedSplit::new(&[4, 6], 1, vec![2, 4], true).unwrap();
    assert_eq!(r.output_shapes(), vec![vec![4, 2], vec![4, 4]]);
    assert!(matches!(
        ResolvedSplit::new(&[4, 6], 2, vec![6], true),
        Err(ResolveError::AxisOutOfRange { .. })
    ));
    assert!(matches!(
        ResolvedSplit::new(&[4, 6], 1, vec![4, 4], true),
        Err(ResolveError::LengthSumMismatch { .. })
    ));
    assert!(matches!(
        ResolvedSplit::new(&[4, 6], 1, vec![2, 4], false),
        Err(ResolveError::ParamShape { .. })
    ));
    let r = ResolvedSplit::new(&[4, 2], 1, vec![1, 1], false).unwrap();
    assert_eq!(r.output_shapes(), vec![vec![4]; 2]);
}

#[test]
fn params_check_their_value_count_and_kind() {
    assert!(matches!(
        ParamTensor::new(ElementType::Int64, vec![3], ParamValues::Int(vec![1])),
        Err(ResolveError::ParamValueCount {
            expected: 3,
            actual: 1,
            ..
        })
    ));
    assert!(matches!(
        ParamTensor::new(ElementType::Float, vec![1], ParamValues::Int(vec![1])),
        Err(ResolveError::NonNumericParam { .. })
    ));
    assert!(matches!(
        ParamTensor::new(ElementType::Bool, vec![1], ParamValues::Int(vec![1])),
        Err(ResolveError::NonNumericParam { .. })
    ));
}
