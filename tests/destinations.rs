//! Placement where a runtime keeps its tensors, on the GPU: every output into a
//! region of its own inside shared pool pages surrounded by sentinel bytes,
//! recorded into an encoder or inside the runtime's compute pass; and every
//! misuse of regions a typed error before wgpu sees anything.

mod common;

use common::{Rng, gpu, random_tensor, read_buffer, refused};
use wgpu_split::error::EncodeError;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::{BufferRole, Placement};
use wgpu_split::plan::{PlanOptions, SplitPlan, Strategy};
use wgpu_split::{
    ElementType, Error, HostTensor, OnnxSplit, OnnxSplitToSequence, OpenVinoSplit,
    OpenVinoVariadicSplit, Operator, ParamTensor, ResolvedSplit,
};

const SENTINEL: u8 = 0xA5;

fn buffer(gpu: &GpuSplitter, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage,
        mapped_at_creation: false,
    })
}

const POOL: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// An arbitrary valid operator for `shape` (every kind).
fn operator(rng: &mut Rng, shape: &[usize]) -> Operator {
    let axis = rng.below(shape.len());
    let dim = shape[axis];
    let count = 1 + rng.below(5);
    let lengths: Vec<i64> = rng
        .lengths(dim, count)
        .into_iter()
        .map(|l| l as i64)
        .collect();
    let axis_param = ParamTensor::int64_scalar(axis as i64);
    match rng.below(4) {
        0 => OnnxSplit::new(13, lengths.len())
            .axis(axis as i64)
            .split_input(ParamTensor::int64_1d(&lengths))
            .into(),
        1 if dim > 0 => OnnxSplitToSequence::new(11)
            .axis(axis as i64)
            .split(ParamTensor::int64_scalar(1 + rng.below(dim) as i64))
            .into(),
        2 => {
            let mut given = lengths.clone();
            let at = rng.below(given.len());
            given[at] = -1;
            OpenVinoVariadicSplit::new(axis_param, ParamTensor::int64_1d(&given)).into()
        }
        _ => OpenVinoSplit::new(axis_param, 1).into(),
    }
}

/// One split of a batch: its input, expected outputs, plan, and where its
/// input and output regions sit in the pages.
struct Placed {
    expected: Vec<HostTensor>,
    plan: SplitPlan,
    input_offset: u64,
    output_offsets: Vec<u64>,
    prepared: bool,
}

/// Random small splits of every width, each with its input in the input
/// page and its outputs in one of two output pages at random offsets
/// (multiples of the plan's alignment) with random gaps, recorded into one
/// encoder (some through `prepare` inside a compute pass); then every output
/// is checked bit-exactly and every byte outside the regions must still be
/// the sentinel.
fn run_batch(gpu: &GpuSplitter, rng: &mut Rng, splits: usize) -> usize {
    let types = [
        ElementType::Int2,
        ElementType::Uint4,
        ElementType::Uint8,
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
        ElementType::Complex128,
    ];
    let mut input_bytes = Vec::new();
    let mut page_ends = [0u64; 2];
    let mut placed = Vec::new();
    for _ in 0..splits {
        let element_type = types[rng.below(types.len())];
        let rank = 1 + rng.below(3);
        let shape: Vec<usize> = (0..rank)
            .map(|_| rng.below(13) + usize::from(rank == 1))
            .collect();
        let Ok(split) = operator(rng, &shape).resolve(&shape) else {
            continue;
        };
        let input = random_tensor(rng, element_type, &shape);
        let strategy = [
            Strategy::Gather,
            Strategy::default(),
            Strategy::GatherPerOutput,
        ][rng.below(3)];
        let options = PlanOptions::default().strategy(strategy);
        let plan = gpu.plan_with(&split, element_type, &options).unwrap();
        let align = plan.offset_alignment_bytes();
        let input_offset =
            (input_bytes.len() as u64).next_multiple_of(align) + rng.below(3) as u64 * align;
        input_bytes.resize(input_offset as usize, 0x5A);
        input_bytes.extend_from_slice(input.as_bytes().unwrap());
        let page = rng.below(2);
        let output_offsets = (0..plan.destination_count())
            .map(|i| {
                let offset = page_ends[page].next_multiple_of(align) + rng.below(3) as u64 * align;
                page_ends[page] = offset + plan.destination_bytes(i);
                offset
            })
            .collect();
        placed.push((
            page,
            Placed {
                expected: input.split(&split).unwrap(),
                prepared: plan.copy_count() == 0 && rng.below(2) == 0,
                plan,
                input_offset,
                output_offsets,
            },
        ));
    }
    input_bytes.resize(input_bytes.len().next_multiple_of(4) + 64, 0x5A);
    let input_page = common::round_trip(gpu).create_input(&input_bytes).unwrap();
    let pages: Vec<wgpu::Buffer> = page_ends
        .iter()
        .map(|&end| {
            let size = (end + 64).next_multiple_of(4);
            let page = buffer(gpu, size, POOL);
            gpu.queue()
                .write_buffer(&page, 0, &vec![SENTINEL; size as usize]);
            page
        })
        .collect();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let mut prepared = Vec::new();
    for (page, p) in &placed {
        let input = BufferRegion::new(&input_page, p.input_offset, p.plan.input_bytes());
        let regions: Vec<BufferRegion> = p
            .output_offsets
            .iter()
            .enumerate()
            .map(|(i, &o)| BufferRegion::new(&pages[*page], o, p.plan.destination_bytes(i)))
            .collect();
        if p.prepared {
            prepared.push(gpu.prepare(&p.plan, input, &regions).unwrap());
        } else {
            gpu.encode(&mut encoder, &p.plan, input, &regions).unwrap();
        }
    }
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        for p in &prepared {
            p.record(&mut pass);
        }
    }
    gpu.queue().submit([encoder.finish()]);
    let after: Vec<Vec<u8>> = pages.iter().map(|p| read_buffer(gpu, p)).collect();
    let mut covered: Vec<Vec<bool>> = after.iter().map(|p| vec![false; p.len()]).collect();
    for (n, (page, p)) in placed.iter().enumerate() {
        for (i, (o, e)) in p.plan.outputs().iter().zip(&p.expected).enumerate() {
            let start = p.output_offsets[i] as usize;
            let bytes = &after[*page][start..start + o.len_bytes as usize];
            assert_eq!(bytes, e.as_bytes().unwrap(), "split {n} output {i}");
            let region = start..start + p.plan.destination_bytes(i) as usize;
            assert!(
                after[*page][start + o.len_bytes as usize..region.end]
                    .iter()
                    .all(|&b| b == 0),
                "split {n} output {i}: padding is zero"
            );
            covered[*page][region].iter_mut().for_each(|c| *c = true);
        }
    }
    for (page, (bytes, covered)) in after.iter().zip(&covered).enumerate() {
        for (at, (&b, &c)) in bytes.iter().zip(covered).enumerate() {
            assert!(
                c || b == SENTINEL,
                "page {page} byte {at} outside every region changed"
            );
        }
    }
    placed.len()
}

#[test]
fn thousands_of_random_splits_into_pooled_regions_keep_every_sentinel() {
    let Some(gpu) = gpu("thousands_of_random_splits_into_pooled_regions_keep_every_sentinel")
    else {
        return;
    };
    let mut rng = Rng::new(0xD1CE);
    let mut splits = 0;
    for _ in 0..20 {
        splits += run_batch(gpu, &mut rng, 120);
    }
    println!("{splits} random splits into pooled regions: outputs exact, sentinels intact");
    assert!(splits >= 2000, "{splits}");
}

/// A small split with a plan, an input and fitting output buffers.
struct Setup {
    plan: SplitPlan,
    input: wgpu::Buffer,
    outputs: Vec<wgpu::Buffer>,
}

fn setup(gpu: &GpuSplitter, strategy: Strategy) -> Setup {
    // f16 [3, 6] split [1, 5] on the last axis: outputs of 6 and 30 bytes.
    let split = ResolvedSplit::new(&[3, 6], 1, vec![1, 5], true).unwrap();
    let options = PlanOptions::default().strategy(strategy);
    let plan = gpu
        .plan_with(&split, ElementType::Float16, &options)
        .unwrap();
    Setup {
        input: common::round_trip(gpu).create_input(&[7; 36]).unwrap(),
        outputs: common::round_trip(gpu).create_destinations(&plan).unwrap(),
        plan,
    }
}

#[test]
fn undersized_overlapping_and_misaligned_regions_are_typed_errors() {
    let Some(gpu) = gpu("undersized_overlapping_and_misaligned_regions_are_typed_errors") else {
        return;
    };
    let s = setup(gpu, Strategy::Gather);
    let input = BufferRegion::whole(&s.input);
    let page = buffer(gpu, 1024, POOL);
    // Output 0 needs 8 bytes (6 rounded up to the word the split writes).
    assert_eq!(s.plan.destination_bytes(0), 8);
    let e = refused(gpu, |enc| {
        let regions = [
            BufferRegion::new(&page, 0, 6),
            BufferRegion::new(&page, 64, 32),
        ];
        gpu.encode(enc, &s.plan, input, &regions).unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::Output(0),
                size: 6,
                needed: 8,
                ..
            })
        ),
        "{e}"
    );
    let e = refused(gpu, |enc| {
        let regions = [
            BufferRegion::new(&page, 0, 8),
            BufferRegion::new(&page, 4, 32),
        ];
        gpu.encode(enc, &s.plan, input, &regions).unwrap_err()
    });
    assert_eq!(
        e,
        Error::Encode(EncodeError::OverlappingRegions {
            first: 0,
            second: 1
        })
    );
    let e = refused(gpu, |enc| {
        let regions = [
            BufferRegion::new(&page, 2, 8),
            BufferRegion::new(&page, 64, 32),
        ];
        gpu.encode(enc, &s.plan, input, &regions).unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::MisalignedOffset {
                which: BufferRole::Output(0),
                offset: 2,
                alignment: 4,
                ..
            })
        ),
        "{e}"
    );
    let e = refused(gpu, |enc| {
        let regions = [
            BufferRegion::new(&page, 0, 8),
            BufferRegion::new(&page, 1000, 32),
        ];
        gpu.encode(enc, &s.plan, input, &regions).unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::RegionOutsideBuffer {
                which: BufferRole::Output(1),
                ..
            })
        ),
        "{e}"
    );
    let e = refused(gpu, |enc| {
        let regions = [
            BufferRegion::new(&s.input, 0, 8),
            BufferRegion::new(&page, 64, 32),
        ];
        gpu.encode(enc, &s.plan, input, &regions).unwrap_err()
    });
    assert!(
        matches!(
            &e,
            Error::Encode(EncodeError::InputSharesBuffer {
                which: BufferRole::Output(0),
                why,
            }) if why.contains("overlap the input's")
        ),
        "{e}"
    );
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &s.plan, input, &[BufferRegion::whole(&page)])
            .unwrap_err()
    });
    assert_eq!(
        e,
        Error::Encode(EncodeError::RegionCount {
            expected: 2,
            actual: 1
        })
    );
    let e = refused(gpu, |enc| {
        let short = BufferRegion::new(&s.input, 0, 35);
        let regions: Vec<_> = s.outputs.iter().map(BufferRegion::whole).collect();
        gpu.encode(enc, &s.plan, short, &regions).unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::Input,
                needed: 36,
                ..
            })
        ),
        "{e}"
    );
    // An arena plan takes one destination: the arena.
    let split = ResolvedSplit::new(&[3, 6], 1, vec![1, 5], true).unwrap();
    let arena_plan = gpu
        .plan_with(
            &split,
            ElementType::Float16,
            &PlanOptions::default().placement(Placement::Arena),
        )
        .unwrap();
    let e = refused(gpu, |enc| {
        let regions: Vec<_> = s.outputs.iter().map(BufferRegion::whole).collect();
        gpu.encode(enc, &arena_plan, input, &regions).unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::RegionCount {
                expected: 1,
                actual: 2
            })
        ),
        "{e}"
    );
    // An empty output needs no region bytes: a zero-size region will do.
    let split = ResolvedSplit::new(&[3, 6], 1, vec![0, 6], true).unwrap();
    let plan = gpu.plan(&split, ElementType::Float16).unwrap();
    assert_eq!(plan.destination_bytes(0), 0);
    let full = buffer(gpu, 36, POOL);
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let regions = [BufferRegion::new(&page, 0, 0), BufferRegion::whole(&full)];
    gpu.encode(&mut encoder, &plan, input, &regions).unwrap();
    gpu.queue().submit([encoder.finish()]);
}

#[test]
fn usages_are_stated_by_the_plan_and_named_with_the_fix() {
    let Some(gpu) = gpu("usages_are_stated_by_the_plan_and_named_with_the_fix") else {
        return;
    };
    // f32 [4, 8] split [4, 4]: copyable runs.
    let split = ResolvedSplit::new(&[4, 8], 1, vec![4, 4], true).unwrap();
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    let plan = gpu.plan_with(&split, ElementType::Float, &copy).unwrap();
    assert_eq!(
        wgpu::BufferUsages::from(plan.input_usages()),
        wgpu::BufferUsages::COPY_SRC
    );
    assert_eq!(
        wgpu::BufferUsages::from(plan.output_usages(1)),
        wgpu::BufferUsages::COPY_DST
    );
    let storage_only = |size| buffer(gpu, size, wgpu::BufferUsages::STORAGE);
    let (input, out) = (storage_only(128), [storage_only(64), storage_only(64)]);
    let regions: Vec<_> = out.iter().map(BufferRegion::whole).collect();
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, BufferRegion::whole(&input), &regions)
            .unwrap_err()
    });
    let Error::Encode(EncodeError::MissingUsage {
        which,
        missing,
        why,
    }) = &e
    else {
        panic!("{e}");
    };
    assert_eq!(
        (*which, missing.to_string()),
        (BufferRole::Input, "COPY_SRC".to_string())
    );
    assert!(
        why.contains("copy command") && why.contains("Strategy::Gather"),
        "{why}"
    );
    let input = common::round_trip(gpu).create_input(&[0; 128]).unwrap();
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, BufferRegion::whole(&input), &regions)
            .unwrap_err()
    });
    assert!(
        matches!(&e, Error::Encode(EncodeError::MissingUsage { which: BufferRole::Output(0), missing, .. }) if missing.to_string() == "COPY_DST"),
        "{e}"
    );
    // The dispatch-only plan of the same split works with STORAGE alone.
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = gpu.plan_with(&split, ElementType::Float, &gather).unwrap();
    assert_eq!(
        wgpu::BufferUsages::from(plan.input_usages()),
        wgpu::BufferUsages::STORAGE
    );
    let input = storage_only(128);
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)
        .unwrap();
    gpu.queue().submit([encoder.finish()]);
}

#[test]
fn copy_plans_take_any_word_offset_and_gathers_fold_offsets_into_the_table() {
    let Some(gpu) = gpu("copy_plans_take_any_word_offset_and_gathers_fold_offsets_into_the_table")
    else {
        return;
    };
    let mut rng = Rng::new(61);
    // 9 rows: no whole row blocks, so [3, 9] takes the word kernel.
    let input = random_tensor(&mut rng, ElementType::Float, &[9, 12]);
    for (strategy, lengths, offsets) in [
        (Strategy::Copy, vec![4, 8], [4u64, 12, 20]),
        (Strategy::Gather, vec![3, 9], [4, 12, 20]),
        (Strategy::Gather, vec![4, 8], [16, 48, 16]),
    ] {
        let split = ResolvedSplit::new(&[9, 12], 1, lengths, true).unwrap();
        let expected = input.split(&split).unwrap();
        let options = PlanOptions::default().strategy(strategy);
        let plan = gpu.plan_with(&split, ElementType::Float, &options).unwrap();
        assert_eq!(offsets[0] % plan.offset_alignment_bytes(), 0);
        let mut bytes = rng.bytes(offsets[0] as usize);
        bytes.extend_from_slice(input.as_bytes().unwrap());
        let in_page = common::round_trip(gpu).create_input(&bytes).unwrap();
        let page = buffer(gpu, 4096, POOL);
        let regions = [
            BufferRegion::new(&page, offsets[1], plan.destination_bytes(0)),
            BufferRegion::new(&page, 512 + offsets[2], plan.destination_bytes(1)),
        ];
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        let input_region = BufferRegion::new(&in_page, offsets[0], plan.input_bytes());
        gpu.encode(&mut encoder, &plan, input_region, &regions)
            .unwrap();
        gpu.queue().submit([encoder.finish()]);
        let out = read_buffer(gpu, &page);
        for (r, e) in regions.iter().zip(&expected) {
            let got = &out[r.offset as usize..(r.offset + r.size) as usize];
            assert_eq!(got, e.as_bytes().unwrap(), "{strategy:?} at {offsets:?}");
        }
    }
}

#[test]
fn a_prepared_split_records_between_the_runtimes_own_dispatches() {
    let Some(gpu) = gpu("a_prepared_split_records_between_the_runtimes_own_dispatches") else {
        return;
    };
    let s = setup(gpu, Strategy::Gather);
    let regions: Vec<_> = s.outputs.iter().map(BufferRegion::whole).collect();
    let prepared = gpu
        .prepare(&s.plan, BufferRegion::whole(&s.input), &regions)
        .unwrap();
    assert_eq!(prepared.dispatch_count(), s.plan.dispatch_count());
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        prepared.record(&mut pass);
        prepared.record(&mut pass); // twice in one pass: same bytes
    }
    gpu.queue().submit([encoder.finish()]);
    let input = HostTensor::from_raw(ElementType::Float16, &[3, 6], vec![7; 36]).unwrap();
    let split = ResolvedSplit::new(&[3, 6], 1, vec![1, 5], true).unwrap();
    for (buffer, e) in s.outputs.iter().zip(input.split(&split).unwrap()) {
        let bytes = read_buffer(gpu, buffer);
        assert_eq!(&bytes[..e.as_bytes().unwrap().len()], e.as_bytes().unwrap());
    }
    // Eight heads into buffers of their own under WebGPU's limits: two
    // dispatches of two row-copy pipelines, set in turn.
    let split = ResolvedSplit::new(&[4, 256], 1, vec![32; 8], true).unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let limits = wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT;
    let plan = SplitPlan::new(&split, ElementType::Float, &limits, &gather).unwrap();
    assert_eq!(
        (common::runs(&plan), plan.shaders().len()),
        (common::ROW_COPIES, 2)
    );
    let input = random_tensor(&mut Rng::new(5), ElementType::Float, &[4, 256]);
    assert_eq!(record_in_a_pass_and_check(gpu, &plan, &input, &split), 2);
    // A plan with copy commands cannot go into a compute pass.
    let split = ResolvedSplit::new(&[4, 8], 1, vec![4, 4], true).unwrap();
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    let plan = gpu.plan_with(&split, ElementType::Float, &copy).unwrap();
    let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
    let regions: Vec<_> = outputs.iter().map(BufferRegion::whole).collect();
    let e = gpu
        .prepare(&plan, BufferRegion::whole(&s.input), &regions)
        .unwrap_err();
    assert_eq!(
        e,
        Error::Encode(EncodeError::CopiesInComputePass { copies: 8 })
    );
}

#[test]
fn one_call_plans_for_a_compute_pass_with_the_cost_model() {
    let Some(gpu) = gpu("one_call_plans_for_a_compute_pass_with_the_cost_model") else {
        return;
    };
    // The QKV split of f16 [4, 64, 96] into three: the default plan may
    // copy (it does on lavapipe), which a compute pass cannot hold.
    let split = OnnxSplit::new(18, 3)
        .axis(-1)
        .num_outputs(3)
        .resolve(&[4, 64, 96])
        .unwrap();
    let plan = gpu
        .plan_with(
            &split,
            ElementType::Float16,
            &wgpu_split::plan::PlanOptions::default().in_compute_pass(),
        )
        .unwrap();
    assert_eq!(plan.copy_count(), 0);
    assert!(plan.dispatch_count() > 0);
    // The same kernel as planning for the cost model without copies.
    let with = gpu
        .plan_with(
            &split,
            ElementType::Float16,
            &PlanOptions::default().in_compute_pass(),
        )
        .unwrap();
    assert_eq!(plan, with);
    let mut rng = Rng::new(12);
    let input = random_tensor(&mut rng, ElementType::Float16, &[4, 64, 96]);
    record_in_a_pass_and_check(gpu, &plan, &input, &split);
}

/// Prepares `plan` for fresh buffers holding `input`, records it into a
/// compute pass, checks every output against the host path, and returns
/// the dispatches recorded.
fn record_in_a_pass_and_check(
    gpu: &GpuSplitter,
    plan: &SplitPlan,
    input: &HostTensor,
    split: &ResolvedSplit,
) -> usize {
    let source = common::round_trip(gpu)
        .create_input(input.as_bytes().unwrap())
        .unwrap();
    let outputs = common::round_trip(gpu).create_destinations(plan).unwrap();
    let regions: Vec<_> = outputs.iter().map(BufferRegion::whole).collect();
    let prepared = gpu
        .prepare(plan, BufferRegion::whole(&source), &regions)
        .unwrap();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        prepared.record(&mut pass);
    }
    gpu.queue().submit([encoder.finish()]);
    for (buffer, e) in outputs.iter().zip(input.split(split).unwrap()) {
        let bytes = read_buffer(gpu, buffer);
        assert_eq!(&bytes[..e.as_bytes().unwrap().len()], e.as_bytes().unwrap());
    }
    prepared.dispatch_count()
}

#[test]
fn output_bindings_round_sizes_up_to_whole_words() {
    let Some(gpu) = gpu("output_bindings_round_sizes_up_to_whole_words") else {
        return;
    };
    // An f16 output of 9 elements is 18 bytes; wgpu binds whole words.
    let split = ResolvedSplit::new(&[9, 2], 1, vec![1, 1], true).unwrap();
    let plan = gpu.plan(&split, ElementType::Float16).unwrap();
    assert_eq!(
        (plan.outputs()[0].len_bytes, plan.destination_bytes(0)),
        (18, 20)
    );
    let page = buffer(gpu, 256, POOL);
    let region = BufferRegion::new(&page, 0, plan.outputs()[0].len_bytes);
    let binding = region.binding().expect("a non-empty region");
    assert_eq!(binding.size.map(u64::from), Some(20));
    let layout = gpu
        .device()
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
    let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
    let _group = gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(binding),
        }],
    });
    assert!(pollster::block_on(scope.pop()).is_none());
    // An arena slot is a region of the arena.
    let arena_plan = gpu
        .plan_with(
            &split,
            ElementType::Float16,
            &PlanOptions::default().placement(Placement::Arena),
        )
        .unwrap();
    let arena = common::round_trip(gpu)
        .create_destinations(&arena_plan)
        .unwrap()
        .remove(0);
    let slot = BufferRegion::whole(&arena).slice(arena_plan.outputs()[1].arena_range());
    assert_eq!(slot.offset, arena_plan.outputs()[1].arena_offset_bytes);
    assert_eq!(slot.binding().and_then(|b| b.size).map(u64::from), Some(20));
    // An empty region has no binding (a size-less binding would take the
    // rest of the buffer; at 1aaeec9 a consumer saw 960 words).
    assert!(BufferRegion::new(&page, 16, 0).binding().is_none());
}

#[test]
fn destinations_packed_closer_than_the_binding_alignment_never_alias() {
    let Some(gpu) = gpu("destinations_packed_closer_than_the_binding_alignment_never_alias") else {
        return;
    };
    // Plans for WebGPU's defaults (bindings start on 256 bytes) into one page
    // packed at 16-byte steps: the QKV split of f16 [3, 5, 96] (vec4), short
    // rows (row blocks), long unaligned rows (row streams) and 9 outputs
    // over two passes (words). Outputs whose aligned-down bindings would
    // overlap are written by separate dispatches, so every dispatch is one
    // Dawn accepts; every output must still be exact, every gap untouched.
    let mut rng = Rng::new(67);
    let lavapipe_model = Strategy::Auto(wgpu_split::plan::CostModel::LAVAPIPE);
    for (t, shape, lengths, strategy) in [
        (
            ElementType::Float16,
            vec![3, 5, 96],
            vec![32, 32, 32],
            Strategy::Gather,
        ),
        (
            ElementType::Float16,
            vec![64, 6],
            vec![1, 2, 3],
            Strategy::Gather,
        ),
        (
            ElementType::Uint8,
            vec![16, 90],
            vec![17, 17, 17, 17, 22],
            lavapipe_model,
        ),
        (
            ElementType::Uint8,
            vec![4, 27],
            vec![3; 9],
            Strategy::Gather,
        ),
    ] {
        let axis = shape.len() - 1;
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        let options = PlanOptions::default().strategy(strategy);
        let plan = SplitPlan::new(
            &split,
            t,
            &wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT,
            &options,
        )
        .unwrap();
        let step = 16.max(plan.offset_alignment_bytes());
        let mut offsets = Vec::new();
        let mut end = 0;
        for i in 0..plan.destination_count() {
            offsets.push(end);
            end = (end + plan.destination_bytes(i)).next_multiple_of(step) + step;
        }
        let page = buffer(gpu, end + 256, POOL);
        let mut init = gpu.device().create_command_encoder(&Default::default());
        init.clear_buffer(&page, 0, None);
        gpu.queue().submit([init.finish()]);
        let regions: Vec<BufferRegion> = offsets
            .iter()
            .enumerate()
            .map(|(i, &o)| BufferRegion::new(&page, o, plan.destination_bytes(i)))
            .collect();
        let in_buffer = common::round_trip(gpu)
            .create_input(input.as_bytes().unwrap())
            .unwrap();
        let prepared = gpu
            .prepare(&plan, BufferRegion::whole(&in_buffer), &regions)
            .unwrap();
        assert!(
            prepared.dispatch_count() > plan.dispatch_count(),
            "{t} {shape:?}: packed bindings must take more dispatches"
        );
        common::encode_and_submit(gpu, &plan, BufferRegion::whole(&in_buffer), &regions).unwrap();
        let out = read_buffer(gpu, &page);
        let expected = input.split(&split).unwrap();
        let mut written = vec![false; out.len()];
        for (i, (r, e)) in regions.iter().zip(&expected).enumerate() {
            let range = r.offset as usize..(r.offset + r.size) as usize;
            let len = e.as_bytes().unwrap().len();
            assert_eq!(
                &out[range.start..range.start + len],
                e.as_bytes().unwrap(),
                "{t} {shape:?} output {i}"
            );
            written[range].iter_mut().for_each(|w| *w = true);
        }
        let stray = out.iter().zip(&written).position(|(&b, &w)| !w && b != 0);
        assert_eq!(
            stray, None,
            "{t} {shape:?}: a byte outside the regions was written"
        );
    }
}

#[test]
fn the_input_may_share_a_page_with_its_outputs() {
    let Some(gpu) = gpu("the_input_may_share_a_page_with_its_outputs") else {
        return;
    };
    // A sub-allocator's page holding the input and, from one binding
    // alignment past it, the outputs: plans for WebGPU's defaults with
    // every kernel (vec4, row blocks, row streams, words, funnel) and an
    // arena. The dispatches bind the source read_write (WebGPU forbids one
    // buffer bound read-only and writable in a dispatch); every output
    // exact, the input and every gap untouched.
    let mut rng = Rng::new(73);
    let cases = [
        (ElementType::Float16, vec![3, 5, 96], vec![32, 32, 32], None),
        (ElementType::Float16, vec![64, 6], vec![1, 2, 3], None),
        (
            ElementType::Uint8,
            vec![16, 90],
            vec![17, 17, 17, 17, 22],
            Some(common::ROW_STREAMS),
        ),
        (ElementType::Uint8, vec![4, 27], vec![3; 9], None),
        (
            ElementType::Float,
            vec![64, 85],
            vec![5, 80],
            Some(common::FUNNEL_TABLE),
        ),
        (
            ElementType::Int4,
            vec![6, 10],
            vec![3, 7],
            Some(common::WORDS),
        ),
        // Past 7 destinations: row copies in groups, a module per group
        // shape (2 and 3 modules in the separate plans).
        (ElementType::Float, vec![4, 256], vec![32; 8], None),
        (ElementType::Float, vec![3, 2048], vec![32; 64], None),
        // Row blocks in groups: short rows unbound into 12 columns.
        (ElementType::Float16, vec![64, 12], vec![1; 12], None),
        // And row streams in groups, for runs at byte offsets.
        (
            ElementType::Uint8,
            vec![16, 4097],
            [vec![455; 8], vec![457]].concat(),
            None,
        ),
    ];
    for (t, shape, lengths, kernel) in cases {
        let axis = shape.len() - 1;
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        for placement in [Placement::Separate, Placement::Arena] {
            let mut options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .placement(placement);
            if let Some(forced) = kernel {
                options = common::forced(options, forced);
            }
            let limits = wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT;
            let plan = SplitPlan::new(&split, t, &limits, &options).unwrap();
            let context = format!("{t} {shape:?} {placement:?} {}", plan.kernel());
            let input_at = 48;
            let mut end = (input_at + plan.input_binding_bytes()).next_multiple_of(256) + 32;
            let mut regions_at = Vec::new();
            for i in 0..plan.destination_count() {
                regions_at.push((end, plan.destination_bytes(i)));
                end = (end + plan.destination_bytes(i)).next_multiple_of(16) + 16;
            }
            let page = buffer(gpu, end + 256, POOL);
            let mut init = gpu.device().create_command_encoder(&Default::default());
            init.clear_buffer(&page, 0, None);
            gpu.queue().submit([init.finish()]);
            let mut padded = input.as_bytes().unwrap().to_vec();
            padded.resize(padded.len().next_multiple_of(4), 0);
            gpu.queue().write_buffer(&page, input_at, &padded);
            let regions: Vec<BufferRegion> = regions_at
                .iter()
                .map(|&(offset, size)| BufferRegion::new(&page, offset, size))
                .collect();
            let source = BufferRegion::new(&page, input_at, input.as_bytes().unwrap().len() as u64);
            common::encode_and_submit(gpu, &plan, source, &regions)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let out = read_buffer(gpu, &page);
            let mut written = vec![false; out.len()];
            let input_range =
                input_at as usize..input_at as usize + input.as_bytes().unwrap().len();
            assert_eq!(
                &out[input_range.clone()],
                input.as_bytes().unwrap(),
                "{context}: input"
            );
            written[input_range].iter_mut().for_each(|w| *w = true);
            let expected = input.split(&split).unwrap();
            for (i, (o, e)) in plan.outputs().iter().zip(&expected).enumerate() {
                let (offset, _) = regions_at[plan.placement().destination_of(i)];
                let start = (offset + o.arena_offset_bytes) as usize;
                let e = e.as_bytes().unwrap();
                assert_eq!(&out[start..start + e.len()], e, "{context}: output {i}");
            }
            for &(offset, size) in &regions_at {
                written[offset as usize..(offset + size) as usize]
                    .iter_mut()
                    .for_each(|w| *w = true);
            }
            let stray = out.iter().zip(&written).position(|(&b, &w)| !w && b != 0);
            assert_eq!(
                stray, None,
                "{context}: a byte outside the regions was written"
            );
        }
    }
    // Where it cannot work, a typed error names why: regions that overlap,
    // bindings that would (the input's binding ends where its region does,
    // the output's starts at its offset aligned down to 256 bytes), and a
    // plan that copies into the input's buffer.
    let split = ResolvedSplit::new(&[4, 16], 1, vec![8, 8], true).unwrap();
    let limits = wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT;
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = SplitPlan::new(&split, ElementType::Float, &limits, &gather).unwrap();
    let page = buffer(gpu, 4096, POOL);
    let input = BufferRegion::new(&page, 64, 256);
    let why = |outputs: [u64; 2], plan: &SplitPlan| {
        let regions: Vec<BufferRegion> = outputs
            .iter()
            .enumerate()
            .map(|(i, &o)| BufferRegion::new(&page, o, plan.destination_bytes(i)))
            .collect();
        match refused(gpu, |enc| {
            gpu.encode(enc, plan, input, &regions).unwrap_err()
        }) {
            Error::Encode(EncodeError::InputSharesBuffer { why, .. }) => why,
            e => panic!("{e}"),
        }
    };
    assert!(why([128, 1024], &plan).contains("overlap the input's"));
    assert!(why([352, 1024], &plan).contains("aligned down to 256 bytes"));
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    let copy_plan = SplitPlan::new(&split, ElementType::Float, &limits, &copy).unwrap();
    assert!(why([1024, 2048], &copy_plan).contains("copy_buffer_to_buffer"));
}

#[test]
fn an_empty_outputs_region_is_ignored_whatever_its_offset() {
    let Some(gpu) = gpu("an_empty_outputs_region_is_ignored_whatever_its_offset") else {
        return;
    };
    // f16 [4, 8] into [2, 0, 6]: output 1 is empty. Its region may sit at
    // any offset, aligned or not, even past its buffer's end: nothing is
    // written there and nothing about it is checked. (At 1aaeec9 offsets
    // 2, 4 and 100 were MisalignedOffset errors.)
    let split = ResolvedSplit::new(&[4, 8], 1, vec![2, 0, 6], true).unwrap();
    let mut rng = Rng::new(8);
    let input = random_tensor(&mut rng, ElementType::Float16, &[4, 8]);
    let in_buffer = common::round_trip(gpu)
        .create_input(input.as_bytes().unwrap())
        .unwrap();
    let expected = input.split(&split).unwrap();
    for strategy in [Strategy::Gather, Strategy::Copy] {
        let options = PlanOptions::default().strategy(strategy);
        let plan = SplitPlan::new(
            &split,
            ElementType::Float16,
            &wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT,
            &options,
        )
        .unwrap();
        let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
        let tiny = buffer(gpu, 4, wgpu::BufferUsages::COPY_DST);
        for offset in [2, 4, 100, 10_000] {
            let regions = [
                BufferRegion::whole(&outputs[0]),
                BufferRegion::new(&tiny, offset, 0),
                BufferRegion::whole(&outputs[2]),
            ];
            common::encode_and_submit(gpu, &plan, BufferRegion::whole(&in_buffer), &regions)
                .unwrap_or_else(|e| panic!("{strategy:?} at {offset}: {e}"));
            for i in [0, 2] {
                let bytes = read_buffer(gpu, &outputs[i]);
                let e = expected[i].as_bytes().unwrap();
                assert_eq!(&bytes[..e.len()], e, "{strategy:?} at {offset}: output {i}");
            }
        }
    }
}

#[test]
fn staged_plans_run_on_the_gpu_encoded_and_in_the_callers_pass() {
    let Some(gpu) = gpu("staged_plans_run_on_the_gpu_encoded_and_in_the_callers_pass") else {
        return;
    };
    let limits = wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT;
    let mut rng = Rng::new(38);
    for (t, shape, pass) in [
        // 31 one-element columns: copies out where the columns are whole
        // words, else the table-driven kernel; in a pass, dispatches only.
        (ElementType::Float16, [512, 31], false),
        (ElementType::Float, [300, 31], false),
        (ElementType::Uint8, [77, 20], false),
        (ElementType::Float16, [512, 31], true),
        (ElementType::Int4, [90, 17], true),
    ] {
        let split = ResolvedSplit::new(&shape, 1, vec![1; shape[1]], true).unwrap();
        let mut options = PlanOptions::default().staging(true);
        if pass {
            options = options.in_compute_pass();
        }
        let plan = SplitPlan::new(&split, t, &limits, &options).unwrap();
        assert!(plan.is_staged(), "{t} {shape:?}");
        let input = random_tensor(&mut rng, t, &shape);
        let context = format!("{t} {shape:?} in a pass: {pass}");
        if pass {
            let dispatches = record_in_a_pass_and_check(gpu, &plan, &input, &split);
            assert_eq!(dispatches, plan.dispatch_count(), "{context}");
            continue;
        }
        let actual = common::round_trip(gpu).run_plan(&plan, &input).unwrap();
        common::assert_outputs_equal(&input.split(&split).unwrap(), &actual, &context);
        // What counts() says is what the plan announced.
        let source = common::round_trip(gpu)
            .create_input(input.as_bytes().unwrap())
            .unwrap();
        let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
        let regions: Vec<_> = outputs.iter().map(BufferRegion::whole).collect();
        let counts = gpu
            .counts(&plan, BufferRegion::whole(&source), &regions)
            .unwrap();
        assert_eq!(
            (counts.dispatches, counts.copies),
            (plan.dispatch_count(), plan.copy_count()),
            "{context}"
        );
    }
    // The scratch stays with the splitter, within its policy.
    assert!(gpu.cache().usage().scratch_bytes > 0);
}
