//! Every rule and error of permuted splits and concats
//! (`docs/SEMANTICS.md`, "Permuted splits and concats"): shapes, the
//! strided views the moves resolve to, and each typed error with the values
//! its message names.

use wgpu_split::{
    ConcatError, InputMove, PermuteError, PermutedConcat, PermutedSplit, PieceMove, ResolveError,
    ResolvedSplit,
};

fn split(shape: &[usize], axis: usize, lengths: &[usize]) -> ResolvedSplit {
    ResolvedSplit::new(shape, axis, lengths.to_vec(), true).unwrap()
}

#[test]
fn output_shapes_are_the_factored_shapes_permuted() {
    let qkv = PermutedSplit::split_heads(&[4, 1024, 48 * 128], &[32 * 128, 8 * 128, 8 * 128], 128)
        .unwrap();
    assert_eq!(
        qkv.output_shapes(),
        vec![
            vec![4, 32, 1024, 128],
            vec![4, 8, 1024, 128],
            vec![4, 8, 1024, 128]
        ]
    );
    // Rank 2: [S, E] into [h, S, D].
    let two = PermutedSplit::split_heads(&[5, 12], &[8, 4], 4).unwrap();
    assert_eq!(two.output_shapes(), vec![vec![2, 5, 4], vec![1, 5, 4]]);
}

#[test]
fn views_walk_the_input_in_output_order_merged() {
    // [B = 2, S = 3, 3 * 2 * 4]: K is [B, H, S, D] walking the input with
    // strides [S * E, D, E, 1] from K's first column.
    let qkv = PermutedSplit::split_heads(&[2, 3, 24], &[8, 8, 8], 4).unwrap();
    let k = qkv.view(1);
    assert_eq!(
        (k.dims(), k.strides(), k.offset()),
        (&[2, 2, 3, 4][..], &[72, 4, 24, 1][..], 8)
    );
    assert_eq!(k.run_len(), 4);
    // A kept piece is rows and a run; a whole tensor kept is one run.
    let kept = PermutedSplit::new(
        split(&[2, 3, 24], 2, &[8, 16]),
        vec![PieceMove::keep(&[2, 3, 8]), PieceMove::keep(&[2, 3, 16])],
    )
    .unwrap();
    assert_eq!(
        (kept.view(0).dims(), kept.view(0).strides()),
        (&[6, 8][..], &[24, 1][..])
    );
    assert!(kept.keeps_order() && !qkv.keeps_order());
    let whole =
        PermutedSplit::new(split(&[4, 6], 0, &[4]), vec![PieceMove::keep(&[4, 6])]).unwrap();
    assert_eq!(
        (whole.view(0).dims(), whole.view(0).strides()),
        (&[24][..], &[1][..])
    );
    // Heads of one: nothing moves (the 1 is dropped, the rest merges).
    let one = PermutedSplit::split_heads(&[3, 8], &[8], 8).unwrap();
    assert!(one.keeps_order());
    // The fastest axis moved: the last stride is not 1, runs of one.
    let t = PermutedSplit::new(
        split(&[6, 10], 1, &[10]),
        vec![PieceMove::new(vec![6, 10], vec![1, 0])],
    )
    .unwrap();
    assert_eq!(
        (t.view(0).strides(), t.view(0).run_len()),
        (&[1, 10][..], 1)
    );
}

#[test]
fn dimensions_of_one_may_be_added_or_dropped() {
    let s = split(&[1, 6, 4], 1, &[6]);
    let m = PieceMove::new(vec![2, 1, 3, 4, 1], vec![4, 2, 1, 0, 3]);
    let p = PermutedSplit::new(s, vec![m]).unwrap();
    assert_eq!(p.output_shape(0), vec![1, 3, 1, 2, 4]);
}

#[test]
fn a_reshape_must_factor_the_piece_as_the_input_lays_it_out() {
    // The piece [2, 3, 4] of [2, 3, 8] lies in the input as 6 rows of 4:
    // merging its first two dimensions is one stride, so [6, 4] and
    // [3, 2, 2, 2] are moves; a shape whose dimensions straddle those rows
    // (or count other elements) is not.
    let s = || split(&[2, 3, 8], 2, &[4, 4]);
    let keep = PieceMove::keep(&[2, 3, 4]);
    for ok in [vec![6, 4], vec![3, 2, 2, 2], vec![2, 3, 4]] {
        let m = PieceMove::new(ok.clone(), (0..ok.len()).rev().collect());
        assert!(
            PermutedSplit::new(s(), vec![m, keep.clone()]).is_ok(),
            "{ok:?}"
        );
    }
    for shape in [
        vec![2, 12],
        vec![2, 3, 2, 2, 1, 5],
        vec![3, 4, 2],
        vec![2, 3, 4, 2],
    ] {
        let m = PieceMove::new(shape.clone(), (0..shape.len()).collect());
        let e = PermutedSplit::new(s(), vec![m, keep.clone()]).unwrap_err();
        assert_eq!(
            e,
            PermuteError::NotAFactoring {
                output: 0,
                piece: vec![2, 3, 4],
                strided: vec![6, 4],
                shape: shape.clone()
            },
            "{shape:?}"
        );
        assert!(e.to_string().contains("[6, 4]"), "{e}");
    }
    // A piece that is one stretch of the input takes any shape of its
    // count (a detector's [1, 32, 100, 76] into [1, 32, 7600]).
    let whole = split(&[1, 42, 100, 76], 1, &[10, 32]);
    let m = PieceMove::new(vec![1, 32, 7600], vec![0, 2, 1]);
    let p = PermutedSplit::new(whole, vec![PieceMove::keep(&[1, 10, 100, 76]), m]).unwrap();
    assert_eq!(p.output_shape(1), vec![1, 7600, 32]);
    // An empty piece factors only into an empty shape (nothing moves).
    let empty = split(&[2, 4], 1, &[0, 4]);
    let ok = PermutedSplit::new(
        empty.clone(),
        vec![
            PieceMove::new(vec![0, 2], vec![1, 0]),
            PieceMove::keep(&[2, 4]),
        ],
    )
    .unwrap();
    assert_eq!(ok.output_shape(0), vec![2, 0]);
    let e = PermutedSplit::new(
        empty,
        vec![PieceMove::new(vec![2], vec![0]), PieceMove::keep(&[2, 4])],
    )
    .unwrap_err();
    assert!(
        matches!(e, PermuteError::NotAFactoring { output: 0, .. }),
        "{e}"
    );
}

#[test]
fn a_permutation_must_hold_every_dimension_once() {
    for perm in [vec![0, 0, 1], vec![0, 1], vec![0, 1, 3], vec![2, 1, 0, 3]] {
        let e = PermutedSplit::new(
            split(&[2, 12], 1, &[12]),
            vec![PieceMove::new(vec![2, 3, 4], perm.clone())],
        )
        .unwrap_err();
        assert_eq!(
            e,
            PermuteError::NotAPermutation {
                what: "output",
                index: 0,
                perm: perm.clone(),
                rank: 3
            }
        );
        assert!(e.to_string().contains(&format!("{perm:?}")), "{e}");
    }
}

#[test]
fn one_move_per_output() {
    let e =
        PermutedSplit::new(split(&[2, 4], 1, &[2, 2]), vec![PieceMove::keep(&[2, 2])]).unwrap_err();
    assert_eq!(
        e,
        PermuteError::MoveCount {
            what: "permuted split",
            expected: 2,
            given: 1
        }
    );
}

#[test]
fn moves_past_the_kernels_rank_are_refused() {
    // Eight dimensions of 2 reversed: no two merge, 8 strided dimensions.
    let piece = vec![2; 8];
    let reversed = |n: usize| PieceMove::new(vec![2; n], (0..n).rev().collect());
    let e = PermutedSplit::new(split(&piece, 0, &[2]), vec![reversed(8)]).unwrap_err();
    assert_eq!(
        e,
        PermuteError::RankTooHigh {
            what: "output",
            index: 0,
            rank: 8,
            max: PermutedSplit::MAX_RANK
        }
    );
    // Six is what the kernels carry.
    let six = vec![2; 6];
    assert!(PermutedSplit::new(split(&six, 0, &[2]), vec![reversed(6)]).is_ok());
    // A long but mergeable move is fine: 8 dims kept in order are one run.
    let kept = PieceMove::new(vec![2; 8], (0..8).collect());
    assert!(PermutedSplit::new(split(&piece, 0, &[2]), vec![kept]).is_ok());
}

#[test]
fn split_heads_refuses_what_is_not_heads() {
    let e = PermutedSplit::split_heads(&[12], &[12], 4).unwrap_err();
    assert_eq!(
        e,
        PermuteError::HeadRank {
            call: "split_heads",
            rank: 1
        }
    );
    let e = PermutedSplit::split_heads(&[2, 12], &[6, 6], 4).unwrap_err();
    assert_eq!(
        e,
        PermuteError::HeadWidth {
            call: "split_heads",
            width: 6,
            head_dim: 4
        }
    );
    let e = PermutedSplit::split_heads(&[2, 12], &[12], 0).unwrap_err();
    assert!(
        matches!(e, PermuteError::HeadWidth { head_dim: 0, .. }),
        "{e}"
    );
    // Widths past the last axis: the split's own error. Widths short of
    // it leave the tail out, as a direct split does.
    let e = PermutedSplit::split_heads(&[2, 12], &[8, 8], 4).unwrap_err();
    assert!(
        matches!(
            e,
            PermuteError::Split(ResolveError::LengthSumMismatch { .. })
        ),
        "{e:?}"
    );
    let short = PermutedSplit::split_heads(&[2, 12], &[4, 4], 4).unwrap();
    assert_eq!(short.output_shapes(), vec![vec![1, 2, 4]; 2]);
}

#[test]
fn merge_heads_mirrors_split_heads() {
    let qkv = PermutedSplit::split_heads(&[2, 5, 24], &[16, 4, 4], 4).unwrap();
    let merge = PermutedConcat::merge_heads(&qkv.output_shapes()).unwrap();
    assert_eq!(merge.output_shape(), &[2, 5, 24]);
    assert_eq!(merge.mirror(), &qkv);
    assert_eq!(merge.input_shapes(), qkv.output_shapes().as_slice());
}

/// Each input keeps its own head size, as torch's `cat` of each
/// `x.transpose(1, 2).reshape(B, S, -1)` does (DeepSeek's latent
/// attention: value heads of 128 beside query heads of 192); the batch
/// dimensions and the sequence must agree.
#[test]
fn merge_heads_takes_each_inputs_own_head_size() {
    let merge = PermutedConcat::merge_heads(&[[1, 4, 7, 64], [1, 1, 7, 80]]).unwrap();
    assert_eq!(merge.output_shape(), &[1, 7, 4 * 64 + 80]);
    // Against the composition on the host, element by element.
    let a: Vec<u16> = (0..4 * 7 * 64).map(|v| v as u16).collect();
    let b: Vec<u16> = (0..7 * 80).map(|v| 60000 - v as u16).collect();
    let ta = wgpu_split::HostTensor::from_slice(&[1, 4, 7, 64], &a).unwrap();
    let tb = wgpu_split::HostTensor::from_slice(&[1, 1, 7, 80], &b).unwrap();
    let merged = wgpu_split::HostTensor::concat_permuted(&[&ta, &tb], &merge).unwrap();
    let got = merged.to_vec::<u16>().unwrap();
    for s in 0..7 {
        let row = &got[s * 336..(s + 1) * 336];
        for h in 0..4 {
            assert_eq!(
                &row[h * 64..(h + 1) * 64],
                &a[(h * 7 + s) * 64..(h * 7 + s + 1) * 64]
            );
        }
        assert_eq!(&row[256..], &b[s * 80..(s + 1) * 80]);
    }
    // The sequence (or a batch dimension) disagreeing is the concat's error.
    for shapes in [
        [[1, 4, 7, 64], [1, 1, 8, 64]],
        [[1, 4, 7, 64], [2, 1, 7, 64]],
    ] {
        let e = PermutedConcat::merge_heads(&shapes).unwrap_err();
        assert!(
            matches!(e, PermuteError::Concat(ConcatError::DimMismatch { .. })),
            "{shapes:?}: {e:?}"
        );
    }
}

#[test]
fn concat_errors_name_the_input() {
    let shapes = [vec![2, 3, 4], vec![2, 3, 4]];
    let keep = InputMove::keep(&[2, 3, 4]);
    // A permutation, then a merge of what it gives.
    let e = PermutedConcat::new(
        &shapes,
        vec![InputMove::new(vec![2, 12], vec![1, 1, 0]), keep.clone()],
        0,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            PermuteError::NotAPermutation {
                what: "input",
                index: 0,
                ..
            }
        ),
        "{e}"
    );
    // [2, 3] transposed to [3, 2] and regrouped as [2, 3]: not a merge.
    let regroup = InputMove::new(vec![2, 3], vec![1, 0]);
    let e = PermutedConcat::new(&[[2, 3], [2, 3]], vec![regroup.clone(), regroup], 1).unwrap_err();
    assert_eq!(
        e,
        PermuteError::NotAMerge {
            input: 0,
            permuted: vec![3, 2],
            shape: vec![2, 3]
        }
    );
    assert!(e.to_string().contains("[3, 2]"), "{e}");
    // Merged where the output lays the piece out in one stride: fine.
    let merge = InputMove::new(vec![3, 8], vec![1, 0, 2]);
    let joined = PermutedConcat::new(&shapes, vec![merge.clone(), merge], 0).unwrap();
    assert_eq!(joined.output_shape(), &[6, 8]);
    let e = PermutedConcat::new(&shapes, vec![keep.clone()], 0).unwrap_err();
    assert!(
        matches!(
            e,
            PermuteError::MoveCount {
                expected: 2,
                given: 1,
                ..
            }
        ),
        "{e}"
    );
    // Moved shapes that disagree off the axis: the concat's own error.
    let e = PermutedConcat::new(
        &shapes,
        vec![keep, InputMove::new(vec![3, 2, 4], vec![1, 0, 2])],
        0,
    )
    .unwrap_err();
    assert!(
        matches!(e, PermuteError::Concat(ConcatError::DimMismatch { .. })),
        "{e:?}"
    );
    let e = PermutedConcat::merge_heads(&[[3, 4]]).unwrap_err();
    assert_eq!(
        e,
        PermuteError::HeadRank {
            call: "merge_heads",
            rank: 2
        }
    );
}
