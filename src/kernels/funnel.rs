//! The funnel kernel: runs of at least 128 bits at any bit offset, into
//! whole vec4 units, each shifted out of two source vec4s (one load and one
//! store per 16 bytes inside a run). Its per-layout form streams each row's
//! runs with the row geometry compiled in ([`super::row_streams`], which
//! also gathers runs of whole words shorter than a vec4); where that form
//! does not take the outputs (an output cut into chunks, more group modules
//! than a plan compiles), its table-driven form moves one unit per
//! invocation, in any number of dispatches. Concats take the per-layout
//! form only, on GPUs ([`super::concat_streams`]: a lane per tensor vec4,
//! shifted out of the one or two runs it spans); the table form writes its
//! units at any bit offset, so it moves splits only.

use super::{
    ClassRates, Form, KernelSpec, LONG_UNALIGNED_RUNS, Moves, Order, SampleSplit, TableForm,
    YOLOV5_HEAD,
};
use crate::element::ElementType;
use crate::kernels::work::Direction;
use crate::kernels::work::OutputGeometry;
use crate::kernels::work::Work;
use crate::kernels::{GeneratedLayout, concat_streams, row_streams};
use crate::kernels::template::Template;
use crate::kernels::wgsl::{VEC4_BITS, table_driven};

const WGSL: Template = Template::new("funnel.wgsl", include_str!("../../shaders/funnel.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "funnel",
    unit_bits: 128,
    order: Order::ByRate,
    templates: &[row_streams::WGSL, concat_streams::WGSL, WGSL],
    moves: Moves {
        per_layout: Some(per_layout),
        table: Some(TableForm {
            // A split only: the table form writes its units at any bit offset.
            fits: |g| {
                g.direction == Direction::Split && g.vec4_bindings() && g.long_runs_in_vec4s()
            },
            wgsl: |variant| {
                VEC4_BITS.fill("helpers", &[]) + &table_driven("split_funnel", &WGSL, variant)
            },
            whole_outputs: true,
        }),
        grouped: None,
    },
    prices_output: OutputGeometry::long_in_vec4s,
    probe: LONG_UNALIGNED_RUNS,
    samples: &[
        (Form::PerLayout, LONG_UNALIGNED_RUNS),
        (Form::PerLayout, YOLOV5_HEAD),
        // int4 rows of odd nibbles into three.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[64, 4099],
                axis: 1,
                lengths: &[1000, 1000, 2099],
                element_type: ElementType::Int4,
            },
        ),
        (Form::Table, LONG_UNALIGNED_RUNS),
        // int4 runs at odd nibbles, one of them a single vec4 and a bit.
        (
            Form::Table,
            SampleSplit {
                shape: &[64, 99],
                axis: 1,
                lengths: &[33, 66],
                element_type: ElementType::Int4,
            },
        ),
    ],
    // The per-layout form's (what the probe plans). Lavapipe: the row streams measured 6.3 GB/s
    // against the table form's 5.7. GPUs: 0.917 of the ideal sectors, level with the table form
    // (0.939 to 0.933 on 36 splits) and the word kernel (0.917 to 0.901; tests/coalescing.rs).
    rates: ClassRates::on_gpus(6.3e9, 0.93),
    inherits: None,
    per_layout_name: Some("row_streams"),
    directions: &[Direction::Split, Direction::Concat],
};

/// The per-layout form: row streams for a split, concat streams for a
/// concat.
fn per_layout(
    g: &Work<'_>,
    live: Vec<(usize, &OutputGeometry)>,
    window_start_bits: u64,
) -> Option<GeneratedLayout> {
    match g.direction {
        Direction::Split => row_streams::layout(g, live, window_start_bits),
        Direction::Concat => concat_streams::layout(g, live, window_start_bits),
    }
}
