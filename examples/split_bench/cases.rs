//! The benchmark's cases: fixed names, tensors and splits.

use wgpu_split::{ElementType, OnnxSplit, OnnxSplitToSequence, Operator, ParamTensor};

/// One benchmark case: a name (fixed), a tensor and a split.
pub struct Case {
    pub name: &'static str,
    pub element_type: ElementType,
    pub shape: Vec<usize>,
    pub op: Operator,
}

/// Every case; `quick` shrinks the large ones.
pub fn suite(quick: bool) -> Vec<Case> {
    let q = |full: usize, small: usize| if quick { small } else { full };
    let lengths = |lengths: &[i64]| ParamTensor::int64_1d(lengths);
    let case = |name, element_type, shape, op: Operator| Case {
        name,
        element_type,
        shape,
        op,
    };
    use ElementType::{Float, Float16, Int4, Uint8};
    vec![
        case(
            "f32_4096x4096_axis0_4",
            Float,
            vec![q(4096, 1024), q(4096, 1024)],
            OnnxSplit::new(13, 4).axis(0).into(),
        ),
        case(
            "f32_64x1024x256_axis1_4",
            Float,
            vec![q(64, 16), q(1024, 256), 256],
            OnnxSplit::new(13, 4).axis(1).into(),
        ),
        case(
            "f32_4096x4096_axis1_4",
            Float,
            vec![q(4096, 1024), q(4096, 1024)],
            OnnxSplit::new(13, 4).axis(-1).into(),
        ),
        case(
            "f16_1048576x6_axis1_123",
            Float16,
            vec![q(1_048_576, 262_144), 6],
            OnnxSplit::new(13, 3)
                .axis(1)
                .split_input(lengths(&[1, 2, 3]))
                .into(),
        ),
        case(
            "u8_4096x4097_axis1_2",
            Uint8,
            vec![q(4096, 1024), 4097],
            OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(lengths(&[2048, 2049]))
                .into(),
        ),
        case(
            "i4_4096x4099_axis1_3",
            Int4,
            vec![q(4096, 1024), 4099],
            OnnxSplit::new(13, 3)
                .axis(1)
                .split_input(lengths(&[1000, 1000, 2099]))
                .into(),
        ),
        case(
            "f32_1000x4096_seq",
            Float,
            vec![q(1000, 250), 4096],
            OnnxSplitToSequence::new(11).axis(0).keepdims(0).into(),
        ),
        // Realistic splits: attention QKV, a detection head both ways, and
        // a channel split of an image.
        case(
            "f16_8x512x2304_qkv",
            Float16,
            vec![q(8, 2), 512, 2304],
            OnnxSplit::new(18, 3).axis(-1).num_outputs(3).into(),
        ),
        case(
            "f32_1x84x8400_yolo",
            Float,
            vec![1, 84, 8400],
            OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(lengths(&[4, 80]))
                .into(),
        ),
        case(
            "f32_1x8400x84_yolo_t",
            Float,
            vec![1, 8400, 84],
            OnnxSplit::new(13, 2)
                .axis(-1)
                .split_input(lengths(&[4, 80]))
                .into(),
        ),
        case(
            "f32_1x3x640x640_ch",
            Float,
            vec![1, 3, 640, 640],
            OnnxSplit::new(13, 3).axis(1).into(),
        ),
    ]
}
