//! One burn device for the whole test binary (burn registers a runtime
//! once per process) and helpers that build and read tensors as bytes.
#![allow(dead_code)]

use std::sync::OnceLock;

use burn::tensor::{BoolStore, DType, Device, Float, FloatDType, Tensor, TensorData};
use burn_cubecl::cubecl::wgpu::WgpuSetup;
use wgpu_split::{ElementType, HostTensor};
use wgpu_split_burn::{BurnSplitter, SplitKind, element_type};

/// burn's device on the machine's GPU adapter and a splitter built from
/// the handles burn runs on. Fails loudly when there is no adapter.
pub fn gpu() -> &'static (Device, BurnSplitter) {
    &gpu_and_setup().0
}

/// [`gpu`] and the wgpu setup burn runs on (to build more splitters).
pub fn gpu_and_setup() -> &'static ((Device, BurnSplitter), WgpuSetup) {
    static GPU: OnceLock<((Device, BurnSplitter), WgpuSetup)> = OnceLock::new();
    GPU.get_or_init(|| {
        let (device, setup) = Device::wgpu_options()
            .init_with_setup()
            .unwrap_or_else(|e| {
                panic!(
                    "no GPU adapter for burn ({e}); on Debian/Ubuntu install Mesa's software \
                 Vulkan driver: apt-get install -y mesa-vulkan-drivers"
                )
            });
        let splitter = BurnSplitter::new(&device, &setup).expect("splitter on burn's device");
        ((device, splitter), setup)
    })
}

/// Every dtype burn's wgpu backend stores plainly, and whether this
/// device supports it.
pub fn dtypes(device: &Device) -> Vec<(DType, bool)> {
    [
        DType::F64,
        DType::F32,
        DType::Flex32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
        DType::Bool(BoolStore::U8),
        DType::Bool(BoolStore::U32),
        DType::Bool(BoolStore::Native),
    ]
    .into_iter()
    .map(|d| (d, device.supports_dtype(d)))
    .collect()
}

/// Deterministic bytes for `count` elements of `dtype` (0 and 1 for
/// booleans, finite values for floats so every op burn runs is defined).
pub fn bytes_for(dtype: DType, count: usize, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut out = Vec::with_capacity(count * dtype.size());
    for _ in 0..count {
        match dtype {
            DType::F64 => {
                out.extend_from_slice(&(f64::from(next() % 20000) / 7.0 - 1000.0).to_le_bytes())
            }
            DType::F32 | DType::Flex32 => out.extend_from_slice(
                &(f32::from((next() % 20000) as u16) / 7.0 - 1000.0).to_le_bytes(),
            ),
            DType::F16 => out.extend_from_slice(
                &half::f16::from_f32((next() % 2000) as f32 / 7.0 - 100.0).to_le_bytes(),
            ),
            DType::BF16 => out.extend_from_slice(
                &half::bf16::from_f32((next() % 2000) as f32 / 7.0 - 100.0).to_le_bytes(),
            ),
            DType::Bool(BoolStore::U32) => out.extend_from_slice(&(next() & 1).to_le_bytes()),
            DType::Bool(_) => out.push((next() & 1) as u8),
            _ => {
                for _ in 0..dtype.size() {
                    out.push(next() as u8);
                }
            }
        }
    }
    out
}

/// A tensor of `shape` whose elements are `bytes`, of the kind its dtype
/// belongs to.
/// burn's wgpu backend has no `from_data` for `Flex32` (f32 storage, a
/// relaxed compute type): such tensors are made as `F32` and cast, which
/// keeps the bits.
pub fn tensor<const D: usize, K: SplitKind>(
    bytes: Vec<u8>,
    shape: [usize; D],
    dtype: DType,
) -> Tensor<D, K> {
    let device = &gpu().0;
    if dtype == DType::Flex32 {
        let f32s: Tensor<D, Float> = tensor(bytes, shape, DType::F32);
        return Tensor::from_bridge(f32s.cast(FloatDType::Flex32).into_bridge());
    }
    Tensor::from_data(
        TensorData::from_bytes_vec(bytes, shape, dtype),
        (device, dtype),
    )
}

/// The tensor's bytes as burn reads them back.
pub fn bytes_of<const D: usize, K: SplitKind>(t: Tensor<D, K>) -> Vec<u8> {
    t.into_data().as_bytes().to_vec()
}

/// The core crate's host path on the same bytes: the oracle.
pub fn host_split(
    bytes: &[u8],
    shape: &[usize],
    element: ElementType,
    split: &wgpu_split::ResolvedSplit,
) -> Vec<Vec<u8>> {
    let input = HostTensor::from_raw(element, shape, bytes.to_vec()).expect("host tensor");
    input
        .split(split)
        .expect("host split")
        .into_iter()
        .map(|t| t.as_bytes().expect("numeric").to_vec())
        .collect()
}

/// The core crate's host concat of the same bytes: the oracle.
pub fn host_concat(
    inputs: &[(Vec<u8>, Vec<usize>)],
    element: ElementType,
    concat: &wgpu_split::ResolvedConcat,
) -> Vec<u8> {
    let tensors: Vec<HostTensor> = inputs
        .iter()
        .map(|(bytes, shape)| {
            HostTensor::from_raw(element, shape, bytes.clone()).expect("host tensor")
        })
        .collect();
    let refs: Vec<&HostTensor> = tensors.iter().collect();
    HostTensor::concat(&refs, concat)
        .expect("host concat")
        .as_bytes()
        .expect("numeric")
        .to_vec()
}

/// A wgpu device made by the caller (the core crate's context) and
/// registered with burn as a runtime of its own, with a splitter on it.
pub fn registered_device() -> &'static (Device, BurnSplitter) {
    static DEVICE: OnceLock<(Device, BurnSplitter)> = OnceLock::new();
    DEVICE.get_or_init(|| {
        let ctx = wgpu_split::gpu::GpuContext::new_default()
            .expect("a GPU adapter (apt-get install -y mesa-vulkan-drivers)");
        let setup = WgpuSetup {
            backend: ctx.adapter.get_info().backend,
            instance: ctx.instance.clone(),
            adapter: ctx.adapter.clone(),
            device: ctx.device.clone(),
            queue: ctx.queue.clone(),
        };
        let device = Device::wgpu_options()
            .setup(setup.clone())
            .init()
            .expect("burn registers the device");
        let splitter = BurnSplitter::new(&device, &setup).unwrap();
        (device, splitter)
    })
}

/// Which kind a dtype's tensors are.
pub enum KindOf {
    /// Float tensors.
    Float,
    /// Int tensors.
    Int,
    /// Bool tensors.
    Bool,
}

/// The kind of `dtype`.
pub fn kind_of(dtype: DType) -> KindOf {
    match dtype {
        DType::Bool(_) => KindOf::Bool,
        d if d.is_float() => KindOf::Float,
        _ => KindOf::Int,
    }
}

/// The element type of `dtype` (the integration's mapping).
pub fn element(dtype: DType) -> ElementType {
    element_type(dtype).expect("plain dtype")
}
