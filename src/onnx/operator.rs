//! A `Split` or `SplitToSequence` node's attributes and lengths as the
//! [`Operator`] that [`crate::semantics`] resolves.

use super::proto::NodeProto;
use super::{Attributes, malformed_model};
use crate::error::Result;
use crate::semantics::{OnnxSplit, OnnxSplitToSequence, Operator, ParamTensor, SequenceShapes};

/// The operator of `node` at `opset`, with `split` the value of its second
/// input when it has one.
///
/// # Errors
///
/// [`crate::error::OnnxError::MalformedModel`] for more than two inputs and
/// attributes of the wrong name or kind.
pub(crate) fn split_operator(
    node: &NodeProto,
    opset: i64,
    split: Option<ParamTensor>,
) -> Result<Operator> {
    if node.input.len() > 2 {
        return Err(malformed_model(format!(
            "the split node has {} inputs; at most 2 are allowed",
            node.input.len()
        )));
    }
    let attrs = Attributes::new(&node.attribute)?;
    Ok(if node.op_type.as_deref() == Some("Split") {
        attrs.only(&["axis", "split", "num_outputs"])?;
        Operator::OnnxSplit(OnnxSplit {
            opset,
            axis: attrs.int("axis")?.unwrap_or(0),
            split_attribute: attrs.ints("split")?,
            split_input: split,
            num_outputs: attrs.int("num_outputs")?,
            outputs: node.output.len(),
        })
    } else {
        attrs.only(&["axis", "keepdims"])?;
        Operator::OnnxSplitToSequence(OnnxSplitToSequence {
            opset,
            axis: attrs.int("axis")?.unwrap_or(0),
            keepdims: attrs.int("keepdims")?.unwrap_or(1),
            split,
            shapes: SequenceShapes::Spec,
        })
    })
}

/// The split node's second input, when it names one.
pub(crate) fn lengths_input(node: &NodeProto) -> Option<&str> {
    node.input
        .get(1)
        .map(String::as_str)
        .filter(|n| !n.is_empty())
}

/// Whether `node` is a default-domain `Split` or `SplitToSequence`.
pub(crate) fn is_split_node(node: &NodeProto) -> bool {
    matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"))
        && matches!(node.op_type.as_deref(), Some("Split" | "SplitToSequence"))
}
