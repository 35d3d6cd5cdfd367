//! A concat's output at offsets a runtime's pool gives (4 or 16 bytes past
//! a binding alignment), on the GPU (lavapipe in CI): the output's binding
//! then starts whole words before it, and every kernel that moves concats
//! must still write each of its words, the last ones included, and nothing
//! before or after it. (The concat-words kernel once wrote word `g` of the
//! binding for word `g` of the window, leaving the last words of a shifted
//! output unwritten: the browser suite found it, `tests/browser/`.)

mod common;

use common::{Rng, gpu, one_type_per_width, random_tensor, read_buffer};
use wgpu_split::error::PlanError;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::{ConcatPlan, Kernel, PlanOptions, Strategy};
use wgpu_split::{HostTensor, ResolvedConcat};

/// Guard bytes around the output (a pattern no kernel writes).
const GUARD: u8 = 0x5A;

fn buffer_with(gpu: &GpuSplitter, bytes: &[u8]) -> wgpu::Buffer {
    let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("concat offsets test"),
        size: bytes.len() as u64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
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

/// Runs `plan` with the output `offset` bytes into a page of guard bytes
/// and each input at `offset` bytes into a buffer of its own; checks the
/// output against the host concat and every other byte of the page.
fn run_at(gpu: &GpuSplitter, plan: &ConcatPlan, inputs: &[HostTensor], offset: u64, want: &[u8]) {
    let needs = plan.requirements();
    let input_buffers: Vec<wgpu::Buffer> = inputs
        .iter()
        .zip(&needs.inputs)
        .map(|(x, need)| {
            let mut bytes = vec![GUARD; offset as usize];
            bytes.extend_from_slice(x.as_bytes().unwrap());
            bytes.resize(
                ((offset + need.bytes).next_multiple_of(4) + 16) as usize,
                GUARD,
            );
            buffer_with(gpu, &bytes)
        })
        .collect();
    let regions: Vec<BufferRegion> = input_buffers
        .iter()
        .zip(&needs.inputs)
        .map(|(b, need)| BufferRegion::new(b, offset, need.bytes))
        .collect();
    let end = offset + needs.output_region_bytes;
    let page = vec![GUARD; (end.next_multiple_of(4) + 64) as usize];
    let output = buffer_with(gpu, &page);
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let region = BufferRegion::new(&output, offset, needs.output_region_bytes);
    gpu.encode(&mut encoder, plan, &regions, region).unwrap();
    gpu.queue().submit([encoder.finish()]);
    let got = read_buffer(gpu, &output);
    let (o, n) = (offset as usize, needs.output_bytes as usize);
    assert!(got[o..o + n] == *want, "the output at byte {offset}");
    assert!(
        got[o + n..end as usize].iter().all(|&b| b == 0),
        "bytes past the output at byte {offset}"
    );
    assert!(
        got[..o].iter().all(|&b| b == GUARD),
        "bytes before the output"
    );
    assert!(
        got[end as usize..].iter().all(|&b| b == GUARD),
        "bytes after the output's region"
    );
}

/// Every width, every kernel that moves the concat, the output and the
/// inputs 4, 16 and 260 bytes into their buffers (where the plan's offset
/// alignment allows), and at 256 (no shift) for comparison.
#[test]
fn every_kernel_writes_an_output_at_an_unaligned_offset() {
    let Some(gpu) = gpu("every_kernel_writes_an_output_at_an_unaligned_offset") else {
        return;
    };
    let mut rng = Rng::new(260);
    let concats = [
        ResolvedConcat::new(&[[5, 7], [5, 7]], 1).unwrap(),
        ResolvedConcat::new(&[[6, 5], [6, 1], [6, 7]], 1).unwrap(),
        ResolvedConcat::new(&[[3, 16], [5, 16]], 0).unwrap(),
        ResolvedConcat::new(&[[4, 32], [4, 64]], 1).unwrap(),
    ];
    let (mut runs, mut kernels) = (0, std::collections::BTreeSet::new());
    for concat in &concats {
        for t in one_type_per_width() {
            let inputs: Vec<HostTensor> = concat
                .input_shapes()
                .iter()
                .map(|s| random_tensor(&mut rng, t, s))
                .collect();
            let refs: Vec<&HostTensor> = inputs.iter().collect();
            let want = HostTensor::concat(&refs, concat).unwrap();
            let want = want.as_bytes().unwrap();
            for kernel in Kernel::ALL {
                let options = PlanOptions::default()
                    .strategy(Strategy::Gather)
                    .kernel(kernel);
                let plan = match ConcatPlan::new(concat, t, gpu.limits(), &options) {
                    Ok(plan) => plan,
                    Err(PlanError::KernelDoesNotFit { .. }) => continue,
                    Err(e) => panic!("{t} {kernel}: {e}"),
                };
                let align = plan.requirements().offset_alignment_bytes;
                for offset in [4, 16, 260, 256].into_iter().filter(|o| o % align == 0) {
                    run_at(gpu, &plan, &inputs, offset, want);
                    runs += 1;
                }
                kernels.insert(plan.kernel());
            }
        }
    }
    eprintln!("{runs} concats exact at unaligned offsets; kernels: {kernels:?}");
    for kernel in [Kernel::Words, Kernel::RowWords, Kernel::ConcatWords] {
        assert!(kernels.contains(&kernel), "{kernel} never ran: {kernels:?}");
    }
}
