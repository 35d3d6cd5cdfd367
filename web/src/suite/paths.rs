//! Every public path a runtime takes on the web, beyond the moves' encode
//! and round trip: the default context (`GpuContext::request_default`, the
//! shared instance), every async form of the round trip, a split, concat,
//! permuted split and permuted concat prepared and recorded inside the
//! caller's own compute pass, the counts said before recording, and the
//! splitter's caches.

use wgpu_split::gpu::{BufferRegion, GpuContext, PreparedSplit, RoundTrip};
use wgpu_split::{
    ConcatOperator, ElementType, HostTensor, OnnxConcat, OnnxSplit, Operator, PermutedConcat,
    PermutedSplit, ResolvedConcat, ResolvedSplit,
};

use super::{Report, why};
use crate::device::{Gpu, buffer_with, read};
use crate::ensure;
use crate::rng::Rng;

/// Runs every check of the public paths.
pub async fn run(gpu: &Gpu, report: &mut Report) {
    report.check(
        "GpuContext::request_default and its splitter",
        default_context().await,
    );
    report.check("every async form of the round trip", async_forms(gpu).await);
    report.check(
        "a split prepared and recorded in the caller's pass",
        split_in_pass(gpu).await,
    );
    report.check(
        "a concat prepared and recorded in the caller's pass",
        concat_in_pass(gpu).await,
    );
    report.check(
        "permuted moves prepared and recorded in the caller's pass",
        permuted_in_pass(gpu).await,
    );
    report.check("the splitter's caches: warm_up, usage, clear", caches(gpu));
}

async fn default_context() -> Result<(), String> {
    let ctx = GpuContext::request_default().await.map_err(why)?;
    ensure!(!ctx.describe().is_empty(), "no adapter description");
    let splitter = ctx.splitter().map_err(why)?;
    let input = Rng::new(11).tensor(ElementType::Uint16, &[6, 10]);
    let op: Operator = OnnxSplit::new(13, 2).axis(1).into();
    let got = RoundTrip::new(&splitter)
        .split_async(&op, &input)
        .await
        .map_err(why)?;
    ensure!(
        got == op.split_on_host(&input).map_err(why)?,
        "the outputs differ from the host path's"
    );
    Ok(())
}

async fn async_forms(gpu: &Gpu) -> Result<(), String> {
    let round_trip = RoundTrip::new(&gpu.splitter);
    let mut rng = Rng::new(12);
    let t = ElementType::BFloat16;
    let input = rng.tensor(t, &[5, 12]);
    let split = ResolvedSplit::new(&[5, 12], 1, vec![5, 7], true).map_err(why)?;
    let want = input.split(&split).map_err(why)?;
    let got = round_trip.run_async(&split, &input).await.map_err(why)?;
    ensure!(got == want, "run_async of a split differs");
    let plan = gpu.splitter.plan(&split, t).map_err(why)?;
    let got = round_trip
        .run_plan_async(&plan, &input)
        .await
        .map_err(why)?;
    ensure!(got == want, "run_plan_async differs");
    let refs: Vec<&HostTensor> = want.iter().collect();
    let concat = ResolvedConcat::new(&split.output_shapes(), 1).map_err(why)?;
    let got = round_trip.run_async(&concat, &refs).await.map_err(why)?;
    ensure!(got == input, "run_async of a concat differs");
    let plan = gpu.splitter.plan(&concat, t).map_err(why)?;
    let got = round_trip.run_plan_async(&plan, &refs).await.map_err(why)?;
    ensure!(got == input, "run_plan_async of a concat differs");
    let op: ConcatOperator = OnnxConcat::new(13).axis(1).into();
    let got = round_trip.concat_async(&op, &refs).await.map_err(why)?;
    ensure!(got == input, "concat_async differs");
    // The permuted moves' round trips: heads out of a fused row and back.
    let x = rng.tensor(t, &[3, 5, 24]);
    let heads = PermutedSplit::split_heads(&[3, 5, 24], &[8, 16], 4).map_err(why)?;
    let want = x.split_permuted(&heads).map_err(why)?;
    let got = round_trip.run_async(&heads, &x).await.map_err(why)?;
    ensure!(got == want, "run_async of a permuted split differs");
    let refs: Vec<&HostTensor> = want.iter().collect();
    let shapes: Vec<&[usize]> = want.iter().map(|h| h.shape()).collect();
    let merge = PermutedConcat::merge_heads(&shapes).map_err(why)?;
    let plan = gpu.splitter.plan(&merge, t).map_err(why)?;
    let got = round_trip.run_plan_async(&plan, &refs).await.map_err(why)?;
    ensure!(got == x, "run_plan_async of a permuted concat differs");
    Ok(())
}

/// `prepared` recorded in a compute pass of the caller's own, and run.
fn record_in_pass(gpu: &Gpu, prepared: &PreparedSplit) {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("the caller's pass"),
            timestamp_writes: None,
        });
        prepared.record(&mut pass);
    }
    gpu.queue.submit([encoder.finish()]);
}

async fn split_in_pass(gpu: &Gpu) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let t = ElementType::Float16;
    let input = Rng::new(13).tensor(t, &[9, 30]);
    let split = ResolvedSplit::new(&[9, 30], 1, vec![10; 3], true).map_err(why)?;
    let plan = splitter
        .plan_with(
            &split,
            t,
            &wgpu_split::plan::PlanOptions::default().in_compute_pass(),
        )
        .map_err(why)?;
    ensure!(plan.copy_count() == 0, "a plan for a pass with copies");
    let source = buffer_with(
        device,
        input.as_bytes().map_err(why)?,
        wgpu::BufferUsages::STORAGE,
    );
    let outputs: Vec<wgpu::Buffer> = (0..plan.destination_count())
        .map(|i| {
            buffer_with(
                device,
                &vec![0; plan.destination_bytes(i) as usize],
                wgpu::BufferUsages::STORAGE,
            )
        })
        .collect();
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    let said = splitter
        .counts(&plan, BufferRegion::whole(&source), &regions)
        .map_err(why)?;
    let prepared = splitter
        .prepare(&plan, BufferRegion::whole(&source), &regions)
        .map_err(why)?;
    ensure!(
        prepared.counts() == said,
        "prepare counted {:?}, counts said {said:?}",
        prepared.counts()
    );
    record_in_pass(gpu, &prepared);
    for (o, want) in outputs.iter().zip(input.split(&split).map_err(why)?) {
        let got = read(device, queue, o).await?;
        let want = want.as_bytes().map_err(why)?;
        ensure!(
            &got[..want.len()] == want,
            "an output differs from the host path's"
        );
    }
    Ok(())
}

async fn concat_in_pass(gpu: &Gpu) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let t = ElementType::Int8;
    let mut rng = Rng::new(14);
    let inputs: Vec<HostTensor> = [3, 5, 1].iter().map(|&w| rng.tensor(t, &[4, w])).collect();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let concat = ResolvedConcat::new(&[[4, 3], [4, 5], [4, 1]], 1).map_err(why)?;
    let plan = splitter
        .plan_with(
            &concat,
            t,
            &wgpu_split::plan::PlanOptions::default().in_compute_pass(),
        )
        .map_err(why)?;
    let buffers: Vec<wgpu::Buffer> = inputs
        .iter()
        .map(|i| {
            buffer_with(
                device,
                i.as_bytes().unwrap_or(&[]),
                wgpu::BufferUsages::STORAGE,
            )
        })
        .collect();
    let output = buffer_with(
        device,
        &vec![0; plan.requirements().output_region_bytes as usize],
        wgpu::BufferUsages::STORAGE,
    );
    let regions: Vec<BufferRegion> = buffers.iter().map(BufferRegion::whole).collect();
    let prepared = splitter
        .prepare(&plan, &regions, BufferRegion::whole(&output))
        .map_err(why)?;
    record_in_pass(gpu, &prepared);
    let got = read(device, queue, &output).await?;
    let want = HostTensor::concat(&refs, &concat).map_err(why)?;
    let want = want.as_bytes().map_err(why)?;
    ensure!(
        &got[..want.len()] == want,
        "the output differs from the host path's"
    );
    Ok(())
}

async fn permuted_in_pass(gpu: &Gpu) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let t = ElementType::Float;
    let split = PermutedSplit::split_heads(&[2, 5, 3 * 2 * 4], &[8; 3], 4).map_err(why)?;
    let input = Rng::new(15).tensor(t, split.split().input_shape());
    let heads = input.split_permuted(&split).map_err(why)?;
    let plan = splitter.plan(&split, t).map_err(why)?;
    let source = buffer_with(
        device,
        input.as_bytes().map_err(why)?,
        wgpu::BufferUsages::STORAGE,
    );
    let outputs: Vec<wgpu::Buffer> = (0..heads.len())
        .map(|i| {
            buffer_with(
                device,
                &vec![0; plan.output_region_bytes(i) as usize],
                wgpu::BufferUsages::STORAGE,
            )
        })
        .collect();
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    let prepared = splitter
        .prepare(&plan, BufferRegion::whole(&source), &regions)
        .map_err(why)?;
    record_in_pass(gpu, &prepared);
    for (o, want) in outputs.iter().zip(&heads) {
        let got = read(device, queue, o).await?;
        let want = want.as_bytes().map_err(why)?;
        ensure!(
            &got[..want.len()] == want,
            "a head differs from the host path's"
        );
    }
    let shapes: Vec<Vec<usize>> = heads.iter().map(|h| h.shape().to_vec()).collect();
    let merge = PermutedConcat::merge_heads(&shapes).map_err(why)?;
    let plan = splitter.plan(&merge, t).map_err(why)?;
    let merged = buffer_with(
        device,
        &vec![0; plan.output_region_bytes() as usize],
        wgpu::BufferUsages::STORAGE,
    );
    let prepared = splitter
        .prepare(&plan, &regions, BufferRegion::whole(&merged))
        .map_err(why)?;
    record_in_pass(gpu, &prepared);
    let refs: Vec<&HostTensor> = heads.iter().collect();
    let want = HostTensor::concat_permuted(&refs, &merge).map_err(why)?;
    let got = read(device, queue, &merged).await?;
    let want = want.as_bytes().map_err(why)?;
    ensure!(
        &got[..want.len()] == want,
        "the merge differs from the host path's"
    );
    Ok(())
}

fn caches(gpu: &Gpu) -> Result<(), String> {
    let split = ResolvedSplit::new(&[7, 9], 1, vec![2, 3, 4], true).map_err(why)?;
    let plan = gpu.splitter.plan(&split, ElementType::Uint8).map_err(why)?;
    let cache = gpu.splitter.cache();
    cache.warm_up(&plan).map_err(why)?;
    let _ = cache.usage();
    cache.clear();
    Ok(())
}
