//! The row-word kernel: the row-copy kernel ([`super::row_copies`], the same
//! layout and template) over 32-bit words, for runs whose lengths, offsets
//! and row stride are whole words but not whole vec4s: f32 rows of an odd
//! number of words, YOLOv5's `[4, 1, 80]` head. On a GPU, consecutive lanes
//! on consecutive words read the input once, in whole sectors, and write
//! every output in whole sectors (the access trace, `docs/PERFORMANCE.md`),
//! where the vec4 kernels that shift words into place read a narrow
//! column's sectors for one output at a time.

use super::row_copies::{WGSL, layout};
use super::{ClassRates, Form, Kernel, KernelSpec, Moves, Order, SampleSplit, YOLOV5_HEAD};
use crate::element::ElementType;
use crate::kernels::work::Direction;

pub(super) const SPEC: KernelSpec = KernelSpec {
    name: "row_words",
    unit_bits: 32,
    order: Order::ByRate,
    templates: &[WGSL],
    moves: Moves {
        per_layout: Some(|g, live, start| layout(g, live, start, 32)),
        table: None,
        grouped: None,
    },
    prices_output: |g| g.is_aligned_to(32, 2),
    probe: ODD_WORDS,
    samples: &[
        (Form::PerLayout, ODD_WORDS),
        (Form::PerLayout, YOLOV5_HEAD),
        // f16 runs of even lengths at even offsets.
        (
            Form::PerLayout,
            SampleSplit {
                shape: &[64, 30],
                axis: 1,
                lengths: &[2, 8, 20],
                element_type: ElementType::Float16,
            },
        ),
    ],
    // Lavapipe: median of three release calibrations (2026-11-25: 5.0, 4.8, 4.8 GB/s).
    // GPUs: 0.966 of the ideal sectors, but its 4-byte lanes issue four times the requests of
    // the funnel's vec4 lanes (0.25 of the ideal requests; tests/coalescing.rs), and the NVIDIA
    // H200 ran it below the funnel by both readings of its probes (0.66 against 1.21 TB/s;
    // 1.93 against 3.05 net of a dispatch) and on split_bench (f32 rows of 4,097 words at 0.55
    // of the shader copy, where the funnel ran u8 rows of 4,097 bytes at 1.03): just below the
    // funnel, above the words kernel (whose place it must keep to be tried at all).
    rates: ClassRates::on_gpus(4.8e9, 0.91),
    inherits: Some(Kernel::Words),
    per_layout_name: None,
    directions: &[Direction::Split, Direction::Concat],
};

/// f32 rows of 1,025 words split into 512 and 513: whole words, no vec4
/// alignment past the first run.
const ODD_WORDS: SampleSplit = SampleSplit {
    shape: &[1024, 1025],
    axis: 1,
    lengths: &[512, 513],
    element_type: ElementType::Float,
};
