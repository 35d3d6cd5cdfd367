//! [`FusedChain`]: a split output the model reshapes and transposes right
//! after (`Split -> Reshape -> Transpose`, a GPT-2 export's heads, a
//! detector's distribution head), used nowhere else: the move a
//! [`crate::PermutedSplit`] makes in the split's own pass, saving the
//! transpose's ([`crate::onnx::SplitNode::fuse`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::Attributes;
use super::constants::{Value, value_of};
use super::error::OnnxError;
use super::proto::{GraphProto, NodeProto};
use super::scope::Scope;
use crate::semantics::PieceMove;

/// One split output that feeds a `Reshape` whose shape is a constant, whose
/// output feeds a `Transpose`, neither value used by anything else (another
/// node, a subgraph, the graph's outputs). A `Reshape` whose shape is
/// computed at run time (`Shape`, `Gather`, `Concat`) makes no chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FusedChain {
    /// The split's output.
    pub output: usize,
    /// The `Reshape` node (its name, or op type and index).
    pub reshape: String,
    /// The `Transpose` node (its name, or op type and index).
    pub transpose: String,
    /// The `Reshape`'s shape as the model gives it (0 copies the piece's
    /// dimension there unless `allowzero`; one -1 is inferred).
    pub shape: Vec<i64>,
    /// The `Reshape`'s `allowzero` (opset 14): a 0 is a dimension of 0.
    pub allowzero: bool,
    /// The `Transpose`'s `perm`; `None`: the dimensions reversed.
    pub perm: Option<Vec<i64>>,
}

impl FusedChain {
    /// The move of a piece of shape `piece`: the `Reshape`'s shape as ONNX
    /// reads it against the piece, then the `Transpose`'s permutation.
    ///
    /// # Errors
    ///
    /// [`OnnxError::FusedChain`] for a shape ONNX itself refuses (two -1s, a
    /// 0 past the piece's rank, a count other than the piece's) or a
    /// negative `perm` entry.
    pub fn piece_move(&self, piece: &[usize]) -> Result<PieceMove, OnnxError> {
        let shape = reshaped(&self.shape, self.allowzero, piece, &self.reshape)?;
        let perm = match &self.perm {
            None => (0..shape.len()).rev().collect(),
            Some(perm) => perm
                .iter()
                .map(|&p| usize::try_from(p))
                .collect::<Result<Vec<usize>, _>>()
                .map_err(|_| OnnxError::FusedChain {
                    node: self.transpose.clone(),
                    detail: format!("perm {perm:?} has a negative entry"),
                })?,
        };
        Ok(PieceMove::new(shape, perm))
    }
}

/// `shape` (a `Reshape`'s, `allowzero` as it says) read against a tensor
/// of shape `piece` as ONNX reads it: 0 copies the tensor's dimension
/// there (unless `allowzero`), one -1 is inferred.
///
/// # Errors
///
/// [`OnnxError::FusedChain`] naming `node` for a shape ONNX refuses (two
/// -1s, a 0 past the tensor's rank, a count other than the tensor's).
pub(crate) fn reshaped(
    shape: &[i64],
    allowzero: bool,
    piece: &[usize],
    node: &str,
) -> Result<Vec<usize>, OnnxError> {
    let refused = |detail: String| OnnxError::FusedChain {
        node: node.to_string(),
        detail,
    };
    let count: usize = piece.iter().product();
    let mut out = Vec::with_capacity(shape.len());
    let mut inferred = None;
    for (i, &d) in shape.iter().enumerate() {
        out.push(match d {
            -1 if inferred.is_none() => {
                inferred = Some(i);
                1
            }
            -1 => return Err(refused(format!("shape {shape:?} has two -1s"))),
            0 if !allowzero => *piece.get(i).ok_or_else(|| {
                refused(format!(
                    "shape {shape:?} copies dimension {i} of a rank-{} piece",
                    piece.len()
                ))
            })?,
            d => usize::try_from(d).map_err(|_| refused(format!("shape {shape:?} has {d}")))?,
        });
    }
    let known = out.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if let Some(i) = inferred {
        match known {
            Some(k) if k > 0 && count.is_multiple_of(k) => out[i] = count / k,
            _ => {
                return Err(refused(format!(
                    "shape {shape:?} cannot hold the {count} elements of {piece:?}"
                )));
            }
        }
    } else if known != Some(count) {
        return Err(refused(format!(
            "shape {shape:?} does not hold the {count} elements of {piece:?}"
        )));
    }
    Ok(out)
}

/// Who uses each value of one graph: its nodes, by input, and the values
/// that must stay (the graph's outputs, and every name a subgraph's nodes
/// read, at any depth).
pub(crate) struct Uses<'a> {
    readers: HashMap<&'a str, Vec<(usize, &'a NodeProto)>>,
    producers: HashMap<&'a str, (usize, &'a NodeProto)>,
    kept: HashSet<&'a str>,
}

impl<'a> Uses<'a> {
    pub(crate) fn new(graph: &'a GraphProto) -> Self {
        let mut readers: HashMap<&str, Vec<(usize, &NodeProto)>> = HashMap::new();
        let mut producers: HashMap<&str, (usize, &NodeProto)> = HashMap::new();
        let mut kept: HashSet<&str> = graph
            .output
            .iter()
            .filter_map(|o| o.name.as_deref())
            .collect();
        for (index, node) in graph.node.iter().enumerate() {
            for output in node.output.iter().filter(|o| !o.is_empty()) {
                producers.insert(output.as_str(), (index, node));
            }
            for input in &node.input {
                readers
                    .entry(input.as_str())
                    .or_default()
                    .push((index, node));
            }
            for a in &node.attribute {
                for sub in a.g.iter().chain(&a.graphs) {
                    read_in(sub, &mut kept, 0);
                }
            }
        }
        Uses {
            readers,
            producers,
            kept,
        }
    }

    /// The node of the graph that produces `name` (none for a graph input,
    /// an initializer, or a value of an outer graph).
    pub(crate) fn producer(&self, name: &str) -> Option<(usize, &'a NodeProto)> {
        self.producers.get(name).copied()
    }

    /// The one node reading `name` (through its input `slot` only), when
    /// nothing else needs the value.
    pub(crate) fn sole_reader(&self, name: &str, slot: usize) -> Option<(usize, &'a NodeProto)> {
        if self.kept.contains(name) {
            return None;
        }
        match self.readers.get(name).map(Vec::as_slice) {
            Some(&[(index, node)]) => {
                let reads: Vec<usize> = (0..node.input.len())
                    .filter(|&k| node.input[k] == name)
                    .collect();
                (reads == [slot]).then_some((index, node))
            }
            _ => None,
        }
    }
}

/// Adds every name the nodes of `graph` (and their subgraphs) read.
fn read_in<'a>(graph: &'a GraphProto, kept: &mut HashSet<&'a str>, depth: usize) {
    if depth > 64 {
        return;
    }
    for node in &graph.node {
        kept.extend(node.input.iter().map(String::as_str));
        for a in &node.attribute {
            for sub in a.g.iter().chain(&a.graphs) {
                read_in(sub, kept, depth + 1);
            }
        }
    }
}

/// A node's label: its name, or its op type and index.
pub(crate) fn label(index: usize, node: &NodeProto) -> String {
    match node.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => format!("{}{index}", node.op_type.as_deref().unwrap_or_default()),
    }
}

/// True for a default-domain node of type `op`.
pub(crate) fn is_op(node: &NodeProto, op: &str) -> bool {
    matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"))
        && node.op_type.as_deref() == Some(op)
}

/// The chains that start at `split`'s outputs (a chain that cannot be read,
/// a shape known at run time only, is no chain: the plain split runs).
pub(crate) fn chains_of(
    split: &NodeProto,
    uses: &Uses<'_>,
    scope: &Scope,
    dir: Option<&Path>,
) -> Vec<FusedChain> {
    split
        .output
        .iter()
        .enumerate()
        .filter(|(_, name)| !name.is_empty())
        .filter_map(|(output, name)| chain_from(output, name, uses, scope, dir))
        .collect()
}

fn chain_from(
    output: usize,
    name: &str,
    uses: &Uses<'_>,
    scope: &Scope,
    dir: Option<&Path>,
) -> Option<FusedChain> {
    let (r_index, reshape) = uses.sole_reader(name, 0)?;
    if !is_op(reshape, "Reshape") {
        return None;
    }
    let reshaped = reshape.output.first()?;
    let (t_index, transpose) = uses.sole_reader(reshaped, 0)?;
    if !is_op(transpose, "Transpose") || transpose.input.len() != 1 {
        return None;
    }
    let Ok(Value::Constant(shape)) = value_of(scope, reshape.input.get(1)?, dir) else {
        return None;
    };
    let shape: Vec<i64> = shape.to_vec::<i64>().ok()?;
    let reshape_attrs = Attributes::new(&reshape.attribute).ok()?;
    let allowzero = reshape_attrs.int("allowzero").ok()?.unwrap_or(0) != 0;
    let perm = Attributes::new(&transpose.attribute)
        .ok()?
        .ints("perm")
        .ok()?;
    Some(FusedChain {
        output,
        reshape: label(r_index, reshape),
        transpose: label(t_index, transpose),
        shape,
        allowzero,
        perm,
    })
}
