//! # wgpu-split
//!
//! Bit-exact tensor split and concat for runtimes built on wgpu: ONNX
//! `Split` (opsets 1, 2, 11, 13, 18), `SplitToSequence` (11, 24), `Concat`
//! and `ConcatFromSequence`; OpenVINO `VariadicSplit-1`, `Split-1` and
//! `Concat-1`; the split and cat calls of torch, numpy, candle and burn;
//! every element width from 2 to 128 bits on the GPU (strings on the host).
//!
//! You hand it a tensor that already lives in a GPU buffer and a node; it
//! records every output into your own command encoder, exact to the bit,
//! with no round trip through the CPU. A concat is the split it undoes,
//! run backwards: the same plans, kernels and checks.
//!
//! # Recording a split into your command stream
//!
//! ```no_run
//! use wgpu_split::gpu::{BufferRegion, GpuSplitter, RoundTrip};
//! use wgpu_split::{ElementType, OnnxSplit};
//!
//! # fn main() -> Result<(), wgpu_split::Error> {
//! # let ctx = wgpu_split::gpu::GpuContext::new_default()?;
//! # let (device, queue) = (&ctx.device, &ctx.queue);
//! // Once per device, from your own device and queue.
//! let splitter = GpuSplitter::new(device, queue)?;
//!
//! // Per model node: resolve and plan (host-only work, O(outputs)).
//! let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[64, 10])?;
//! let plan = splitter.plan(&split, ElementType::Float16)?;
//!
//! // Per run: your tensors, each a buffer of its own or a slice of a page.
//! # let input = RoundTrip::new(&splitter).create_input(&[0u8; 64 * 10 * 2])?;
//! # let outputs = RoundTrip::new(&splitter).create_destinations(&plan)?;
//! let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
//! let mut encoder = device.create_command_encoder(&Default::default());
//! splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), &regions)?;
//! queue.submit([encoder.finish()]);
//! # Ok(())
//! # }
//! ```
//!
//! [`gpu::GpuSplitter::prepare`] records into your own compute pass instead;
//! planning with the arena [`plan::Placement`] puts every output in one
//! arena buffer.
//!
//! # The modules
//!
//! The crate is built in layers with one-way dependencies:
//!
//! - [`semantics`]: operators and opsets resolve against an input shape into a
//!   [`ResolvedSplit`] or a typed [`ResolveError`]; concat operators and calls
//!   against their inputs' shapes into a [`ResolvedConcat`], whose
//!   [`mirror`](ResolvedConcat::mirror) is the split of the output they
//!   undo, or a typed [`ConcatError`] (rules: [`docs::semantics`]);
//! - [`plan`]: pure data derived from a resolved split: runs, offsets, the
//!   output layout, the kernel and its WGSL, the dispatches, and the checks
//!   of the caller's regions;
//! - [`gpu`]: the compiled kernels, parameter upload and recording into the
//!   caller's command encoder or compute pass, plus a blocking/async
//!   convenience path and calibration;
//! - the host path: [`HostTensor::split`] and [`HostTensor::concat`] (and
//!   [`Operator::split_on_host`]) run splits and concats on the CPU, the
//!   test oracle and the fallback (and the path for strings);
//! - [`onnx`]: an edge module that reads ONNX models and tensors and feeds
//!   [`semantics`].
//!
//! Operator identity lives in [`op`], element types in [`element`], host
//! tensors in [`tensor`]; [`Error`] gathers each layer's error enum.
//!
//! # wgpu's backends, and this crate's features
//!
//! The crate enables only the wgpu features it needs (`std` and `wgsl`):
//! which backends a program runs on (Vulkan, Metal, DX12, GL, the browser's
//! WebGPU) is the program's own wgpu dependency's choice, as for any
//! library on wgpu. `wgpu = "30"` with its default features enables every
//! platform's (Metal on a Mac, DX12 and Vulkan on Windows, Vulkan and GL on
//! Linux); with no backend enabled no adapter is found. Features: `serde`
//! (default) stores and loads a [`plan::CostModel`]; `analysis` makes the
//! analysis tools public (the access trace, coalescing counts, recordings,
//! the ONNX node tests and protobuf types, a plan's passes and shader
//! keys), which the crate's tests and lab programs use and which it does
//! not promise to keep; `lab` builds the lab programs of the repository
//! (examples only, nothing in the library).
//!
//! # Host example
//!
//! ```
//! use wgpu_split::{HostTensor, OnnxSplit, ParamTensor};
//!
//! // ONNX Split-13 of a [2, 5] float tensor along axis 1 into lengths [2, 3].
//! let input = HostTensor::from_slice(&[2, 5], &[0.0f32, 1., 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
//! let op = OnnxSplit::new(13, 2).axis(1).split_input(ParamTensor::int64_1d(&[2, 3]));
//! let split = op.resolve(input.shape()).unwrap();
//! let outputs = input.split(&split).unwrap();
//! assert_eq!(outputs[0].shape(), &[2, 2]);
//! assert_eq!(outputs[0].to_vec::<f32>().unwrap(), vec![0., 1., 5., 6.]);
//! assert_eq!(outputs[1].to_vec::<f32>().unwrap(), vec![2., 3., 4., 7., 8., 9.]);
//! ```

// Without `analysis` the analysis tools' parts go unused; the dead-code lint
// runs on the build with it (the tests, examples and CI's clippy).
#![cfg_attr(not(feature = "analysis"), allow(dead_code))]

/// Public with the `analysis` feature, crate-private without it: the
/// accessors the crate's tests, examples and tools read (a plan's passes
/// and table, a shader key's variants), which a runtime does not need and
/// the crate does not promise to keep.
macro_rules! analysis_pub {
    ($(#[$meta:meta])* pub fn $($rest:tt)*) => {
        $(#[$meta])*
        #[cfg(feature = "analysis")]
        pub fn $($rest)*

        $(#[$meta])*
        #[cfg(not(feature = "analysis"))]
        #[allow(dead_code)]
        pub(crate) fn $($rest)*
    };
}

pub mod element;
pub mod error;
pub mod gpu;
mod host;
pub(crate) mod kernels;
pub mod onnx;
pub mod op;
pub mod plan;
pub mod semantics;
pub mod tensor;

pub use element::ElementType;
pub use error::{ConcatError, Error, PermuteError, ResolveError, Result, TensorError};
pub use op::{FrameworkCall, OpId, OpKind};
pub use semantics::frameworks;
pub use semantics::{
    ConcatOperator, InputMove, OnnxConcat, OnnxConcatFromSequence, OnnxSplit, OnnxSplitToSequence,
    OpenVinoConcat, OpenVinoSplit, OpenVinoVariadicSplit, Operator, ParamTensor, ParamValues,
    PermutedConcat, PermutedSplit, PieceMove, ResolvedConcat, ResolvedSplit, SequenceShapes,
    StridedView,
};
pub use tensor::{HostTensor, NativeElement};

/// The crate's documents, rendered here so that they travel with the crate
/// (the same files are `docs/*.md` in the repository).
pub mod docs {
    #[doc = include_str!("../docs/SEMANTICS.md")]
    pub mod semantics {}

    #[doc = include_str!("../docs/DEVICE.md")]
    pub mod device {}
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
