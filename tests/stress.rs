//! Stress: 10,000 random operators and shapes (a typed error, or a plan on
//! which the GPU and host paths agree), limits past 2^32, 8 threads sharing
//! one splitter, 10,000 consecutive splits with flat memory, and a
//! destroyed device.

mod common;

use common::{Rng, gpu, random_tensor, resident_bytes};
use proptest::prelude::*;
use wgpu_split::error::{DeviceError, PlanError, ResolveError};
use wgpu_split::gpu::{BufferRegion, GpuContext};
use wgpu_split::plan::{Placement, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{
    ElementType, Error, HostTensor, OnnxSplit, OnnxSplitToSequence, OpenVinoSplit,
    OpenVinoVariadicSplit, Operator, ParamTensor, ParamValues, ResolvedSplit,
};

/// An arbitrary operator for `shape`, sane (lengths that fit half the time)
/// or absurd.
fn operator(rng: &mut Rng, shape: &[usize]) -> Operator {
    let rank = shape.len();
    let axis = rng.below(2 * rank + 3) as i64 - rank as i64 - 1;
    let dim = usize::try_from(axis + rank as i64)
        .ok()
        .and_then(|a| shape.get(a))
        .copied()
        .unwrap_or(4);
    let length = |rng: &mut Rng| match rng.below(10) {
        0 => -1,
        1 => -(rng.below(5) as i64) - 2,
        2 => 1 << 40,
        _ => rng.below(9) as i64,
    };
    let lengths = |rng: &mut Rng| {
        let n = rng.below(6);
        if rng.below(2) == 0 && n > 0 && dim < 1 << 20 {
            rng.lengths(dim, n).into_iter().map(|l| l as i64).collect()
        } else {
            (0..n).map(|_| length(rng)).collect::<Vec<i64>>()
        }
    };
    let int_type = [
        ElementType::Int8,
        ElementType::Uint16,
        ElementType::Int32,
        ElementType::Int64,
        ElementType::Uint64,
    ];
    let param = |rng: &mut Rng, values: Vec<i64>, scalar: bool| {
        let t = int_type[rng.below(int_type.len())];
        let dims = if scalar { vec![] } else { vec![values.len()] };
        ParamTensor::new(
            t,
            dims,
            ParamValues::Int(values.into_iter().map(i128::from).collect()),
        )
        .unwrap()
    };
    match rng.below(5) {
        0 | 1 => {
            let opset = [0, 1, 2, 11, 13, 18, 24][rng.below(7)];
            let outputs = rng.below(6);
            let mut op = OnnxSplit::new(opset, outputs).axis(axis);
            match rng.below(4) {
                0 => op = op.split_attribute(&lengths(rng)),
                1 => {
                    op = {
                        let l = lengths(rng);
                        op.split_input(param(rng, l, false))
                    }
                }
                2 => op = op.num_outputs(length(rng)),
                _ => {}
            }
            op.into()
        }
        2 => {
            let mut op = OnnxSplitToSequence::new([10, 11, 24][rng.below(3)])
                .axis(axis)
                .keepdims(rng.below(2) as i64);
            match rng.below(3) {
                0 => {
                    op = {
                        let l = vec![length(rng)];
                        op.split(param(rng, l, true))
                    }
                }
                1 => {
                    op = {
                        let l = lengths(rng);
                        op.split(param(rng, l, false))
                    }
                }
                _ => {}
            }
            op.into()
        }
        3 => {
            let scalar = rng.below(2) == 0;
            let axis = param(rng, vec![axis], scalar);
            let l = lengths(rng);
            OpenVinoVariadicSplit::new(axis, param(rng, l, false)).into()
        }
        _ => {
            let axis = param(rng, vec![axis], true);
            OpenVinoSplit::new(axis, length(rng)).into()
        }
    }
}

fn shape(rng: &mut Rng) -> Vec<usize> {
    let rank = rng.below(7);
    (0..rank)
        .map(|_| match rng.below(40) {
            0 => 1 << 33,
            1 => usize::MAX / 3,
            2 | 3 => 0,
            _ => 1 + rng.below(7),
        })
        .collect()
}

const FUZZ_CASES: u32 = 10_000;

#[test]
fn ten_thousand_random_operators_give_typed_errors_or_agreeing_paths() {
    let gpu = gpu("ten_thousand_random_operators_give_typed_errors_or_agreeing_paths");
    let mut rng = Rng::new(0xF00D);
    let (mut resolved, mut executed, mut rejected) = (0, 0, 0);
    for case in 0..FUZZ_CASES {
        let shape = shape(&mut rng);
        let op = operator(&mut rng, &shape);
        let element_type = ElementType::ALL[rng.below(ElementType::ALL.len())];
        let split = match op.resolve(&shape) {
            Ok(split) => split,
            Err(e) => {
                // Every rejection is a typed error with a message.
                assert!(!e.to_string().is_empty());
                rejected += 1;
                continue;
            }
        };
        resolved += 1;
        let gather = PlanOptions::default().strategy(Strategy::Gather);
        let plan = SplitPlan::new(&split, element_type, &PlanLimits::LAVAPIPE, &gather);
        let count: u128 = shape.iter().map(|&d| d as u128).product();
        if count > 4096 || element_type == ElementType::String {
            continue;
        }
        let plan = plan.unwrap_or_else(|e| panic!("case {case}: small {shape:?} must plan: {e}"));
        let per = PlanLimits::LAVAPIPE.destinations_per_dispatch() as usize;
        assert!(
            plan.dispatch_count() <= split.output_count().div_ceil(per),
            "case {case}"
        );
        let input = random_tensor(&mut rng, element_type, &shape);
        let expected = input.split(&split).unwrap();
        if let Some(gpu) = gpu {
            let actual = common::round_trip(gpu).run(&split, &input).unwrap();
            assert_eq!(
                expected, actual,
                "case {case}: {op:?} on {shape:?} {element_type}"
            );
            executed += 1;
        }
    }
    println!(
        "fuzz: {FUZZ_CASES} cases, {rejected} typed errors, {resolved} resolved, {executed} executed on GPU and host"
    );
    assert!(
        rejected > 1000 && resolved > 1000 && (gpu.is_none() || executed > 500),
        "{rejected} {resolved} {executed}"
    );
}

#[test]
fn limits_past_two_to_the_32_are_errors_or_multi_pass_plans() {
    // 2^33 bytes: no buffer on lavapipe can hold it.
    let split = ResolvedSplit::new(&[1 << 33], 0, vec![1 << 32, 1 << 32], true).unwrap();
    let arena = PlanOptions::default()
        .strategy(Strategy::Gather)
        .placement(Placement::Arena);
    let e = SplitPlan::new(&split, ElementType::Uint8, &PlanLimits::LAVAPIPE, &arena).unwrap_err();
    assert!(
        matches!(e, PlanError::TooLargeForDevice { what: "input", .. }),
        "{e}"
    );
    // On a device that could hold it, the plan cuts 2^35 words into windows
    // whose bit offsets all fit u32: no wrap-around.
    let huge = PlanLimits {
        max_buffer_size: 1 << 40,
        ..PlanLimits::LAVAPIPE
    };
    let split = ResolvedSplit::new(&[3, 1 << 31], 1, vec![(1 << 31) - 3, 3], true).unwrap();
    let plan = SplitPlan::new(&split, ElementType::Float, &huge, &arena).unwrap();
    assert!(plan.dispatch_count() > 1);
    for pass in plan.passes() {
        assert!(pass.src_window_bytes.end - pass.src_window_bytes.start <= 128 << 20);
        let dst = &pass.dst_windows[0].bytes;
        assert!(dst.end - dst.start <= 128 << 20);
        assert!(
            dst.end <= plan.arena_bytes()
                && pass.src_window_bytes.end <= plan.input_binding_bytes()
        );
    }
    // Arena past max_buffer_size: 10,000 outputs padded to 256 bytes.
    let many = OnnxSplitToSequence::new(11).resolve(&[10_000]).unwrap();
    let small = PlanLimits {
        max_buffer_size: 1 << 20,
        ..PlanLimits::WEBGPU_DEFAULT
    };
    let e = SplitPlan::new(&many, ElementType::Uint8, &small, &arena).unwrap_err();
    assert!(
        matches!(e, PlanError::TooLargeForDevice { what: "arena", .. }),
        "{e}"
    );
    // More outputs than the planner takes, and shapes that overflow.
    let e = OnnxSplitToSequence::new(11)
        .resolve(&[1 << 30])
        .unwrap_err();
    assert!(matches!(e, ResolveError::TooManyOutputs { .. }));
    let e = OnnxSplit::new(13, 1).resolve(&[usize::MAX, 2]).unwrap_err();
    assert!(matches!(e, ResolveError::ShapeOverflow { .. }));
}

/// A random small split problem.
fn problem(rng: &mut Rng) -> (HostTensor, ResolvedSplit) {
    let types = [
        ElementType::Int4,
        ElementType::Uint8,
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
    ];
    let element_type = types[rng.below(types.len())];
    let rank = 1 + rng.below(3);
    let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below(40)).collect();
    let axis = rng.below(rank);
    let count = 1 + rng.below(4);
    let lengths = rng.lengths(shape[axis], count);
    let input = random_tensor(rng, element_type, &shape);
    (
        input,
        ResolvedSplit::new(&shape, axis, lengths, true).unwrap(),
    )
}

#[test]
fn eight_threads_share_one_splitter_for_500_splits_each() {
    let Some(gpu) = gpu("eight_threads_share_one_splitter_for_500_splits_each") else {
        return;
    };
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let done = &done;
            s.spawn(move || {
                let mut rng = Rng::new(1000 + t);
                for i in 0..500 {
                    let (input, split) = problem(&mut rng);
                    let actual = common::round_trip(gpu).run(&split, &input).unwrap();
                    assert_eq!(input.split(&split).unwrap(), actual, "thread {t} split {i}");
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(done.into_inner(), 4000);
}

#[test]
fn ten_thousand_consecutive_splits_keep_memory_flat() {
    let Some(gpu) = gpu("ten_thousand_consecutive_splits_keep_memory_flat") else {
        return;
    };
    let mut rng = Rng::new(77);
    // Also through encode with caller-owned buffers, which fills the cache.
    let run = |rng: &mut Rng| {
        let (input, split) = problem(rng);
        let actual = common::round_trip(gpu).run(&split, &input).unwrap();
        assert_eq!(input.split(&split).unwrap(), actual);
        let plan = gpu.plan(&split, input.element_type()).unwrap();
        let buffer = common::round_trip(gpu)
            .create_input(input.as_bytes().unwrap())
            .unwrap();
        let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
        let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder, &plan, BufferRegion::whole(&buffer), &regions)
            .unwrap();
        gpu.queue().submit([encoder.finish()]);
    };
    for _ in 0..1000 {
        run(&mut rng);
    }
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let start = resident_bytes();
    for _ in 0..10_000 {
        run(&mut rng);
    }
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let end = resident_bytes();
    println!(
        "long run: resident {} MiB after warm-up, {} MiB after 10,000 more splits",
        start >> 20,
        end >> 20
    );
    // Bounded by the encode cache's caps, not by the number of splits.
    assert!(
        end < start + (64 << 20),
        "resident memory grew from {start} to {end} bytes"
    );
}

#[test]
fn a_destroyed_device_gives_typed_errors_promptly() {
    if gpu("a_destroyed_device_gives_typed_errors_promptly").is_none() {
        return;
    }
    let ctx = GpuContext::new_default().unwrap();
    let splitter = ctx.splitter().unwrap();
    let input = HostTensor::from_slice(&[4, 4], &[1.0f32; 16]).unwrap();
    let op: Operator = OnnxSplit::new(13, 2).axis(1).into();
    assert_eq!(
        common::round_trip(&splitter)
            .split(&op, &input)
            .unwrap()
            .len(),
        2
    );
    ctx.device.destroy();
    let started = std::time::Instant::now();
    let e = common::round_trip(&splitter)
        .split(&op, &input)
        .unwrap_err();
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    // Creating resources may still succeed after destroy (wgpu allows it);
    // nothing panics, and any work fails with a typed error.
    let split = op.resolve(&[4, 4]).unwrap();
    let plan = splitter.plan(&split, ElementType::Float).unwrap();
    let _ = common::round_trip(&splitter)
        .create_destinations(&plan)
        .unwrap()
        .remove(0);
    let _ = common::round_trip(&splitter).create_input(&[0; 64]);
    let _ = wgpu_split::gpu::GpuSplitter::new(&ctx.device, &ctx.queue);
    let e = pollster::block_on(common::round_trip(&splitter).split_async(&op, &input)).unwrap_err();
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// Resolution and planning never panic on arbitrary attribute values and
    /// shapes: each gives a typed error or a plan.
    #[test]
    fn resolution_and_planning_never_panic(
        opset in -2i64..30, outputs in 0usize..8, axis in any::<i64>(),
        lengths in prop::collection::vec(any::<i64>(), 0..6), n in any::<i64>(),
        dims in prop::collection::vec(any::<usize>(), 0..5), t in 0..ElementType::ALL.len(),
    ) {
        let ops: [Operator; 5] = [
            OnnxSplit::new(opset, outputs).axis(axis).split_attribute(&lengths).into(),
            OnnxSplit::new(opset, outputs).axis(axis).num_outputs(n).into(),
            OnnxSplitToSequence::new(opset).axis(axis).split(ParamTensor::int64_scalar(n)).into(),
            OpenVinoSplit::new(ParamTensor::int64_scalar(axis), n).into(),
            OpenVinoVariadicSplit::new(ParamTensor::int64_scalar(axis), ParamTensor::int64_1d(&lengths)).into(),
        ];
        for op in ops {
            if let Ok(split) = op.resolve(&dims) {
                for outputs in [Placement::Separate, Placement::Arena] {
                    let options = PlanOptions::default().placement(outputs);
                    let _ = SplitPlan::new(&split, ElementType::ALL[t], &PlanLimits::LAVAPIPE, &options);
                }
            }
        }
    }
}
