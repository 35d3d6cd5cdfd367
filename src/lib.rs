//! # wgpu-split
//!
//! Bit-exact tensor split operators for runtimes built on wgpu: ONNX `Split`
//! (opsets 1, 2, 11, 13, 18), ONNX `SplitToSequence` (11, 24), OpenVINO
//! `VariadicSplit-1` and OpenVINO `Split-1`, for every ONNX element type.
//!
//! The crate is built in rooms with one-way dependencies:
//!
//! - [`semantics`]: operators and opsets resolve against an input shape into a
//!   [`ResolvedSplit`] or a typed [`Error`];
//! - [`plan`]: pure data derived from a resolved split: runs, offsets, the
//!   arena layout, the access unit and the dispatches;
//! - [`gpu`]: the pipeline cache, parameter upload and `encode` into the
//!   caller's command encoder, plus a blocking/async convenience path;
//! - [`host`]: the CPU path, the test oracle and the fallback;
//! - [`onnx`]: an edge module that reads ONNX models and tensors and feeds
//!   [`semantics`].
//!
//! Element types live in [`element`], errors in [`error`], host tensors in
//! [`tensor`].
//!
//! # Examples
//!
//! ```
//! use wgpu_split::{host, HostTensor, OnnxSplit, ParamTensor};
//!
//! // ONNX Split-13 of a [2, 5] float tensor along axis 1 into lengths [2, 3].
//! let input = HostTensor::from_slice(&[2, 5], &[0.0f32, 1., 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
//! let op = OnnxSplit::new(13, 2).axis(1).split_input(ParamTensor::int64_1d(&[2, 3]));
//! let outputs = host::split_op(&op.into(), &input).unwrap();
//! assert_eq!(outputs[0].shape(), &[2, 2]);
//! assert_eq!(outputs[0].to_vec::<f32>().unwrap(), vec![0., 1., 5., 6.]);
//! assert_eq!(outputs[1].to_vec::<f32>().unwrap(), vec![2., 3., 4., 7., 8., 9.]);
//! ```

pub mod element;
pub mod error;
pub mod gpu;
pub mod host;
pub mod onnx;
pub mod plan;
pub mod semantics;
pub mod tensor;

pub use element::ElementType;
pub use error::{Error, Result};
pub use plan::{Run, RunLayout};
pub use semantics::{
    MAX_OUTPUTS, OnnxSplit, OnnxSplitToSequence, OpId, OpKind, OpenVinoSplit,
    OpenVinoVariadicSplit, Operator, ParamTensor, ParamValues, ResolvedSplit,
};
pub use tensor::{HostTensor, NativeElement};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
