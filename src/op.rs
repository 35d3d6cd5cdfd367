//! Operator identity: which operator family and version a rule or an error
//! belongs to. A leaf module, so that errors can name operators without
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
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::OnnxSplit => "ONNX Split",
            OpKind::OnnxSplitToSequence => "ONNX SplitToSequence",
            OpKind::OpenVinoVariadicSplit => "OpenVINO VariadicSplit",
            OpKind::OpenVinoSplit => "OpenVINO Split",
            OpKind::Direct => "direct split",
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
    /// SplitToSequence; 1 for the OpenVINO operators; 0 for a direct split).
    pub version: u32,
}

impl OpId {
    /// The identity of a split given directly as a [`crate::ResolvedSplit`].
    pub const DIRECT: OpId = OpId {
        kind: OpKind::Direct,
        version: 0,
    };
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            OpKind::Direct => write!(f, "{}", self.kind),
            _ => write!(f, "{}-{}", self.kind, self.version),
        }
    }
}
