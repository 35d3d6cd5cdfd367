//! The benchmark's cases: fixed names, tensors and splits.

use wgpu_split::error::FrameworkError;
use wgpu_split::frameworks::Torch;
use wgpu_split::{
    ConcatOperator, ElementType, OnnxConcat, OnnxConcatFromSequence, OnnxSplit,
    OnnxSplitToSequence, Operator, ParamTensor, ResolvedConcat, ResolvedSplit,
};

/// Where a case's split comes from: a model's operator or a framework call.
pub enum Split {
    Operator(Operator),
    Framework(fn(&[usize]) -> Result<ResolvedSplit, FrameworkError>),
}

impl From<Operator> for Split {
    fn from(op: Operator) -> Self {
        Split::Operator(op)
    }
}

impl Split {
    pub fn resolve(&self, shape: &[usize]) -> wgpu_split::Result<ResolvedSplit> {
        match self {
            Split::Operator(op) => Ok(op.resolve(shape)?),
            Split::Framework(call) => Ok(call(shape)?),
        }
    }
}

/// One benchmark case: a name (fixed), a tensor and a split; for a concat
/// case, the concat operator that joins the split's outputs back into the
/// tensor (the case times the concat, not the split).
pub struct Case {
    pub name: &'static str,
    pub element_type: ElementType,
    pub shape: Vec<usize>,
    pub op: Split,
    pub concat: Option<ConcatOperator>,
}

impl Case {
    /// The concat of a concat case, resolved for the split's outputs.
    pub fn concat(&self) -> wgpu_split::Result<Option<ResolvedConcat>> {
        let Some(op) = &self.concat else {
            return Ok(None);
        };
        let split = self.op.resolve(&self.shape)?;
        Ok(Some(op.resolve(&split.output_shapes())?))
    }
}

/// The concat cases: the (YOLOv8's C2f channel concat, attention's
/// head merge, 1,000 sequence entries stacked, a sub-byte one) and the
/// concat that mirrors every other split case (tensor_split's pieces do not
/// tile its axis: it has none), each through a model's concat operator.
pub fn concat_suite(quick: bool) -> Vec<Case> {
    let q = |full: usize, small: usize| if quick { small } else { full };
    let onnx = |axis: i64| Some(OnnxConcat::new(13).axis(axis).into());
    let mut cases = vec![
        Case {
            name: "cat_f32_1x64x80x80_x3_c2f",
            element_type: ElementType::Float,
            shape: vec![1, 192, 80, 80],
            op: Operator::from(OnnxSplit::new(13, 3).axis(1)).into(),
            concat: onnx(1),
        },
        Case {
            name: "cat_f16_8x8x512x64_heads",
            element_type: ElementType::Float16,
            shape: vec![q(8, 2), 512, 512],
            op: Operator::from(OnnxSplit::new(18, 8).axis(-1).num_outputs(8)).into(),
            concat: onnx(-1),
        },
        Case {
            name: "cat_f32_1000x4096_seq",
            element_type: ElementType::Float,
            shape: vec![q(1000, 250), 4096],
            op: Operator::from(OnnxSplitToSequence::new(11).axis(0).keepdims(0)).into(),
            concat: Some(OnnxConcatFromSequence::new(11).axis(0).new_axis(1).into()),
        },
    ];
    for case in suite(quick) {
        if case.name.ends_with("_seq") || case.name.ends_with("tensor_split") {
            continue;
        }
        let axis = case.op.resolve(&case.shape).map_or(0, |s| s.axis() as i64);
        cases.push(Case {
            name: Box::leak(format!("cat_{}", case.name).into_boxed_str()),
            concat: onnx(axis),
            ..case
        });
    }
    cases
}

/// A split case of a model's operator.
fn case(name: &'static str, element_type: ElementType, shape: Vec<usize>, op: Operator) -> Case {
    Case {
        name,
        element_type,
        shape,
        op: op.into(),
        concat: None,
    }
}

/// A split's lengths as the operator's input.
fn lengths(lengths: &[i64]) -> ParamTensor {
    ParamTensor::int64_1d(lengths)
}

/// Issue 38's shapes (`--narrow`): pieces narrower than a warp's reach and
/// more outputs than one dispatch binds, each large enough that a GPU's
/// time is its memory traffic, and the 31 columns joined back.
pub fn narrow_suite(quick: bool) -> Vec<Case> {
    let q = |full: usize, small: usize| if quick { small } else { full };
    use ElementType::{BFloat16, Float, Float16, Int8, Uint8};
    let columns = || OnnxSplit::new(18, 31).axis(1).num_outputs(31);
    vec![
        case(
            "f16_1048576x31_columns",
            Float16,
            vec![q(1_048_576, 16_384), 31],
            columns().into(),
        ),
        case(
            "f32_1048576x31_columns",
            Float,
            vec![q(1_048_576, 16_384), 31],
            columns().into(),
        ),
        Case {
            name: "cat_f16_1048576x31_columns",
            concat: Some(OnnxConcat::new(13).axis(1).into()),
            ..case(
                "",
                Float16,
                vec![q(1_048_576, 16_384), 31],
                columns().into(),
            )
        },
        case(
            "bf16_3x262144x128_mrope",
            BFloat16,
            vec![3, q(262_144, 4096), 128],
            OnnxSplit::new(13, 6)
                .axis(-1)
                .split_input(lengths(&[16, 24, 24, 16, 24, 24]))
                .into(),
        ),
        case(
            "f32_4194304x4_unbind",
            Float,
            vec![q(4_194_304, 65_536), 4],
            OnnxSplit::new(18, 4).axis(-1).num_outputs(4).into(),
        ),
        case(
            "u8_16384x3000_thirds",
            Uint8,
            vec![q(16_384, 1024), 3000],
            OnnxSplit::new(18, 3).axis(1).num_outputs(3).into(),
        ),
        case(
            "i8_32768x1023_511_1_511",
            Int8,
            vec![q(32_768, 2048), 1023],
            OnnxSplit::new(13, 3)
                .axis(1)
                .split_input(lengths(&[511, 1, 511]))
                .into(),
        ),
    ]
}

/// Every case; `quick` shrinks the large ones.
pub fn suite(quick: bool) -> Vec<Case> {
    let q = |full: usize, small: usize| if quick { small } else { full };
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
        // Rows of an odd number of 32-bit words: every run after the first
        // starts at an odd word offset, in every row (a GPU class plans
        // row streams with a whole-word shift).
        case(
            "f32_4096x4097_odd_words",
            Float,
            vec![q(4096, 1024), 4097],
            OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(lengths(&[2048, 2049]))
                .into(),
        ),
        // YOLOv5's head: 85 = 4 box + 1 objectness + 80 classes per anchor.
        // The one-word run is shorter than a vec4 and the rows too long for
        // row blocks: row streams gather it word by word.
        case(
            "f32_1x8400x85_yolov5",
            Float,
            vec![1, 8400, 85],
            OnnxSplit::new(13, 3)
                .axis(-1)
                .split_input(lengths(&[4, 1, 80]))
                .into(),
        ),
        // A framework call whose pieces overlap and leave none of the axis
        // unread twice: torch.tensor_split(x, [768, 256], dim=1) gives
        // [0, 768), an empty piece and [256, 1024).
        Case {
            name: "f32_4096x1024_tensor_split",
            element_type: Float,
            shape: vec![q(4096, 1024), 1024],
            op: Split::Framework(|shape| Torch::tensor_split(shape, &[768, 256], 1)),
            concat: None,
        },
    ]
}
