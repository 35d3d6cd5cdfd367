//! The vec4 kernel: one `vec4<u32>` per unit when every run, offset and
//! block is a multiple of 128 bits: whole vec4s from whole vec4s, tried
//! first whenever it fits.

use super::{ALIGNED_RUNS, ClassRates, KernelSpec, Moves, Order, SampleSplit};
use crate::element::ElementType;
use crate::plan::geometry::Direction;
use crate::plan::kernels::template::Template;
use crate::plan::kernels::wgsl::table_driven;

const WGSL: Template = Template::new("vec4.wgsl", include_str!("../../../shaders/vec4.wgsl"));

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "vec4",
    unit_bits: 128,
    order: Order::First,
    whole_outputs: false,
    template: WGSL,
    // Copied outputs do not constrain it: 128 bits divide every gathered
    // run, offset and stride, and bindings start on 16 bytes.
    moves: Moves::Table {
        fits: |g| g.vec4_bindings() && g.aligned_to(128),
        wgsl: |variant| table_driven("split_vec4", &WGSL, variant),
    },
    // An output alone: its block stride counts (two rows or more).
    moves_alone: |g| g.is_aligned_to(128, 2),
    probe: ALIGNED_RUNS,
    samples: &[
        ALIGNED_RUNS,
        // YOLO's head: a one-vec4 run beside a twenty-vec4 one.
        SampleSplit {
            shape: &[96, 84],
            axis: 1,
            lengths: &[4, 80],
            element_type: ElementType::Float,
        },
    ],
    // GPUs: 0.985 of the ideal sectors (tests/coalescing.rs); a run-time division per invocation.
    rates: ClassRates::on_gpus(5.5e9, 0.98),
    inherits: None,
    directions: &[Direction::Split, Direction::Concat],
};
