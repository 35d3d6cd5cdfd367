//! The ONNX edge: reads whole models for their `Split` and
//! `SplitToSequence` nodes ([`OnnxModel`]), models holding one such node, or
//! one `Concat` or `ConcatFromSequence` node ([`SplitModel`]), and turns
//! them into [`Operator`]s (or [`crate::ConcatOperator`]s) and, for their
//! constants and initializers, [`HostTensor`]s (with the `analysis`
//! feature, `read_tensor` and `read_sequence` decode the node tests'
//! `TensorProto` / `SequenceProto` files too). Only
//! [`crate::semantics`] and the tensor types are fed from here; nothing else
//! depends on this module.

mod concat_node;
mod constants;
mod dim_expr;
pub(crate) mod error;
mod external;
mod fused;
mod fused_concat;
mod lengths_source;
mod model;
#[cfg(feature = "analysis")]
pub mod node_test;
mod operator;
/// The protobuf messages the reader decodes (a subset of `onnx.proto`),
/// public with the `analysis` feature for tests and tools that build
/// models.
#[cfg(feature = "analysis")]
pub mod proto;
#[cfg(not(feature = "analysis"))]
pub(crate) mod proto;
mod scope;
mod shapes;
mod split_node;
mod tensor_proto;

use std::collections::HashMap;
use std::path::Path;

use prost::Message;

use crate::error::{Error, Result};
use crate::semantics::Operator;
use crate::tensor::HostTensor;
pub(crate) use error::OnnxError;
pub use fused::FusedChain;
pub use fused_concat::{ConcatChain, ConcatNode};
pub use lengths_source::LengthsSource;
pub use model::OnnxModel;
use operator::{is_split_node, lengths_input, split_operator};
use proto::{AttributeProto, NodeProto, attribute_type};
pub use shapes::Dim;
pub use split_node::{NodePath, RuntimeLengths, SplitNode, SplitOperator};
#[cfg(feature = "analysis")]
pub use tensor_proto::{read_sequence, read_tensor, tensor_from_proto, tensor_to_proto};

fn decode<M: Message + Default>(bytes: &[u8], message: &'static str) -> Result<M> {
    M::decode(bytes).map_err(|e| {
        OnnxError::ProtobufDecode {
            message,
            detail: e.to_string(),
        }
        .into()
    })
}

fn malformed_model(detail: impl Into<String>) -> Error {
    OnnxError::MalformedModel {
        detail: detail.into(),
    }
    .into()
}

/// A model whose graph is one `Split` or `SplitToSequence` node, possibly
/// among nodes that only feed it constants (`Constant`, `Identity` of an
/// initializer or of a constant).
#[derive(Debug, Clone, PartialEq)]
pub struct SplitModel {
    node: NodeProto,
    opset: i64,
    graph_inputs: Vec<String>,
    graph_output_count: usize,
    initializers: HashMap<String, HostTensor>,
}

impl SplitModel {
    /// Reads and decodes `model.onnx`.
    ///
    /// # Errors
    ///
    /// [`OnnxError::Io`] and the errors of [`SplitModel::from_bytes`].
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| OnnxError::io(path, &e))?;
        Self::from_bytes(&bytes)
    }

    /// Decodes a serialized `ModelProto`.
    ///
    /// # Errors
    ///
    /// [`OnnxError::ProtobufDecode`]; [`OnnxError::MalformedModel`] when the graph is
    /// missing, holds other than one split node or lacks a default-domain opset;
    /// [`OnnxError::UnsupportedOperator`] for any other node; the errors of
    /// a tensor's decoding ([`crate::error::TensorError`], [`OnnxError::MalformedTensor`])
    /// for initializers and constants.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let model = decode::<proto::ModelProto>(bytes, "ModelProto")?;
        let graph = model
            .graph
            .ok_or_else(|| malformed_model("the model has no graph"))?;
        let opset = model
            .opset_import
            .iter()
            .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
            .and_then(|o| o.version)
            .ok_or_else(|| malformed_model("the model imports no default-domain opset"))?;
        let mut initializers = graph
            .initializer
            .iter()
            .map(|t| {
                Ok((
                    t.name.clone().unwrap_or_default(),
                    tensor_proto::tensor_from_proto(t)?,
                ))
            })
            .collect::<Result<HashMap<_, _>>>()?;
        let node = constants_and_split(graph.node, &mut initializers)?;
        let graph_inputs = graph
            .input
            .iter()
            .filter_map(|v| v.name.clone())
            .filter(|name| !initializers.contains_key(name))
            .collect();
        Ok(SplitModel {
            node,
            opset,
            graph_inputs,
            graph_output_count: graph.output.len(),
            initializers,
        })
    }

    /// Names of the graph inputs that must be fed, in order (initializers excluded).
    pub fn graph_inputs(&self) -> &[String] {
        &self.graph_inputs
    }

    /// Number of graph outputs.
    pub fn graph_output_count(&self) -> usize {
        self.graph_output_count
    }

    /// The default-domain opset the model imports.
    pub fn opset(&self) -> i64 {
        self.opset
    }

    /// The node's operator type, `Split`, `SplitToSequence`, `Concat` or
    /// `ConcatFromSequence`.
    pub fn op_type(&self) -> &str {
        self.node.op_type.as_deref().unwrap_or_default()
    }

    /// Builds the operator for the given feeds (one per [`graph_inputs`]
    /// entry, in order) and returns it with the data tensor it splits.
    ///
    /// [`graph_inputs`]: SplitModel::graph_inputs
    ///
    /// # Errors
    ///
    /// [`OnnxError::MalformedModel`] for a feed count that differs from the graph
    /// inputs, a node input with no value, or attributes of the wrong name or
    /// kind; [`crate::ResolveError::NonNumericParam`] for a `split` of a non-numeric type.
    pub fn bind<'a>(&'a self, feeds: &'a [HostTensor]) -> Result<(Operator, &'a HostTensor)> {
        if self.is_concat() {
            return Err(malformed_model("a concat node: bind it with bind_concat"));
        }
        if feeds.len() != self.graph_inputs.len() {
            return Err(malformed_model(format!(
                "{} inputs fed, but the graph has {} ({:?})",
                feeds.len(),
                self.graph_inputs.len(),
                self.graph_inputs
            )));
        }
        let value = |name: &str| -> Result<&'a HostTensor> {
            self.graph_inputs
                .iter()
                .position(|n| n == name)
                .map(|i| &feeds[i])
                .or_else(|| self.initializers.get(name))
                .ok_or_else(|| malformed_model(format!("node input {name:?} has no value")))
        };
        let data_name = self
            .node
            .input
            .first()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| malformed_model("the split node has no data input"))?;
        let data = value(data_name)?;
        let split = match lengths_input(&self.node) {
            Some(name) => Some(value(name)?.to_param()?),
            None => None,
        };
        Ok((split_operator(&self.node, self.opset, split)?, data))
    }
}

/// The one split (or concat) node of `nodes`, after evaluating the
/// `Constant` and `Identity` nodes that feed it into `values`.
fn constants_and_split(
    nodes: Vec<NodeProto>,
    values: &mut HashMap<String, HostTensor>,
) -> Result<NodeProto> {
    let mut split = Vec::new();
    for node in nodes {
        let default_domain = matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"));
        let output = node.output.first().cloned().unwrap_or_default();
        match node.op_type.as_deref().unwrap_or_default() {
            _ if is_split_node(&node) => split.push(node),
            op_type if default_domain && concat_node::is_concat(op_type) => split.push(node),
            "Constant" if default_domain => {
                let value = constants::constant_node_value(&node, None)?;
                values.insert(output, value);
            }
            "Identity" if default_domain => {
                let input = node.input.first().map(String::as_str).unwrap_or_default();
                let value = values.get(input).cloned().ok_or_else(|| {
                    malformed_model(format!(
                        "Identity of {input:?}, which is no initializer or constant before it"
                    ))
                })?;
                values.insert(output, value);
            }
            op_type => {
                return Err(OnnxError::UnsupportedOperator {
                    domain: node.domain.clone().unwrap_or_default(),
                    op_type: op_type.to_string(),
                }
                .into());
            }
        }
    }
    let count = split.len();
    <[NodeProto; 1]>::try_from(split)
        .map(|[node]| node)
        .map_err(|_| {
            malformed_model(format!(
                "the graph holds {count} split nodes; exactly one is expected"
            ))
        })
}

/// A node's attributes by name, with kind checks.
struct Attributes<'a>(HashMap<&'a str, &'a AttributeProto>);

impl<'a> Attributes<'a> {
    fn new(list: &'a [AttributeProto]) -> Result<Self> {
        let mut map = HashMap::new();
        for a in list {
            let name = a.name.as_deref().unwrap_or_default();
            if map.insert(name, a).is_some() {
                return Err(malformed_model(format!("attribute {name:?} appears twice")));
            }
        }
        Ok(Attributes(map))
    }

    fn only(&self, allowed: &[&str]) -> Result<()> {
        match self.0.keys().find(|k| !allowed.contains(k)) {
            Some(name) => Err(malformed_model(format!(
                "unknown attribute {name:?} (allowed: {allowed:?})"
            ))),
            None => Ok(()),
        }
    }

    fn kind_is(&self, a: &AttributeProto, name: &str, kind: i32, has_value: bool) -> Result<()> {
        // Old models may leave `type` unset; then the value's presence decides.
        match a.r#type {
            Some(t) if t == kind => Ok(()),
            None if has_value => Ok(()),
            _ => Err(malformed_model(format!(
                "attribute {name:?} has kind {:?}, expected {}",
                a.r#type,
                if kind == attribute_type::INT {
                    "INT"
                } else {
                    "INTS"
                }
            ))),
        }
    }

    fn int(&self, name: &str) -> Result<Option<i64>> {
        let Some(a) = self.0.get(name) else {
            return Ok(None);
        };
        self.kind_is(a, name, attribute_type::INT, a.i.is_some())?;
        Ok(Some(a.i.unwrap_or(0)))
    }

    fn ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        let Some(a) = self.0.get(name) else {
            return Ok(None);
        };
        self.kind_is(a, name, attribute_type::INTS, true)?;
        Ok(Some(a.ints.clone()))
    }
}
