//! The word kernel: one `u32` per unit, any geometry (runs that start and
//! end mid-word are assembled from shifted source bits). The fallback every
//! plan can take.

use super::{ClassRates, Form, KernelSpec, Moves, Order, SampleSplit, TableForm};
use crate::element::ElementType;
use crate::kernels::work::Direction;
use crate::kernels::template::Template;
use crate::kernels::wgsl::table_driven_of;

const WGSL: Template = Template::new("words.wgsl", include_str!("../../shaders/words.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "words",
    unit_bits: 32,
    order: Order::Last,
    templates: &[WGSL],
    moves: Moves {
        per_layout: None,
        table: Some(TableForm {
            // A concat moves whole words only.
            fits: |g| g.direction == Direction::Split || g.aligned_to(32),
            // A concat moves whole words only (`fits`).
            wgsl: |variant| {
                let fragments: &[&str] = match variant.direction {
                    Direction::Split => &["aligned_slot", "slot"],
                    Direction::Concat => &["aligned_slot", "concat_slot"],
                };
                WGSL.fill("helpers", &[])
                    + &table_driven_of("split_words", &WGSL, fragments, variant)
            },
            whole_outputs: false,
        }),
        grouped: None,
    },
    prices_output: |_| true,
    // 1023 rows: outputs of partial vec4s, which no vec4 kernel takes.
    probe: PROBE,
    samples: &[
        (Form::Table, PROBE),
        // Runs at odd bit offsets of every width: int4 rows of 7 into 3 and 4.
        (
            Form::Table,
            SampleSplit {
                shape: &[33, 7],
                axis: 1,
                lengths: &[3, 4],
                element_type: ElementType::Int4,
            },
        ),
        // Two-bit elements, runs that end mid-byte.
        (
            Form::Table,
            SampleSplit {
                shape: &[17, 13],
                axis: 1,
                lengths: &[5, 1, 7],
                element_type: ElementType::Int2,
            },
        ),
    ],
    // Lavapipe: median of three release calibrations (docs/DEVICE.md).
    // GPUs: 0.831 of the ideal sectors (0.52 on short odd rows, where row blocks move them at
    // 0.99; tests/coalescing.rs).
    rates: ClassRates::on_gpus(2.2e9, 0.9),
    inherits: None,
    per_layout_name: None,
    directions: &[Direction::Split, Direction::Concat],
};

const PROBE: SampleSplit = SampleSplit {
    shape: &[1023, 4096],
    axis: 1,
    lengths: &[1023, 1025, 1024, 1024],
    element_type: ElementType::Float,
};
