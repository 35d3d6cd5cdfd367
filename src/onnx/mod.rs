//! The ONNX edge: reads models holding one `Split` or `SplitToSequence` node
//! and their `TensorProto` / `SequenceProto` data, and turns them into
//! [`Operator`]s and [`HostTensor`]s. Only [`crate::semantics`] and the tensor
//! types are fed from here; nothing else depends on this module.

pub(crate) mod error;
#[doc(hidden)]
pub mod node_test;
/// The protobuf messages the reader decodes (a subset of `onnx.proto`),
/// public for tests that build models; not part of the supported API.
#[doc(hidden)]
pub mod proto;

use std::collections::HashMap;
use std::path::Path;

use prost::Message;

use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::semantics::{OnnxSplit, OnnxSplitToSequence, Operator, SequenceShapes};
use crate::tensor::TensorError;
use crate::tensor::{HostTensor, checked_count};
pub use error::OnnxError;
use proto::{AttributeProto, NodeProto, SequenceProto, TensorProto, attribute_type};

/// Decodes a serialized `TensorProto`.
///
/// # Errors
///
/// [`OnnxError::ProtobufDecode`] for bytes that are not a `TensorProto`, and the
/// errors of [`tensor_from_proto`].
pub fn read_tensor(bytes: &[u8]) -> Result<HostTensor> {
    tensor_from_proto(&decode::<TensorProto>(bytes, "TensorProto")?)
}

/// Decodes a serialized `SequenceProto` of tensors.
///
/// # Errors
///
/// [`OnnxError::ProtobufDecode`], [`OnnxError::MalformedTensor`] for a sequence of
/// something other than tensors, and the errors of [`tensor_from_proto`].
pub fn read_sequence(bytes: &[u8]) -> Result<Vec<HostTensor>> {
    let sequence = decode::<SequenceProto>(bytes, "SequenceProto")?;
    let elem_type = sequence
        .elem_type
        .unwrap_or(proto::sequence_elem_type::TENSOR);
    if elem_type != proto::sequence_elem_type::TENSOR {
        return Err(OnnxError::MalformedTensor {
            name: sequence.name.unwrap_or_default(),
            detail: format!("sequence of element kind {elem_type}; only tensor sequences are read"),
        }
        .into());
    }
    sequence
        .tensor_values
        .iter()
        .map(tensor_from_proto)
        .collect()
}

/// Converts a `TensorProto` into a [`HostTensor`], from whichever field holds
/// the data: `raw_data`, `float_data`, `int32_data` (8/16-bit and packed
/// sub-byte types), `int64_data`, `double_data`, `uint64_data`, `string_data`;
/// complex values as pairs.
///
/// Sizes are checked against the dimensions before anything is allocated, so
/// dimensions that claim terabytes fail with [`TensorError::DataLength`].
///
/// # Errors
///
/// [`TensorError::UnknownElementType`], [`TensorError::ShapeOverflow`],
/// [`TensorError::DataLength`], and [`OnnxError::MalformedTensor`] for negative
/// dimensions or external data.
pub fn tensor_from_proto(t: &TensorProto) -> Result<HostTensor> {
    let name = t.name.clone().unwrap_or_default();
    let malformed = |detail: &str| -> Error {
        OnnxError::MalformedTensor {
            name: name.clone(),
            detail: detail.to_string(),
        }
        .into()
    };
    let code = t.data_type.unwrap_or(0);
    let element_type =
        ElementType::from_onnx_code(code).ok_or(TensorError::UnknownElementType { code })?;
    if t.data_location == Some(1) || !t.external_data.is_empty() {
        return Err(malformed("external data is not supported"));
    }
    let shape = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| malformed("negative dimension")))
        .collect::<Result<Vec<_>>>()?;
    let count = checked_count(&shape)?;
    if element_type == ElementType::String {
        if t.raw_data.is_some() {
            return Err(malformed("a string tensor cannot use raw_data"));
        }
        return Ok(HostTensor::from_byte_strings(
            &shape,
            t.string_data.clone(),
        )?);
    }
    if let Some(raw) = &t.raw_data {
        return Ok(HostTensor::from_raw(element_type, &shape, raw.clone())?);
    }
    let bytes = typed_field_bytes(t, element_type, &shape, count)?;
    Ok(HostTensor::from_raw(element_type, &shape, bytes)?)
}

/// The little-endian bytes of the typed `*_data` field that stores `element_type`.
fn typed_field_bytes(
    t: &TensorProto,
    element_type: ElementType,
    shape: &[usize],
    count: usize,
) -> Result<Vec<u8>> {
    use ElementType::*;
    let bits = element_type.bit_width().unwrap_or(0) as usize;
    // How many values the field must hold: pairs for complex, one packed byte
    // per value for sub-byte types, one value per element otherwise.
    let expected = match element_type {
        Complex64 | Complex128 => count as u128 * 2,
        _ if bits < 8 => (count as u128 * bits as u128).div_ceil(8),
        _ => count as u128,
    };
    let check = |actual: usize| {
        if actual as u128 == expected {
            Ok(())
        } else {
            Err(TensorError::DataLength {
                element_type,
                shape: shape.iter().map(|&d| d as u64).collect(),
                expected,
                actual,
                unit: "values",
            })
        }
    };
    Ok(match element_type {
        Float | Complex64 => {
            check(t.float_data.len())?;
            t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Double | Complex128 => {
            check(t.double_data.len())?;
            t.double_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Int64 => {
            check(t.int64_data.len())?;
            t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Uint64 => {
            check(t.uint64_data.len())?;
            t.uint64_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Uint32 => {
            check(t.uint64_data.len())?;
            t.uint64_data
                .iter()
                .flat_map(|&v| (v as u32).to_le_bytes())
                .collect()
        }
        _ => {
            // int32_data: one element per value (8, 16, 32 bits; 16-bit floats
            // as their bit patterns), or one packed byte per value (sub-byte).
            check(t.int32_data.len())?;
            let width = bits.div_ceil(8);
            t.int32_data
                .iter()
                .flat_map(|v| v.to_le_bytes().into_iter().take(width))
                .collect()
        }
    })
}

/// Converts a [`HostTensor`] into a `TensorProto` (`raw_data`, or
/// `string_data` for strings).
pub fn tensor_to_proto(name: &str, tensor: &HostTensor) -> TensorProto {
    let mut t = TensorProto {
        dims: tensor.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(tensor.element_type().onnx_code()),
        name: Some(name.to_string()),
        ..TensorProto::default()
    };
    match tensor.byte_strings() {
        Ok(strings) => t.string_data = strings.to_vec(),
        Err(_) => t.raw_data = tensor.as_bytes().ok().map(<[u8]>::to_vec),
    }
    t
}

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
        if !known_domain || !matches!(op_type.as_str(), "Split" | "SplitToSequence") {
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

    /// The node's operator type, `Split` or `SplitToSequence`.
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
