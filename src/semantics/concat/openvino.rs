//! OpenVINO `Concat-1`.

use super::error::ConcatError;
use super::resolved::ResolvedConcat;
use super::rules;
use crate::op::{OpId, OpKind};

/// OpenVINO `Concat-1`: attribute `axis` in `[-r, r-1]`, one or more inputs
/// of one rank (not scalars), equal on every dimension but `axis`.
///
/// # Examples
///
/// ```
/// use wgpu_split::OpenVinoConcat;
///
/// let concat = OpenVinoConcat::new(-2).resolve(&[[1, 8, 5], [1, 16, 5]]);
/// assert_eq!(concat.unwrap().output_shape(), &[1, 24, 5]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpenVinoConcat {
    /// Attribute `axis` (required; negative counts from the end).
    pub axis: i64,
}

impl OpenVinoConcat {
    /// The operator identity.
    pub const OP: OpId = OpId {
        kind: OpKind::OpenVinoConcat,
        version: 1,
    };

    /// A Concat-1 along `axis`.
    pub fn new(axis: i64) -> Self {
        OpenVinoConcat { axis }
    }

    /// Resolves the concat of inputs of `shapes`.
    ///
    /// # Errors
    ///
    /// Every rule of OpenVINO Concat-1 in [`crate::docs::semantics`] that the
    /// shapes break.
    pub fn resolve<S: AsRef<[usize]>>(&self, shapes: &[S]) -> Result<ResolvedConcat, ConcatError> {
        rules::cat(Self::OP, shapes, self.axis)
    }
}
