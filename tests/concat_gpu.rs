//! Concat on the GPU (lavapipe in CI): every output byte equal to the host
//! concat's, nothing written outside the output's region or into an
//! input, for every element width, kernel, class model, placement and
//! packing; a concat of a split gives the tensor back; misuse is a typed
//! error before wgpu sees it.

mod common;

use common::{Rng, gpu, one_type_per_width, random_tensor, read_buffer, refused, tiny};
use wgpu_split::error::{EncodeError, PlanError};
use wgpu_split::frameworks::Torch;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::{
    BufferRole, ConcatPlan, CostModel, DeviceClass, Kernel, Placement, PlanLimits, PlanOptions,
    Strategy,
};
use wgpu_split::{ElementType, Error, HostTensor, ResolvedConcat};

/// Guard bytes around every region (a pattern no kernel writes).
const GUARD: u8 = 0xA5;

/// Runs `plan` on `inputs` on the GPU: the inputs packed into one page at
/// the plan's offset alignment (so their bindings share alignment
/// windows), the output in a buffer of its own between guard bytes;
/// checks the guards and the input page are untouched and returns the
/// output's bytes.
fn run(gpu: &GpuSplitter, plan: &ConcatPlan, inputs: &[HostTensor], in_pass: bool) -> Vec<u8> {
    let needs = plan.requirements();
    let align = needs.offset_alignment_bytes;
    // The input page: each input at the next aligned offset (an arena plan
    // reads them at its offsets).
    let mut page = vec![GUARD; 64];
    let mut ranges = Vec::new();
    let arena = plan.placement() == Placement::Arena;
    let base = 64u64;
    if arena {
        page.resize((base + needs.inputs[0].bytes) as usize + 64, GUARD);
    }
    for (k, input) in inputs.iter().enumerate() {
        let bytes = input.as_bytes().unwrap();
        let start = if arena {
            base + plan.arena_offsets()[k].unwrap_or(0)
        } else {
            (page.len() as u64).next_multiple_of(align)
        };
        let len = needs
            .inputs
            .get(k)
            .map_or(0, |n| n.bytes)
            .max(bytes.len() as u64);
        let end = (start + len) as usize;
        if page.len() < end + 16 {
            page.resize(end + 16, GUARD);
        }
        page[start as usize..start as usize + bytes.len()].copy_from_slice(bytes);
        ranges.push(start..start + len);
    }
    page.resize(page.len().next_multiple_of(4), GUARD);
    let device = gpu.device();
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let page_buffer = buffer_with(gpu, &page, usage);
    let out_offset = 256u64.next_multiple_of(align);
    let out_len = needs.output_region_bytes;
    let out_bytes = vec![GUARD; (out_offset + out_len + 256).next_multiple_of(4) as usize];
    let output = buffer_with(gpu, &out_bytes, usage);
    let regions: Vec<BufferRegion> = if arena {
        vec![BufferRegion::new(&page_buffer, base, needs.inputs[0].bytes)]
    } else {
        ranges
            .iter()
            .map(|r| BufferRegion::new(&page_buffer, r.start, r.end - r.start))
            .collect()
    };
    let out_region = BufferRegion::new(&output, out_offset, out_len);
    let mut encoder = device.create_command_encoder(&Default::default());
    if in_pass {
        let prepared = gpu.prepare(plan, &regions, out_region).unwrap();
        let mut pass = encoder.begin_compute_pass(&Default::default());
        prepared.record(&mut pass);
    } else {
        gpu.encode(&mut encoder, plan, &regions, out_region)
            .unwrap();
    }
    gpu.queue().submit([encoder.finish()]);
    let after = read_buffer(gpu, &output);
    let page_after = read_buffer(gpu, &page_buffer);
    assert_eq!(page_after, page, "an input was written");
    let o = out_offset as usize;
    assert!(
        after[..o].iter().all(|&b| b == GUARD),
        "bytes before the output written"
    );
    let end = o + out_len as usize;
    assert!(
        after[end..].iter().all(|&b| b == GUARD),
        "bytes after the output's region written"
    );
    after[o..o + needs.output_bytes as usize].to_vec()
}

fn buffer_with(gpu: &GpuSplitter, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
    let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("concat test"),
        size: bytes.len() as u64,
        usage,
        mapped_at_creation: true,
    });
    buffer
        .slice(..)
        .get_mapped_range_mut()
        .unwrap()
        .copy_from_slice(bytes);
    buffer.unmap();
    buffer
}

/// The host concat's bytes.
fn expected(inputs: &[HostTensor], concat: &ResolvedConcat) -> Vec<u8> {
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    HostTensor::concat(&refs, concat)
        .unwrap()
        .as_bytes()
        .unwrap()
        .to_vec()
}

/// Random inputs of `concat`'s shapes.
fn inputs_of(rng: &mut Rng, t: ElementType, concat: &ResolvedConcat) -> Vec<HostTensor> {
    concat
        .input_shapes()
        .iter()
        .map(|s| random_tensor(rng, t, s))
        .collect()
}

/// The concats of the matrix: along the last axis at odd lengths, the
/// first, a middle one, a stack, one of a single row, an empty input,
/// more inputs than one dispatch binds.
fn concats() -> Vec<(&'static str, ResolvedConcat)> {
    // More inputs than a dispatch binds: groups of inputs, whose words at
    // group boundaries two dispatches write in turn.
    let many: Vec<[usize; 2]> = (0..20).map(|k| [3, 1 + k % 7]).collect();
    vec![
        (
            "last axis, odd",
            ResolvedConcat::new(&[[6, 5], [6, 1], [6, 7]], 1).unwrap(),
        ),
        (
            "last axis, long rows",
            ResolvedConcat::new(&[[3, 70], [3, 33]], 1).unwrap(),
        ),
        ("axis 0", ResolvedConcat::new(&[[2, 9], [3, 9]], 0).unwrap()),
        (
            "middle axis",
            ResolvedConcat::new(&[[2, 3, 8], [2, 5, 8], [2, 1, 8]], 1).unwrap(),
        ),
        (
            "stack",
            ResolvedConcat::stack(&[[4, 3], [4, 3], [4, 3]], 2).unwrap(),
        ),
        (
            "empty input",
            ResolvedConcat::new(&[[4, 0], [4, 6], [4, 0], [4, 2]], 1).unwrap(),
        ),
        (
            "one row",
            ResolvedConcat::new(&[[1, 1, 13], [1, 1, 3]], 2).unwrap(),
        ),
        ("20 inputs", ResolvedConcat::new(&many, 1).unwrap()),
    ]
}

/// Every concat of the matrix, every element width, under the splitter's
/// own model, each class model and every kernel that plans it, both
/// placements, encoded and prepared in a pass: exact, nothing else
/// written.
#[test]
fn every_width_kernel_and_model_is_exact() {
    let Some(gpu) = gpu("every_width_kernel_and_model_is_exact") else {
        return;
    };
    let mut rng = Rng::new(31);
    let limits = gpu.limits();
    let mut strategies: Vec<(String, Strategy)> = vec![
        ("copy".to_string(), Strategy::Copy),
        ("gather".to_string(), Strategy::Gather),
    ];
    for class in [
        DeviceClass::DiscreteGpu,
        DeviceClass::IntegratedGpu,
        DeviceClass::Unknown,
        DeviceClass::Software,
    ] {
        strategies.push((
            format!("{class:?}"),
            Strategy::Auto(CostModel::for_class(class)),
        ));
    }
    let mut runs = 0;
    let mut kernels_run = std::collections::BTreeSet::new();
    for (name, concat) in concats() {
        for t in one_type_per_width() {
            let inputs = inputs_of(&mut rng, t, &concat);
            let want = expected(&inputs, &concat);
            let mut plans: Vec<(String, ConcatPlan)> = Vec::new();
            plans.push(("splitter".to_string(), gpu.plan(&concat, t).unwrap()));
            plans.push((
                "for pass".into(),
                gpu.plan_with(
                    &concat,
                    t,
                    &wgpu_split::plan::PlanOptions::default().in_compute_pass(),
                )
                .unwrap(),
            ));
            for (s, strategy) in &strategies {
                for placement in [Placement::Separate, Placement::Arena] {
                    let options = PlanOptions::default()
                        .strategy(*strategy)
                        .placement(placement);
                    match ConcatPlan::new(&concat, t, limits, &options) {
                        Ok(plan) => plans.push((format!("{s} {placement:?}"), plan)),
                        Err(PlanError::NotCopyable { .. }) => {}
                        Err(e) => panic!("{name} {t:?} {s}: {e}"),
                    }
                }
            }
            for kernel in common::kernel_forms() {
                let options =
                    common::forced(PlanOptions::default().strategy(Strategy::Gather), kernel);
                match ConcatPlan::new(&concat, t, limits, &options) {
                    Ok(plan) => plans.push((format!("{kernel:?}"), plan)),
                    Err(PlanError::KernelDoesNotFit { .. }) => {}
                    Err(e) => panic!("{name} {t:?} {kernel:?}: {e}"),
                }
            }
            for (how, plan) in &plans {
                let in_pass = plan.copy_count() == 0;
                let got = run(gpu, plan, &inputs, in_pass);
                assert!(
                    got == want,
                    "{name} {t:?} {how} ({:?}): bytes differ",
                    plan.kernel()
                );
                if plan.dispatch_count() > 0 {
                    kernels_run.insert(plan.runs());
                }
                runs += 1;
            }
        }
    }
    eprintln!("{runs} concats exact; kernels run: {kernels_run:?}");
    for kernel in ["vec4", "words", "row_copies", "row_words", "concat_words"] {
        assert!(
            kernels_run.contains(kernel),
            "{kernel} never ran: {kernels_run:?}"
        );
    }
}

/// Many passes: windows of 1 KiB (256 bytes of room past the alignments)
/// and 2 workgroups a dimension force every concat into windows, groups
/// and 2-D grids; a concat of runs that are not whole words, which the
/// concat-words kernel assembles in one window, is a typed error past it.
#[test]
fn multi_pass_concats_are_exact() {
    let Some(gpu) = gpu("multi_pass_concats_are_exact") else {
        return;
    };
    let mut rng = Rng::new(7);
    let limits = tiny(1024, 2);
    let (mut multi, mut too_large) = (0, 0);
    for (name, concat) in concats() {
        for t in one_type_per_width() {
            let inputs = inputs_of(&mut rng, t, &concat);
            let want = expected(&inputs, &concat);
            let gather = PlanOptions::default().strategy(Strategy::Gather);
            match ConcatPlan::new(&concat, t, &limits, &gather) {
                Ok(_) => {}
                Err(PlanError::ConcatTooLargeForOneWindow { output_bytes, .. }) => {
                    assert!(output_bytes > 256, "{name} {t:?}");
                    too_large += 1;
                }
                Err(e) => panic!("{name} {t:?}: {e}"),
            }
            for kernel in common::kernel_forms() {
                let options = common::forced(gather, kernel);
                let plan = match ConcatPlan::new(&concat, t, &limits, &options) {
                    Ok(plan) => plan,
                    Err(PlanError::KernelDoesNotFit { .. }) => continue,
                    Err(e) => panic!("{name} {t:?} {kernel:?}: {e}"),
                };
                multi += usize::from(plan.dispatch_count() > 1);
                let got = run(gpu, &plan, &inputs, true);
                assert!(
                    got == want,
                    "{name} {t:?} {kernel:?} in {} dispatches",
                    plan.dispatch_count()
                );
            }
        }
    }
    eprintln!("{multi} plans of several dispatches exact; {too_large} concats past one window");
    assert!(multi > 10 && too_large > 0, "{multi} {too_large}");
}

/// Random concats of random widths, sizes and axes under the splitter's
/// plan and the discrete model's.
#[test]
fn random_concats_are_exact() {
    let Some(gpu) = gpu("random_concats_are_exact") else {
        return;
    };
    let mut rng = Rng::new(2026);
    let types = one_type_per_width();
    for case in 0..60 {
        let t = types[rng.below(types.len())];
        let rank = 1 + rng.below(3);
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below(12)).collect();
        let axis = rng.below(rank);
        let count = 1 + rng.below(5);
        let shapes: Vec<Vec<usize>> = (0..count)
            .map(|_| {
                let mut s = shape.clone();
                s[axis] = rng.below(40);
                s
            })
            .collect();
        let concat = ResolvedConcat::new(&shapes, axis).unwrap();
        let inputs = inputs_of(&mut rng, t, &concat);
        let want = expected(&inputs, &concat);
        let discrete = PlanOptions::default().strategy(Strategy::Auto(CostModel::for_class(
            DeviceClass::DiscreteGpu,
        )));
        for plan in [
            gpu.plan(&concat, t).unwrap(),
            ConcatPlan::new(&concat, t, gpu.limits(), &discrete).unwrap(),
        ] {
            let got = run(gpu, &plan, &inputs, false);
            assert!(
                got == want,
                "case {case}: {t:?} {shapes:?} axis {axis} ({:?})",
                plan.kernel()
            );
        }
    }
}

/// A concat of a split is the tensor: every output of the splitter's
/// split plan fed back to its concat plan.
#[test]
fn concat_of_split_is_the_tensor() {
    let Some(gpu) = gpu("concat_of_split_is_the_tensor") else {
        return;
    };
    let mut rng = Rng::new(5);
    for t in one_type_per_width() {
        for (shape, axis, lengths) in [
            (vec![8, 33], 1, vec![5, 27, 1]),
            (vec![4, 6, 10], 2, vec![3, 7]),
            (vec![9, 16], 0, vec![4, 5]),
        ] {
            let split = Torch::split_with_sizes(&shape, &lengths, axis).unwrap();
            let x = random_tensor(&mut rng, t, &shape);
            let pieces = wgpu_split::gpu::RoundTrip::new(gpu)
                .run(&split, &x)
                .unwrap();
            let concat = ResolvedConcat::inverse_of(&split).unwrap();
            let plan = gpu.plan(&concat, t).unwrap();
            let back = run(gpu, &plan, &pieces, false);
            assert!(back == x.as_bytes().unwrap(), "{t:?} {shape:?} axis {axis}");
        }
    }
}

/// torch's legacy skip: a `[0]` input takes no part, and its region is
/// ignored (here: empty, at offset 0 of a buffer the concat never binds).
#[test]
fn skipped_inputs_take_no_part() {
    let Some(gpu) = gpu("skipped_inputs_take_no_part") else {
        return;
    };
    let mut rng = Rng::new(3);
    let concat = Torch::cat(&[vec![0], vec![3, 5], vec![0], vec![3, 2]], 1).unwrap();
    let t = ElementType::Float16;
    let inputs = inputs_of(&mut rng, t, &concat);
    let plan = gpu.plan(&concat, t).unwrap();
    let needs = plan.requirements();
    assert_eq!(needs.inputs.len(), 4);
    assert_eq!((needs.inputs[0].bytes, needs.inputs[2].bytes), (0, 0));
    assert_eq!(needs.inputs[3].role, BufferRole::ConcatInput(3));
    assert_eq!(run(gpu, &plan, &inputs, false), expected(&inputs, &concat));
}

/// One region twice (`torch.cat([x, x])`): read-only pieces may alias.
#[test]
fn an_input_given_twice_is_read_twice() {
    let Some(gpu) = gpu("an_input_given_twice_is_read_twice") else {
        return;
    };
    let mut rng = Rng::new(9);
    for t in one_type_per_width() {
        let concat = ResolvedConcat::new(&[[5, 7], [5, 7]], 1).unwrap();
        let x = random_tensor(&mut rng, t, &[5, 7]);
        let want = expected(&[x.clone(), x.clone()], &concat);
        let plan = ConcatPlan::new(
            &concat,
            t,
            gpu.limits(),
            &PlanOptions::default().strategy(Strategy::Gather),
        )
        .unwrap();
        let bytes = x.as_bytes().unwrap();
        let len = plan.requirements().inputs[0].bytes;
        let mut padded = bytes.to_vec();
        padded.resize(len.next_multiple_of(4) as usize, 0);
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let input = buffer_with(gpu, &padded, usage);
        let output = buffer_with(
            gpu,
            &vec![GUARD; plan.requirements().output_region_bytes.next_multiple_of(4) as usize],
            usage | wgpu::BufferUsages::COPY_DST,
        );
        let region = BufferRegion::new(&input, 0, len);
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(
            &mut encoder,
            &plan,
            &[region, region],
            BufferRegion::whole(&output),
        )
        .unwrap();
        gpu.queue().submit([encoder.finish()]);
        let got = read_buffer(gpu, &output);
        assert!(got[..want.len()] == want[..], "{t:?} ({:?})", plan.kernel());
    }
}

/// Inputs in the output's own buffer (a runtime's page): the dispatches
/// bind them writable beside the output, as WebGPU allows for bindings
/// that do not overlap, and read them exactly.
#[test]
fn inputs_in_the_outputs_buffer() {
    let Some(gpu) = gpu("inputs_in_the_outputs_buffer") else {
        return;
    };
    let mut rng = Rng::new(11);
    let t = ElementType::Float;
    let concat = ResolvedConcat::new(&[[16, 40], [16, 24]], 1).unwrap();
    let inputs = inputs_of(&mut rng, t, &concat);
    let want = expected(&inputs, &concat);
    let options = PlanOptions::default().strategy(Strategy::Gather);
    let plan = ConcatPlan::new(&concat, t, gpu.limits(), &options).unwrap();
    let needs = plan.requirements();
    let align = gpu.limits().min_storage_buffer_offset_alignment as usize;
    // [output][gap][input 0][gap][input 1], each at a binding alignment.
    let at = [
        0,
        needs.output_bytes as usize + align,
        2 * (needs.output_bytes as usize + align),
    ];
    let at = at.map(|a| a.next_multiple_of(align));
    let mut page = vec![0u8; at[2] + inputs[1].as_bytes().unwrap().len() + 64];
    for (k, x) in inputs.iter().enumerate() {
        let b = x.as_bytes().unwrap();
        page[at[k + 1]..at[k + 1] + b.len()].copy_from_slice(b);
    }
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let buffer = buffer_with(gpu, &page, usage);
    let regions: Vec<BufferRegion> = (0..2)
        .map(|k| BufferRegion::new(&buffer, at[k + 1] as u64, needs.inputs[k].bytes))
        .collect();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let out = BufferRegion::new(&buffer, 0, needs.output_region_bytes);
    gpu.encode(&mut encoder, &plan, &regions, out).unwrap();
    gpu.queue().submit([encoder.finish()]);
    let got = read_buffer(gpu, &buffer);
    assert_eq!(&got[..want.len()], &want[..]);
    assert_eq!(&got[at[1]..], &page[at[1]..], "an input was written");
}

/// Misuse is a typed error naming the concat's own regions, before wgpu
/// sees anything.
#[test]
fn misuse_is_a_typed_error_naming_the_concats_regions() {
    let Some(gpu) = gpu("misuse_is_a_typed_error_naming_the_concats_regions") else {
        return;
    };
    let t = ElementType::Float;
    let concat = ResolvedConcat::new(&[[4, 8], [4, 4]], 1).unwrap();
    let plan = gpu.plan(&concat, t).unwrap();
    let needs = plan.requirements();
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
    let a = buffer_with(gpu, &vec![0; needs.inputs[0].bytes as usize], storage);
    let b = buffer_with(gpu, &vec![0; needs.inputs[1].bytes as usize], storage);
    let small = buffer_with(gpu, &[0; 16], storage | wgpu::BufferUsages::COPY_DST);
    let out = buffer_with(
        gpu,
        &vec![0; needs.output_region_bytes as usize],
        storage | wgpu::BufferUsages::COPY_DST,
    );
    let regions = [BufferRegion::whole(&a), BufferRegion::whole(&b)];
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, &regions[..1], BufferRegion::whole(&out))
            .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::RegionCount {
                expected: 2,
                actual: 1
            })
        ),
        "{e}"
    );
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, &regions, BufferRegion::whole(&small))
            .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::ConcatOutput,
                ..
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("concat output"), "{e}");
    let short = [BufferRegion::whole(&a), BufferRegion::new(&b, 0, 16)];
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, &short, BufferRegion::whole(&out))
            .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::BufferTooSmall {
                which: BufferRole::ConcatInput(1),
                ..
            })
        ),
        "{e}"
    );
    // A copying plan needs COPY_SRC on its inputs and COPY_DST on the output.
    let copying = ResolvedConcat::new(&[[64, 64], [64, 64]], 0).unwrap();
    let plan = ConcatPlan::new(
        &copying,
        t,
        gpu.limits(),
        &PlanOptions::default().strategy(Strategy::Copy),
    )
    .unwrap();
    let needs = plan.requirements();
    assert!(needs.output_usages.copy_dst && !needs.output_usages.copy_src);
    assert!(needs.inputs[1].usages.copy_src && !needs.inputs[1].usages.copy_dst);
    let storage_only = buffer_with(
        gpu,
        &vec![0; needs.inputs[0].bytes as usize],
        wgpu::BufferUsages::STORAGE,
    );
    let big_out = buffer_with(
        gpu,
        &vec![0; needs.output_region_bytes as usize],
        wgpu::BufferUsages::COPY_DST,
    );
    let c = buffer_with(gpu, &vec![0; needs.inputs[0].bytes as usize], storage);
    let regions = [BufferRegion::whole(&c), BufferRegion::whole(&storage_only)];
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, &regions, BufferRegion::whole(&big_out))
            .unwrap_err()
    });
    assert!(
        matches!(
            e,
            Error::Encode(EncodeError::MissingUsage {
                which: BufferRole::ConcatInput(1),
                ..
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("from it"), "{e}");
}

/// Planning errors name the concat's output.
#[test]
fn an_output_past_the_device_is_named() {
    let concat = ResolvedConcat::new(&[[1 << 20, 1024], [1 << 20, 1024]], 0).unwrap();
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let e = ConcatPlan::new(
        &concat,
        ElementType::Float,
        &limits,
        &PlanOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(e, PlanError::TooLargeForDevice { what: "output", .. }),
        "{e}"
    );
}

/// The round trip: an operator's concat, an arena plan's, a mismatch.
#[test]
fn the_round_trip_concatenates() {
    let Some(gpu) = gpu("the_round_trip_concatenates") else {
        return;
    };
    let mut rng = Rng::new(17);
    let t = ElementType::Int4;
    let op: wgpu_split::ConcatOperator = wgpu_split::OnnxConcat::new(13).axis(-1).into();
    let inputs = [
        random_tensor(&mut rng, t, &[3, 5]),
        random_tensor(&mut rng, t, &[3, 2]),
    ];
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let round_trip = wgpu_split::gpu::RoundTrip::new(gpu);
    let want = op.concat_on_host(&refs).unwrap();
    assert_eq!(round_trip.concat(&op, &refs).unwrap(), want);
    let concat = ResolvedConcat::new(&[[3, 5], [3, 2]], 1).unwrap();
    let arena = PlanOptions::default().placement(Placement::Arena);
    let plan = ConcatPlan::new(&concat, t, gpu.limits(), &arena).unwrap();
    assert_eq!(round_trip.run_plan(&plan, &refs).unwrap(), want);
    let wrong = random_tensor(&mut rng, ElementType::Int8, &[3, 2]);
    let e = round_trip
        .run_plan(&plan, &[&inputs[0], &wrong])
        .unwrap_err();
    assert!(matches!(e, Error::Plan(PlanError::Mismatch(_))), "{e}");
    // The async forms (the web's only ones), awaited while a poller
    // drives the device.
    let _poller = wgpu_split::gpu::Poller::new(gpu.device());
    assert_eq!(
        pollster::block_on(round_trip.concat_async(&op, &refs)).unwrap(),
        want
    );
    assert_eq!(
        pollster::block_on(round_trip.run_async(&concat, &refs)).unwrap(),
        want
    );
    assert_eq!(
        pollster::block_on(round_trip.run_plan_async(&plan, &refs)).unwrap(),
        want
    );
}

#[test]
fn staged_concats_are_exact_encoded_and_in_the_callers_pass() {
    let Some(gpu) = gpu("staged_concats_are_exact_encoded_and_in_the_callers_pass") else {
        return;
    };
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let mut rng = Rng::new(3839);
    for (t, rows, pieces) in [
        (ElementType::Float16, 300, 31),
        (ElementType::Float, 64, 12),
        (ElementType::Uint8, 77, 20),
        (ElementType::Int4, 90, 17),
    ] {
        let shapes = vec![vec![rows, 1]; pieces];
        let concat = ResolvedConcat::new(&shapes, 1).unwrap();
        let inputs = inputs_of(&mut rng, t, &concat);
        for in_pass in [false, true] {
            let mut options = PlanOptions::default().staging(true);
            if in_pass {
                options = options.in_compute_pass();
            }
            let plan = ConcatPlan::new(&concat, t, &limits, &options).unwrap();
            assert!(plan.is_staged(), "{t} {pieces} pieces");
            assert_eq!(
                plan.requirements().scratch_bytes,
                plan.mirror().scratch_bytes()
            );
            let got = run(gpu, &plan, &inputs, in_pass);
            assert!(
                got == expected(&inputs, &concat),
                "{t} [{rows}, {pieces}] in a pass: {in_pass}"
            );
        }
    }
}

/// A concat of more sub-word pieces, of more lengths, than one module
/// assembles (32) or than a plan's modules of fixed groups hold (four of
/// the seven pieces one dispatch binds under WebGPU's defaults): groups
/// whose module reads the pieces' places from the table, at most two
/// modules (full groups, and the last one ending the row), exact in both
/// placements, encoded and in the caller's pass. Before them such a concat
/// failed with `ConcatTooLargeForOneWindow` on outputs of a few hundred
/// bytes.
#[test]
fn many_sub_word_pieces_take_groups_reading_their_places_from_the_table() {
    let Some(gpu) = gpu("many_sub_word_pieces_take_groups_reading_their_places_from_the_table")
    else {
        return;
    };
    let mut rng = Rng::new(55);
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let mut from_table = 0;
    for count in [29usize, 34, 100] {
        for t in [
            ElementType::Int2,
            ElementType::Int4,
            ElementType::Uint8,
            ElementType::Float16,
        ] {
            // Lengths 1 to 5 over and over, rows of 3.
            let shapes: Vec<Vec<usize>> = (0..count).map(|i| vec![3, 1 + i % 5]).collect();
            let concat = ResolvedConcat::new(&shapes, 1).unwrap();
            let inputs = inputs_of(&mut rng, t, &concat);
            let want = expected(&inputs, &concat);
            for placement in [Placement::Separate, Placement::Arena] {
                let options = PlanOptions::default().placement(placement);
                let context = format!("{count} pieces of {t:?}, {placement:?}");
                let plan = ConcatPlan::new(&concat, t, &limits, &options)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let layouts = plan.mirror().generated_layouts();
                let read = layouts
                    .iter()
                    .filter(|l| l.path() == Some("from_table"))
                    .count();
                from_table += usize::from(read > 0);
                assert!(layouts.len() <= 2, "{context}: {layouts:?}");
                for in_pass in [false, true] {
                    let got = run(gpu, &plan, &inputs, in_pass);
                    assert!(
                        got == want,
                        "{context}, in {} dispatches",
                        plan.dispatch_count()
                    );
                }
            }
        }
    }
    assert!(from_table >= 20, "{from_table}");
}

/// A concat of many sub-word pieces along axis 0 (a flat buffer of odd-sized
/// tensors, as an optimizer packs gradients): each group's pieces are one
/// span of the tensor, and its dispatch launches lanes over that span only,
/// not over the rest of the tensor (every group of 100 pieces did: 15 times
/// the tensor's words).
#[test]
fn a_group_on_axis_0_launches_lanes_over_its_own_span() {
    let Some(gpu) = gpu("a_group_on_axis_0_launches_lanes_over_its_own_span") else {
        return;
    };
    let mut rng = Rng::new(54);
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let mut grouped = 0;
    for count in [9usize, 40, 100] {
        for t in [ElementType::Int4, ElementType::Uint8, ElementType::Float16] {
            let shapes: Vec<Vec<usize>> = (0..count).map(|i| vec![37 * (i % 7) + 1]).collect();
            let concat = ResolvedConcat::new(&shapes, 0).unwrap();
            let inputs = inputs_of(&mut rng, t, &concat);
            let want = expected(&inputs, &concat);
            let bits = t.bit_width().unwrap() as usize;
            let tensor_words = (concat.output_shape()[0] * bits).div_ceil(32) as u64;
            for placement in [Placement::Separate, Placement::Arena] {
                let options = PlanOptions::default().placement(placement);
                let context = format!("{count} pieces of {t:?}, {placement:?}");
                let plan = ConcatPlan::new(&concat, t, &limits, &options)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let passes = plan.mirror().passes();
                let lanes: u64 = passes.iter().map(|p| u64::from(p.invocations)).sum();
                // Each group: the words of its span, those its window
                // starts early (aligned down to a binding's offset), one
                // it ends late and the binding's shift.
                let early = u64::from(limits.min_storage_buffer_offset_alignment) / 4;
                let most = tensor_words + (early + 2) * passes.len() as u64;
                assert!(
                    lanes <= most,
                    "{context}: {lanes} lanes in {} dispatches over {tensor_words} words",
                    passes.len()
                );
                grouped += usize::from(passes.len() > 1);
                for in_pass in [false, true] {
                    let got = run(gpu, &plan, &inputs, in_pass);
                    assert!(got == want, "{context}, in {} dispatches", passes.len());
                }
            }
        }
    }
    // Separate pieces past 7 and an arena's past 32 take groups.
    assert_eq!(grouped, 15);
}

/// Concats of sub-word elements in long runs (at least 128 bits a row, the
/// tensor and each piece whole vec4s), planned for a GPU (striped lanes),
/// take the funnel's concat streams: a lane per tensor vec4, shifted out
/// of the one or two runs it spans (the concat-words kernel took them
/// before: 0.21 of a shader copy by the H200's model on u8 rows of 4,097
/// bytes, 0.81 now). Exact, encoded and in the caller's pass, in buffers of
/// their own and in an arena; lavapipe's own plans (blocked lanes) keep
/// theirs.
#[test]
fn long_runs_concatenate_through_the_funnel_on_gpus() {
    let Some(gpu) = gpu("long_runs_concatenate_through_the_funnel_on_gpus") else {
        return;
    };
    let mut rng = Rng::new(55);
    // The last four hold pieces shorter than a vec4: a vec4 of the tensor
    // spans three runs (four in the u8 999/1/1/999), and wraps into the
    // next row past the u8 1023/1's one byte.
    let cases: [(ElementType, [usize; 2], &[usize]); 8] = [
        (ElementType::Uint8, [64, 4097], &[2049, 2048]),
        (ElementType::Int4, [64, 4099], &[1366, 1366, 1367]),
        (ElementType::Float, [32, 4097], &[2049, 2048]),
        (ElementType::Int2, [32, 40000], &[66, 30000, 9934]),
        (ElementType::Int8, [64, 1023], &[511, 1, 511]),
        (ElementType::Int4, [64, 2050], &[1000, 2, 1048]),
        (ElementType::Uint8, [64, 2000], &[999, 1, 1, 999]),
        (ElementType::Uint8, [64, 1024], &[1023, 1]),
    ];
    for (t, [rows, width], lengths) in cases {
        assert_eq!(lengths.iter().sum::<usize>(), width);
        let shapes: Vec<Vec<usize>> = lengths.iter().map(|&l| vec![rows, l]).collect();
        let concat = ResolvedConcat::new(&shapes, 1).unwrap();
        let inputs = inputs_of(&mut rng, t, &concat);
        let want = expected(&inputs, &concat);
        // Blocked lanes (lavapipe) have no concat-stream form.
        for (model, funnel) in [
            (CostModel::DISCRETE_GPU, true),
            (CostModel::LAVAPIPE, false),
        ] {
            for placement in [Placement::Separate, Placement::Arena] {
                // Dispatches only, so that it records in the caller's pass.
                let options = PlanOptions::default()
                    .strategy(Strategy::Auto(model))
                    .placement(placement)
                    .in_compute_pass();
                let context = format!("{t:?} {shapes:?} {placement:?} {:?}", model.lanes);
                let plan = ConcatPlan::new(&concat, t, gpu.limits(), &options)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                assert_eq!(plan.kernel() == Kernel::Funnel, funnel, "{context}");
                for in_pass in [false, true] {
                    assert!(run(gpu, &plan, &inputs, in_pass) == want, "{context}");
                }
            }
        }
    }
}
