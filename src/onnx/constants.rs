//! Constant values of a model: initializers, `Constant` nodes (`value`,
//! `value_int(s)`, `value_float(s)`) and `Identity` of either; any other
//! value is known at run time only, and the source says which.

use std::path::Path;

use super::error::OnnxError;
use super::external::tensor_at;
use super::lengths_source::LengthsSource;
use super::proto::{AttributeProto, NodeProto};
use super::scope::{Definition, Scope};
use crate::error::Result;
use crate::tensor::HostTensor;

/// `Identity` chains longer than this are refused (a cycle otherwise).
const MAX_IDENTITY_CHAIN: usize = 64;

/// A value as far as the model alone tells it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// Known from the model.
    Constant(HostTensor),
    /// Known at run time only.
    AtRunTime(LengthsSource),
}

/// The value of `name` as seen from `scope`.
///
/// # Errors
///
/// [`OnnxError::UndefinedValue`] for a name nothing defines,
/// [`OnnxError::MalformedModel`] for an `Identity` cycle or a `Constant`
/// node that is not numeric, and the errors of reading the tensor.
pub(crate) fn value_of(scope: &Scope, name: &str, dir: Option<&Path>) -> Result<Value> {
    let mut name = name;
    for _ in 0..MAX_IDENTITY_CHAIN {
        let definition = scope
            .define(name)
            .ok_or_else(|| OnnxError::UndefinedValue {
                name: name.to_string(),
            })?;
        let node = match definition {
            Definition::Initializer(t) => return Ok(Value::Constant(tensor_at(t, dir)?)),
            Definition::Input { main: true } => {
                return Ok(Value::AtRunTime(LengthsSource::GraphInput {
                    name: name.to_string(),
                }));
            }
            Definition::Input { main: false } => {
                return Ok(Value::AtRunTime(LengthsSource::SubgraphInput {
                    name: name.to_string(),
                }));
            }
            Definition::Node(node) => node,
        };
        let default_domain = matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"));
        match node.op_type.as_deref() {
            Some("Constant") if default_domain => {
                return Ok(Value::Constant(constant_node_value(node, dir)?));
            }
            Some("Identity") if default_domain && node.input.len() == 1 => {
                name = &node.input[0];
            }
            op_type => {
                return Ok(Value::AtRunTime(LengthsSource::NodeOutput {
                    name: name.to_string(),
                    op_type: op_type.unwrap_or_default().to_string(),
                }));
            }
        }
    }
    Err(OnnxError::MalformedModel {
        detail: format!("more than {MAX_IDENTITY_CHAIN} Identity nodes lead to {name:?}"),
    }
    .into())
}

/// The tensor a `Constant` node outputs.
///
/// # Errors
///
/// [`OnnxError::MalformedModel`] unless the node has exactly one of
/// `value`, `value_int`, `value_ints`, `value_float`, `value_floats`; the
/// errors of reading a `value` tensor.
pub(crate) fn constant_node_value(node: &NodeProto, dir: Option<&Path>) -> Result<HostTensor> {
    let malformed = |detail: String| OnnxError::MalformedModel {
        detail: format!(
            "Constant node {:?}: {detail}",
            node.name.as_deref().unwrap_or_default()
        ),
    };
    let [a] = node.attribute.as_slice() else {
        return Err(malformed(format!(
            "{} attributes; exactly one is expected",
            node.attribute.len()
        ))
        .into());
    };
    let name = a.name.as_deref().unwrap_or_default();
    let tensor = match name {
        "value" => match &a.t {
            Some(t) => return tensor_at(t, dir),
            None => return Err(malformed("attribute value holds no tensor".into()).into()),
        },
        "value_int" => HostTensor::from_slice(&[], &[int(a)?]),
        "value_ints" => HostTensor::from_slice(&[a.ints.len()], &a.ints),
        "value_float" => HostTensor::from_slice(&[], &[a.f.unwrap_or(0.0)]),
        "value_floats" => HostTensor::from_slice(&[a.floats.len()], &a.floats),
        other => {
            return Err(malformed(format!(
                "attribute {other:?} gives no numeric tensor (value, value_int(s) and \
                 value_float(s) are read)"
            ))
            .into());
        }
    };
    Ok(tensor?)
}

fn int(a: &AttributeProto) -> Result<i64> {
    a.i.ok_or_else(|| {
        OnnxError::MalformedModel {
            detail: "Constant attribute value_int holds no integer".into(),
        }
        .into()
    })
}
