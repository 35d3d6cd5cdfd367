//! The funnel kernel: runs of at least 128 bits at any bit offset, into
//! whole vec4 units, each shifted out of two source vec4s (one load and one
//! store per 16 bytes inside a run). Table-driven, so it takes outputs in
//! any number of dispatches.

use super::{ClassRates, Fits, GeneratedLayout, KernelSpec, LONG_UNALIGNED_RUNS, Order};
use crate::plan::geometry::OutputGeometry;
use crate::plan::template::Template;
use crate::plan::wgsl::{VEC4_BITS, Variant, table_driven};

const WGSL: Template = Template::new("funnel.wgsl", include_str!("../../../shaders/funnel.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "funnel",
    unit_bits: 128,
    order: Order::ByRate,
    whole_outputs: true,
    fits: Fits::Table(|g| g.vec4_bindings() && g.long_runs_in_vec4s()),
    moves_alone: OutputGeometry::long_in_vec4s,
    wgsl,
    probe: LONG_UNALIGNED_RUNS,
    rates: ClassRates {
        software: 5.7e9,
        discrete: 250e9,
        integrated: 35e9,
        unknown: 15e9,
    },
};

fn wgsl(variant: &Variant, _: Option<&GeneratedLayout>) -> String {
    VEC4_BITS.fill("helpers", &[]) + &table_driven("split_funnel", &WGSL, variant)
}
