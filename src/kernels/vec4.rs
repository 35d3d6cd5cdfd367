//! The vec4 kernel: whole vec4s from whole vec4s when every run, offset and
//! block is a multiple of 128 bits, tried first whenever it fits. Its
//! per-layout form copies each row's runs with the row geometry compiled in
//! ([`super::row_copies`]); where that form does not take the outputs (past
//! [`super::MAX_COPY_OUTPUTS`] outputs in one module, an output cut into
//! chunks, under [`super::MIN_WORKING_PERCENT`] working steps, more group
//! modules than a plan compiles), its table-driven form moves one
//! `vec4<u32>` per unit, driven by the parameter table.

use super::{ALIGNED_RUNS, ClassRates, Form, KernelSpec, Moves, Order, SampleSplit, TableForm};
use crate::element::ElementType;
use crate::kernels::work::Direction;
use crate::kernels::row_copies;
use crate::kernels::template::Template;
use crate::kernels::wgsl::table_driven;

const WGSL: Template = Template::new("vec4.wgsl", include_str!("../../shaders/vec4.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "vec4",
    unit_bits: 128,
    order: Order::First,
    templates: &[row_copies::WGSL, WGSL],
    moves: Moves {
        per_layout: Some(|g, live, start| row_copies::layout(g, live, start, 128)),
        // Copied outputs do not constrain it: 128 bits divide every gathered
        // run, offset and stride, and bindings start on 16 bytes.
        table: Some(TableForm {
            fits: |g| g.vec4_bindings() && g.aligned_to(128),
            wgsl: |variant| table_driven("split_vec4", &WGSL, variant),
            whole_outputs: false,
        }),
        grouped: None,
    },
    // An output alone: its block stride counts (two rows or more).
    prices_output: |g| g.is_aligned_to(128, 2),
    probe: ALIGNED_RUNS,
    samples: &[
        (Form::PerLayout, ALIGNED_RUNS),
        // Three runs of unequal vec4s, the middle one not a whole stretch.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[64, 112],
                axis: 1,
                lengths: &[32, 56, 24],
                element_type: ElementType::Float,
            },
        ),
        (Form::Table, ALIGNED_RUNS),
        // YOLO's head: a one-vec4 run beside a twenty-vec4 one.
        (
            Form::Table,
            SampleSplit {
                shape: &[96, 84],
                axis: 1,
                lengths: &[4, 80],
                element_type: ElementType::Float,
            },
        ),
    ],
    // The per-layout form's (what the probe plans). Lavapipe: the row copies measured 8.0 GB/s
    // against the table form's 5.5 (`docs/DEVICE.md`). GPUs: 0.997 of the ideal sectors at
    // W = 32 (the table form 0.985) over the corpus of tests/coalescing.rs.
    rates: ClassRates::on_gpus(8.0e9, 1.0),
    inherits: None,
    per_layout_name: Some("row_copies"),
    directions: &[Direction::Split, Direction::Concat],
};
