//! Concat in place on burn's device: burn's pending work on the inputs
//! comes first, the output is burn's own allocation that burn computes on,
//! burn may reuse the inputs' memory as soon as the call returns, and an
//! output burn put in an input's page is written by the dispatches or
//! through the staging buffer (copies cannot stay within one buffer).

mod common;

use burn::tensor::{DType, Float, Tensor};
use burn_cubecl::cubecl::wgpu::{AutoCompiler, WgpuServer, wgpu};
use common::*;
use wgpu_split::frameworks::Burn as BurnRules;
use wgpu_split::plan::{CostModel, Strategy};
use wgpu_split_burn::{BurnSplitter, SplitKind};

/// The page burn keeps `t` in.
fn page(t: &Tensor<3>) -> wgpu::Buffer {
    let cube = Float::into_cube(t.clone()).unwrap();
    let r = cube
        .client
        .get_resource::<WgpuServer<AutoCompiler>>(cube.handle.clone())
        .unwrap();
    r.resource().buffer.clone()
}

#[test]
fn burns_pending_work_runs_before_the_concat() {
    let (_, s) = gpu();
    let x: Tensor<2> = tensor(bytes_for(DType::F32, 64 * 48, 41), [64, 48], DType::F32);
    // Lazy: with fusion nothing of this has run when the concat is called.
    let y = x.clone().mul_scalar(2.0).add_scalar(1.0).exp().log();
    let z = x.clone().sub_scalar(3.0);
    let out = s.cat(vec![y.clone(), x.clone(), z.clone()], 1).unwrap();
    let host: Vec<(Vec<u8>, Vec<usize>)> = [y, x, z]
        .into_iter()
        .map(|t| (bytes_of(t), vec![64, 48]))
        .collect();
    let concat = BurnRules::cat(&[[64, 48]; 3], 1).unwrap();
    assert_eq!(
        bytes_of(out),
        host_concat(&host, element(DType::F32), &concat)
    );
}

#[test]
fn burn_computes_on_the_output_and_reuses_the_inputs_memory_at_once() {
    let (device, s) = gpu();
    let shapes = [[1, 8, 16, 16]; 3];
    let host: Vec<(Vec<u8>, Vec<usize>)> = (0..3)
        .map(|i| (bytes_for(DType::F32, 8 * 256, 42 + i), vec![1, 8, 16, 16]))
        .collect();
    let concat = BurnRules::cat(&shapes, 1).unwrap();
    let want = host_concat(&host, element(DType::F32), &concat);
    let mut kept = Vec::new();
    for round in 0..8 {
        let inputs: Vec<Tensor<4>> = host
            .iter()
            .map(|(b, _)| tensor(b.clone(), [1, 8, 16, 16], DType::F32))
            .collect();
        kept.push(s.cat(inputs, 1).unwrap()); // the inputs dropped here
        // New tensors of the same size, written at once: the pool hands out
        // the memory the dropped inputs had.
        for _ in 0..3 {
            let churn = Tensor::<4>::zeros([1, 8, 16, 16], device).add_scalar(round as f32);
            drop(churn);
        }
    }
    let doubled: Vec<f32> = want
        .chunks(4)
        .map(|b| 2.0 * f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for out in kept {
        let computed = out.clone().mul_scalar(2.0).into_data();
        assert_eq!(computed.as_slice::<f32>().unwrap(), doubled.as_slice());
        assert_eq!(bytes_of(out), want);
    }
}

#[test]
fn an_output_in_an_inputs_page_is_staged_where_copies_are_cheap() {
    let ((device, _), setup) = gpu_and_setup();
    // A detection head put back together: two long runs, which a model
    // with cheap copies copies; burn's pool puts the output in a page of
    // the inputs.
    let shapes = [[1, 4, 840], [1, 80, 840]];
    let host: Vec<(Vec<u8>, Vec<usize>)> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| (bytes_for(DType::F32, s[1] * 840, 45 + i as u64), s.to_vec()))
        .collect();
    let concat = BurnRules::cat(&shapes, 1).unwrap();
    let want = host_concat(&host, element(DType::F32), &concat);
    for (strategy, stages) in [
        (Strategy::Auto(CostModel::LAVAPIPE), true),
        (Strategy::Auto(CostModel::DISCRETE_GPU), false),
        // Copies only: where they cannot go, the kernels do it all.
        (Strategy::Copy, false),
    ] {
        let splitter = BurnSplitter::new(device, setup)
            .unwrap()
            .with_strategy(strategy);
        let inputs: Vec<Tensor<3>> = host
            .iter()
            .zip(shapes)
            .map(|((b, _), s)| tensor(b.clone(), s, DType::F32))
            .collect();
        let out = splitter.cat(inputs.clone(), 1).unwrap();
        let shared = inputs.iter().any(|t| page(t) == page(&out));
        assert!(
            shared,
            "burn's pool was expected to put the output in an input's page"
        );
        assert_eq!(
            splitter.staging_bytes() > 0,
            stages,
            "staged under {strategy:?}"
        );
        assert_eq!(bytes_of(out), want, "{strategy:?}");
        splitter.release_staging();
        assert_eq!(splitter.staging_bytes(), 0);
    }
}
