//! In place on burn's device: burn's pending work comes first, outputs sit
//! in burn's own pages at their sub-allocated offsets, and burn may reuse
//! the input's memory as soon as the call returns.

mod common;

use burn::tensor::{DType, Float, Tensor};
use burn_cubecl::cubecl::wgpu::{AutoCompiler, WgpuServer, wgpu};
use common::*;
use wgpu_split::frameworks::Torch;
use wgpu_split_burn::SplitKind;

#[test]
fn burns_pending_work_runs_before_the_split() {
    let (_, s) = gpu();
    let x: Tensor<2> = tensor(bytes_for(DType::F32, 64 * 48, 31), [64, 48], DType::F32);
    // Lazy: with fusion nothing of this has run when the split is called.
    let y = x.clone().mul_scalar(2.0).add_scalar(1.0).exp().log();
    let outputs = s.split(y.clone(), 16, 1).unwrap();
    let computed = bytes_of(y);
    let expected = host_split(
        &computed,
        &[64, 48],
        element(DType::F32),
        &Torch::split(&[64, 48], 16, 1).unwrap(),
    );
    for (out, want) in outputs.into_iter().zip(expected) {
        assert_eq!(bytes_of(out), want);
    }
}

#[test]
fn outputs_are_burns_own_sub_allocated_buffers() {
    let (_, s) = gpu();
    let x: Tensor<2> = tensor(bytes_for(DType::F32, 8 * 40, 32), [8, 40], DType::F32);
    let outputs = s.split(x, 4, 1).unwrap();
    let mut offsets = Vec::new();
    for out in outputs {
        let cube = Float::into_cube(out).unwrap();
        let resource = cube
            .client
            .get_resource::<WgpuServer<AutoCompiler>>(cube.handle.clone())
            .unwrap();
        offsets.push(resource.resource().offset);
    }
    // Ten outputs of 128 bytes from burn's pool: pages shared at offsets.
    assert!(offsets.iter().any(|&o| o != 0), "offsets {offsets:?}");
}

#[test]
fn burn_may_reuse_the_inputs_memory_at_once() {
    let (_, s) = gpu();
    let bytes = bytes_for(DType::F32, 256 * 64, 33);
    let expected = host_split(
        &bytes,
        &[256, 64],
        element(DType::F32),
        &Torch::chunk(&[256, 64], 4, 1).unwrap(),
    );
    let mut kept = Vec::new();
    for round in 0..8 {
        let x: Tensor<2> = tensor(bytes.clone(), [256, 64], DType::F32);
        kept.push(s.chunk(x, 4, 1).unwrap()); // x dropped here
        // New tensors of the same size, written at once: the pool hands out
        // the memory the dropped inputs had.
        let churn: Tensor<2> = Tensor::<2>::zeros([256, 64], &gpu().0).add_scalar(round as f32);
        drop(churn);
    }
    for outputs in kept {
        for (out, want) in outputs.into_iter().zip(&expected) {
            assert_eq!(&bytes_of(out), want);
        }
    }
}

#[test]
fn many_outputs_share_one_allocation_that_burn_uses_like_its_own() {
    let (_, s) = gpu();
    let n = wgpu_split_burn::SHARED_ALLOCATION_ABOVE + 4;
    let bytes = bytes_for(DType::F32, 3 * n * 5, 34);
    let x: Tensor<3> = tensor(bytes.clone(), [3, n, 5], DType::F32);
    let split = Torch::split(&[3, n, 5], 1, 1).unwrap();
    let expected = host_split(&bytes, &[3, n, 5], element(DType::F32), &split);
    let mut outputs = s.split(x, 1, 1).unwrap();
    // One page, each output at an offset of its own.
    let places: Vec<(wgpu::Buffer, u64)> = outputs
        .iter()
        .map(|o| {
            let cube = Float::into_cube(o.clone()).unwrap();
            let r = cube
                .client
                .get_resource::<WgpuServer<AutoCompiler>>(cube.handle.clone())
                .unwrap();
            (r.resource().buffer.clone(), r.resource().offset)
        })
        .collect();
    assert!(
        places
            .windows(2)
            .all(|w| w[0].0 == w[1].0 && w[0].1 < w[1].1),
        "one allocation, in order"
    );
    // burn computes on a slice after the others are dropped.
    let kept = outputs.swap_remove(7);
    drop(outputs);
    let doubled = kept.clone().mul_scalar(2.0);
    let want: Vec<f32> = expected[7]
        .chunks(4)
        .map(|b| 2.0 * f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(
        doubled.into_data().as_slice::<f32>().unwrap(),
        want.as_slice()
    );
    assert_eq!(bytes_of(kept), expected[7]);
}

#[test]
fn outputs_in_the_inputs_page_stage_the_input_where_copies_are_cheap() {
    use wgpu_split::plan::{CostModel, Strategy};
    let ((device, _), setup) = gpu_and_setup();
    // A detection head: two long runs, which a model with cheap copies
    // copies; burn's pool puts these small outputs in the input's page.
    let shape = [1, 84, 840];
    let bytes = bytes_for(DType::F32, 84 * 840, 35);
    let split = Torch::split_with_sizes(&shape, &[4, 80], 1).unwrap();
    let expected = host_split(&bytes, &shape, element(DType::F32), &split);
    for (strategy, stages) in [
        (Strategy::Auto(CostModel::LAVAPIPE), true),
        (Strategy::Auto(CostModel::DISCRETE_GPU), false),
        // Copies only: where they cannot go, the kernels do it all.
        (Strategy::Copy, false),
    ] {
        let splitter = wgpu_split_burn::BurnSplitter::new(device, setup)
            .unwrap()
            .with_strategy(strategy);
        let x: Tensor<3> = tensor(bytes.clone(), shape, DType::F32);
        let outputs = splitter.split_with_sizes(x, &[4, 80], 1).unwrap();
        assert_eq!(
            splitter.staging_bytes() > 0,
            stages,
            "staged under {strategy:?}"
        );
        for (out, want) in outputs.into_iter().zip(&expected) {
            assert_eq!(&bytes_of(out), want);
        }
        splitter.release_staging();
        assert_eq!(splitter.staging_bytes(), 0);
    }
}
