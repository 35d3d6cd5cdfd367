//! The resolved concat: the inputs' shapes, the output shape and the split
//! it mirrors. A concat of `x_0..x_{n-1}` into `y` is the split of `y` into
//! windows run backwards, so everything downstream (the planner, the GPU and
//! host paths) works from that split.

use super::error::ConcatError;
use crate::element::ElementType;
use crate::op::OpId;
use crate::semantics::resolved::ResolvedSplit;

/// A concat resolved against its inputs' shapes: the shapes as given, the
/// output shape, and [`mirror`](ResolvedConcat::mirror), the split of the
/// output whose outputs are the inputs.
///
/// Input `i` corresponds to mirror output
/// [`mirror_output(i)`](ResolvedConcat::mirror_output) and holds exactly its
/// bytes, in the same row-major order. The mirror splits the output itself
/// (`mirror().input_shape() == output_shape()`), and each mirror output's
/// shape is its input's, except for a flattening concat (numpy's
/// `axis=None`, candle's one-tensor `cat`): its mirror splits the output's
/// 1-D view `[output elements]`, and its outputs are the inputs flattened.
/// Either way the element counts, and so the bytes, are the same. An input
/// that takes no part (torch's legacy skip of 1-D empty tensors) has no
/// mirror output: nothing is read from it.
///
/// The mirror's windows are contiguous and cover its axis, in input order:
/// every output element is written exactly once.
///
/// # Examples
///
/// ```
/// use wgpu_split::ResolvedConcat;
///
/// // [2, 3] and [2, 1] along axis 1: a split of [2, 4] into windows of 3 and 1.
/// let concat = ResolvedConcat::new(&[[2, 3], [2, 1]], 1).unwrap();
/// assert_eq!(concat.output_shape(), &[2, 4]);
/// assert_eq!(concat.mirror().lengths(), &[3, 1]);
/// assert_eq!(concat.mirror_output(1), Some(1));
///
/// // Stacking three [2] vectors on a new axis 0: the mirror of unbind.
/// let stack = ResolvedConcat::stack(&[[2], [2], [2]], 0).unwrap();
/// assert_eq!(stack.output_shape(), &[3, 2]);
/// assert!(!stack.mirror().keep_axis());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResolvedConcat {
    op: OpId,
    input_shapes: Vec<Vec<usize>>,
    output_shape: Vec<usize>,
    mirror_outputs: Vec<Option<usize>>,
    mirror: ResolvedSplit,
}

impl ResolvedConcat {
    /// Assembles a concat whose parts the caller has checked.
    pub(super) fn from_parts(
        op: OpId,
        input_shapes: Vec<Vec<usize>>,
        output_shape: Vec<usize>,
        mirror_outputs: Vec<Option<usize>>,
        mirror: ResolvedSplit,
    ) -> Self {
        ResolvedConcat {
            op,
            input_shapes,
            output_shape,
            mirror_outputs,
            mirror,
        }
    }

    /// The operator or call the concat was resolved for.
    pub fn op(&self) -> OpId {
        self.op
    }

    /// Number of inputs, skipped ones included.
    pub fn input_count(&self) -> usize {
        self.input_shapes.len()
    }

    /// The inputs' shapes as given.
    pub fn input_shapes(&self) -> &[Vec<usize>] {
        &self.input_shapes
    }

    /// The shape of the output.
    pub fn output_shape(&self) -> &[usize] {
        &self.output_shape
    }

    /// The split this concat mirrors: a split of the output (of its 1-D
    /// view for a flattening concat) whose outputs are the inputs, in order.
    pub fn mirror(&self) -> &ResolvedSplit {
        &self.mirror
    }

    /// The mirror output that input `index` is, or `None` when the input
    /// takes no part (torch's legacy skip) or `index` is past the inputs.
    pub fn mirror_output(&self, index: usize) -> Option<usize> {
        self.mirror_outputs.get(index).copied().flatten()
    }

    /// Per input, in order, the mirror output it is (`None`: skipped).
    pub fn mirror_outputs(&self) -> &[Option<usize>] {
        &self.mirror_outputs
    }

    /// The axis of the mirror (for a stack, the new axis of the output).
    pub fn axis(&self) -> usize {
        self.mirror.axis()
    }

    /// The output's element type for inputs of `element_types`: the type of
    /// the first input that takes part (of the first input when none does),
    /// which every input that takes part must share.
    ///
    /// # Errors
    ///
    /// [`ConcatError::InputCountMismatch`]; [`ConcatError::ElementTypeMismatch`]
    /// naming the first input of another type.
    pub fn check_element_types(
        &self,
        element_types: &[ElementType],
    ) -> Result<ElementType, ConcatError> {
        if element_types.len() != self.input_count() || element_types.is_empty() {
            return Err(ConcatError::InputCountMismatch {
                expected: self.input_count(),
                actual: element_types.len(),
            });
        }
        let mut taking = (0..element_types.len()).filter(|&i| self.mirror_output(i).is_some());
        let reference = taking.clone().next().unwrap_or(0);
        let expected = element_types[reference];
        match taking.find(|&i| element_types[i] != expected) {
            Some(index) => Err(ConcatError::ElementTypeMismatch {
                index,
                element_type: element_types[index],
                reference,
                expected,
            }),
            None => Ok(expected),
        }
    }

    /// Checks that tensors of `shapes` are the inputs this concat was
    /// resolved for.
    ///
    /// # Errors
    ///
    /// [`ConcatError::InputCountMismatch`]; [`ConcatError::InputShapeMismatch`]
    /// naming the first input whose shape differs.
    pub fn check_input_shapes<S: AsRef<[usize]>>(&self, shapes: &[S]) -> Result<(), ConcatError> {
        check_shapes(&self.input_shapes, shapes)
    }
}

/// Tensors of `shapes` as the inputs of a concat resolved for `expected`:
/// as many, each of its shape.
pub(crate) fn check_shapes<S: AsRef<[usize]>>(
    expected: &[Vec<usize>],
    shapes: &[S],
) -> Result<(), ConcatError> {
    if shapes.len() != expected.len() {
        return Err(ConcatError::InputCountMismatch {
            expected: expected.len(),
            actual: shapes.len(),
        });
    }
    let differs = expected
        .iter()
        .zip(shapes)
        .position(|(e, actual)| e.as_slice() != actual.as_ref());
    match differs {
        Some(index) => Err(ConcatError::InputShapeMismatch {
            index,
            expected: expected[index].clone(),
            actual: shapes[index].as_ref().to_vec(),
        }),
        None => Ok(()),
    }
}
