//! What each class model plans for every split_bench case, pinned: the
//! kernel, the dispatches and the copies, under WebGPU's default limits
//! into one buffer per output (split_bench's `gpu_discrete` and
//! `gpu_integrated` run exactly these). A change to a model or a kernel
//! that moves a plan shows here first; the models' sources are in
//! `docs/DEVICE.md` ("Class models").

#[path = "../examples/split_bench/cases.rs"]
#[allow(dead_code)]
mod cases;

use wgpu_split::plan::{CostModel, PlanLimits, PlanOptions, SplitPlan, Strategy};

/// The models, in the order of the pins' columns.
const MODELS: [(&str, CostModel); 4] = [
    ("DISCRETE_GPU", CostModel::DISCRETE_GPU),
    ("INTEGRATED_GPU", CostModel::INTEGRATED_GPU),
    ("LAVAPIPE", CostModel::LAVAPIPE),
    ("CONSERVATIVE", CostModel::CONSERVATIVE),
];

/// A plan as pinned: (kernel, dispatches, copies).
type Pin = (&'static str, usize, u64);

/// Per case, per model: (kernel, dispatches, copies). The 143 dispatches of
/// `f32_1000x4096_seq` are WebGPU's 7 destinations per dispatch (an arena
/// plan is one), row copies in two modules: groups of 7 rows, and the last
/// group of 6.
const PINS: [(&str, [Pin; 4]); 14] = [
    (
        "f32_4096x4096_axis0_4",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("vec4", 0, 4),
            ("vec4", 0, 4),
        ],
    ),
    (
        "f32_64x1024x256_axis1_4",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("vec4", 0, 256),
            ("row_copies", 1, 0),
        ],
    ),
    (
        "f32_4096x4096_axis1_4",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("vec4", 0, 16384),
            ("row_copies", 1, 0),
        ],
    ),
    (
        "f16_1048576x6_axis1_123",
        [
            ("row_blocks", 1, 0),
            ("row_blocks", 1, 0),
            ("row_blocks", 1, 0),
            ("row_blocks", 1, 0),
        ],
    ),
    (
        "u8_4096x4097_axis1_2",
        [
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
        ],
    ),
    (
        "i4_4096x4099_axis1_3",
        [
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
        ],
    ),
    (
        "f32_1000x4096_seq",
        [
            ("row_copies", 143, 0),
            ("row_copies", 143, 0),
            ("vec4", 0, 1000),
            ("row_copies", 143, 0),
        ],
    ),
    (
        "f16_8x512x2304_qkv",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
        ],
    ),
    (
        "f32_1x84x8400_yolo",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("vec4", 0, 2),
            ("vec4", 0, 2),
        ],
    ),
    (
        "f32_1x8400x84_yolo_t",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("vec4", 1, 0),
            ("row_copies", 1, 0),
        ],
    ),
    (
        "f32_1x3x640x640_ch",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("vec4", 0, 3),
            ("vec4", 0, 3),
        ],
    ),
    (
        "f32_4096x4097_odd_words",
        [
            ("row_streams", 1, 0),
            ("row_streams", 1, 0),
            ("vec4", 0, 8192),
            ("row_streams", 1, 0),
        ],
    ),
    (
        "f32_1x8400x85_yolov5",
        [
            ("row_blocks", 1, 0),
            ("row_blocks", 1, 0),
            ("row_streams", 1, 0),
            ("row_blocks", 1, 0),
        ],
    ),
    (
        "f32_4096x1024_tensor_split",
        [
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
            ("row_copies", 1, 0),
        ],
    ),
];

#[test]
fn every_class_model_plans_every_case_as_pinned() {
    let suite = cases::suite(false);
    assert_eq!(suite.len(), PINS.len(), "a case was added: pin its plans");
    // Every plan, as a pin would read, so that a change shows whole.
    let mut actual = String::new();
    let mut differ = Vec::new();
    for (case, (name, pins)) in suite.iter().zip(PINS) {
        assert_eq!(case.name, name);
        let split = case.op.resolve(&case.shape).unwrap();
        actual += &format!("    (\n        \"{name}\",\n        [\n");
        for ((model_name, model), pin) in MODELS.iter().zip(pins) {
            let options = PlanOptions::default().strategy(Strategy::Auto(*model));
            let plan = SplitPlan::new(
                &split,
                case.element_type,
                &PlanLimits::WEBGPU_DEFAULT,
                &options,
            )
            .unwrap();
            let got = (plan.runs(), plan.dispatch_count(), plan.copy_count());
            actual += &format!("            {got:?},\n");
            if got != pin {
                differ.push(format!(
                    "{name} under {model_name}: {got:?}, pinned {pin:?}"
                ));
            }
        }
        actual += "        ],\n    ),\n";
    }
    assert!(differ.is_empty(), "{differ:#?}\nevery plan:\n{actual}");
}

#[test]
fn gpu_models_never_plan_more_than_a_handful_of_copies() {
    for (name, pins) in PINS {
        for (model, (_, _, copies)) in MODELS.iter().zip(pins).take(2) {
            assert!(copies <= 4, "{name} under {}: {copies} copies", model.0);
        }
    }
}
