//! What an encode creates: a permuted plan encoded again into the same
//! regions creates no buffer (its parameters are uploaded once and kept in
//! the splitter's table cache, as a split's table is). Counted by wgpu's
//! registry of buffers, which the whole process shares: the test is alone
//! in its binary, so nothing else creates buffers meanwhile.

mod common;

use common::{Rng, gpu, random_tensor, read_buffer};
use wgpu_split::ElementType;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};

/// A permuted plan encoded again into the same regions reuses its uploaded
/// parameters (one table in the cache): 1,000 encodes held unsubmitted create
/// no buffer (each made a uniform buffer of its own before), and every one
/// of them, submitted, writes the same exact outputs.
#[test]
fn a_permuted_plan_encoded_again_creates_no_buffer() {
    let Some(gpu) = gpu("a_permuted_plan_encoded_again_creates_no_buffer") else {
        return;
    };
    let instance = wgpu_split::gpu::GpuContext::new_default().unwrap().instance;
    let buffers = || {
        instance
            .generate_report()
            .unwrap()
            .hub
            .buffers
            .num_allocated
    };
    let splitter = GpuSplitter::new(gpu.device(), gpu.queue()).unwrap();
    let split = wgpu_split::PermutedSplit::split_heads(&[2, 16, 3 * 4 * 8], &[32; 3], 8).unwrap();
    let t = ElementType::Float16;
    let plan = splitter.plan(&split, t).unwrap();
    let input = random_tensor(&mut Rng::new(92), t, split.split().input_shape());
    let round_trip = common::round_trip(&splitter);
    let source = round_trip.create_input(input.as_bytes().unwrap()).unwrap();
    let outputs: Vec<wgpu::Buffer> = (0..3)
        .map(|i| {
            round_trip
                .create_input(&vec![0; plan.output_region_bytes(i) as usize])
                .unwrap()
        })
        .collect();
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
    let encode = || {
        let mut encoder = splitter
            .device()
            .create_command_encoder(&Default::default());
        splitter
            .encode(&mut encoder, &plan, BufferRegion::whole(&source), &regions)
            .unwrap();
        encoder
    };
    splitter.queue().submit([encode().finish()]);
    splitter
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let tables = splitter.cache().usage().tables;
    assert!(tables >= 1, "the parameters are kept");
    let before = buffers();
    let held: Vec<wgpu::CommandEncoder> = (0..1_000).map(|_| encode()).collect();
    assert_eq!(buffers(), before, "1,000 encodes created buffers");
    assert_eq!(splitter.cache().usage().tables, tables);
    splitter
        .queue()
        .submit(held.into_iter().map(wgpu::CommandEncoder::finish));
    for (o, want) in outputs.iter().zip(input.split_permuted(&split).unwrap()) {
        let got = read_buffer(&splitter, o);
        let want = want.as_bytes().unwrap();
        assert_eq!(&got[..want.len()], want);
    }
}
