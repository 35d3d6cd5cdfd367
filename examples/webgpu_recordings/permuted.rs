//! The permuted moves of the suite (issue 39): attention heads (f16, bf16
//! of odd widths, u8, int4 nibbles), a grouped-query QKV, YOLOv8's
//! distribution head (its kept piece a copy command), transposes of the
//! fastest axis in f32, f64, complex128, f16 and u8 (the tile kernel on
//! striped lanes, packed for the last two), each split in both lane orders with its outputs in buffers of
//! their own, packed in one page, and in the input's page (the input bound
//! writable), and the concat that undoes it with its inputs in buffers of
//! their own, in one page, and in the output's page.

use wgpu_split::plan::internals::{PlainRegion, Recording};
use wgpu_split::plan::{LaneOrder, PermutedConcatPlan, PermutedPlan, PlanLimits};
use wgpu_split::{ElementType, HostTensor, PermutedSplit, PieceMove, ResolvedSplit};

use super::contents::{Placed, Rng};
use super::permuted_layouts::{LAYOUTS, concat_undoing as undoing, layout};
use super::writer::Writer;

/// One permuted case: a split and its element type.
struct Case {
    name: &'static str,
    element_type: ElementType,
    split: PermutedSplit,
}

/// A recording of the suite with what it moves: `case`'s input and
/// outputs, where they lie.
pub struct Recorded {
    name: String,
    case: usize,
    concat: bool,
    /// The single side's region (a split's input, a concat's output), then
    /// the others.
    single: PlainRegion,
    each: Vec<PlainRegion>,
    pub recording: Recording,
}

/// The permuted cases, their data, and their recordings.
pub struct PermutedSuite {
    cases: Vec<Case>,
    /// Per case: the input's bytes and the host path's outputs.
    data: Vec<(Vec<u8>, Vec<Vec<u8>>)>,
}

fn cases() -> Vec<Case> {
    let f32_t = ElementType::Float;
    let transpose = |rows: usize, cols: usize| {
        PermutedSplit::new(
            ResolvedSplit::new(&[1, rows + 8, cols], 1, vec![8, rows], true).unwrap(),
            vec![
                PieceMove::keep(&[1, 8, cols]),
                PieceMove::new(vec![1, rows, cols], vec![0, 2, 1]),
            ],
        )
        .unwrap()
    };
    let k_t = PermutedSplit::new(
        ResolvedSplit::new(&[2, 40, 3 * 64], 2, vec![64; 3], true).unwrap(),
        vec![PieceMove::new(vec![2, 40, 2, 32], vec![0, 2, 3, 1]); 3],
    )
    .unwrap();
    let k_t_f16 = k_t.clone();
    let dfl = PermutedSplit::new(
        ResolvedSplit::new(&[1, 144, 40], 1, vec![64, 80], true).unwrap(),
        vec![
            PieceMove::new(vec![1, 4, 16, 40], vec![0, 2, 1, 3]),
            PieceMove::keep(&[1, 80, 40]),
        ],
    )
    .unwrap();
    let heads = |shape: &[usize], widths: &[usize], d: usize| {
        PermutedSplit::split_heads(shape, widths, d).unwrap()
    };
    vec![
        Case {
            name: "permuted gpt2 heads f16",
            element_type: ElementType::Float16,
            split: heads(&[2, 16, 3 * 4 * 16], &[64; 3], 16),
        },
        Case {
            name: "permuted grouped-query heads f16",
            element_type: ElementType::Float16,
            split: heads(&[1, 12, 8 * 16], &[64, 32, 32], 16),
        },
        Case {
            name: "permuted heads of 3 bf16",
            element_type: ElementType::BFloat16,
            split: heads(&[2, 5, 3 * 2 * 3], &[6; 3], 3),
        },
        Case {
            name: "permuted heads u8",
            element_type: ElementType::Uint8,
            split: heads(&[2, 9, 3 * 2 * 5], &[10; 3], 5),
        },
        Case {
            name: "permuted heads int4",
            element_type: ElementType::Int4,
            split: heads(&[1, 7, 3 * 2 * 3], &[6; 3], 3),
        },
        Case {
            name: "permuted yolov8 dfl f32",
            element_type: f32_t,
            split: dfl,
        },
        Case {
            name: "permuted transpose f32",
            element_type: f32_t,
            split: transpose(40, 100),
        },
        Case {
            name: "permuted K^T f32",
            element_type: f32_t,
            split: k_t.clone(),
        },
        Case {
            name: "permuted K^T f64",
            element_type: ElementType::Double,
            split: k_t,
        },
        Case {
            name: "permuted transpose complex128",
            element_type: ElementType::Complex128,
            split: transpose(32, 20),
        },
        Case {
            name: "permuted K^T f16",
            element_type: ElementType::Float16,
            split: k_t_f16,
        },
        Case {
            name: "permuted transpose u8",
            element_type: ElementType::Uint8,
            split: transpose(24, 64),
        },
    ]
}

impl PermutedSuite {
    /// The cases and their data.
    pub fn new() -> Result<PermutedSuite, wgpu_split::Error> {
        let cases = cases();
        let data = cases
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let shape = c.split.split().input_shape();
                let len = c.element_type.byte_len(shape.iter().product()).unwrap();
                let bytes = Rng::new(3900 + i as u32).bytes(len);
                let input = HostTensor::from_raw(c.element_type, shape, bytes.clone())?;
                let outputs = input
                    .split_permuted(&c.split)?
                    .iter()
                    .map(|o| o.as_bytes().map(<[u8]>::to_vec))
                    .collect::<Result<_, _>>()?;
                Ok((bytes, outputs))
            })
            .collect::<Result<_, wgpu_split::Error>>()?;
        Ok(PermutedSuite { cases, data })
    }

    /// Every case's split and concat in both lane orders and every layout.
    pub fn record(&self) -> Result<Vec<Recorded>, String> {
        let limits = PlanLimits::WEBGPU_DEFAULT;
        let mut recorded = Vec::new();
        let mut tiled = false;
        // Every case again under a binding of 2 KiB, where it is past one
        // (windows), on striped lanes.
        let windows = PlanLimits {
            max_storage_buffer_binding_size: 2048,
            ..limits
        };
        let runs = [
            (LaneOrder::Blocked, limits, ""),
            (LaneOrder::Striped, limits, ""),
            (LaneOrder::Striped, windows, ", in 2 KiB windows"),
        ];
        let mut windowed = false;
        for (c, case) in self.cases.iter().enumerate() {
            let t = case.element_type;
            let concat = undoing(&case.split);
            for (lanes, limits, windows) in runs {
                let plan = PermutedPlan::new(&case.split, t, &limits)
                    .map_err(|e| format!("{}: {e}", case.name))?
                    .lanes(lanes);
                if !windows.is_empty() && !plan.is_windowed() {
                    continue;
                }
                windowed |= plan.is_windowed();
                tiled |= (0..case.split.output_count()).any(|i| plan.moves_through_tiles(i));
                let sizes: Vec<u64> = (0..case.split.output_count())
                    .map(|i| plan.output_region_bytes(i))
                    .collect();
                for l in LAYOUTS {
                    let (single, each) = layout(l, plan.input_bytes(), &sizes);
                    let name = format!("{}, {lanes:?} lanes{windows}, outputs in {l}", case.name);
                    let recording = plan
                        .recording(&single, &each)
                        .map_err(|e| format!("{name}: {e}"))?;
                    recorded.push(Recorded {
                        name,
                        case: c,
                        concat: false,
                        single,
                        each,
                        recording,
                    });
                }
                let plan = PermutedConcatPlan::new(&concat, t, &limits)
                    .map_err(|e| format!("{} concat: {e}", case.name))?
                    .lanes(lanes);
                let sizes: Vec<u64> = (0..concat.input_shapes().len())
                    .map(|i| plan.input_bytes(i))
                    .collect();
                for l in LAYOUTS {
                    let (single, each) = layout(l, plan.output_region_bytes(), &sizes);
                    let name = format!(
                        "{} concat, {lanes:?} lanes{windows}, inputs in {l}",
                        case.name
                    );
                    let recording = plan
                        .recording(&each, &single)
                        .map_err(|e| format!("{name}: {e}"))?;
                    recorded.push(Recorded {
                        name,
                        case: c,
                        concat: true,
                        single,
                        each,
                        recording,
                    });
                }
            }
        }
        if !tiled {
            return Err("no permuted recording moves through tiles".into());
        }
        if !windowed {
            return Err("no permuted recording moves in windows".into());
        }
        Ok(recorded)
    }

    /// Writes `recorded` (from [`PermutedSuite::record`]) with their data.
    pub fn write<'r>(&self, writer: &mut Writer<'r>, recorded: &'r [Recorded]) {
        for r in recorded {
            let (input, outputs) = &self.data[r.case];
            let mut placed = Placed::default();
            if r.concat {
                // The outputs are the concat's inputs; the input its output.
                for (i, (e, bytes)) in r.each.iter().zip(outputs).enumerate() {
                    placed.region(format!("input {i}"), e.buffer, e.offset, e.size);
                    placed.held.push((e.buffer, e.offset, bytes));
                }
                let s = &r.single;
                placed.region("the output", s.buffer, s.offset, s.size);
                let pad = s.size - input.len() as u64;
                placed.written.push((s.buffer, s.offset, input, pad));
                writer.push("concat", &r.name, &r.recording, placed);
            } else {
                for (i, (e, bytes)) in r.each.iter().zip(outputs).enumerate() {
                    placed.region(format!("output {i}"), e.buffer, e.offset, e.size);
                    let pad = e.size - bytes.len() as u64;
                    placed.written.push((e.buffer, e.offset, bytes, pad));
                }
                let s = &r.single;
                placed.region("the input", s.buffer, s.offset, s.size);
                placed.held.push((s.buffer, s.offset, input));
                writer.push("split", &r.name, &r.recording, placed);
            }
        }
    }

    /// Recordings and cases.
    pub fn counts(&self, recorded: &[Recorded]) -> (usize, usize) {
        (recorded.len(), self.cases.len())
    }
}
