//! [`LengthsSource`]: where split lengths known at run time only come from.

use std::fmt;

/// Where lengths that are known at run time only come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LengthsSource {
    /// An input of the model, fed by the caller.
    GraphInput {
        /// The input's name.
        name: String,
    },
    /// An input of a subgraph, bound by its `If`, `Loop` or `Scan`.
    SubgraphInput {
        /// The input's name.
        name: String,
    },
    /// A value computed by another node.
    NodeOutput {
        /// The value's name.
        name: String,
        /// The operator type of the node computing it.
        op_type: String,
    },
}

impl fmt::Display for LengthsSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LengthsSource::GraphInput { name } => write!(f, "graph input {name:?}"),
            LengthsSource::SubgraphInput { name } => write!(f, "subgraph input {name:?}"),
            LengthsSource::NodeOutput { name, op_type } => {
                write!(f, "{name:?}, computed by a {op_type} node")
            }
        }
    }
}
