//! The permuted-move cases (issue 39): GPT-2's QKV split into heads, a
//! grouped-query QKV, GPT-2's head merge, YOLOv8's distribution head.
//! split_bench and permute_bench time them (`permuted.rs`); access_trace
//! traces them (`--permuted`).

use wgpu_split::{ElementType, HostTensor, PermutedSplit, PieceMove, ResolvedSplit};

/// One case: a permuted split, or the concat that undoes one.
pub struct Case {
    pub name: &'static str,
    /// The tensor's element type.
    pub element_type: ElementType,
    /// The split (a merge: the split whose outputs it joins back).
    pub split: PermutedSplit,
    /// The head merge: the split's outputs joined back into its input.
    pub concat: bool,
}

/// Every case, at full size or (`quick`) small.
pub fn cases(quick: bool) -> Vec<Case> {
    let s = |full: usize, small: usize| if quick { small } else { full };
    let f16 = ElementType::Float16;
    let gpt2 = PermutedSplit::split_heads(&[s(8, 2), s(1024, 128), 2304], &[768; 3], 64).unwrap();
    let gqa =
        PermutedSplit::split_heads(&[s(4, 1), s(1024, 128), 48 * 128], &[4096, 1024, 1024], 128)
            .unwrap();
    let anchors = s(8400, 840);
    let dfl = PermutedSplit::new(
        ResolvedSplit::new(&[1, 144, anchors], 1, vec![64, 80], true).unwrap(),
        vec![
            PieceMove::new(vec![1, 4, 16, anchors], vec![0, 2, 1, 3]),
            PieceMove::keep(&[1, 80, anchors]),
        ],
    )
    .unwrap();
    vec![
        Case {
            name: "gpt2_qkv_f16_8x1024x2304",
            element_type: f16,
            split: gpt2.clone(),
            concat: false,
        },
        Case {
            name: "gqa_qkv_f16_4x1024x6144",
            element_type: f16,
            split: gqa,
            concat: false,
        },
        Case {
            name: "gpt2_merge_heads_f16",
            element_type: f16,
            split: gpt2,
            concat: true,
        },
        Case {
            name: "yolov8_dfl_f32_1x144x8400",
            element_type: ElementType::Float,
            split: dfl,
            concat: false,
        },
    ]
}

impl Case {
    /// The case's input, pseudo-random bytes drawn from `seed` (which it
    /// advances), and the packed bytes of it.
    pub fn input(&self, seed: &mut u64) -> wgpu_split::Result<(HostTensor, Vec<u8>)> {
        let t = self.element_type;
        let shape = self.split.split().input_shape();
        let count: usize = shape.iter().product();
        let len = t.byte_len(count).unwrap_or_default();
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (*seed >> 56) as u8
            })
            .collect();
        Ok((HostTensor::from_raw(t, shape, bytes.clone())?, bytes))
    }
}
