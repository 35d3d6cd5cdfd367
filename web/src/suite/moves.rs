//! The four moves on the browser's WebGPU, every element width the GPU
//! path takes, every byte against the host path in the same wasm: the
//! async round trip, and `encode` into regions at offsets of pooled pages
//! with more outputs (or inputs) than one dispatch binds under WebGPU's
//! default limits (7 destinations beside the input).

use wgpu_split::gpu::{BufferRegion, RoundTrip};
use wgpu_split::{
    ConcatOperator, ElementType, HostTensor, InputMove, OnnxConcat, OnnxSplit, Operator,
    PermutedConcat, PermutedSplit, PieceMove, ResolvedConcat, ResolvedSplit,
};

use super::pages::Page;
use super::{Report, why};
use crate::device::{Gpu, buffer_with, read};
use crate::ensure;
use crate::rng::Rng;

/// Every element type with a GPU layout (2 to 128 bits).
pub fn gpu_types() -> Vec<ElementType> {
    ElementType::ALL
        .into_iter()
        .filter(|t| t.bit_width().is_some())
        .collect()
}

/// Runs every check of the moves.
pub async fn run(gpu: &Gpu, report: &mut Report) {
    let mut rng = Rng::new(0x5eed);
    for t in gpu_types() {
        report.check(
            &format!("split round trip {t}"),
            split_round_trip(gpu, t, &mut rng).await,
        );
        report.check(
            &format!("split of 20 outputs in a pooled page {t}"),
            split_in_page(
                gpu,
                &rng.tensor(t, &[3, 40]),
                &onnx_split(&[3, 40], 1, 20),
                &mut rng,
            )
            .await,
        );
        report.check(
            &format!("split of uneven lengths in a pooled page {t}"),
            split_in_page(
                gpu,
                &rng.tensor(t, &[5, 37]),
                &lengths(&[5, 37], 1, &[1, 4, 32]),
                &mut rng,
            )
            .await,
        );
        report.check(
            &format!("concat round trip {t}"),
            concat_round_trip(gpu, t, &mut rng).await,
        );
        report.check(
            &format!("concat of 20 inputs from a pooled page {t}"),
            concat_in_page(gpu, t, &vec![[4, 3]; 20], 1, &mut rng).await,
        );
        report.check(
            &format!("concat on the outer axis from a pooled page {t}"),
            concat_in_page(gpu, t, &[[2, 6], [5, 6], [1, 6]], 0, &mut rng).await,
        );
        let heads = PermutedSplit::split_heads(&[2, 6, 3 * 2 * 8], &[16; 3], 8).map_err(why);
        report.check(
            &format!("permuted split: attention heads in a pooled page {t}"),
            match heads {
                Ok(heads) => permuted_split_in_page(gpu, t, &heads, &mut rng).await,
                Err(e) => Err(e),
            },
        );
        report.check(
            &format!("permuted split of 10 outputs in a pooled page {t}"),
            match ten_transposed() {
                Ok(split) => permuted_split_in_page(gpu, t, &split, &mut rng).await,
                Err(e) => Err(e),
            },
        );
        report.check(
            &format!("permuted concat: heads merged from a pooled page {t}"),
            match PermutedConcat::merge_heads(&[[2, 2, 6, 8], [2, 1, 6, 8], [2, 1, 6, 8]]) {
                Ok(merge) => permuted_concat_in_page(gpu, t, &merge, &mut rng).await,
                Err(e) => Err(why(e)),
            },
        );
        report.check(
            &format!("permuted concat of 10 inputs from a pooled page {t}"),
            match ten_transposed().map(|s| undoing(&s)) {
                Ok(Ok(concat)) => permuted_concat_in_page(gpu, t, &concat, &mut rng).await,
                Ok(Err(e)) | Err(e) => Err(e),
            },
        );
    }
}

fn onnx_split(shape: &[usize], axis: i64, outputs: usize) -> ResolvedSplit {
    Operator::from(
        OnnxSplit::new(18, outputs)
            .axis(axis)
            .num_outputs(outputs as i64),
    )
    .resolve(shape)
    .expect("a valid split")
}

fn lengths(shape: &[usize], axis: usize, lengths: &[usize]) -> ResolvedSplit {
    ResolvedSplit::new(shape, axis, lengths.to_vec(), true).expect("a valid split")
}

/// [2, 4, 80] into ten [2, 4, 8] pieces, each seen as [2, 4, 2, 4] with
/// its middle axes swapped: more outputs than one dispatch binds.
fn ten_transposed() -> Result<PermutedSplit, String> {
    let split = ResolvedSplit::new(&[2, 4, 80], 2, vec![8; 10], true).map_err(why)?;
    let moves = (0..10)
        .map(|_| PieceMove::new(vec![2, 4, 2, 4], vec![0, 2, 1, 3]))
        .collect();
    PermutedSplit::new(split, moves).map_err(why)
}

/// The permuted concat that joins `split`'s outputs back into its input.
pub fn undoing(split: &PermutedSplit) -> Result<PermutedConcat, String> {
    let moves = split
        .moves()
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut inverse = vec![0; m.perm().len()];
            for (j, &p) in m.perm().iter().enumerate() {
                inverse[p] = j;
            }
            InputMove::new(split.split().output_shape(i), inverse)
        })
        .collect();
    PermutedConcat::new(&split.output_shapes(), moves, split.split().axis()).map_err(why)
}

/// ONNX Split-18 into 3 and a 20-way split, through the async round trip.
async fn split_round_trip(gpu: &Gpu, t: ElementType, rng: &mut Rng) -> Result<(), String> {
    let round_trip = RoundTrip::new(&gpu.splitter);
    for (shape, op) in [
        (
            vec![7, 30],
            Operator::from(OnnxSplit::new(18, 3).axis(1).num_outputs(3)),
        ),
        (
            vec![40, 3],
            Operator::from(OnnxSplit::new(18, 20).axis(0).num_outputs(20)),
        ),
    ] {
        let input = rng.tensor(t, &shape);
        let want = op.split_on_host(&input).map_err(why)?;
        let got = round_trip.split_async(&op, &input).await.map_err(why)?;
        ensure!(
            got == want,
            "{shape:?}: the GPU's outputs differ from the host path's"
        );
    }
    Ok(())
}

/// ONNX Concat-13 of 3 inputs and of 20, through the async round trip.
async fn concat_round_trip(gpu: &Gpu, t: ElementType, rng: &mut Rng) -> Result<(), String> {
    let round_trip = RoundTrip::new(&gpu.splitter);
    for (shapes, axis) in [
        (vec![vec![3, 5], vec![3, 2], vec![3, 9]], 1),
        (vec![vec![2, 7]; 20], 0),
    ] {
        let inputs: Vec<HostTensor> = shapes.iter().map(|s| rng.tensor(t, s)).collect();
        let refs: Vec<&HostTensor> = inputs.iter().collect();
        let op: ConcatOperator = OnnxConcat::new(13).axis(axis).into();
        let want = op.concat_on_host(&refs).map_err(why)?;
        let got = round_trip.concat_async(&op, &refs).await.map_err(why)?;
        ensure!(
            got == want,
            "{shapes:?}: the GPU's output differs from the host path's"
        );
    }
    Ok(())
}

/// `input` in a page of its own at an offset, split by `encode` into
/// regions at offsets of another page; every byte of both pages checked.
async fn split_in_page(
    gpu: &Gpu,
    input: &HostTensor,
    split: &ResolvedSplit,
    rng: &mut Rng,
) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let plan = splitter.plan(split, input.element_type()).map_err(why)?;
    let needs = plan.requirements();
    let want = input.split(split).map_err(why)?;
    let align = needs.offset_alignment_bytes;
    let source = input.as_bytes().map_err(why)?;
    let in_page = Page::pack(&[needs.input_binding_bytes], align, rng);
    let in_bytes = in_page.fill(&[source]);
    let sizes: Vec<u64> = plan.outputs().iter().map(|o| o.region_bytes).collect();
    let out_page = Page::pack(&sizes, align, rng);
    let in_buffer = buffer_with(device, &in_bytes, wgpu::BufferUsages::STORAGE);
    let out_buffer = buffer_with(device, &out_page.fill(&[]), wgpu::BufferUsages::STORAGE);
    let regions: Vec<BufferRegion> = (0..sizes.len())
        .map(|i| BufferRegion::new(&out_buffer, out_page.offsets[i], sizes[i]))
        .collect();
    let mut encoder = device.create_command_encoder(&Default::default());
    let input_region = BufferRegion::new(&in_buffer, in_page.offsets[0], needs.input_bytes);
    splitter
        .encode(&mut encoder, &plan, input_region, &regions)
        .map_err(why)?;
    queue.submit([encoder.finish()]);
    let expected: Vec<&[u8]> = want.iter().map(|o| o.as_bytes().unwrap_or(&[])).collect();
    out_page.check_written(&read(device, queue, &out_buffer).await?, &expected)?;
    ensure!(
        read(device, queue, &in_buffer).await? == in_bytes,
        "the input's page changed"
    );
    ensure!(
        needs.dispatches as u64 + needs.copies > 0,
        "nothing was recorded"
    );
    Ok(())
}

/// Inputs of `shapes` at offsets of one page, joined by `encode_concat`
/// into a region of another page.
async fn concat_in_page<S: AsRef<[usize]>>(
    gpu: &Gpu,
    t: ElementType,
    shapes: &[S],
    axis: usize,
    rng: &mut Rng,
) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let concat = ResolvedConcat::new(shapes, axis).map_err(why)?;
    let inputs: Vec<HostTensor> = shapes.iter().map(|s| rng.tensor(t, s.as_ref())).collect();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let want = HostTensor::concat(&refs, &concat).map_err(why)?;
    let plan = splitter.plan(&concat, t).map_err(why)?;
    let needs = plan.requirements();
    let align = needs.offset_alignment_bytes;
    let sizes: Vec<u64> = needs.inputs.iter().map(|n| n.bytes).collect();
    let in_page = Page::pack(&sizes, align, rng);
    let contents: Vec<&[u8]> = inputs.iter().map(|i| i.as_bytes().unwrap_or(&[])).collect();
    let in_bytes = in_page.fill(&contents);
    let out_page = Page::pack(&[needs.output_region_bytes], align, rng);
    let in_buffer = buffer_with(device, &in_bytes, wgpu::BufferUsages::STORAGE);
    let out_buffer = buffer_with(device, &out_page.fill(&[]), wgpu::BufferUsages::STORAGE);
    let regions: Vec<BufferRegion> = (0..sizes.len())
        .map(|i| BufferRegion::new(&in_buffer, in_page.offsets[i], sizes[i]))
        .collect();
    let output = BufferRegion::new(&out_buffer, out_page.offsets[0], needs.output_region_bytes);
    let mut encoder = device.create_command_encoder(&Default::default());
    splitter
        .encode(&mut encoder, &plan, &regions, output)
        .map_err(why)?;
    queue.submit([encoder.finish()]);
    let expected = [want.as_bytes().map_err(why)?];
    out_page.check_written(&read(device, queue, &out_buffer).await?, &expected)?;
    ensure!(
        read(device, queue, &in_buffer).await? == in_bytes,
        "the inputs' page changed"
    );
    Ok(())
}

/// `split` of a random tensor of `t` by `encode_permuted`, input and outputs
/// at offsets of two pages.
async fn permuted_split_in_page(
    gpu: &Gpu,
    t: ElementType,
    split: &PermutedSplit,
    rng: &mut Rng,
) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let input = rng.tensor(t, split.split().input_shape());
    let want = input.split_permuted(split).map_err(why)?;
    let plan = splitter.plan(split, t).map_err(why)?;
    let source = input.as_bytes().map_err(why)?;
    let in_page = Page::pack(&[plan.input_bytes().next_multiple_of(4)], 4, rng);
    let in_bytes = in_page.fill(&[source]);
    let sizes: Vec<u64> = (0..want.len())
        .map(|i| plan.output_region_bytes(i))
        .collect();
    let out_page = Page::pack(&sizes, 4, rng);
    let in_buffer = buffer_with(device, &in_bytes, wgpu::BufferUsages::STORAGE);
    let out_buffer = buffer_with(device, &out_page.fill(&[]), wgpu::BufferUsages::STORAGE);
    let regions: Vec<BufferRegion> = (0..sizes.len())
        .map(|i| BufferRegion::new(&out_buffer, out_page.offsets[i], sizes[i]))
        .collect();
    let input_region = BufferRegion::new(&in_buffer, in_page.offsets[0], plan.input_bytes());
    let mut encoder = device.create_command_encoder(&Default::default());
    splitter
        .encode(&mut encoder, &plan, input_region, &regions)
        .map_err(why)?;
    queue.submit([encoder.finish()]);
    let expected: Vec<&[u8]> = want.iter().map(|o| o.as_bytes().unwrap_or(&[])).collect();
    out_page.check_written(&read(device, queue, &out_buffer).await?, &expected)?;
    ensure!(
        read(device, queue, &in_buffer).await? == in_bytes,
        "the input's page changed"
    );
    Ok(())
}

/// `concat` of random inputs of `t` by `encode_permuted_concat`, inputs and
/// output at offsets of two pages.
async fn permuted_concat_in_page(
    gpu: &Gpu,
    t: ElementType,
    concat: &PermutedConcat,
    rng: &mut Rng,
) -> Result<(), String> {
    let (device, queue, splitter) = (&gpu.device, &gpu.queue, &gpu.splitter);
    let inputs: Vec<HostTensor> = concat
        .input_shapes()
        .iter()
        .map(|s| rng.tensor(t, s))
        .collect();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let want = HostTensor::concat_permuted(&refs, concat).map_err(why)?;
    let plan = splitter.plan(concat, t).map_err(why)?;
    let sizes: Vec<u64> = (0..inputs.len())
        .map(|i| plan.input_bytes(i).next_multiple_of(4))
        .collect();
    let in_page = Page::pack(&sizes, 4, rng);
    let contents: Vec<&[u8]> = inputs.iter().map(|i| i.as_bytes().unwrap_or(&[])).collect();
    let in_bytes = in_page.fill(&contents);
    let out_page = Page::pack(&[plan.output_region_bytes()], 4, rng);
    let in_buffer = buffer_with(device, &in_bytes, wgpu::BufferUsages::STORAGE);
    let out_buffer = buffer_with(device, &out_page.fill(&[]), wgpu::BufferUsages::STORAGE);
    let regions: Vec<BufferRegion> = (0..sizes.len())
        .map(|i| BufferRegion::new(&in_buffer, in_page.offsets[i], plan.input_bytes(i)))
        .collect();
    let output = BufferRegion::new(&out_buffer, out_page.offsets[0], plan.output_region_bytes());
    let mut encoder = device.create_command_encoder(&Default::default());
    splitter
        .encode(&mut encoder, &plan, &regions, output)
        .map_err(why)?;
    queue.submit([encoder.finish()]);
    let expected = [want.as_bytes().map_err(why)?];
    out_page.check_written(&read(device, queue, &out_buffer).await?, &expected)?;
    ensure!(
        read(device, queue, &in_buffer).await? == in_bytes,
        "the inputs' page changed"
    );
    Ok(())
}
