//! The vec4 kernel: one `vec4<u32>` per unit when every run, offset and
//! block is a multiple of 128 bits: whole vec4s from whole vec4s, tried
//! first whenever it fits.

use super::{ALIGNED_RUNS, ClassRates, Fits, GeneratedLayout, KernelSpec, Order};
use crate::plan::template::Template;
use crate::plan::wgsl::{Variant, table_driven};

const WGSL: Template = Template::new("vec4.wgsl", include_str!("../../../shaders/vec4.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "vec4",
    unit_bits: 128,
    order: Order::First,
    whole_outputs: false,
    // Copied outputs do not constrain it: 128 bits divide every gathered
    // run, offset and stride, and bindings start on 16 bytes.
    fits: Fits::Table(|g| g.vec4_bindings() && g.outputs().all(|o| o.is_aligned_to(128, g.outer))),
    // An output alone: its block stride counts (two rows or more).
    moves_alone: |g| g.is_aligned_to(128, 2),
    wgsl,
    probe: ALIGNED_RUNS,
    rates: ClassRates {
        software: 5.5e9,
        discrete: 300e9,
        integrated: 40e9,
        unknown: 20e9,
    },
};

fn wgsl(variant: &Variant, _: Option<&GeneratedLayout>) -> String {
    table_driven("split_vec4", &WGSL, variant)
}
