//! The funnel kernel: runs of at least 128 bits at any bit offset, into
//! whole vec4 units, each shifted out of two source vec4s (one load and one
//! store per 16 bytes inside a run). Table-driven, so it takes outputs in
//! any number of dispatches.

use super::{ClassRates, KernelSpec, LONG_UNALIGNED_RUNS, Moves, Order, SampleSplit};
use crate::element::ElementType;
use crate::plan::geometry::Direction;
use crate::plan::geometry::OutputGeometry;
use crate::plan::kernels::template::Template;
use crate::plan::kernels::wgsl::{VEC4_BITS, table_driven};

const WGSL: Template = Template::new("funnel.wgsl", include_str!("../../../shaders/funnel.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "funnel",
    unit_bits: 128,
    order: Order::ByRate,
    whole_outputs: true,
    template: WGSL,
    moves: Moves::Table {
        fits: |g| g.vec4_bindings() && g.long_runs_in_vec4s(),
        wgsl: |variant| {
            VEC4_BITS.fill("helpers", &[]) + &table_driven("split_funnel", &WGSL, variant)
        },
    },
    moves_alone: OutputGeometry::long_in_vec4s,
    probe: LONG_UNALIGNED_RUNS,
    samples: &[
        LONG_UNALIGNED_RUNS,
        // int4 runs at odd nibbles, one of them a single vec4 and a bit.
        SampleSplit {
            shape: &[64, 99],
            axis: 1,
            lengths: &[33, 66],
            element_type: ElementType::Int4,
        },
    ],
    // GPUs: 0.933 of the ideal sectors, level with row streams and the word kernel
    // (tests/coalescing.rs).
    rates: ClassRates::on_gpus(5.7e9, 0.92),
    inherits: None,
    directions: &[Direction::Split],
};
