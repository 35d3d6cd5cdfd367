//! The word kernel: one `u32` per unit, any geometry (runs that start and
//! end mid-word are assembled from shifted source bits). The fallback every
//! plan can take.

use super::{ClassRates, Fits, GeneratedLayout, KernelSpec, Order, Probe};
use crate::element::ElementType;
use crate::plan::template::Template;
use crate::plan::wgsl::{Variant, table_driven};

const WGSL: Template = Template::new("words.wgsl", include_str!("../../../shaders/words.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "words",
    unit_bits: 32,
    order: Order::Last,
    whole_outputs: false,
    fits: Fits::Table(|_| true),
    moves_alone: |_| true,
    wgsl,
    // 1023 rows: outputs of partial vec4s, which no vec4 kernel takes.
    probe: Probe {
        shape: &[1023, 4096],
        axis: 1,
        lengths: &[1023, 1025, 1024, 1024],
        element_type: ElementType::Float,
    },
    // Lavapipe: median of three release calibrations (docs/DEVICE.md).
    rates: ClassRates {
        software: 2.2e9,
        discrete: 200e9,
        integrated: 30e9,
        unknown: 15e9,
    },
};

fn wgsl(variant: &Variant, _: Option<&GeneratedLayout>) -> String {
    WGSL.fill("helpers", &[]) + &table_driven("split_words", &WGSL, variant)
}
