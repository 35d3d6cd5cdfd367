//! The concat recordings: every concat case planned as the split suite
//! plans its splits (each kernel's cases forced in both placements and
//! lane orders, the strategies, every kernel forced for the widths), each
//! plan in every layout it accepts (own buffers, packed pages, the
//! output's page, inputs sharing one region), with the host concat's bytes
//! expected in the output and every other byte unchanged.

use std::collections::HashSet;

use wgpu_split::HostTensor;
use wgpu_split::plan::internals::Recording;
use wgpu_split::plan::{ConcatPlan, LaneOrder, Placement, PlanLimits, PlanOptions, SplitPlan};

use super::Writer;
use super::cases::Forced;
use super::concat_cases::{
    ConcatCase, count_concat_cases, kernel_concat_cases, own_concat_cases, staged_concat_cases,
    varied_concat_cases,
};
use super::concat_layout::{ConcatLayout, ConcatRegions, concat_regions};
use super::contents::{Placed, Rng};
use super::{check_coverage, kernel_variants, varied_variants};

/// A concat plan to record, its case (an index into the cases) and its
/// name.
struct Planned {
    name: String,
    case: usize,
    plan: ConcatPlan,
}

/// One concat recording: its plan, its regions and what it records.
pub struct Recorded<'p> {
    name: String,
    planned: &'p Planned,
    regions: ConcatRegions,
    pub recording: Recording,
}

/// The concat part of the suite: its cases, plans and recordings.
pub struct ConcatSuite {
    cases: Vec<ConcatCase>,
    plans: Vec<Planned>,
    /// The kernel forms that move concats (their own cases plan with them).
    kernels: Vec<Forced>,
}

impl ConcatSuite {
    /// Every concat plan of the suite, each once, checked to run every
    /// kernel that moves concats in both placements and lane orders.
    pub fn new() -> Result<ConcatSuite, String> {
        let limits = PlanLimits::WEBGPU_DEFAULT;
        let mut cases = Vec::new();
        let mut plans = Vec::new();
        let mut seen: HashSet<SplitPlan> = HashSet::new();
        let mut add = |cases: &[ConcatCase], name: String, c: usize, options: PlanOptions| {
            let case: &ConcatCase = &cases[c];
            if let Ok(plan) = ConcatPlan::new(&case.concat, case.element_type, &limits, &options)
                && seen.insert(plan.mirror().clone())
            {
                plans.push(Planned {
                    name: format!("concat: {name}"),
                    case: c,
                    plan,
                });
            }
        };
        let mut required = Vec::new();
        for (kernel, c) in kernel_concat_cases() {
            cases.push(c);
            let i = cases.len() - 1;
            for (variant, options) in kernel_variants(kernel) {
                if plans_with(&cases[i], &limits, &options) {
                    required.push(kernel);
                }
                let name = format!("{} {variant}", cases[i].name);
                add(&cases, name, i, options);
            }
        }
        let varied = varied_concat_cases()
            .into_iter()
            .chain(own_concat_cases().into_iter().map(|c| (c, true)))
            .chain(count_concat_cases().into_iter().map(|c| (c, false)));
        for (c, forced) in varied {
            cases.push(c);
            let i = cases.len() - 1;
            for (variant, options) in varied_variants(forced) {
                let name = format!("{} {variant}", cases[i].name);
                add(&cases, name, i, options);
            }
        }
        for c in staged_concat_cases() {
            cases.push(c);
            let i = cases.len() - 1;
            for (variant, options) in super::staged_variants() {
                let name = format!("{} {variant}", cases[i].name);
                add(&cases, name, i, options);
            }
        }
        let ran: Vec<(Forced, Placement, Option<LaneOrder>)> = plans
            .iter()
            .map(|p| {
                let lanes = p.plan.shaders().first().map(|s| s.lanes());
                ((p.plan.kernel(), p.plan.form()), p.plan.placement(), lanes)
            })
            .collect();
        check_coverage("concat", &required, &ran)?;
        Ok(ConcatSuite {
            cases,
            plans,
            kernels: required,
        })
    }

    /// The kernel forms that move concats.
    pub fn kernels(&self) -> &[Forced] {
        &self.kernels
    }

    /// Number of plans and cases.
    pub fn counts(&self) -> (usize, usize) {
        (self.plans.len(), self.cases.len())
    }

    /// Every plan in every layout it accepts.
    pub fn record(&self) -> Result<Vec<Recorded<'_>>, String> {
        let mut recorded = Vec::new();
        for p in &self.plans {
            let concat = &self.cases[p.case].concat;
            for (l, layout) in ConcatLayout::all(&p.plan, concat) {
                let regions = concat_regions(&p.plan, concat, layout);
                let recording = p
                    .plan
                    .recording(&regions.inputs, &regions.output)
                    .map_err(|e| format!("{}, {l}: {e}", p.name))?;
                recorded.push(Recorded {
                    name: format!("{}, {l}", p.name),
                    planned: p,
                    regions,
                    recording,
                });
            }
        }
        Ok(recorded)
    }

    /// Writes the recordings `recorded` (of [`ConcatSuite::record`]).
    pub fn write<'r>(
        &self,
        writer: &mut Writer<'r>,
        recorded: &'r [Recorded<'_>],
    ) -> Result<(), Box<dyn std::error::Error>> {
        let data: Vec<Vec<Vec<u8>>> = self.cases.iter().enumerate().map(case_data).collect();
        for r in recorded {
            let case = &self.cases[r.planned.case];
            let inputs = &data[r.planned.case];
            let expected = expected(case, inputs, &r.regions.holds)?;
            let placed = placed(&r.planned.plan, inputs, &expected, &r.regions);
            writer.push("concat", &r.name, &r.recording, placed);
        }
        Ok(())
    }
}

/// True when `case` plans with `options` (its kernel moves the concat).
fn plans_with(case: &ConcatCase, limits: &PlanLimits, options: &PlanOptions) -> bool {
    ConcatPlan::new(&case.concat, case.element_type, limits, options).is_ok()
}

/// A case's inputs: pseudo-random bytes, seeded by the case's index and
/// the input's.
fn case_data((index, case): (usize, &ConcatCase)) -> Vec<Vec<u8>> {
    let t = case.element_type;
    case.concat
        .input_shapes()
        .iter()
        .enumerate()
        .map(|(k, shape)| {
            let len = t
                .byte_len(shape.iter().product())
                .expect("a fixed-width type");
            Rng::new(0x00c0_0000 + (index as u32) * 256 + k as u32).bytes(len)
        })
        .collect()
}

/// The host concat's output of `inputs`, input `k` holding the bytes of
/// input `holds[k]` (inputs that share a region are one tensor).
fn expected(
    case: &ConcatCase,
    inputs: &[Vec<u8>],
    holds: &[usize],
) -> Result<Vec<u8>, wgpu_split::Error> {
    let t = case.element_type;
    let tensors: Vec<HostTensor> = case
        .concat
        .input_shapes()
        .iter()
        .zip(holds)
        .map(|(shape, &h)| HostTensor::from_raw(t, shape, inputs[h].clone()))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&HostTensor> = tensors.iter().collect();
    Ok(HostTensor::concat(&refs, &case.concat)?
        .as_bytes()?
        .to_vec())
}

/// Where a concat recording's tensors lie: every input's bytes in its
/// region (or at its arena offset), held; the output written, its bytes
/// past the tensor zero up to the region's end when the plan dispatches.
fn placed<'a>(
    plan: &ConcatPlan,
    inputs: &'a [Vec<u8>],
    expected: &'a [u8],
    regions: &ConcatRegions,
) -> Placed<'a> {
    let needs = plan.requirements();
    let mut placed = Placed::default();
    let arena_offsets = plan.arena_offsets();
    let arena = plan.placement() == Placement::Arena;
    for (k, offset) in arena_offsets.iter().enumerate() {
        // An input that takes no part, or shares another's region.
        let Some(offset) = offset else { continue };
        if regions.holds[k] != k {
            continue;
        }
        let r = regions.inputs[if arena { 0 } else { k }];
        let at = r.offset + if arena { *offset } else { 0 };
        let size = if arena {
            inputs[k].len() as u64
        } else {
            r.size
        };
        let sharing: String = (k + 1..regions.holds.len())
            .filter(|&j| regions.holds[j] == k)
            .map(|j| format!(" = input {j}"))
            .collect();
        placed.region(format!("input {k}{sharing}"), r.buffer, at, size);
        placed.held.push((r.buffer, at, &inputs[k]));
    }
    if arena {
        let r = regions.inputs[0];
        placed.region("the arena", r.buffer, r.offset, r.size);
    }
    // A staged concat's scratch arena, the buffer after the caller's (its
    // guard bytes stay where no input lies): input k, the mirror's output
    // j (the j-th that takes part), at the stage's arena offset.
    if let Some((stage, _)) = plan.mirror().staged_plans() {
        let scratch = regions
            .inputs
            .iter()
            .chain([&regions.output])
            .map(|r| r.buffer)
            .max()
            .unwrap_or(0)
            + 1;
        // Bits of the scratch's words past a piece are not the pieces': a
        // concat into the scratch leaves them (no zero padding), and an
        // input that shares another's region is that one's bytes.
        let taking = arena_offsets
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_some());
        for (j, (k, _)) in taking.enumerate() {
            let o = &stage.outputs()[j];
            if o.len_bytes > 0 {
                let held = &inputs[regions.holds[k]];
                placed
                    .written
                    .push((scratch, o.arena_offset_bytes, held, 0));
            }
        }
    }
    let o = regions.output;
    placed.region("the output", o.buffer, o.offset, o.size);
    assert_eq!(expected.len() as u64, needs.output_bytes, "host length");
    if !expected.is_empty() {
        let pad = needs.output_region_bytes - needs.output_bytes;
        placed.written.push((o.buffer, o.offset, expected, pad));
    }
    placed
}
