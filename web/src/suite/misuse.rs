//! What a runtime gets wrong, on the web: every blocking form a typed
//! error naming its async twin (nothing hangs or panics for want of a
//! thread or a clock), the regions' typed errors before anything is
//! recorded (the caller's encoder still clean), a mapped buffer, a
//! destroyed buffer and a destroyed device; the splitter's start (no
//! calibration on the web) and the async calibration on the browser's
//! timestamps.

use wgpu_split::error::PlanError;
use wgpu_split::error::{DeviceError, EncodeError};
use wgpu_split::gpu::{
    BufferRegion, Calibration, GpuContext, GpuSplitter, ModelOrigin, RoundTrip, Timing,
};
use wgpu_split::plan::Strategy;
use wgpu_split::{
    ConcatOperator, ElementType, Error, HostTensor, OnnxConcat, OnnxSplit, Operator,
    PermutedConcat, PermutedSplit, ResolvedConcat, ResolvedSplit,
};

use super::{Report, why};
use crate::device::{Gpu, buffer_with};
use crate::ensure;
use crate::rng::Rng;

/// Runs every check of misuse.
pub async fn run(gpu: &Gpu, report: &mut Report) {
    report.check(
        "the blocking forms name their async twins",
        blocking_forms(gpu),
    );
    report.check(
        "GpuSplitter::new plans with its class model on the web",
        match gpu.splitter.model_origin() {
            ModelOrigin::Class => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    report.check(
        "split regions: typed errors, the encoder clean",
        split_regions(gpu).await,
    );
    report.check(
        "concat regions: typed errors, the encoder clean",
        concat_regions(gpu).await,
    );
    report.check(
        "permuted regions: typed errors, the encoder clean",
        permuted_regions(gpu).await,
    );
    report.check(
        "a mapped buffer is refused before recording",
        mapped(gpu).await,
    );
    report.check(
        "a destroyed buffer: encode cannot tell on the web, the browser's error comes at submit",
        destroyed_buffer(gpu).await,
    );
    report.check(
        "strings and bad lengths: typed errors",
        plan_errors(gpu).await,
    );
    report.check(
        "a destroyed device: typed errors, no hang",
        destroyed_device().await,
    );
    report.check(
        "Calibration::measure_async on the browser's timestamps plans exact splits",
        calibration(gpu).await,
    );
}

/// Each blocking form, called on the web, returns at once with
/// `BlocksOnTheWeb` naming itself and its async twin.
fn blocking_forms(gpu: &Gpu) -> Result<(), String> {
    let round_trip = RoundTrip::new(&gpu.splitter);
    let input = HostTensor::from_slice(&[2, 4], &[0f32; 8]).map_err(why)?;
    let op: Operator = OnnxSplit::new(13, 2).axis(1).into();
    let split = op.resolve(input.shape()).map_err(why)?;
    let plan = gpu.splitter.plan(&split, ElementType::Float).map_err(why)?;
    let concat_op: ConcatOperator = OnnxConcat::new(13).axis(0).into();
    let concat = ResolvedConcat::new(&[[2, 4], [2, 4]], 0).map_err(why)?;
    let concat_plan = gpu
        .splitter
        .plan(&concat, ElementType::Float)
        .map_err(why)?;
    let refs = [&input, &input];
    let calls: Vec<(&str, &str, Option<Error>)> = vec![
        (
            "GpuContext::new_default",
            "GpuContext::request_default",
            GpuContext::new_default().err(),
        ),
        (
            "RoundTrip::split",
            "RoundTrip::split_async",
            round_trip.split(&op, &input).err(),
        ),
        (
            "RoundTrip::run",
            "RoundTrip::run_async",
            round_trip.run(&split, &input).err(),
        ),
        (
            "RoundTrip::run_plan",
            "RoundTrip::run_plan_async",
            round_trip.run_plan(&plan, &input).err(),
        ),
        (
            "RoundTrip::concat",
            "RoundTrip::concat_async",
            round_trip.concat(&concat_op, &refs).err(),
        ),
        (
            "RoundTrip::run",
            "RoundTrip::run_async",
            round_trip.run(&concat, &refs).err(),
        ),
        (
            "RoundTrip::run_plan",
            "RoundTrip::run_plan_async",
            round_trip.run_plan(&concat_plan, &refs).err(),
        ),
        (
            "Calibration::measure",
            "Calibration::measure_async",
            Calibration::measure(&gpu.splitter).err(),
        ),
    ];
    for (name, twin, error) in calls {
        match error {
            Some(Error::Device(DeviceError::BlocksOnTheWeb { call, instead })) => {
                ensure!(
                    call == name && instead == twin,
                    "{name}: named {call} and {instead}"
                );
            }
            other => return Err(format!("{name}: {other:?}")),
        }
    }
    Ok(())
}

/// The validation errors of what the caller submits, awaited.
async fn submit_scoped(gpu: &Gpu, encoder: wgpu::CommandEncoder) -> Option<wgpu::Error> {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    gpu.queue.submit([encoder.finish()]);
    scope.pop().await
}

/// `result` is the encode error `matches` accepts.
fn refused(
    what: &str,
    result: wgpu_split::Result<()>,
    matches: fn(&EncodeError) -> bool,
) -> Result<(), String> {
    match result {
        Err(Error::Encode(e)) if matches(&e) => Ok(()),
        other => Err(format!("{what}: {other:?}")),
    }
}

async fn split_regions(gpu: &Gpu) -> Result<(), String> {
    let (device, splitter) = (&gpu.device, &gpu.splitter);
    let split = ResolvedSplit::new(&[4, 10], 1, vec![3, 7], true).map_err(why)?;
    let plan = splitter.plan(&split, ElementType::Float16).map_err(why)?;
    let sizes: Vec<u64> = plan.outputs().iter().map(|o| o.region_bytes).collect();
    let storage = wgpu::BufferUsages::STORAGE;
    let input = buffer_with(device, &[1; 80], storage);
    let page = buffer_with(device, &[0; 256], storage);
    let mut encoder = device.create_command_encoder(&Default::default());
    let input_region = BufferRegion::whole(&input);
    let good = [
        BufferRegion::new(&page, 0, sizes[0]),
        BufferRegion::new(&page, 128, sizes[1]),
    ];
    let small = [BufferRegion::new(&page, 0, sizes[0] - 4), good[1]];
    refused(
        "too small",
        splitter.encode(&mut encoder, &plan, input_region, &small),
        |e| matches!(e, EncodeError::BufferTooSmall { .. }),
    )?;
    let misaligned = [BufferRegion::new(&page, 2, sizes[0]), good[1]];
    refused(
        "misaligned",
        splitter.encode(&mut encoder, &plan, input_region, &misaligned),
        |e| matches!(e, EncodeError::MisalignedOffset { .. }),
    )?;
    let overlapping = [good[0], BufferRegion::new(&page, 4, sizes[1])];
    refused(
        "overlapping",
        splitter.encode(&mut encoder, &plan, input_region, &overlapping),
        |e| matches!(e, EncodeError::OverlappingRegions { .. }),
    )?;
    refused(
        "one region",
        splitter.encode(&mut encoder, &plan, input_region, &good[..1]),
        |e| matches!(e, EncodeError::RegionCount { .. }),
    )?;
    let outside = [good[0], BufferRegion::new(&page, 240, sizes[1])];
    refused(
        "outside",
        splitter.encode(&mut encoder, &plan, input_region, &outside),
        |e| matches!(e, EncodeError::RegionOutsideBuffer { .. }),
    )?;
    let copy_only = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let unusable = [good[0], BufferRegion::new(&copy_only, 0, sizes[1])];
    refused(
        "no storage usage",
        splitter.encode(&mut encoder, &plan, input_region, &unusable),
        |e| matches!(e, EncodeError::MissingUsage { .. }),
    )?;
    ensure!(
        submit_scoped(gpu, encoder).await.is_none(),
        "the refused encodes left the encoder invalid"
    );
    Ok(())
}

async fn concat_regions(gpu: &Gpu) -> Result<(), String> {
    let (device, splitter) = (&gpu.device, &gpu.splitter);
    let concat = ResolvedConcat::new(&[[2, 5], [2, 3]], 1).map_err(why)?;
    let plan = splitter.plan(&concat, ElementType::Int8).map_err(why)?;
    let needs = plan.requirements();
    let storage = wgpu::BufferUsages::STORAGE;
    let inputs = buffer_with(device, &[7; 64], storage);
    let output = buffer_with(device, &[0; 64], storage);
    let regions = [
        BufferRegion::new(&inputs, 0, 12),
        BufferRegion::new(&inputs, 32, 8),
    ];
    let out = BufferRegion::new(&output, 0, needs.output_region_bytes);
    let mut encoder = device.create_command_encoder(&Default::default());
    refused(
        "one input",
        splitter.encode(&mut encoder, &plan, &regions[..1], out),
        |e| matches!(e, EncodeError::RegionCount { .. }),
    )?;
    let small = BufferRegion::new(&output, 0, needs.output_region_bytes - 4);
    refused(
        "small output",
        splitter.encode(&mut encoder, &plan, &regions, small),
        |e| matches!(e, EncodeError::BufferTooSmall { .. }),
    )?;
    ensure!(
        submit_scoped(gpu, encoder).await.is_none(),
        "the refused encodes left the encoder invalid"
    );
    Ok(())
}

async fn permuted_regions(gpu: &Gpu) -> Result<(), String> {
    let (device, splitter) = (&gpu.device, &gpu.splitter);
    let heads = PermutedSplit::split_heads(&[1, 4, 2 * 2 * 4], &[8, 8], 4).map_err(why)?;
    let plan = splitter.plan(&heads, ElementType::Float).map_err(why)?;
    let storage = wgpu::BufferUsages::STORAGE;
    let input = buffer_with(device, &[3; 128], storage);
    let page = buffer_with(device, &[0; 512], storage);
    let size = plan.output_region_bytes(0);
    let mut encoder = device.create_command_encoder(&Default::default());
    let small = [
        BufferRegion::new(&page, 0, size - 4),
        BufferRegion::new(&page, 256, size),
    ];
    refused(
        "permuted split, small",
        splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &small),
        |e| matches!(e, EncodeError::BufferTooSmall { .. }),
    )?;
    let merge = PermutedConcat::merge_heads(&[[1, 2, 4, 4], [1, 2, 4, 4]]).map_err(why)?;
    let plan = splitter.plan(&merge, ElementType::Float).map_err(why)?;
    let inputs = [
        BufferRegion::new(&input, 0, 64),
        BufferRegion::new(&input, 64, 64),
    ];
    refused(
        "permuted concat, one input",
        splitter.encode(
            &mut encoder,
            &plan,
            &inputs[..1],
            BufferRegion::whole(&page),
        ),
        |e| matches!(e, EncodeError::RegionCount { .. }),
    )?;
    ensure!(
        submit_scoped(gpu, encoder).await.is_none(),
        "the refused encodes left the encoder invalid"
    );
    Ok(())
}

/// A destination still mapped (mapped at creation, never unmapped): the
/// split's, the concat's and the permuted split's encode refuse it, typed,
/// before recording.
async fn mapped(gpu: &Gpu) -> Result<(), String> {
    let (device, splitter) = (&gpu.device, &gpu.splitter);
    let split = ResolvedSplit::new(&[4, 8], 1, vec![4, 4], true).map_err(why)?;
    let plan = splitter.plan(&split, ElementType::Float).map_err(why)?;
    let input = buffer_with(device, &[1; 128], wgpu::BufferUsages::STORAGE);
    let mapped = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("still mapped"),
        size: 256,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: true,
    });
    let regions = [
        BufferRegion::new(&mapped, 0, 64),
        BufferRegion::new(&mapped, 128, 64),
    ];
    let mut encoder = device.create_command_encoder(&Default::default());
    match splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions) {
        Err(Error::Device(DeviceError::BufferMapped { .. })) => {}
        other => return Err(format!("split: {other:?}")),
    }
    let concat = ResolvedConcat::inverse_of(&split).ok_or("no concat")?;
    let plan = splitter.plan(&concat, ElementType::Float).map_err(why)?;
    let inputs = [
        BufferRegion::new(&input, 0, 64),
        BufferRegion::new(&input, 64, 64),
    ];
    match splitter.encode(
        &mut encoder,
        &plan,
        &inputs,
        BufferRegion::new(&mapped, 0, 128),
    ) {
        Err(Error::Device(DeviceError::BufferMapped { .. })) => {}
        other => return Err(format!("concat: {other:?}")),
    }
    let heads = PermutedSplit::split_heads(&[1, 2, 2 * 2 * 4], &[8, 8], 4).map_err(why)?;
    let plan = splitter.plan(&heads, ElementType::Float).map_err(why)?;
    let regions = [
        BufferRegion::new(&mapped, 0, 64),
        BufferRegion::new(&mapped, 128, 64),
    ];
    match splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions) {
        Err(Error::Device(DeviceError::BufferMapped { .. })) => {}
        other => return Err(format!("permuted split: {other:?}")),
    }
    ensure!(
        submit_scoped(gpu, encoder).await.is_none(),
        "the refused encodes left the encoder invalid"
    );
    mapped.unmap();
    Ok(())
}

/// WebGPU says nothing synchronous of a destroyed buffer (its
/// `getMappedRange` throws the same `OperationError` as an unmapped one's):
/// the encode records, and the browser's validation error comes at submit,
/// where the caller's error scope (or its uncaptured-error handler, which
/// on the web logs) hears it. Nothing panics.
async fn destroyed_buffer(gpu: &Gpu) -> Result<(), String> {
    let (device, splitter) = (&gpu.device, &gpu.splitter);
    let split = ResolvedSplit::new(&[4, 8], 1, vec![4, 4], true).map_err(why)?;
    let plan = splitter.plan(&split, ElementType::Float).map_err(why)?;
    let input = buffer_with(device, &[1; 128], wgpu::BufferUsages::STORAGE);
    let page = buffer_with(device, &[0; 256], wgpu::BufferUsages::STORAGE);
    input.destroy();
    let regions = [
        BufferRegion::new(&page, 0, 64),
        BufferRegion::new(&page, 128, 64),
    ];
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut encoder = device.create_command_encoder(&Default::default());
    let encoded = splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions);
    gpu.queue.submit([encoder.finish()]);
    let error = scope.pop().await;
    match (encoded, error) {
        (Ok(()), Some(_)) => Ok(()),
        (Err(Error::Device(_)), _) => Ok(()),
        (encoded, error) => Err(format!("encode {encoded:?}, then at submit {error:?}")),
    }
}

async fn plan_errors(gpu: &Gpu) -> Result<(), String> {
    let round_trip = RoundTrip::new(&gpu.splitter);
    let strings = HostTensor::from_strings(&[2], &["a", "b"]).map_err(why)?;
    let op: Operator = OnnxSplit::new(13, 2).axis(0).into();
    match round_trip.split_async(&op, &strings).await {
        Err(Error::Plan(PlanError::NotOnGpu { .. })) => {}
        other => return Err(format!("strings: {other:?}")),
    }
    let input = HostTensor::from_slice(&[2, 4], &[0f32; 8]).map_err(why)?;
    let op: Operator = OnnxSplit::new(13, 2)
        .axis(1)
        .split_input(wgpu_split::ParamTensor::int64_1d(&[1, 2]))
        .into();
    match round_trip.split_async(&op, &input).await {
        Err(Error::Resolve(_)) => Ok(()),
        other => Err(format!("lengths [1, 2] of 4: {other:?}")),
    }
}

/// A device destroyed under a splitter: the async round trip ends in a
/// typed device error (mapping fails), never hangs; a new splitter and
/// the encode return, typed or not, without panicking.
async fn destroyed_device() -> Result<(), String> {
    let lost = Gpu::new(wgpu::Limits::default(), wgpu::Features::empty()).await?;
    lost.device.destroy();
    let input = Rng::new(9).tensor(ElementType::Float, &[4, 6]);
    let op: Operator = OnnxSplit::new(13, 2).axis(1).into();
    match RoundTrip::new(&lost.splitter)
        .split_async(&op, &input)
        .await
    {
        Err(Error::Device(_)) => {}
        other => return Err(format!("the round trip on a destroyed device: {other:?}")),
    }
    let concat: ConcatOperator = OnnxConcat::new(13).axis(0).into();
    match RoundTrip::new(&lost.splitter)
        .concat_async(&concat, &[&input, &input])
        .await
    {
        Err(Error::Device(_)) => {}
        other => return Err(format!("the concat on a destroyed device: {other:?}")),
    }
    let _ = GpuSplitter::new(&lost.device, &lost.queue);
    Ok(())
}

/// The async calibration (the one the web has) on the browser's
/// timestamp queries, and a split planned with what it measured.
async fn calibration(gpu: &Gpu) -> Result<(), String> {
    if !gpu
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        return match Calibration::measure_async(&gpu.splitter).await {
            Err(Error::Device(DeviceError::NoTimer)) => Ok(()),
            other => Err(format!("no timestamp queries: {other:?}")),
        };
    }
    let calibration = Calibration::measure_async(&gpu.splitter)
        .await
        .map_err(why)?;
    ensure!(
        calibration.timing == Timing::Timestamps,
        "timed by {:?}",
        calibration.timing
    );
    let model = calibration.model;
    ensure!(
        model.copy_bytes_per_second.is_finite() && model.copy_bytes_per_second > 0.0,
        "{model:?}"
    );
    let splitter = GpuSplitter::new(&gpu.device, &gpu.queue)
        .map_err(why)?
        .with_strategy(Strategy::Auto(model));
    let input = Rng::new(3).tensor(ElementType::Float16, &[64, 100]);
    let split = ResolvedSplit::new(&[64, 100], 1, vec![30, 70], true).map_err(why)?;
    let got = RoundTrip::new(&splitter)
        .run_async(&split, &input)
        .await
        .map_err(why)?;
    ensure!(
        got == input.split(&split).map_err(why)?,
        "the calibrated plan's outputs differ"
    );
    Ok(())
}
