//! Writes what encodes record, as JSON, for the Dawn replay
//! (`tests/dawn/replay.mjs`): every kernel in both placements, the
//! split_bench cases scaled down, generated layouts of every element width,
//! 1 to 100 outputs, each into buffers of their own, into one page packed
//! at 4- and 16-byte steps and (plans without copies) into the input's
//! page after the input, all planned for WebGPU's default limits.
//!
//! ```text
//! cargo run --example webgpu_recordings -- OUT.json
//! node tests/dawn/replay.mjs OUT.json
//! ```
//!
//! Needs no GPU: plans and bindings are plain data.

use std::collections::HashMap;

use wgpu_split::plan::internals::{RecordedModule, Recording, Region};
use wgpu_split::plan::{
    CostModel, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy, Usages,
};
use wgpu_split::{
    ElementType, OnnxSplit, OnnxSplitToSequence, Operator, ParamTensor, ResolvedSplit,
};

/// How the destinations of a recording are laid out.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Each destination in a buffer of its own.
    OwnBuffers,
    /// Every destination in one page, `step` bytes apart at least.
    Page(u64),
    /// The input at byte 16 of a page and every destination after it,
    /// from one binding alignment (256) past its end, `step` bytes apart
    /// at least (plans without copies).
    WithInput(u64),
}

/// A split to record, by name.
struct Case {
    name: String,
    element_type: ElementType,
    split: ResolvedSplit,
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

/// One split per kernel that the kernel can move.
fn kernel_cases() -> Vec<(Kernel, Case)> {
    use ElementType::{Float, Float16, Uint8};
    vec![
        (Kernel::Words, case("words", Uint8, &[6, 10], 1, vec![3, 7])),
        (Kernel::Vec4, case("vec4", Float, &[4, 16], 1, vec![8, 8])),
        (
            Kernel::RowCopies,
            case("row_copies", Float, &[4, 32], 1, vec![8, 8, 16]),
        ),
        // Past 7 destinations: groups, three modules (separate buffers).
        (
            Kernel::RowCopies,
            case("row_copies_groups", Float, &[4, 2048], 1, vec![32; 64]),
        ),
        (
            Kernel::RowBlocks,
            case("row_blocks_groups", Float16, &[64, 12], 1, vec![1; 12]),
        ),
        (
            Kernel::RowStreams,
            case(
                "row_streams_groups",
                Uint8,
                &[16, 4097],
                1,
                [vec![455; 8], vec![457]].concat(),
            ),
        ),
        (
            Kernel::RowBlocks,
            case("row_blocks", Float16, &[64, 6], 1, vec![1, 2, 3]),
        ),
        (
            Kernel::Funnel,
            case("funnel", Uint8, &[16, 4097], 1, vec![2048, 2049]),
        ),
        (
            Kernel::RowStreams,
            case("row_streams", Uint8, &[16, 4097], 1, vec![2048, 2049]),
        ),
    ]
}

/// The split_bench cases, scaled down.
fn bench_cases() -> Vec<Case> {
    use ElementType::{Float, Float16, Int4, Uint8};
    let lengths = |l: &[i64]| ParamTensor::int64_1d(l);
    vec![
        op_case(
            "f32_axis0_4",
            Float,
            &[64, 256],
            OnnxSplit::new(13, 4).axis(0).into(),
        ),
        op_case(
            "f32_axis1_4",
            Float,
            &[4, 64, 16],
            OnnxSplit::new(13, 4).axis(1).into(),
        ),
        op_case(
            "f32_last_axis_4",
            Float,
            &[64, 256],
            OnnxSplit::new(13, 4).axis(-1).into(),
        ),
        op_case(
            "f16_short_rows_123",
            Float16,
            &[1024, 6],
            OnnxSplit::new(13, 3)
                .axis(1)
                .split_input(lengths(&[1, 2, 3]))
                .into(),
        ),
        op_case(
            "u8_unaligned_2",
            Uint8,
            &[16, 4097],
            OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(lengths(&[2048, 2049]))
                .into(),
        ),
        op_case(
            "i4_unaligned_3",
            Int4,
            &[16, 4099],
            OnnxSplit::new(13, 3)
                .axis(1)
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
            OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(lengths(&[4, 80]))
                .into(),
        ),
        op_case(
            "f32_yolo_t",
            Float,
            &[1, 64, 84],
            OnnxSplit::new(13, 2)
                .axis(-1)
                .split_input(lengths(&[4, 80]))
                .into(),
        ),
        op_case(
            "f32_channels",
            Float,
            &[1, 3, 16, 16],
            OnnxSplit::new(13, 3).axis(1).into(),
        ),
    ]
}

/// Short runs (row blocks) and long unaligned runs (the funnel, row
/// streams) of every GPU element width.
fn width_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for t in [
        ElementType::Uint2,
        ElementType::Int4,
        ElementType::Uint8,
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
        ElementType::Complex128,
    ] {
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

/// 1 to 100 outputs of a small f16 tensor.
fn count_cases() -> Vec<Case> {
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

/// The regions of `plan` in `layout`: the input in buffer 0, destinations
/// in buffers of their own or one page, each buffer with exactly the usages
/// the plan states.
fn regions(plan: &SplitPlan, layout: Layout) -> (Region, Vec<Region>) {
    let nonzero = |u: Usages| {
        if u.is_empty() {
            Usages {
                copy_dst: true,
                ..u
            }
        } else {
            u
        }
    };
    let input_size = plan.input_binding_bytes().max(4);
    let mut input = Region {
        buffer: 0,
        buffer_size: input_size,
        usages: nonzero(plan.input_usages()),
        offset: 0,
        size: plan.input_bytes(),
    };
    let count = plan.destination_count();
    let destinations = match layout {
        Layout::OwnBuffers => (0..count)
            .map(|i| {
                let size = plan.destination_bytes(i);
                Region {
                    buffer: i + 1,
                    buffer_size: size.max(4),
                    usages: nonzero(plan.destination_usages(i)),
                    offset: 0,
                    size,
                }
            })
            .collect(),
        Layout::Page(step) | Layout::WithInput(step) => {
            let step = step.max(plan.offset_alignment_bytes());
            let with_input = matches!(layout, Layout::WithInput(_));
            let mut end = if with_input {
                (16 + input_size).next_multiple_of(256) + 16
            } else {
                0
            };
            let mut usages = Usages::NONE;
            let mut offsets = Vec::with_capacity(count);
            for i in 0..count {
                offsets.push(end);
                end = (end + plan.destination_bytes(i)).next_multiple_of(step);
                usages = usages.union(plan.destination_usages(i));
            }
            if with_input {
                input.offset = 16;
                input.buffer_size = end;
                usages = usages.union(plan.input_usages());
                input.usages = nonzero(usages);
            }
            (0..count)
                .map(|i| Region {
                    buffer: if with_input { 0 } else { 1 },
                    buffer_size: end.max(4),
                    usages: nonzero(usages),
                    offset: offsets[i],
                    size: plan.destination_bytes(i),
                })
                .collect()
        }
    };
    (input, destinations)
}

/// Every recording: (name, recording).
fn recordings() -> Vec<(String, Recording)> {
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let mut plans: Vec<(String, SplitPlan)> = Vec::new();
    let mut add = |name: String, c: &Case, options: PlanOptions| {
        if let Ok(plan) = SplitPlan::new(&c.split, c.element_type, &limits, &options) {
            plans.push((name, plan));
        }
    };
    let placements = [Placement::Separate, Placement::Arena];
    for (kernel, c) in kernel_cases() {
        for placement in placements {
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .kernel(kernel)
                .placement(placement);
            add(format!("{} {}", c.name, placement.name()), &c, options);
        }
    }
    let strategies = [
        ("lavapipe", Strategy::Auto(CostModel::LAVAPIPE)),
        ("discrete", Strategy::Auto(CostModel::DISCRETE_GPU)),
        ("gather", Strategy::Gather),
        ("per_output", Strategy::GatherPerOutput),
        ("copy", Strategy::Copy),
    ];
    for c in bench_cases().iter().chain(&width_cases()) {
        for placement in placements {
            for (s, strategy) in strategies {
                let options = PlanOptions::default()
                    .strategy(strategy)
                    .placement(placement);
                add(format!("{} {} {s}", c.name, placement.name()), c, options);
            }
        }
    }
    for c in count_cases() {
        for placement in placements {
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .placement(placement);
            add(format!("{} {}", c.name, placement.name()), &c, options);
        }
    }
    let mut out = Vec::new();
    for (name, plan) in &plans {
        let with_input =
            (plan.copy_count() == 0).then_some(("input's page", Layout::WithInput(16)));
        for (l, layout) in [
            ("own buffers", Layout::OwnBuffers),
            ("page at 4", Layout::Page(4)),
            ("page at 16", Layout::Page(16)),
        ]
        .into_iter()
        .chain(with_input)
        {
            let (input, destinations) = regions(plan, layout);
            let recording = plan
                .recording(&input, &destinations)
                .expect("regions the plan accepts");
            out.push((format!("{name}, {l}"), recording));
        }
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: webgpu_recordings OUT.json")?;
    let recordings = recordings();
    // Modules are shared by many recordings: each is written once.
    let mut modules: Vec<&RecordedModule> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut entries = Vec::new();
    for (name, r) in &recordings {
        let used: Vec<usize> = r
            .modules
            .iter()
            .map(|m| {
                *index.entry(m.wgsl.as_str()).or_insert_with(|| {
                    modules.push(m);
                    modules.len() - 1
                })
            })
            .collect();
        entries.push(serde_json::json!({
            "name": name,
            "buffers": r.buffers,
            "modules": used,
            "commands": r.commands,
        }));
    }
    let doc = serde_json::json!({ "modules": modules, "recordings": entries });
    if let Some(dir) = std::path::Path::new(&path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, serde_json::to_string(&doc)?)
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    println!(
        "{} recordings, {} modules: {path}",
        recordings.len(),
        modules.len()
    );
    Ok(())
}
