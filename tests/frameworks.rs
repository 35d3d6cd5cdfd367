//! The framework front-ends: every edge case of the conventions table in
//! SEMANTICS.md ("Framework conventions"), the errors by call and value, and
//! a property test of every call against a direct slicing oracle that runs
//! each framework's algorithm on a list of indices.

use proptest::prelude::*;
use wgpu_split::error::FrameworkError;
use wgpu_split::frameworks::{Burn, Candle, Numpy, Sections, Torch};
use wgpu_split::{ResolveError, ResolvedSplit};

/// The pieces of a split as index lists along its axis.
fn pieces(split: &ResolvedSplit) -> Vec<Vec<usize>> {
    split.windows().map(|(s, l)| (s..s + l).collect()).collect()
}

fn lengths(r: Result<ResolvedSplit, FrameworkError>) -> Vec<usize> {
    r.unwrap().lengths().to_vec()
}

// ---- the conventions table, row by row ------------------------------------

#[test]
fn torch_chunk_returns_fewer_pieces_when_the_division_is_uneven() {
    assert_eq!(lengths(Torch::chunk(&[5], 4, 0)), vec![2, 2, 1]);
    assert_eq!(lengths(Torch::chunk(&[6], 4, 0)), vec![2, 2, 2]);
    assert_eq!(lengths(Torch::chunk(&[8], 4, 0)), vec![2; 4]);
    assert_eq!(lengths(Torch::chunk(&[11], 6, 0)), vec![2, 2, 2, 2, 2, 1]);
    assert_eq!(lengths(Torch::chunk(&[13], 6, 0)), vec![3, 3, 3, 3, 1]);
    assert_eq!(lengths(Torch::chunk(&[3], 5, 0)), vec![1, 1, 1]);
    // An empty dimension: chunks empty pieces.
    assert_eq!(lengths(Torch::chunk(&[2, 0], 3, 1)), vec![0, 0, 0]);
    for chunks in [0, -1] {
        assert_eq!(
            Torch::chunk(&[5], chunks, 0),
            Err(FrameworkError::ChunksNotPositive {
                call: "torch.chunk",
                chunks
            })
        );
    }
}

#[test]
fn torch_split_takes_pieces_of_a_size() {
    assert_eq!(lengths(Torch::split(&[5, 2], 2, 0)), vec![2, 2, 1]);
    assert_eq!(lengths(Torch::split(&[5], 7, 0)), vec![5]);
    assert_eq!(lengths(Torch::split(&[0], 3, 0)), vec![0]);
    assert_eq!(lengths(Torch::split(&[0], 0, 0)), vec![0]);
    let e = Torch::split(&[5], 0, 0).unwrap_err();
    assert_eq!(
        e,
        FrameworkError::SplitSizeZero {
            call: "torch.split",
            dim_size: 5
        }
    );
    assert_eq!(
        e.to_string(),
        "torch.split: split_size can only be 0 if dimension size is 0, got 0 on a dimension of 5"
    );
    assert!(matches!(
        Torch::split(&[5], -1, 0),
        Err(FrameworkError::SplitSizeNegative { split_size: -1, .. })
    ));
}

#[test]
fn torch_split_with_sizes_keeps_zeros_and_needs_the_exact_sum() {
    assert_eq!(
        lengths(Torch::split_with_sizes(&[4, 5], &[2, 0, 3], 1)),
        vec![2, 0, 3]
    );
    assert!(matches!(
        Torch::split_with_sizes(&[5], &[2, -1, 4], 0),
        Err(FrameworkError::SizeNegative { index: 1, .. })
    ));
    let e = Torch::split_with_sizes(&[5], &[2, 2], 0).unwrap_err();
    assert!(
        matches!(
            e,
            FrameworkError::SizesSum {
                sum: 4,
                dim_size: 5,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("[2, 2]"), "{e}");
}

#[test]
fn tensor_split_and_array_split_with_a_count_give_exactly_that_many() {
    assert_eq!(lengths(Torch::tensor_split(&[5], 3, 0)), vec![2, 2, 1]);
    assert_eq!(lengths(Torch::tensor_split(&[7], 3, 0)), vec![3, 2, 2]);
    // More sections than elements: empty pieces at the end.
    assert_eq!(lengths(Torch::tensor_split(&[2], 4, 0)), vec![1, 1, 0, 0]);
    assert_eq!(lengths(Numpy::array_split(&[7, 2], 3, 0)), vec![3, 2, 2]);
    assert!(matches!(
        Torch::tensor_split(&[5], 0, 0),
        Err(FrameworkError::SectionsNotPositive { sections: 0, .. })
    ));
    assert!(matches!(
        Numpy::array_split(&[5], -2, 0),
        Err(FrameworkError::SectionsNotPositive { sections: -2, .. })
    ));
}

#[test]
fn split_at_indices_follows_slice_rules_and_may_overlap() {
    // [3, 1] on 5: [0, 3), empty, [1, 5): the third overlaps the first.
    let s = Torch::tensor_split(&[5], &[3, 1], 0).unwrap();
    assert_eq!(pieces(&s), vec![vec![0, 1, 2], vec![], vec![1, 2, 3, 4]]);
    // Negative indices add n, then clamp to [0, n].
    let s = Numpy::array_split(&[5], &[-2, 9], 0).unwrap();
    assert_eq!(pieces(&s), vec![vec![0, 1, 2], vec![3, 4], vec![]]);
    let s = Torch::tensor_split(&[5], &[-9], 0).unwrap();
    assert_eq!(pieces(&s), vec![vec![], vec![0, 1, 2, 3, 4]]);
    let no_indices: &[i64] = &[];
    assert_eq!(lengths(Numpy::split(&[4], no_indices, 0)), vec![4]);
    assert_eq!(
        lengths(Numpy::split(&[6], Sections::Indices(&[2, 4]), 0)),
        vec![2, 2, 2]
    );
}

#[test]
fn numpy_split_needs_an_equal_division() {
    assert_eq!(lengths(Numpy::split(&[6, 2], 3, 0)), vec![2, 2, 2]);
    let e = Numpy::split(&[5], 2, 0).unwrap_err();
    assert!(
        matches!(
            e,
            FrameworkError::UnequalDivision {
                sections: 2,
                dim_size: 5,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("array split does not result in an equal division")
    );
}

#[test]
fn unbind_drops_the_axis() {
    let s = Torch::unbind(&[2, 3, 4], 1).unwrap();
    assert_eq!(s.output_shapes(), vec![vec![2, 4]; 3]);
    assert!(!s.keep_axis());
    assert_eq!(Torch::unbind(&[2, 0], -1).unwrap().output_count(), 0);
}

#[test]
fn narrow_is_one_window_from_a_wrapped_start() {
    let s = Torch::narrow(&[4, 10], 1, -4, 3).unwrap();
    assert_eq!(s.windows().collect::<Vec<_>>(), vec![(6, 3)]);
    assert_eq!(s.output_shapes(), vec![vec![4, 3]]);
    assert_eq!(
        Torch::narrow(&[10], 0, 8, 3).unwrap_err().to_string(),
        "torch.narrow: start (8) + length (3) exceeds dimension size (10)"
    );
    assert!(matches!(
        Torch::narrow(&[10], 0, 11, 0),
        Err(FrameworkError::StartOutOfRange { start: 11, .. })
    ));
    assert!(matches!(
        Torch::narrow(&[10], 0, -11, 0),
        Err(FrameworkError::StartOutOfRange { start: -11, .. })
    ));
    assert!(matches!(
        Torch::narrow(&[10], 0, 2, -1),
        Err(FrameworkError::LengthNegative { length: -1, .. })
    ));
    // An empty window at the end is fine.
    assert_eq!(lengths(Torch::narrow(&[10], 0, 10, 0)), vec![0]);
}

#[test]
fn candle_chunk_gives_the_remainder_to_the_first_pieces() {
    assert_eq!(lengths(Candle::chunk(&[5], 4, 0)), vec![2, 1, 1, 1]);
    assert_eq!(lengths(Candle::chunk(&[3], 5, 0)), vec![1, 1, 1]);
    assert_eq!(Candle::chunk(&[0, 2], 3, 0).unwrap().output_count(), 0);
    assert_eq!(lengths(Candle::chunk(&[2, 7], 3, -1)), vec![3, 2, 2]);
    assert!(matches!(
        Candle::chunk(&[5], 0, 0),
        Err(FrameworkError::ChunksNotPositive {
            call: "candle chunk",
            ..
        })
    ));
}

#[test]
fn burn_chunk_gives_torchs_result_where_burn_panics() {
    assert_eq!(lengths(Burn::chunk(&[7], 3, 0)), vec![3, 3, 1]);
    assert_eq!(lengths(Burn::chunk(&[5], 4, 0)), vec![2, 2, 1]);
    assert_eq!(lengths(Burn::chunk(&[6], 4, 0)), vec![2, 2, 2]);
    assert_eq!(lengths(Burn::chunk(&[3], 5, 0)), vec![1, 1, 1]);
    assert_eq!(Burn::chunk(&[0], 3, 0).unwrap().output_count(), 0);
    assert!(matches!(
        Burn::chunk(&[5], 0, 0),
        Err(FrameworkError::ChunksNotPositive { .. })
    ));
    assert!(matches!(
        Burn::chunk(&[5], 1, 1),
        Err(FrameworkError::DimOutOfRange {
            dim: 1,
            rank: 1,
            ..
        })
    ));
}

#[test]
fn dimensions_wrap_as_each_framework_wraps_them() {
    assert_eq!(Torch::chunk(&[2, 6], 2, -1).unwrap().axis(), 1);
    assert_eq!(Numpy::array_split(&[2, 6], 2, -2).unwrap().axis(), 0);
    for (call, e) in [
        ("torch.chunk", Torch::chunk(&[2, 6], 2, 2)),
        ("torch.chunk", Torch::chunk(&[2, 6], 2, -3)),
        ("numpy.array_split", Numpy::array_split(&[], 2, 0)),
    ] {
        match e {
            Err(FrameworkError::DimOutOfRange { call: c, .. }) => assert_eq!(c, call),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn shapes_too_large_and_too_many_pieces_are_refused() {
    assert!(matches!(
        Torch::unbind(&[usize::MAX, 2], 0),
        Err(FrameworkError::Shape(ResolveError::ShapeOverflow { .. }))
    ));
    assert!(matches!(
        Torch::chunk(&[0], i64::MAX, 0),
        Err(FrameworkError::Shape(ResolveError::TooManyOutputs { .. }))
    ));
    assert!(matches!(
        Torch::tensor_split(&[4], 1 << 40, 0),
        Err(FrameworkError::Shape(ResolveError::TooManyOutputs { .. }))
    ));
}

#[test]
fn the_legacy_exporters_chunk_is_an_onnx_error_that_points_at_torch_chunk() {
    use wgpu_split::{OnnxSplit, ParamTensor};
    let op = OnnxSplit::new(13, 4).split_input(ParamTensor::int64_1d(&[2, 2, 2, -1]));
    let e = op.resolve(&[5]).unwrap_err();
    assert!(
        matches!(&e, ResolveError::LegacyChunk { chunks: 4, torch_lengths, .. } if torch_lengths == &[2, 2, 1]),
        "{e}"
    );
    let message = e.to_string();
    assert!(
        message.contains("Torch::chunk") && message.contains("[2, 2, 1]"),
        "{message}"
    );
    // Other negative lengths stay the plain error.
    let op = OnnxSplit::new(13, 2).split_input(ParamTensor::int64_1d(&[6, -1]));
    assert!(matches!(
        op.resolve(&[5]),
        Err(ResolveError::LengthBelowMinimum { .. })
    ));
}

// ---- the slicing oracle -----------------------------------------------------

/// A Python slice `[start:end]` of `0..n`.
fn py_slice(n: usize, start: i64, end: i64) -> Vec<usize> {
    let norm = |i: i64| {
        let i = if i < 0 { i + n as i64 } else { i };
        i.clamp(0, n as i64) as usize
    };
    let (s, e) = (norm(start), norm(end));
    (s..e.max(s)).collect()
}

/// torch.split(s), literally: slices of s from 0 while below n (one empty
/// piece for n = 0).
fn oracle_torch_split(n: usize, s: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    (0..n)
        .step_by(s)
        .map(|i| (i..(i + s).min(n)).collect())
        .collect()
}

fn oracle_sections(n: usize, k: usize) -> Vec<Vec<usize>> {
    let (each, extra) = (n / k, n % k);
    let mut bounds = vec![0];
    for i in 0..k {
        bounds.push(bounds[i] + each + usize::from(i < extra));
    }
    bounds.windows(2).map(|b| (b[0]..b[1]).collect()).collect()
}

fn oracle_indices(n: usize, indices: &[i64]) -> Vec<Vec<usize>> {
    let mut points = vec![0i64];
    points.extend(indices);
    points.push(n as i64);
    points.windows(2).map(|p| py_slice(n, p[0], p[1])).collect()
}

/// candle's chunk, as its source reads.
fn oracle_candle(n: usize, k: usize) -> Vec<Vec<usize>> {
    if n < k {
        return (0..n).map(|i| vec![i]).collect();
    }
    oracle_sections(n, k)
}

/// burn 0.22's chunk as its source reads, or `None` where it panics.
fn burn_itself(n: usize, k: usize) -> Option<Vec<Vec<usize>>> {
    if n < k {
        return Some((0..n).map(|i| vec![i]).collect());
    }
    let narrow = |start: usize, len: usize| {
        (start + len <= n && start < n).then(|| (start..start + len).collect())
    };
    if n.is_multiple_of(k) {
        return (0..k).map(|i| narrow(i * (n / k), n / k)).collect();
    }
    let c = n / k + 1;
    let mut out: Vec<Vec<usize>> = (0..k - 1)
        .map(|i| narrow(i * c, c))
        .collect::<Option<_>>()?;
    out.push(narrow((k - 1) * c, n % c)?);
    Some(out)
}

fn arb_shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..13, 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_front_end_matches_the_slicing_oracle(
        shape in arb_shape(),
        dim_seed in any::<i64>(),
        count in -2i64..16,
        size in -1i64..16,
        indices in prop::collection::vec(-16i64..16, 0..5),
        start in -14i64..14,
    ) {
        let rank = shape.len() as i64;
        let dim = dim_seed.rem_euclid(2 * rank) - rank; // -rank..rank
        let axis = dim.rem_euclid(rank) as usize;
        let n = shape[axis];
        let check = |split: ResolvedSplit, expected: Vec<Vec<usize>>, what: &str| {
            prop_assert_eq!(pieces(&split), expected, "{} on {:?} dim {}", what, shape, dim);
            prop_assert_eq!(split.axis(), axis);
            Ok(())
        };
        // torch.chunk
        match Torch::chunk(&shape, count, dim) {
            Ok(s) => {
                let c = n.div_ceil(count as usize);
                let expected = if n == 0 { vec![vec![]; count as usize] } else { oracle_torch_split(n, c) };
                check(s, expected, "torch.chunk")?;
            }
            Err(e) => prop_assert!(count <= 0, "{}", e),
        }
        // torch.split
        match Torch::split(&shape, size, dim) {
            Ok(s) => check(s, if size == 0 { vec![vec![]] } else { oracle_torch_split(n, size as usize) }, "torch.split")?,
            Err(e) => prop_assert!(size < 0 || (size == 0 && n > 0), "{}", e),
        }
        // tensor_split / array_split / numpy.split, counts and indices
        match Torch::tensor_split(&shape, count, dim) {
            Ok(s) => check(s, oracle_sections(n, count as usize), "torch.tensor_split")?,
            Err(e) => prop_assert!(count <= 0, "{}", e),
        }
        check(Torch::tensor_split(&shape, &indices[..], dim).unwrap(), oracle_indices(n, &indices), "tensor_split at")?;
        check(Numpy::array_split(&shape, &indices[..], dim).unwrap(), oracle_indices(n, &indices), "array_split at")?;
        match Numpy::split(&shape, count, dim) {
            Ok(s) => check(s, oracle_sections(n, count as usize), "numpy.split")?,
            Err(e) => prop_assert!(count <= 0 || n % count as usize != 0, "{}", e),
        }
        // unbind
        let s = Torch::unbind(&shape, dim).unwrap();
        prop_assert!(!s.keep_axis());
        check(s, (0..n).map(|i| vec![i]).collect(), "torch.unbind")?;
        // narrow
        let length = size;
        match Torch::narrow(&shape, dim, start, length) {
            Ok(s) => {
                let begin = if start < 0 { start + n as i64 } else { start };
                check(s, vec![py_slice(n, begin, begin + length)], "torch.narrow")?;
            }
            Err(_) => {
                let begin = if start < 0 { start + n as i64 } else { start };
                prop_assert!(length < 0 || start < -(n as i64) || start > n as i64 || begin + length > n as i64);
            }
        }
        // candle and burn
        if count >= 0 {
            let k = count as usize;
            match Candle::chunk(&shape, k, dim) {
                Ok(s) => check(s, oracle_candle(n, k), "candle chunk")?,
                Err(_) => prop_assert_eq!(k, 0),
            }
            match Burn::chunk(&shape, k, axis) {
                Ok(s) => {
                    let torch_result = if n == 0 { vec![] } else { oracle_torch_split(n, n.div_ceil(k)) };
                    if let Some(burns) = burn_itself(n, k) {
                        prop_assert_eq!(&burns, &torch_result, "burn and torch agree where burn works");
                    }
                    check(s, torch_result, "burn chunk")?;
                }
                Err(_) => prop_assert_eq!(k, 0),
            }
        }
    }
}
