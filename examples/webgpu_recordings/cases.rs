//! The splits recorded: one per kernel, split_bench's cases scaled down,
//! every element width, the frameworks' windows, 1 to 100 outputs.

use wgpu_split::frameworks::{Numpy, Torch};
use wgpu_split::plan::{Form, Kernel};
use wgpu_split::{
    ElementType, OnnxSplit, OnnxSplitToSequence, Operator, ParamTensor, ResolvedSplit,
};

/// A split to record, by name.
pub struct Case {
    pub name: String,
    pub element_type: ElementType,
    pub split: ResolvedSplit,
}

fn case(
    name: impl Into<String>,
    t: ElementType,
    shape: &[usize],
    axis: usize,
    lengths: Vec<usize>,
) -> Case {
    Case {
        name: name.into(),
        element_type: t,
        split: ResolvedSplit::new(shape, axis, lengths, true).expect("a valid split"),
    }
}

fn op_case(name: &str, t: ElementType, shape: &[usize], op: Operator) -> Case {
    Case {
        name: name.to_string(),
        element_type: t,
        split: op.resolve(shape).expect("a valid split"),
    }
}

fn window_case(
    name: String,
    t: ElementType,
    shape: &[usize],
    windows: Vec<(usize, usize)>,
) -> Case {
    Case {
        name,
        element_type: t,
        split: ResolvedSplit::from_windows(shape, 1, windows, true).expect("windows in range"),
    }
}

/// A kernel in one of its forms.
pub type Forced = (Kernel, Form);

/// One split per kernel form that the form can move.
pub fn kernel_cases() -> Vec<(Forced, Case)> {
    use ElementType::{Float, Float16, Uint8};
    // Every kernel's sample splits (its spec's), at most 32 rows: a kernel
    // in the table is in the suite.
    let samples = Kernel::ALL.into_iter().flat_map(|kernel| {
        wgpu_split::plan::internals::samples(kernel)
            .into_iter()
            .enumerate()
            .map(move |(i, (form, split, t))| {
                let shape = split.input_shape();
                let mut small = shape.to_vec();
                small[0] = small[0].min(32);
                let lengths = split.lengths().to_vec();
                let name = format!("{}_sample{i}", kernel.name());
                ((kernel, form), case(name, t, &small, split.axis(), lengths))
            })
    });
    let mut cases: Vec<(Forced, Case)> = samples.collect();
    let table = |kernel| (kernel, Form::Table);
    let per_layout = |kernel| (kernel, Form::PerLayout);
    cases.extend([
        (
            table(Kernel::Words),
            case("words", Uint8, &[6, 10], 1, vec![3, 7]),
        ),
        (
            table(Kernel::Vec4),
            case("vec4", Float, &[4, 16], 1, vec![8, 8]),
        ),
        (
            per_layout(Kernel::Vec4),
            case("row_copies", Float, &[4, 32], 1, vec![8, 8, 16]),
        ),
        // Past 7 destinations: groups, three modules (separate buffers).
        (
            per_layout(Kernel::Vec4),
            case("row_copies_groups", Float, &[4, 2048], 1, vec![32; 64]),
        ),
        (
            per_layout(Kernel::RowBlocks),
            case("row_blocks_groups", Float16, &[64, 12], 1, vec![1; 12]),
        ),
        (
            per_layout(Kernel::Funnel),
            case(
                "row_streams_groups",
                Uint8,
                &[16, 4097],
                1,
                [vec![455; 8], vec![457]].concat(),
            ),
        ),
        (
            per_layout(Kernel::RowBlocks),
            case("row_blocks", Float16, &[64, 6], 1, vec![1, 2, 3]),
        ),
        (
            table(Kernel::Funnel),
            case("funnel", Uint8, &[16, 4097], 1, vec![2048, 2049]),
        ),
        (
            per_layout(Kernel::Funnel),
            case("row_streams", Uint8, &[16, 4097], 1, vec![2048, 2049]),
        ),
    ]);
    cases
}

/// The split_bench cases (`examples/split_bench/cases.rs`), scaled down to
/// 64 KiB or less, each keeping its geometry: the split axis, the run
/// lengths and their alignment.
pub fn bench_cases() -> Vec<Case> {
    use ElementType::{Float, Float16, Int4, Uint8};
    let lengths = |l: &[i64]| ParamTensor::int64_1d(l);
    let split13 = |n, axis| OnnxSplit::new(13, n).axis(axis);
    let mut cases = vec![
        op_case("f32_axis0_4", Float, &[64, 256], split13(4, 0).into()),
        op_case("f32_axis1_4", Float, &[4, 64, 16], split13(4, 1).into()),
        op_case("f32_last_axis_4", Float, &[64, 256], split13(4, -1).into()),
        op_case(
            "f16_short_rows_123",
            Float16,
            &[1024, 6],
            split13(3, 1).split_input(lengths(&[1, 2, 3])).into(),
        ),
        op_case(
            "u8_unaligned_2",
            Uint8,
            &[16, 4097],
            split13(2, 1).split_input(lengths(&[2048, 2049])).into(),
        ),
        op_case(
            "i4_unaligned_3",
            Int4,
            &[16, 4099],
            split13(3, 1)
                .split_input(lengths(&[1000, 1000, 2099]))
                .into(),
        ),
        op_case(
            "f32_sequence",
            Float,
            &[40, 64],
            OnnxSplitToSequence::new(11).axis(0).keepdims(0).into(),
        ),
        op_case(
            "f16_qkv",
            Float16,
            &[3, 5, 96],
            OnnxSplit::new(18, 3).axis(-1).num_outputs(3).into(),
        ),
        op_case(
            "f32_yolo",
            Float,
            &[1, 84, 64],
            split13(2, 1).split_input(lengths(&[4, 80])).into(),
        ),
        op_case(
            "f32_yolo_t",
            Float,
            &[1, 64, 84],
            split13(2, -1).split_input(lengths(&[4, 80])).into(),
        ),
        op_case("f32_channels", Float, &[1, 3, 16, 16], split13(3, 1).into()),
        op_case(
            "f32_odd_words",
            Float,
            &[4, 4097],
            split13(2, 1).split_input(lengths(&[2048, 2049])).into(),
        ),
        op_case(
            "f32_yolov5",
            Float,
            &[1, 64, 85],
            split13(3, -1).split_input(lengths(&[4, 1, 80])).into(),
        ),
        // A byte between two long runs: striped plans gather it from any
        // bit offset (split) and shift a vec4 out of three runs (concat).
        op_case(
            "i8_511_1_511",
            ElementType::Int8,
            &[64, 1023],
            split13(3, 1).split_input(lengths(&[511, 1, 511])).into(),
        ),
    ];
    cases.push(Case {
        name: "f32_tensor_split".to_string(),
        element_type: Float,
        split: Torch::tensor_split(&[16, 1024], &[768, 256], 1).expect("a valid call"),
    });
    cases
}

/// The GPU element widths, 2 to 128 bits.
pub const WIDTHS: [ElementType; 7] = [
    ElementType::Uint2,
    ElementType::Int4,
    ElementType::Uint8,
    ElementType::Float16,
    ElementType::Float,
    ElementType::Double,
    ElementType::Complex128,
];

/// Short runs (row blocks) and long unaligned runs (the funnel, row
/// streams) of every GPU element width.
pub fn width_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for t in WIDTHS {
        let bits = t.bit_width().expect("a GPU type") as usize;
        // Rows that make whole vec4s of every output after 128 rows.
        cases.push(case(format!("short_{t}"), t, &[128, 6], 1, vec![1, 2, 3]));
        let long = 128usize.div_ceil(bits) + 3;
        cases.push(case(
            format!("long_{t}"),
            t,
            &[128, 3 * long],
            1,
            vec![long; 3],
        ));
    }
    cases
}

/// Windows as the frameworks give them, of every element width: an empty
/// piece, two overlapping pieces (one twice) and an unread gap, in
/// 128-bit aligned runs, long runs at any bit offset and short rows; then
/// framework calls themselves.
pub fn window_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for t in WIDTHS {
        let bits = t.bit_width().expect("a GPU type") as usize;
        let inner = (128 / bits).max(1);
        cases.push(window_case(
            format!("windows_aligned_{t}"),
            t,
            &[4, 12, inner],
            vec![(0, 3), (3, 0), (2, 4), (8, 4), (2, 4)],
        ));
        let shortest = 128usize.div_ceil(bits);
        let dim = 3 * shortest + 5;
        let outer = 128 / gcd(128, bits);
        cases.push(window_case(
            format!("windows_long_{t}"),
            t,
            &[outer, dim],
            vec![
                (0, shortest + 1),
                (dim, 0),
                (shortest / 2, shortest + 2),
                (2 * shortest + 3, shortest),
                (shortest / 2, shortest + 2),
            ],
        ));
        cases.push(window_case(
            format!("windows_short_{t}"),
            t,
            &[128, 7],
            vec![(0, 2), (2, 0), (1, 3), (5, 2), (1, 3)],
        ));
    }
    let call = |name: &str, t, split| Case {
        name: name.to_string(),
        element_type: t,
        split,
    };
    cases.push(call(
        "torch_tensor_split",
        ElementType::Float16,
        Torch::tensor_split(&[16, 40], &[30, 10, 35], 1).expect("a valid call"),
    ));
    cases.push(call(
        "torch_narrow",
        ElementType::Uint8,
        Torch::narrow(&[6, 50], 1, 7, 30).expect("a valid call"),
    ));
    cases.push(call(
        "numpy_array_split",
        ElementType::Int4,
        Numpy::array_split(&[9, 33], &[20, 5, 40], -1).expect("a valid call"),
    ));
    cases
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// 1 to 100 outputs of a small f16 tensor: past 7 outputs a pass's
/// destinations take more than one dispatch.
pub fn count_cases() -> Vec<Case> {
    (1..=100)
        .map(|n| {
            case(
                format!("outputs_{n}"),
                ElementType::Float16,
                &[3, n * 5],
                1,
                vec![5; n],
            )
        })
        .collect()
}

/// Column splits past one dispatch's destinations, for staged plans: whole
/// words (copies out of the scratch), bytes and sub-byte elements.
pub fn staged_cases() -> Vec<Case> {
    [
        (ElementType::Float, [64, 31]),
        (ElementType::Float16, [130, 31]),
        (ElementType::Uint8, [33, 20]),
        (ElementType::Int4, [40, 17]),
        (ElementType::Double, [9, 12]),
    ]
    .into_iter()
    .map(|(t, shape)| {
        let name = format!("staged_{}_{}x{}", t.name(), shape[0], shape[1]);
        case(name, t, &shape, 1, vec![1; shape[1]])
    })
    .collect()
}
