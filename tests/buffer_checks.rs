//! The checks of a runtime's buffers that need wgpu: buffers of another
//! device (for copies and dispatches), mapped and destroyed buffers, each a
//! typed error before anything is recorded; and no second instance created
//! behind the runtime's back. The numeric region checks are the planner's
//! (`tests/plan.rs`, `tests/destinations.rs`), the caches `tests/caches.rs`,
//! the memory of dropped buffers `tests/memory.rs`.

mod common;

use common::{gpu, refused, wait_idle};
use wgpu_split::error::DeviceError;
use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter};
use wgpu_split::plan::BufferRole;
use wgpu_split::plan::{PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, Error, ResolvedSplit};

fn copy_plan(gpu: &GpuSplitter) -> SplitPlan {
    let split = ResolvedSplit::new(&[4, 8], 1, vec![4, 4], true).unwrap();
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    gpu.plan_with(&split, ElementType::Float, &copy).unwrap()
}

#[test]
fn buffers_of_another_device_are_typed_errors_for_copies_and_dispatches() {
    let Some(gpu) = gpu("buffers_of_another_device_are_typed_errors_for_copies_and_dispatches")
    else {
        return;
    };
    // A second device of the same adapter and instance: wgpu tells their
    // buffers apart.
    let ctx = GpuContext::new_default().unwrap();
    let (device, queue) =
        pollster::block_on(ctx.adapter.request_device(&Default::default())).unwrap();
    let other = GpuSplitter::new(&device, &queue).unwrap();
    // Copies only (no bind group checks them): the destinations are foreign.
    let plan = copy_plan(gpu);
    assert_eq!(plan.dispatch_count(), 0, "copies only: no bind group");
    let input = common::round_trip(gpu).create_input(&[1; 128]).unwrap();
    let foreign = common::round_trip(&other)
        .create_destinations(&plan)
        .unwrap();
    let regions: Vec<BufferRegion> = foreign.iter().map(BufferRegion::whole).collect();
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, BufferRegion::whole(&input), &regions)
            .unwrap_err()
    });
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    // Dispatches only: the input is foreign.
    let split = ResolvedSplit::new(&[4, 8], 1, vec![3, 5], true).unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = gpu.plan_with(&split, ElementType::Float, &gather).unwrap();
    assert_eq!(plan.copy_count(), 0, "dispatches only");
    let foreign = common::round_trip(&other).create_input(&[0; 128]).unwrap();
    let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, BufferRegion::whole(&foreign), &regions)
            .unwrap_err()
    });
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
}

#[test]
fn a_mapped_buffer_is_a_typed_error_before_recording() {
    let Some(gpu) = gpu("a_mapped_buffer_is_a_typed_error_before_recording") else {
        return;
    };
    for plan in [copy_plan(gpu), {
        let split = ResolvedSplit::new(&[4, 8], 1, vec![3, 5], true).unwrap();
        gpu.plan(&split, ElementType::Float).unwrap()
    }] {
        let input = common::round_trip(gpu).create_input(&[1; 128]).unwrap();
        let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
        // A destination still mapped since its creation.
        let mapped = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 128,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: true,
        });
        let regions = [
            BufferRegion::whole(&outputs[0]),
            BufferRegion::whole(&mapped),
        ];
        let e = refused(gpu, |enc| {
            gpu.encode(enc, &plan, BufferRegion::whole(&input), &regions)
                .unwrap_err()
        });
        assert_eq!(
            e,
            Error::Device(DeviceError::BufferMapped {
                which: BufferRole::Output(1)
            })
        );
        mapped.unmap();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)
            .unwrap();
        gpu.queue().submit([encoder.finish()]);
    }
}

#[test]
fn a_buffer_destroyed_after_an_encode_is_a_typed_error_at_the_next() {
    let Some(gpu) = gpu("a_buffer_destroyed_after_an_encode_is_a_typed_error_at_the_next") else {
        return;
    };
    let split = ResolvedSplit::new(&[4, 8], 1, vec![3, 5], true).unwrap();
    for plan in [
        copy_plan(gpu),
        gpu.plan(&split, ElementType::Float).unwrap(),
    ] {
        let input = common::round_trip(gpu).create_input(&[1; 128]).unwrap();
        let outputs = common::round_trip(gpu).create_destinations(&plan).unwrap();
        let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
        // A first encode succeeds (and caches its table).
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)
            .unwrap();
        gpu.queue().submit([encoder.finish()]);
        wait_idle(gpu);
        // The same encode after the runtime destroyed an output: whatever
        // was cached, a typed error, and nothing recorded.
        outputs[1].destroy();
        let e = refused(gpu, |enc| {
            gpu.encode(enc, &plan, BufferRegion::whole(&input), &regions)
                .unwrap_err()
        });
        assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
        // And the same mistake with a fresh plan and fresh buffers.
        let fresh = common::round_trip(gpu).create_destinations(&plan).unwrap();
        fresh[0].destroy();
        let regions: Vec<BufferRegion> = fresh.iter().map(BufferRegion::whole).collect();
        let e = refused(gpu, |enc| {
            gpu.encode(enc, &plan, BufferRegion::whole(&input), &regions)
                .unwrap_err()
        });
        assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    }
}

#[test]
fn default_contexts_share_one_instance_so_foreign_buffers_never_alias() {
    if gpu("default_contexts_share_one_instance_so_foreign_buffers_never_alias").is_none() {
        return;
    }
    let (a, b) = (
        GpuContext::new_default().unwrap(),
        GpuContext::new_default().unwrap(),
    );
    assert_eq!(
        a.instance, b.instance,
        "one instance behind every default context"
    );
    // A buffer of b's device with a's splitter names a buffer of another
    // device of the same instance: a typed error, never another tensor.
    let splitter = a.splitter().unwrap();
    let split = ResolvedSplit::new(&[4, 8], 1, vec![3, 5], true).unwrap();
    let plan = splitter.plan(&split, ElementType::Float).unwrap();
    let ours = common::round_trip(&splitter)
        .create_destinations(&plan)
        .unwrap();
    let other = b.splitter().unwrap();
    let theirs = common::round_trip(&other).create_input(&[1; 128]).unwrap();
    let regions: Vec<BufferRegion> = ours.iter().map(BufferRegion::whole).collect();
    let mut encoder = a.device.create_command_encoder(&Default::default());
    let e = splitter
        .encode(&mut encoder, &plan, BufferRegion::whole(&theirs), &regions)
        .unwrap_err();
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
}

#[test]
fn usable_mapped_and_destroyed_buffers_are_told_apart() {
    // The probe reads wgpu's map-range answers; this pins all three.
    let Some(gpu) = gpu("usable_mapped_and_destroyed_buffers_are_told_apart") else {
        return;
    };
    let split = ResolvedSplit::new(&[4, 8], 1, vec![3, 5], true).unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = gpu.plan_with(&split, ElementType::Float, &gather).unwrap();
    let input = common::round_trip(gpu).create_input(&[1; 128]).unwrap();
    let make = |mapped| {
        gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 128,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: mapped,
        })
    };
    let (usable, mapped, destroyed) = (make(false), make(true), make(false));
    destroyed.destroy();
    let encode = |b: &wgpu::Buffer| {
        let regions = [
            BufferRegion::new(&usable, 0, 64),
            BufferRegion::new(b, 0, 128),
        ];
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        gpu.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)
    };
    let spare = make(false);
    assert_eq!(encode(&spare), Ok(()));
    assert_eq!(
        encode(&mapped),
        Err(Error::Device(DeviceError::BufferMapped {
            which: BufferRole::Output(1)
        }))
    );
    // A view the caller still holds: still mapped.
    let view = mapped.slice(0..16).get_mapped_range_mut().unwrap();
    assert_eq!(
        encode(&mapped),
        Err(Error::Device(DeviceError::BufferMapped {
            which: BufferRole::Output(1)
        }))
    );
    drop(view);
    let e = encode(&destroyed).unwrap_err();
    assert!(
        matches!(&e, Error::Device(DeviceError::Gpu { detail }) if detail.contains("destroyed")),
        "{e}"
    );
}

#[test]
fn invalid_buffers_and_buffers_of_a_lost_device_are_device_errors() {
    let Some(gpu) = gpu("invalid_buffers_and_buffers_of_a_lost_device_are_device_errors") else {
        return;
    };
    // An invalid buffer (its creation failed validation) and a buffer made
    // after the device was lost: neither is mapped; each is an
    // Error::Device(Gpu) naming the buffer and wgpu's reason. (At 1aaeec9
    // both were reported as "buffer is mapped".)
    let split = ResolvedSplit::new(&[4, 8], 1, vec![3, 5], true).unwrap();
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let plan = gpu.plan_with(&split, ElementType::Float, &gather).unwrap();
    let input = common::round_trip(gpu).create_input(&[1; 128]).unwrap();
    let usable = common::round_trip(gpu).create_destinations(&plan).unwrap();
    let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
    let invalid = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("invalid"),
        size: 128,
        // MAP_READ with STORAGE is invalid without MAPPABLE_PRIMARY_BUFFERS.
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    assert!(
        pollster::block_on(scope.pop()).is_some(),
        "the creation failed"
    );
    let regions = [
        BufferRegion::whole(&usable[0]),
        BufferRegion::new(&invalid, 0, 128),
    ];
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let e = gpu
        .encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)
        .unwrap_err();
    assert!(
        matches!(&e, Error::Device(DeviceError::Gpu { detail }) if detail.contains("output 1")),
        "{e}"
    );
    // A device of its own, lost, then a buffer made on it.
    let ctx = pollster::block_on(GpuContext::request_default()).unwrap();
    let splitter = ctx.splitter().unwrap();
    let plan = splitter
        .plan_with(&split, ElementType::Float, &gather)
        .unwrap();
    let input = common::round_trip(&splitter)
        .create_input(&[1; 128])
        .unwrap();
    ctx.device.destroy();
    let after = |label| {
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: 128,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (a, b) = (after("a"), after("b"));
    let regions = [BufferRegion::new(&a, 0, 64), BufferRegion::new(&b, 0, 128)];
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let e = splitter
        .encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)
        .unwrap_err();
    assert!(matches!(&e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    assert!(
        !matches!(&e, Error::Device(DeviceError::BufferMapped { .. })),
        "{e}"
    );
}

/// The permuted moves probe their buffers as a split does: a mapped,
/// destroyed or foreign buffer (a kept piece's copy command included) is
/// the same typed error, before anything is recorded, for
/// `encode_permuted`, `prepare_permuted` and `encode_permuted_concat`.
#[test]
fn permuted_moves_refuse_mapped_destroyed_and_foreign_buffers_before_recording() {
    let Some(gpu) =
        gpu("permuted_moves_refuse_mapped_destroyed_and_foreign_buffers_before_recording")
    else {
        return;
    };
    use wgpu_split::{PermutedConcat, PermutedSplit, PieceMove};
    // YOLOv8's distribution head in small: piece 0 transposed (a
    // dispatch), piece 1 kept (one copy command).
    let split = PermutedSplit::new(
        ResolvedSplit::new(&[1, 12, 40], 1, vec![8, 4], true).unwrap(),
        vec![
            PieceMove::new(vec![1, 2, 4, 40], vec![0, 2, 1, 3]),
            PieceMove::keep(&[1, 4, 40]),
        ],
    )
    .unwrap();
    let plan = gpu.plan(&split, ElementType::Float).unwrap();
    assert!(plan.copies_output(1), "the kept piece is a copy command");
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let make = |device: &wgpu::Device, size: u64, mapped: bool| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage,
            mapped_at_creation: mapped,
        })
    };
    let device = gpu.device();
    let input = make(device, plan.input_bytes(), false);
    let sizes = [plan.output_region_bytes(0), plan.output_region_bytes(1)];
    let outputs = [make(device, sizes[0], false), make(device, sizes[1], false)];
    let ctx = GpuContext::new_default().unwrap();
    let (other, _) = pollster::block_on(ctx.adapter.request_device(&Default::default())).unwrap();
    let mapped = [make(device, sizes[0], true), make(device, sizes[1], true)];
    let destroyed = [make(device, sizes[0], false), make(device, sizes[1], false)];
    destroyed.iter().for_each(wgpu::Buffer::destroy);
    let foreign = make(&other, sizes[1], false);
    fn with<'a>(
        outputs: &'a [wgpu::Buffer],
        i: usize,
        b: &'a wgpu::Buffer,
    ) -> Vec<BufferRegion<'a>> {
        let mut regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
        regions[i] = BufferRegion::whole(b);
        regions
    }
    let encode = |input: &wgpu::Buffer, regions: &[BufferRegion]| {
        refused(gpu, |enc| {
            gpu.encode(enc, &plan, BufferRegion::whole(input), regions)
                .unwrap_err()
        })
    };
    for i in 0..2 {
        assert_eq!(
            encode(&input, &with(&outputs, i, &mapped[i])),
            Error::Device(DeviceError::BufferMapped {
                which: BufferRole::Output(i)
            }),
            "output {i} mapped"
        );
        let e = encode(&input, &with(&outputs, i, &destroyed[i]));
        assert!(
            matches!(&e, Error::Device(DeviceError::Gpu { detail }) if detail.contains("destroyed")),
            "output {i} destroyed: {e}"
        );
    }
    // The kept piece's copy into another device's buffer.
    let e = encode(&input, &with(&outputs, 1, &foreign));
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    let spare_input = make(device, plan.input_bytes(), false);
    spare_input.destroy();
    let e = encode(&spare_input, &with(&outputs, 0, &outputs[0]));
    assert!(matches!(e, Error::Device(DeviceError::Gpu { .. })), "{e}");
    // Prepared for the caller's pass: the same errors.
    let e = gpu
        .prepare(
            &plan,
            BufferRegion::whole(&input),
            &with(&outputs, 0, &mapped[0]),
        )
        .unwrap_err();
    assert_eq!(
        e,
        Error::Device(DeviceError::BufferMapped {
            which: BufferRole::Output(0)
        })
    );
    // The usable buffers still encode.
    let mut encoder = device.create_command_encoder(&Default::default());
    gpu.encode(
        &mut encoder,
        &plan,
        BufferRegion::whole(&input),
        &with(&outputs, 0, &outputs[0]),
    )
    .unwrap();
    gpu.queue().submit([encoder.finish()]);
    // A permuted concat: its output mapped, an input destroyed.
    let merge = PermutedConcat::merge_heads(&[[1, 2, 4, 4], [1, 2, 4, 4]]).unwrap();
    let plan = gpu.plan(&merge, ElementType::Float).unwrap();
    let heads = [make(device, 128, false), make(device, 128, false)];
    let regions: Vec<BufferRegion> = heads.iter().map(BufferRegion::whole).collect();
    let out = make(device, plan.output_region_bytes(), true);
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, &regions, BufferRegion::whole(&out))
            .unwrap_err()
    });
    assert_eq!(
        e,
        Error::Device(DeviceError::BufferMapped {
            which: BufferRole::ConcatOutput
        })
    );
    out.unmap();
    heads[1].destroy();
    let e = refused(gpu, |enc| {
        gpu.encode(enc, &plan, &regions, BufferRegion::whole(&out))
            .unwrap_err()
    });
    assert!(
        matches!(&e, Error::Device(DeviceError::Gpu { detail }) if detail.contains("input 1")),
        "{e}"
    );
    mapped.iter().for_each(wgpu::Buffer::unmap);
}
