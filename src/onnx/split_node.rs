//! [`SplitNode`]: one `Split` or `SplitToSequence` node of a model, where it
//! sits, and its operator resolved as far as the model alone allows.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use super::constants::{Value, value_of};
use super::error::OnnxError;
use super::fused::FusedChain;
use super::lengths_source::LengthsSource;
use super::operator::{lengths_input, split_operator};
use super::proto::NodeProto;
use super::scope::Scope;
use super::shapes::{Dim, declared};
use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::semantics::{Operator, ParamTensor, PermutedSplit, PieceMove, ResolvedSplit};

/// Where a node sits: the graphs from the model's own down to the node's
/// (each subgraph as `owner.attribute`), and the node's name and index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodePath {
    /// The model's graph name (or `main`), then one entry per subgraph:
    /// the owning node's name (or op type and index) and the attribute,
    /// e.g. `node_cond__1.then_branch` or `Loop.0.body`.
    pub graphs: Vec<String>,
    /// The node's name, when it has one.
    pub name: Option<String>,
    /// The node's position in its graph.
    pub index: usize,
}

impl fmt::Display for NodePath {
    /// `graph/subgraph/.../name`, or `#index` for a node without a name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for g in &self.graphs {
            write!(f, "{g}/")?;
        }
        match &self.name {
            Some(name) => write!(f, "{name}"),
            None => write!(f, "#{}", self.index),
        }
    }
}

/// A split whose lengths exist at run time only: everything else is read,
/// and [`RuntimeLengths::complete`] adds the lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeLengths {
    operator: Operator,
    source: LengthsSource,
}

impl RuntimeLengths {
    /// Where the lengths come from.
    pub fn source(&self) -> &LengthsSource {
        &self.source
    }

    /// The operator with the lengths the runtime computed or was fed (the
    /// node's second input, `split`).
    pub fn complete(&self, lengths: ParamTensor) -> Operator {
        let mut operator = self.operator.clone();
        match &mut operator {
            Operator::OnnxSplit(op) => op.split_input = Some(lengths),
            Operator::OnnxSplitToSequence(op) => op.split = Some(lengths),
            // Only the two ONNX split operators are read from models.
            _ => {}
        }
        operator
    }
}

/// A split node's operator as far as the model tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum SplitOperator {
    /// Everything is in the model: attributes, and lengths (if any) from
    /// an initializer or a `Constant` node.
    Static(Operator),
    /// The lengths come from a graph input or a computed value.
    AtRunTime(RuntimeLengths),
}

/// One `Split` or `SplitToSequence` node of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitNode {
    /// Where the node sits.
    pub path: NodePath,
    /// `Split` or `SplitToSequence`.
    pub op_type: String,
    /// The model's default-domain opset (`None` when it imports none).
    pub opset: Option<i64>,
    /// The name of the tensor the node splits.
    pub input: String,
    /// The name of the node's lengths input (`split`), when it has one.
    pub lengths_input: Option<String>,
    /// Its element type, when the model declares it.
    pub element_type: Option<ElementType>,
    /// Its shape, when the model declares it.
    pub input_shape: Option<Vec<Dim>>,
    /// The operator, or why the node cannot be read.
    pub operator: Result<SplitOperator>,
    /// The outputs the model reshapes and transposes right after, and uses
    /// nowhere else: what [`SplitNode::fuse`] fuses (empty when
    /// none).
    pub chains: Vec<FusedChain>,
}

impl SplitNode {
    /// The input shape with `dims` naming symbolic dimensions.
    ///
    /// # Errors
    ///
    /// [`OnnxError::ShapeUnknown`] when the model declares no shape, or a
    /// dimension is unknown or names something `dims` does not give.
    pub fn shape_with(&self, dims: &HashMap<String, usize>) -> Result<Vec<usize>> {
        let unknown = |detail: String| OnnxError::ShapeUnknown {
            node: self.path.to_string(),
            detail,
        };
        let shape = self
            .input_shape
            .as_ref()
            .ok_or_else(|| unknown(format!("the model declares no shape for {:?}", self.input)))?;
        Ok(shape
            .iter()
            .enumerate()
            .map(|(i, d)| {
                d.value(dims)
                    .ok_or_else(|| unknown(format!("dimension {i} of {:?} is {d}", self.input)))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?)
    }

    /// Resolves the node for its input shape, `dims` naming symbolic
    /// dimensions.
    ///
    /// # Errors
    ///
    /// The node's own error; [`OnnxError::LengthsAtRunTime`];
    /// [`OnnxError::ShapeUnknown`]; every [`crate::ResolveError`] of the rules.
    pub fn resolve(&self, dims: &HashMap<String, usize>) -> Result<ResolvedSplit> {
        let operator = match &self.operator {
            Ok(SplitOperator::Static(op)) => op,
            Ok(SplitOperator::AtRunTime(r)) => {
                return Err(OnnxError::LengthsAtRunTime {
                    node: self.path.to_string(),
                    from: r.source.clone(),
                }
                .into());
            }
            Err(e) => return Err(e.clone()),
        };
        Ok(operator.resolve(&self.shape_with(dims)?)?)
    }

    /// The node's split (resolved by [`SplitNode::resolve`], or for the
    /// shape and lengths a runtime has) with its [`SplitNode::chains`]
    /// fused: each chained output reshaped and transposed as its `Reshape`
    /// and `Transpose` say (the `Transpose` nodes' outputs), the others as
    /// the split gives them.
    ///
    /// # Errors
    ///
    /// [`OnnxError::FusedChain`] for a chain ONNX refuses for its piece;
    /// [`crate::PermuteError`] for one no strided move makes (a reshape
    /// whose dimensions straddle the piece's rows in the input).
    pub fn fuse(&self, split: &ResolvedSplit) -> Result<PermutedSplit> {
        let moves = (0..split.output_count())
            .map(|i| {
                let piece = split.output_shape(i);
                match self.chains.iter().find(|c| c.output == i) {
                    Some(chain) => Ok(chain.piece_move(&piece)?),
                    None => Ok(PieceMove::keep(&piece)),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PermutedSplit::new(split.clone(), moves)?)
    }

    /// Bytes the fused move saves against running the chains' `Transpose`
    /// nodes as passes of their own over `split`'s outputs: each reads and
    /// writes its output once more (twice its bytes), for elements of
    /// `element_type`.
    pub fn fused_bytes_saved(&self, split: &ResolvedSplit, element_type: ElementType) -> u64 {
        self.chains
            .iter()
            .filter(|c| c.output < split.output_count())
            .map(|c| {
                let count: usize = split.output_shape(c.output).iter().product();
                2 * element_type.byte_len(count).unwrap_or_default() as u64
            })
            .sum()
    }
}

/// Reads `node` (at `path` in the graph `scope` describes).
pub(crate) fn read_split_node(
    node: &NodeProto,
    path: NodePath,
    scope: &Scope,
    opset: Option<i64>,
    dir: Option<&Path>,
) -> SplitNode {
    let input = node.input.first().cloned().unwrap_or_default();
    let (element_type, input_shape) = declared(scope, &input);
    SplitNode {
        path,
        op_type: node.op_type.clone().unwrap_or_default(),
        opset,
        operator: operator_of(node, &input, scope, opset, dir),
        input,
        lengths_input: lengths_input(node).map(str::to_string),
        element_type,
        input_shape,
        chains: Vec::new(),
    }
}

fn operator_of(
    node: &NodeProto,
    input: &str,
    scope: &Scope,
    opset: Option<i64>,
    dir: Option<&Path>,
) -> Result<SplitOperator> {
    let malformed = |detail: &str| -> Error {
        OnnxError::MalformedModel {
            detail: detail.to_string(),
        }
        .into()
    };
    let opset = opset.ok_or_else(|| malformed("the model imports no default-domain opset"))?;
    if input.is_empty() {
        return Err(malformed("the split node has no data input"));
    }
    scope
        .define(input)
        .ok_or_else(|| OnnxError::UndefinedValue {
            name: input.to_string(),
        })?;
    let lengths = match lengths_input(node) {
        None => None,
        Some(name) => Some(value_of(scope, name, dir)?),
    };
    Ok(match lengths {
        None => SplitOperator::Static(split_operator(node, opset, None)?),
        Some(Value::Constant(t)) => {
            SplitOperator::Static(split_operator(node, opset, Some(t.to_param()?))?)
        }
        Some(Value::AtRunTime(source)) => SplitOperator::AtRunTime(RuntimeLengths {
            operator: split_operator(node, opset, None)?,
            source,
        }),
    })
}
