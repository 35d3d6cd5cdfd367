//! Destinations packed closer than the binding alignment in one page, as a
//! runtime's pool packs tensors (16 bytes apart under WebGPU's 256-byte
//! alignment): their bindings would overlap, which WebGPU forbids within a
//! dispatch. What an encode records there is said before anything is
//! recorded (`GpuSplitter::counts`, `PreparedSplit::counts`); a
//! table-driven plan has its entries dealt into dispatches that do not
//! overlap (100,000 outputs 16 bytes apart: the planned 14,286 dispatches,
//! where splitting each pass took 89,286 and a 53 MB table per encode); a
//! generated kernel's passes are split; either way the table is one per
//! plan and packing, uploaded once. Every packing is run through the CPU
//! emulator (which asserts WebGPU's aliasing rule on every dispatch) and
//! the largest on lavapipe.

mod common;

use common::emulator::{PlainRegion, emulate};
use common::{Rng, gpu, random_tensor, read_buffer};
use wgpu_split::gpu::{BufferRegion, EncodeCounts, GpuSplitter};
use wgpu_split::plan::internals::{BoundPlan, PlainRegion as Plain};
use wgpu_split::plan::{
    CostModel, Kernel, LaneOrder, PlanLimits, PlanOptions, SplitPlan, Strategy, Usages,
};
use wgpu_split::{ElementType, HostTensor, OnnxSplitToSequence, ResolvedSplit};

const SENTINEL: u8 = 0xA5;
const WEBGPU: PlanLimits = PlanLimits::WEBGPU_DEFAULT;

/// How the destinations lie in their page.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Packing {
    /// In output order, `step` bytes apart (the start of each a multiple of
    /// `step`).
    InOrder,
    /// Last output first.
    Reversed,
    /// In a random order.
    Shuffled,
    /// In output order with random gaps of up to three steps.
    Gapped,
    /// In output order after the input, in the same page (from one binding
    /// alignment past the input's end).
    AfterTheInput,
}

const PACKINGS: [Packing; 5] = [
    Packing::InOrder,
    Packing::Reversed,
    Packing::Shuffled,
    Packing::Gapped,
    Packing::AfterTheInput,
];

/// Where each destination of `plan` starts in the page and the page's
/// size: packed as `packing` says from `first`, each start a multiple of
/// `step` (and of the plan's offset alignment).
fn offsets(plan: &SplitPlan, packing: Packing, first: u64, rng: &mut Rng) -> (Vec<u64>, u64) {
    let step = 16.max(plan.offset_alignment_bytes());
    let count = plan.destination_count();
    let mut order: Vec<usize> = (0..count).collect();
    match packing {
        Packing::Reversed => order.reverse(),
        Packing::Shuffled => {
            for i in (1..count).rev() {
                order.swap(i, rng.below(i + 1));
            }
        }
        _ => {}
    }
    let mut offsets = vec![0; count];
    let mut end = first;
    for i in order {
        let gap = if packing == Packing::Gapped {
            rng.below(4) as u64 * step
        } else {
            0
        };
        offsets[i] = end.next_multiple_of(step) + gap;
        end = offsets[i] + plan.destination_bytes(i);
    }
    (offsets, end.next_multiple_of(4) + 64)
}

/// The planner's view of an emulated buffer region.
fn plain(region: &PlainRegion, buffer_size: u64) -> Plain {
    Plain {
        buffer: region.buffer,
        buffer_size,
        usages: Usages {
            storage: true,
            copy_src: true,
            copy_dst: true,
        },
        offset: region.offset,
        size: region.size,
    }
}

/// A packed run: the plan bound to the packing, and the emulated buffers
/// with the input in buffer 0 and the destinations in the page (buffer 1,
/// or buffer 0 after the input).
struct Packed {
    memory: Vec<Vec<u8>>,
    input: PlainRegion,
    destinations: Vec<PlainRegion>,
}

impl Packed {
    fn new(plan: &SplitPlan, input: &HostTensor, packing: Packing, rng: &mut Rng) -> Packed {
        let bytes = input.as_bytes().unwrap();
        // The input 16 bytes into its page, with random bytes around it.
        let input_region = PlainRegion {
            buffer: 0,
            offset: 16,
            size: bytes.len() as u64,
        };
        let mut input_page = rng.bytes(16);
        input_page.extend_from_slice(bytes);
        let shared = packing == Packing::AfterTheInput;
        let first = if shared {
            let alignment = u64::from(plan.limits().min_storage_buffer_offset_alignment);
            (16 + plan.input_binding_bytes()).next_multiple_of(4) + alignment
        } else {
            16
        };
        let (offsets, end) = offsets(plan, packing, first, rng);
        let destinations = offsets
            .iter()
            .enumerate()
            .map(|(i, &offset)| PlainRegion {
                buffer: usize::from(!shared),
                offset,
                size: plan.destination_bytes(i),
            })
            .collect();
        let mut memory = vec![input_page];
        if shared {
            memory[0].resize(end as usize, SENTINEL);
        } else {
            memory[0].extend(rng.bytes(64));
            memory.push(vec![SENTINEL; end as usize]);
        }
        Packed {
            memory,
            input: input_region,
            destinations,
        }
    }

    fn bind<'p>(&self, plan: &'p SplitPlan) -> BoundPlan<'p> {
        let size = |r: &PlainRegion| self.memory[r.buffer].len() as u64;
        let destinations: Vec<Plain> = self
            .destinations
            .iter()
            .map(|d| plain(d, size(d)))
            .collect();
        plan.bind(&plain(&self.input, size(&self.input)), &destinations)
            .unwrap()
    }

    /// Runs the plan in the emulator and checks every output bit-exactly,
    /// the padding of every region zero, the input and every byte outside
    /// the regions unchanged.
    fn run_and_check(mut self, plan: &SplitPlan, input: &HostTensor, split: &ResolvedSplit) {
        let before = self.memory.clone();
        emulate(plan, &mut self.memory, self.input, &self.destinations);
        let mut covered: Vec<Vec<bool>> =
            self.memory.iter().map(|m| vec![false; m.len()]).collect();
        for (i, (o, e)) in plan
            .outputs()
            .iter()
            .zip(input.split(split).unwrap())
            .enumerate()
        {
            let r = self.destinations[i];
            let (start, end) = (r.offset as usize, (r.offset + o.region_bytes) as usize);
            let got = &self.memory[r.buffer][start..start + o.len_bytes as usize];
            assert_eq!(got, e.as_bytes().unwrap(), "output {i}");
            let pad = &self.memory[r.buffer][start + o.len_bytes as usize..end];
            assert!(pad.iter().all(|&b| b == 0), "output {i} padding {pad:?}");
            covered[r.buffer][start..(r.offset + r.size) as usize].fill(true);
        }
        for (b, (after, before)) in self.memory.iter().zip(&before).enumerate() {
            let changed = (0..after.len()).find(|&at| !covered[b][at] && after[at] != before[at]);
            assert_eq!(
                changed, None,
                "a byte of buffer {b} outside the regions changed"
            );
        }
    }
}

/// Destinations whose aligned-down bindings can overlap one binding: as
/// many as start within one binding alignment, and the one before.
fn most_per_alignment(plan: &SplitPlan) -> usize {
    let step = 16.max(plan.offset_alignment_bytes());
    (u64::from(plan.limits().min_storage_buffer_offset_alignment) / step) as usize + 1
}

#[test]
fn a_hundred_thousand_outputs_16_bytes_apart_take_the_planned_dispatches_and_table() {
    let mut rng = Rng::new(100);
    let split = OnnxSplitToSequence::new(11).resolve(&[100_000]).unwrap();
    let plan =
        SplitPlan::new(&split, ElementType::Uint8, &WEBGPU, &PlanOptions::default()).unwrap();
    assert_eq!(
        (plan.kernel(), plan.dispatch_count()),
        (Kernel::Words, 14_286)
    );
    let input = random_tensor(&mut rng, ElementType::Uint8, &[100_000]);
    let packed = Packed::new(&plan, &input, Packing::InOrder, &mut rng);
    let bound = packed.bind(&plan);
    // Splitting each pass where its destinations alias took 89,286
    // dispatches and a 53 MB table per encode (issue 33).
    assert!(bound.regrouped && !bound.skips);
    assert_eq!(bound.dispatch_count(), plan.dispatch_count());
    assert_eq!(bound.table_len(), plan.table().len() as u64);
    // One table per plan and packing: the same packing anywhere in the
    // page (moved by a step, by a binding alignment) is the same table.
    let (key, identity) = bound.table_identity();
    for shift in [16, 256, 4096 + 48] {
        let mut moved = Packed::new(&plan, &input, Packing::InOrder, &mut rng);
        for d in &mut moved.destinations {
            d.offset += shift;
        }
        let len = moved.memory[1].len() + shift as usize;
        moved.memory[1].resize(len, SENTINEL);
        let (moved_key, moved_identity) = moved.bind(&plan).table_identity();
        assert_eq!(
            (moved_key, &moved_identity),
            (key, &identity),
            "moved by {shift}"
        );
    }
    packed.run_and_check(&plan, &input, &split);
}

/// A cost model that never copies, with `lanes`.
fn gathering(lanes: LaneOrder) -> Strategy {
    Strategy::Auto(CostModel {
        copy_bytes_per_second: 1.0,
        copy_command_seconds: 1.0,
        lanes,
        ..CostModel::LAVAPIPE
    })
}

/// A random split a forced `kernel` may take: any for words; whole vec4
/// runs for vec4; the funnel's split for the funnel.
fn split_for(kernel: Kernel, rng: &mut Rng, count: usize) -> (ResolvedSplit, ElementType) {
    match kernel {
        Kernel::Funnel => {
            let t = common::one_type_per_width()[rng.below(7)];
            (common::funnel_split(rng, t, count), t)
        }
        Kernel::Vec4 => {
            let lengths: Vec<usize> = (0..count).map(|_| 4 * (1 + rng.below(3))).collect();
            let dim = lengths.iter().sum();
            let rows = 1 + rng.below(3);
            let split = ResolvedSplit::new(&[rows, dim], 1, lengths, true).unwrap();
            (split, ElementType::Float)
        }
        _ => {
            let t = common::one_type_per_width()[rng.below(7)];
            let lengths: Vec<usize> = (0..count).map(|_| rng.below(5)).collect();
            let dim = lengths.iter().sum::<usize>().max(1);
            let mut lengths = lengths;
            lengths[0] += dim - lengths.iter().sum::<usize>();
            let rows = 1 + rng.below(3);
            let split = ResolvedSplit::new(&[rows, dim], 1, lengths, true).unwrap();
            (split, t)
        }
    }
}

#[test]
fn every_table_driven_kernel_lane_order_and_packing_regroups_exactly() {
    let mut rng = Rng::new(101);
    let (mut regrouped, mut fewest, mut cases) = (0, 0, 0);
    for kernel in [Kernel::Words, Kernel::Vec4, Kernel::Funnel] {
        for lanes in [LaneOrder::Blocked, LaneOrder::Striped] {
            for round in 0..12 {
                let count = [3, 8, 45, 300][round % 4];
                let (split, t) = split_for(kernel, &mut rng, count);
                let options = PlanOptions::default()
                    .strategy(gathering(lanes))
                    .kernel(kernel)
                    .form(wgpu_split::plan::Form::Table);
                let Ok(plan) = SplitPlan::new(&split, t, &WEBGPU, &options) else {
                    continue;
                };
                assert_eq!(plan.pass_shader(0).lanes(), lanes);
                let input = random_tensor(&mut rng, t, split.input_shape());
                for packing in PACKINGS {
                    let context = format!("{kernel} {lanes:?} {packing:?} {split:?} {t}");
                    let packed = Packed::new(&plan, &input, packing, &mut rng);
                    let bound = packed.bind(&plan);
                    assert!(!bound.skips, "{context}: table-driven plans never skip");
                    if bound.regrouped {
                        regrouped += 1;
                        let most = plan.dispatch_count() + most_per_alignment(&plan);
                        assert!(bound.dispatch_count() <= most, "{context}");
                        // In output order, the every-nth deal holds where
                        // that many outputs span a binding alignment.
                        let apart =
                            plan.dispatch_count() as u64 * 16.max(plan.offset_alignment_bytes());
                        let largest = (0..plan.destination_count())
                            .map(|i| plan.destination_bytes(i))
                            .max()
                            .unwrap_or(0);
                        if packing == Packing::InOrder && apart >= 256 + largest {
                            assert_eq!(bound.dispatch_count(), plan.dispatch_count(), "{context}");
                            fewest += 1;
                        }
                    } else {
                        assert_eq!(bound.dispatch_count(), plan.dispatch_count(), "{context}");
                        assert_eq!(&*bound.table(), plan.table(), "{context}");
                    }
                    packed.run_and_check(&plan, &input, &split);
                    cases += 1;
                }
            }
        }
    }
    println!(
        "{cases} packed runs, {regrouped} regrouped, {fewest} of them dealt every nth (the planned count)"
    );
    assert!(
        cases >= 300 && regrouped >= 150 && fewest >= 10,
        "{cases} {regrouped} {fewest}"
    );
}

#[test]
fn generated_kernels_split_their_passes_in_a_packed_page_and_keep_one_table() {
    let mut rng = Rng::new(102);
    // Rows of one vec4 into 60 outputs (row copies in groups of 7) and
    // short columns (row blocks): every output's binding overlaps its
    // neighbours'.
    for (shape, t) in [
        ([60, 4], ElementType::Float),
        ([64, 12], ElementType::Float16),
    ] {
        let split = if shape[0] == 60 {
            OnnxSplitToSequence::new(11).resolve(&shape).unwrap()
        } else {
            ResolvedSplit::new(&shape, 1, vec![1; 12], true).unwrap()
        };
        let options = PlanOptions::default().strategy(Strategy::Gather);
        let plan = SplitPlan::new(&split, t, &WEBGPU, &options).unwrap();
        assert!(!plan.generated_layouts().is_empty(), "{shape:?}");
        let input = random_tensor(&mut rng, t, &shape);
        let packed = Packed::new(&plan, &input, Packing::InOrder, &mut rng);
        let bound = packed.bind(&plan);
        assert!(bound.skips && !bound.regrouped);
        assert!(bound.dispatch_count() > plan.dispatch_count());
        assert_eq!(bound.table().len() as u64, bound.table_len());
        let identity = bound.table_identity();
        let mut moved = Packed::new(&plan, &input, Packing::InOrder, &mut rng);
        for d in &mut moved.destinations {
            d.offset += 256;
        }
        let len = moved.memory[1].len() + 256;
        moved.memory[1].resize(len, SENTINEL);
        assert_eq!(moved.bind(&plan).table_identity(), identity, "{shape:?}");
        packed.run_and_check(&plan, &input, &split);
    }
}

/// `plan` encoded from `input` into destinations packed at 16-byte steps
/// from `first` in one page; returns what `figures` said and the outputs
/// read back.
fn encode_packed(
    gpu: &GpuSplitter,
    plan: &SplitPlan,
    input: &HostTensor,
    first: u64,
) -> (EncodeCounts, Vec<Vec<u8>>) {
    let mut rng = Rng::new(first);
    let (offsets, end) = offsets(plan, Packing::InOrder, first, &mut rng);
    let page = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("packed page"),
        size: end,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let regions: Vec<BufferRegion> = offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| BufferRegion::new(&page, o, plan.destination_bytes(i)))
        .collect();
    let source = common::round_trip(gpu)
        .create_input(input.as_bytes().unwrap())
        .unwrap();
    let source = BufferRegion::whole(&source);
    let figures = gpu.counts(plan, source, &regions).unwrap();
    let prepared = gpu.prepare(plan, source, &regions).unwrap();
    assert_eq!(prepared.counts(), figures);
    common::encode_and_submit(gpu, plan, source, &regions).unwrap();
    let bytes = read_buffer(gpu, &page);
    let outputs = offsets
        .iter()
        .zip(plan.outputs())
        .map(|(&o, out)| bytes[o as usize..(o + out.len_bytes) as usize].to_vec())
        .collect();
    (figures, outputs)
}

#[test]
fn a_packed_page_of_100_000_outputs_on_the_gpu_is_exact_with_one_table() {
    let Some(shared) = gpu("a_packed_page_of_100_000_outputs_on_the_gpu_is_exact_with_one_table")
    else {
        return;
    };
    // A splitter of its own, so that its cache holds this test's tables only.
    let splitter = GpuSplitter::new(shared.device(), shared.queue()).unwrap();
    let mut rng = Rng::new(103);
    for (shape, t, planned_table) in [
        // Words: regrouped into the planned dispatches.
        (vec![100_000], ElementType::Uint8, true),
        // Row copies in groups of 7 (one vec4 per output): passes split.
        (vec![2_000, 4], ElementType::Float, false),
    ] {
        let split = OnnxSplitToSequence::new(11).resolve(&shape).unwrap();
        let plan = SplitPlan::new(&split, t, &WEBGPU, &PlanOptions::default()).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        let expected = input.split(&split).unwrap();
        let tables = splitter.cache().usage().tables;
        for first in [16, 272, 4112] {
            let (figures, outputs) = encode_packed(&splitter, &plan, &input, first);
            assert_eq!(figures.copies, plan.copy_count());
            if planned_table {
                assert_eq!(figures.dispatches, plan.dispatch_count());
                assert_eq!(figures.table_bytes, plan.table().len() as u64);
            } else {
                assert!(figures.dispatches > plan.dispatch_count(), "{figures:?}");
            }
            for (i, (got, e)) in outputs.iter().zip(&expected).enumerate() {
                assert_eq!(
                    got,
                    e.as_bytes().unwrap(),
                    "{shape:?} output {i} at {first}"
                );
            }
            // One table for the plan and this packing, wherever it lies.
            assert_eq!(
                splitter.cache().usage().tables,
                tables + 1,
                "{shape:?} at {first}"
            );
        }
        println!(
            "{shape:?} {t}: planned {} dispatches, encoded {:?}",
            plan.dispatch_count(),
            encode_packed(&splitter, &plan, &input, 16).0
        );
    }
}
