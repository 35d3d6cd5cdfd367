//! The ONNX edge: reads models holding one `Split` or `SplitToSequence` node
//! (or one `Concat` or `ConcatFromSequence` node) and their `TensorProto` /
//! `SequenceProto` data, and turns them into [`Operator`]s (or
//! [`crate::ConcatOperator`]s) and [`HostTensor`]s. Only [`crate::semantics`] and the tensor
//! types are fed from here; nothing else depends on this module.

mod concat_node;
pub(crate) mod error;
#[doc(hidden)]
pub mod node_test;
/// The protobuf messages the reader decodes (a subset of `onnx.proto`),
/// public for tests that build models; not part of the supported API.
#[doc(hidden)]
pub mod proto;
mod tensor_proto;

use std::collections::HashMap;
use std::path::Path;

use prost::Message;

use crate::error::{Error, Result};
use crate::semantics::{OnnxSplit, OnnxSplitToSequence, Operator, SequenceShapes};
use crate::tensor::HostTensor;
pub use error::OnnxError;
use proto::{AttributeProto, NodeProto, attribute_type};
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

/// A model whose graph is one `Split` or `SplitToSequence` node.
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
    /// missing, holds other than one node or lacks a default-domain opset;
    /// [`OnnxError::UnsupportedOperator`]; the errors of [`tensor_from_proto`]
    /// for initializers.
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
        let [node] = <[NodeProto; 1]>::try_from(graph.node).map_err(|nodes| {
            malformed_model(format!(
                "the graph holds {} nodes; exactly one split node is expected",
                nodes.len()
            ))
        })?;
        let domain = node.domain.clone().unwrap_or_default();
        let op_type = node.op_type.clone().unwrap_or_default();
        let known_domain = domain.is_empty() || domain == "ai.onnx";
        let known_op = matches!(op_type.as_str(), "Split" | "SplitToSequence");
        if !known_domain || !(known_op || concat_node::is_concat(&op_type)) {
            return Err(OnnxError::UnsupportedOperator { domain, op_type }.into());
        }
        let initializers = graph
            .initializer
            .iter()
            .map(|t| Ok((t.name.clone().unwrap_or_default(), tensor_from_proto(t)?)))
            .collect::<Result<HashMap<_, _>>>()?;
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
        let split = match self.node.input.get(1).filter(|n| !n.is_empty()) {
            Some(name) => Some(value(name)?.to_param()?),
            None => None,
        };
        if self.node.input.len() > 2 {
            return Err(malformed_model(format!(
                "the split node has {} inputs; at most 2 are allowed",
                self.node.input.len()
            )));
        }
        let attrs = Attributes::new(&self.node.attribute)?;
        let operator = if self.op_type() == "Split" {
            attrs.only(&["axis", "split", "num_outputs"])?;
            Operator::OnnxSplit(OnnxSplit {
                opset: self.opset,
                axis: attrs.int("axis")?.unwrap_or(0),
                split_attribute: attrs.ints("split")?,
                split_input: split,
                num_outputs: attrs.int("num_outputs")?,
                outputs: self.node.output.len(),
            })
        } else {
            attrs.only(&["axis", "keepdims"])?;
            Operator::OnnxSplitToSequence(OnnxSplitToSequence {
                opset: self.opset,
                axis: attrs.int("axis")?.unwrap_or(0),
                keepdims: attrs.int("keepdims")?.unwrap_or(1),
                split,
                shapes: SequenceShapes::Spec,
            })
        };
        Ok((operator, data))
    }
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
