//! Operator identity: which operator family and version (or which framework
//! call) a rule or an error belongs to. A leaf module, so that errors can name operators without
//! depending on the semantics that resolve them.

use std::fmt;

/// An operator family, without its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpKind {
    /// ONNX `Split`.
    OnnxSplit,
    /// ONNX `SplitToSequence`.
    OnnxSplitToSequence,
    /// OpenVINO `VariadicSplit`.
    OpenVinoVariadicSplit,
    /// OpenVINO `Split`.
    OpenVinoSplit,
    /// A split given directly as a [`crate::ResolvedSplit`] by a caller.
    Direct,
    /// ONNX `Concat`.
    OnnxConcat,
    /// ONNX `ConcatFromSequence`.
    OnnxConcatFromSequence,
    /// OpenVINO `Concat`.
    OpenVinoConcat,
    /// A concat given directly as a [`crate::ResolvedConcat`] by a caller.
    DirectConcat,
    /// A framework's concat call.
    Call(FrameworkCall),
}

/// A framework's concat call, named as the framework spells it (its split
/// calls name themselves in [`crate::error::FrameworkError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FrameworkCall {
    /// `torch.cat`.
    TorchCat,
    /// `torch.concat`.
    TorchConcat,
    /// `torch.stack`.
    TorchStack,
    /// `numpy.concatenate`.
    NumpyConcatenate,
    /// `numpy.stack`.
    NumpyStack,
    /// candle's `Tensor::cat`.
    CandleCat,
    /// candle's `Tensor::stack`.
    CandleStack,
    /// burn's `Tensor::cat`.
    BurnCat,
    /// burn's `Tensor::stack`.
    BurnStack,
}

impl fmt::Display for FrameworkCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameworkCall::TorchCat => "torch.cat",
            FrameworkCall::TorchConcat => "torch.concat",
            FrameworkCall::TorchStack => "torch.stack",
            FrameworkCall::NumpyConcatenate => "numpy.concatenate",
            FrameworkCall::NumpyStack => "numpy.stack",
            FrameworkCall::CandleCat => "candle cat",
            FrameworkCall::CandleStack => "candle stack",
            FrameworkCall::BurnCat => "burn cat",
            FrameworkCall::BurnStack => "burn stack",
        })
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::OnnxSplit => "ONNX Split",
            OpKind::OnnxSplitToSequence => "ONNX SplitToSequence",
            OpKind::OpenVinoVariadicSplit => "OpenVINO VariadicSplit",
            OpKind::OpenVinoSplit => "OpenVINO Split",
            OpKind::Direct => "direct split",
            OpKind::OnnxConcat => "ONNX Concat",
            OpKind::OnnxConcatFromSequence => "ONNX ConcatFromSequence",
            OpKind::OpenVinoConcat => "OpenVINO Concat",
            OpKind::DirectConcat => "direct concat",
            OpKind::Call(call) => return call.fmt(f),
        })
    }
}

/// An operator version: the family and the opset version that defines it
/// (`since_version`), e.g. ONNX Split-18. Used to name the operator in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpId {
    /// The family.
    pub kind: OpKind,
    /// The defining version (1, 2, 11, 13, 18 for ONNX Split; 11, 24 for
    /// SplitToSequence; 1, 4, 11, 13 for ONNX Concat; 11 for
    /// ConcatFromSequence; 1 for the OpenVINO operators; 0 for a direct
    /// split or concat and for framework calls).
    pub version: u32,
}

impl OpId {
    /// The identity of a split given directly as a [`crate::ResolvedSplit`].
    pub const DIRECT: OpId = OpId {
        kind: OpKind::Direct,
        version: 0,
    };

    /// The identity of a concat given directly as a [`crate::ResolvedConcat`].
    pub const DIRECT_CONCAT: OpId = OpId {
        kind: OpKind::DirectConcat,
        version: 0,
    };

    /// The identity of a framework call (version 0).
    pub const fn call(call: FrameworkCall) -> OpId {
        OpId {
            kind: OpKind::Call(call),
            version: 0,
        }
    }
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            OpKind::Direct | OpKind::DirectConcat | OpKind::Call(_) => write!(f, "{}", self.kind),
            _ => write!(f, "{}-{}", self.kind, self.version),
        }
    }
}
