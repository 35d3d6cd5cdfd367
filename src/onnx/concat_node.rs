//! Concat nodes: a one-node model's `Concat` or `ConcatFromSequence` built
//! into a [`ConcatOperator`] with the tensors it joins.

use super::{Attributes, SplitModel, malformed_model};
use crate::error::Result;
use crate::semantics::{ConcatOperator, OnnxConcat, OnnxConcatFromSequence};
use crate::tensor::HostTensor;

/// True for the concat operator types the reader builds.
pub(super) fn is_concat(op_type: &str) -> bool {
    matches!(op_type, "Concat" | "ConcatFromSequence")
}

impl SplitModel {
    /// True when the model's node is a `Concat` or `ConcatFromSequence`
    /// (bind it with [`SplitModel::bind_concat`]).
    pub fn is_concat(&self) -> bool {
        is_concat(self.op_type())
    }

    /// Builds the concat operator for the given feeds and returns it with
    /// the tensors it joins, in order. For `Concat`, `feeds` holds one tensor
    /// per [`graph_inputs`](SplitModel::graph_inputs) entry and the node's
    /// inputs are feeds or initializers; for `ConcatFromSequence`, whose one
    /// input is a sequence graph input, `feeds` is that sequence's tensors.
    ///
    /// # Errors
    ///
    /// [`crate::error::OnnxError::MalformedModel`] for a node that is no
    /// concat, a feed count that differs from the graph inputs, a node input
    /// with no value (or an empty name), a sequence input that is not the
    /// one graph input, or attributes of the wrong name or kind.
    pub fn bind_concat<'a>(
        &'a self,
        feeds: &'a [HostTensor],
    ) -> Result<(ConcatOperator, Vec<&'a HostTensor>)> {
        let attrs = Attributes::new(&self.node.attribute)?;
        match self.op_type() {
            "Concat" => {
                attrs.only(&["axis"])?;
                let op = OnnxConcat {
                    opset: self.opset,
                    axis: attrs.int("axis")?,
                };
                Ok((op.into(), self.concat_inputs(feeds)?))
            }
            "ConcatFromSequence" => {
                attrs.only(&["axis", "new_axis"])?;
                let op = OnnxConcatFromSequence {
                    opset: self.opset,
                    axis: attrs.int("axis")?,
                    new_axis: attrs.int("new_axis")?.unwrap_or(0),
                };
                self.check_sequence_input()?;
                Ok((op.into(), feeds.iter().collect()))
            }
            other => Err(malformed_model(format!(
                "the node is a {other:?}, not a concat"
            ))),
        }
    }

    /// `Concat`'s inputs: each node input a feed or an initializer.
    fn concat_inputs<'a>(&'a self, feeds: &'a [HostTensor]) -> Result<Vec<&'a HostTensor>> {
        if feeds.len() != self.graph_inputs.len() {
            return Err(malformed_model(format!(
                "{} inputs fed, but the graph has {} ({:?})",
                feeds.len(),
                self.graph_inputs.len(),
                self.graph_inputs
            )));
        }
        self.node
            .input
            .iter()
            .map(|name| {
                self.graph_inputs
                    .iter()
                    .position(|n| n == name)
                    .map(|i| &feeds[i])
                    .or_else(|| self.initializers.get(name))
                    .filter(|_| !name.is_empty())
                    .ok_or_else(|| malformed_model(format!("concat input {name:?} has no value")))
            })
            .collect()
    }

    /// `ConcatFromSequence`'s one input is the graph's one input.
    fn check_sequence_input(&self) -> Result<()> {
        match (&self.node.input[..], &self.graph_inputs[..]) {
            ([input], [graph_input]) if input == graph_input => Ok(()),
            _ => Err(malformed_model(format!(
                "ConcatFromSequence takes one sequence, the graph's one input; the node has inputs {:?}, the graph {:?}",
                self.node.input, self.graph_inputs
            ))),
        }
    }
}
