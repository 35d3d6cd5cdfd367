//! The host path of permuted splits and concats against the per-element
//! oracle (`naive_move` after the plain split's `naive_split`), for every
//! element type, random factorings and permutations, zero-size pieces; the
//! concat undoes the split; and cases computed by numpy
//! (`scripts/permuted_cases.py`, `tests/data/permuted/cases.json`).

mod common;

use common::concat::canonical;
use common::{
    Rng, assert_outputs_equal, concat_undoing, naive_move, naive_split, random_move, random_tensor,
    repo_root,
};
use wgpu_split::{
    ElementType, HostTensor, PermuteError, PermutedConcat, PermutedSplit, PieceMove, ResolvedSplit,
};

/// The oracle: the plain split's pieces, each moved element by element.
fn oracle(input: &HostTensor, split: &PermutedSplit) -> Vec<HostTensor> {
    naive_split(input, split.split())
        .iter()
        .zip(split.moves())
        .map(|(piece, m)| naive_move(piece, m.shape(), m.perm()))
        .collect()
}

#[test]
fn every_type_random_moves_against_the_oracle_and_back() {
    let mut rng = Rng::new(39);
    let (mut cases, mut refused) = (0, 0);
    for t in ElementType::ALL {
        for rank in 1..=4 {
            for _ in 0..6 {
                let axis = rng.below(rank);
                let shape: Vec<usize> = (0..rank)
                    .map(|d| {
                        if d == axis {
                            rng.below(9)
                        } else {
                            rng.below(6) + usize::from(rng.below(10) != 0)
                        }
                    })
                    .collect();
                let count = rng.below(3) + 1;
                let split = ResolvedSplit::new(&shape, axis, rng.lengths(shape[axis], count), true)
                    .unwrap();
                let moves = split
                    .output_shapes()
                    .iter()
                    .map(|piece| random_move(&mut rng, piece))
                    .collect();
                let permuted = match PermutedSplit::new(split, moves) {
                    Ok(p) => p,
                    Err(PermuteError::RankTooHigh { .. } | PermuteError::NotAFactoring { .. }) => {
                        refused += 1;
                        continue;
                    }
                    Err(e) => panic!("{t} {shape:?}: {e}"),
                };
                let input = random_tensor(&mut rng, t, &shape);
                let context = format!("{t} {shape:?} axis {axis} {:?}", permuted.moves());
                let outputs = input.split_permuted(&permuted).unwrap();
                assert_outputs_equal(&oracle(&input, &permuted), &outputs, &context);
                // And back: the concat whose inputs are the outputs, each
                // permuted back and merged into its piece.
                let concat = concat_undoing(&permuted);
                let refs: Vec<&HostTensor> = outputs.iter().collect();
                let back = HostTensor::concat_permuted(&refs, &concat).unwrap();
                assert_outputs_equal(&[canonical(&input)], &[back], &format!("{context} back"));
                cases += 1;
            }
        }
    }
    assert!(
        cases >= 400 && refused < cases / 5,
        "{cases} cases, {refused} refused (past the rank, or merged across strides)"
    );
}

#[test]
fn split_heads_and_merge_heads_are_the_transposes_of_attention() {
    // GPT-2's QKV at small size: [B = 2, S = 3, 3 * H * D], H = 2, D = 4.
    let (b, s, h, d) = (2, 3, 2, 4);
    let values: Vec<u16> = (0..(b * s * 3 * h * d) as u16).collect();
    let x = HostTensor::from_slice(&[b, s, 3 * h * d], &values).unwrap();
    let qkv = PermutedSplit::split_heads(x.shape(), &[h * d; 3], d).unwrap();
    let out = x.split_permuted(&qkv).unwrap();
    for (i, o) in out.iter().enumerate() {
        assert_eq!(o.shape(), &[b, h, s, d]);
        let o = o.to_vec::<u16>().unwrap();
        for (bi, hi, si, di) in (0..b)
            .flat_map(|bi| (0..h).map(move |hi| (bi, hi)))
            .flat_map(|(bi, hi)| (0..s).flat_map(move |si| (0..d).map(move |di| (bi, hi, si, di))))
        {
            let at = ((bi * h + hi) * s + si) * d + di;
            let source = (bi * s + si) * 3 * h * d + i * h * d + hi * d + di;
            assert_eq!(o[at], values[source], "output {i} [{bi}, {hi}, {si}, {di}]");
        }
    }
    let refs: Vec<&HostTensor> = out.iter().collect();
    let merge = PermutedConcat::merge_heads(&qkv.output_shapes()).unwrap();
    assert_eq!(HostTensor::concat_permuted(&refs, &merge).unwrap(), x);
}

#[test]
fn a_detection_heads_distribution_split() {
    // YOLOv8's head: [1, 144, A] split into boxes 64 and classes 80; the
    // boxes [1, 4, 16, A] with the 4 and the 16 swapped; classes kept.
    let a = 7;
    let x = random_tensor(&mut Rng::new(8), ElementType::Float, &[1, 144, a]);
    let split = ResolvedSplit::new(&[1, 144, a], 1, vec![64, 80], true).unwrap();
    let moves = vec![
        PieceMove::new(vec![1, 4, 16, a], vec![0, 2, 1, 3]),
        PieceMove::keep(&[1, 80, a]),
    ];
    let permuted = PermutedSplit::new(split.clone(), moves).unwrap();
    assert_eq!(
        permuted.output_shapes(),
        vec![vec![1, 16, 4, a], vec![1, 80, a]]
    );
    let out = x.split_permuted(&permuted).unwrap();
    assert_outputs_equal(&oracle(&x, &permuted), &out, "yolo dfl");
    // A kept output is the plain split's.
    assert_eq!(out[1], x.split(&split).unwrap()[1]);
}

#[test]
fn misuse_is_a_typed_error() {
    let qkv = PermutedSplit::split_heads(&[2, 3, 8], &[4, 4], 2).unwrap();
    let x = HostTensor::from_slice(&[2, 3, 9], &[0u8; 54]).unwrap();
    let e = x.split_permuted(&qkv).unwrap_err();
    assert!(e.to_string().contains("[2, 3, 9]"), "{e}");
    let merge = PermutedConcat::merge_heads(&[[2, 2, 3, 2], [2, 2, 3, 2]]).unwrap();
    let a = HostTensor::from_slice(&[2, 2, 3, 2], &[0u8; 24]).unwrap();
    let b = HostTensor::from_slice(&[2, 2, 3, 2], &[0u16; 24]).unwrap();
    let wrong = HostTensor::from_slice(&[2, 3, 2, 2], &[0u8; 24]).unwrap();
    for (inputs, what) in [
        (vec![&a], "input count"),
        (vec![&a, &wrong], "[2, 3, 2, 2]"),
        (vec![&a, &b], "element type"),
    ] {
        let e = HostTensor::concat_permuted(&inputs, &merge).unwrap_err();
        assert!(
            e.to_string().contains(what) || format!("{e:?}").contains("Count"),
            "{what}: {e}"
        );
    }
}

/// One numpy-computed case of `cases.json`.
struct NumpyCase {
    name: String,
    dtype: String,
    shape: Vec<usize>,
    axis: usize,
    lengths: Vec<usize>,
    moves: Vec<(Vec<usize>, Vec<usize>)>,
    input_hex: String,
    outputs_hex: Vec<String>,
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn numpy_computed_cases_bit_for_bit() {
    let path = repo_root().join("tests/data/permuted/cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 8, "{} cases", cases.len());
    let dims = |v: &serde_json::Value| -> Vec<usize> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect()
    };
    for c in cases {
        let case = NumpyCase {
            name: c["name"].as_str().unwrap().to_string(),
            dtype: c["dtype"].as_str().unwrap().to_string(),
            shape: dims(&c["shape"]),
            axis: c["axis"].as_u64().unwrap() as usize,
            lengths: dims(&c["lengths"]),
            moves: c["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (dims(&m[0]), dims(&m[1])))
                .collect(),
            input_hex: c["input_hex"].as_str().unwrap().to_string(),
            outputs_hex: c["outputs_hex"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_str().unwrap().to_string())
                .collect(),
        };
        let t = match case.dtype.as_str() {
            "float16" => ElementType::Float16,
            "float32" => ElementType::Float,
            "float64" => ElementType::Double,
            "uint8" => ElementType::Uint8,
            "int8" => ElementType::Int8,
            "int64" => ElementType::Int64,
            "bool" => ElementType::Bool,
            "complex64" => ElementType::Complex64,
            other => panic!("{}: dtype {other}", case.name),
        };
        let input = HostTensor::from_raw(t, &case.shape, unhex(&case.input_hex)).unwrap();
        let split = ResolvedSplit::new(&case.shape, case.axis, case.lengths.clone(), true).unwrap();
        let moves = case
            .moves
            .iter()
            .map(|(shape, perm)| PieceMove::new(shape.clone(), perm.clone()))
            .collect();
        let permuted = PermutedSplit::new(split, moves).unwrap();
        let outputs = input.split_permuted(&permuted).unwrap();
        for (i, (o, hex)) in outputs.iter().zip(&case.outputs_hex).enumerate() {
            assert_eq!(
                o.as_bytes().unwrap(),
                unhex(hex),
                "{} output {i}",
                case.name
            );
        }
        let concat = concat_undoing(&permuted);
        let refs: Vec<&HostTensor> = outputs.iter().collect();
        let back = HostTensor::concat_permuted(&refs, &concat).unwrap();
        assert_eq!(back, input, "{} back", case.name);
    }
}
