//! [`ConcatNode`] and its [`ConcatChain`]s: a `Concat` whose inputs a
//! `Transpose` produces, directly or through a `Reshape` of constant shape,
//! the intermediate values used nowhere else (`Transpose -> (Reshape) ->
//! Concat`: attention heads merged back, a detector's outputs gathered):
//! the move a [`crate::PermutedConcat`] makes in the concat's own pass,
//! saving each transpose's ([`ConcatNode::fuse`]).

use std::path::Path;

use super::Attributes;
use super::constants::{Value, value_of};
use super::error::OnnxError;
use super::fused::{Uses, is_op, label, reshaped};
use super::proto::NodeProto;
use super::scope::Scope;
use super::split_node::NodePath;
use crate::element::ElementType;
use crate::error::Result;
use crate::semantics::{InputMove, PermutedConcat};

/// One input of a `Concat` that a `Transpose` produces (through a
/// `Reshape` whose shape is a constant, or directly), neither value used
/// by anything else. A `Reshape` whose shape is computed at run time makes
/// no chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcatChain {
    /// The concat's input.
    pub input: usize,
    /// The value the `Transpose` reads: the fused move's input.
    pub source: String,
    /// The `Transpose` node (its name, or op type and index).
    pub transpose: String,
    /// The `Transpose`'s `perm`; `None`: the dimensions reversed.
    pub perm: Option<Vec<i64>>,
    /// The `Reshape` node and its shape as the model gives it, when there
    /// is one.
    pub reshape: Option<(String, Vec<i64>)>,
    /// The `Reshape`'s `allowzero` (opset 14): a 0 is a dimension of 0.
    pub allowzero: bool,
}

impl ConcatChain {
    /// The move of a source of shape `source`: the `Transpose`'s
    /// permutation, then the `Reshape`'s shape as ONNX reads it against the
    /// transposed tensor.
    ///
    /// # Errors
    ///
    /// [`OnnxError::FusedChain`] for a `perm` that is no permutation of the
    /// source's dimensions, or a shape ONNX itself refuses.
    pub fn input_move(&self, source: &[usize]) -> Result<InputMove, OnnxError> {
        let refused = |detail: String| OnnxError::FusedChain {
            node: self.transpose.clone(),
            detail,
        };
        let perm: Vec<usize> = match &self.perm {
            None => (0..source.len()).rev().collect(),
            Some(perm) => perm
                .iter()
                .map(|&p| usize::try_from(p).ok().filter(|&p| p < source.len()))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    refused(format!("perm {perm:?} for a rank-{} input", source.len()))
                })?,
        };
        if perm.len() != source.len() {
            return Err(refused(format!(
                "perm {perm:?} for a rank-{} input",
                source.len()
            )));
        }
        let transposed: Vec<usize> = perm.iter().map(|&p| source[p]).collect();
        let shape = match &self.reshape {
            Some((node, shape)) => reshaped(shape, self.allowzero, &transposed, node)?,
            None => transposed,
        };
        Ok(InputMove::new(shape, perm))
    }
}

/// One `Concat` node of a model, where it sits, and the inputs a
/// transpose produces that its pass could take over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcatNode {
    /// Where the node sits.
    pub path: NodePath,
    /// Its `axis` attribute (negative counts from the end).
    pub axis: Option<i64>,
    /// Its inputs, by name.
    pub inputs: Vec<String>,
    /// Its inputs a `Transpose` (and maybe a `Reshape`) produces, used
    /// nowhere else: what [`ConcatNode::fuse`] fuses (empty when none).
    pub chains: Vec<ConcatChain>,
}

impl ConcatNode {
    /// The fused move's inputs, by name: each chained input's source (what
    /// its `Transpose` reads), the others as the concat reads them.
    pub fn fused_inputs(&self) -> Vec<String> {
        (0..self.inputs.len())
            .map(|k| match self.chains.iter().find(|c| c.input == k) {
                Some(chain) => chain.source.clone(),
                None => self.inputs[k].clone(),
            })
            .collect()
    }

    /// The concat with its chains fused, for the shapes of
    /// [`ConcatNode::fused_inputs`]: each chained input transposed and
    /// reshaped as its nodes say, then joined on the node's axis.
    ///
    /// # Errors
    ///
    /// [`OnnxError::MalformedModel`] for no `axis` or another count of
    /// shapes; [`OnnxError::FusedChain`] for a chain ONNX refuses;
    /// [`crate::PermuteError`] for a move no strided view makes, or shapes
    /// the concat cannot join.
    pub fn fuse<S: AsRef<[usize]>>(&self, input_shapes: &[S]) -> Result<PermutedConcat> {
        let malformed = |detail: String| OnnxError::MalformedModel { detail };
        if input_shapes.len() != self.inputs.len() {
            return Err(malformed(format!(
                "{}: {} shapes for {} inputs",
                self.path,
                input_shapes.len(),
                self.inputs.len()
            ))
            .into());
        }
        let moves = input_shapes
            .iter()
            .enumerate()
            .map(
                |(k, shape)| match self.chains.iter().find(|c| c.input == k) {
                    Some(chain) => chain.input_move(shape.as_ref()),
                    None => Ok(InputMove::keep(shape.as_ref())),
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        let axis = self
            .axis
            .ok_or_else(|| malformed(format!("{}: a Concat without axis", self.path)))?;
        let rank = moves.first().map_or(0, |m| m.shape().len()) as i64;
        let wrapped = if axis < 0 { axis + rank } else { axis };
        let axis = usize::try_from(wrapped)
            .ok()
            .filter(|&a| (a as i64) < rank)
            .ok_or_else(|| malformed(format!("{}: axis {axis} of rank {rank}", self.path)))?;
        Ok(PermutedConcat::new(input_shapes, moves, axis)?)
    }

    /// Bytes the fused move saves against running the chains' `Transpose`
    /// nodes as passes of their own: each reads and writes its input once
    /// more (twice its bytes), for the shapes of
    /// [`ConcatNode::fused_inputs`] and elements of `element_type`.
    pub fn fused_bytes_saved<S: AsRef<[usize]>>(
        &self,
        input_shapes: &[S],
        element_type: ElementType,
    ) -> u64 {
        self.chains
            .iter()
            .filter_map(|c| input_shapes.get(c.input))
            .map(|s| {
                let count: usize = s.as_ref().iter().product();
                2 * element_type.byte_len(count).unwrap_or_default() as u64
            })
            .sum()
    }
}

/// Reads the `Concat` `node` at `path` with its chains.
pub(crate) fn read_concat_node(
    node: &NodeProto,
    path: NodePath,
    uses: &Uses<'_>,
    scope: &Scope,
    dir: Option<&Path>,
) -> ConcatNode {
    let axis = Attributes::new(&node.attribute)
        .ok()
        .and_then(|a| a.int("axis").ok().flatten());
    let chains = node
        .input
        .iter()
        .enumerate()
        .filter(|(_, name)| !name.is_empty())
        .filter_map(|(k, name)| chain_into(k, name, uses, scope, dir))
        .collect();
    ConcatNode {
        path,
        axis,
        inputs: node.input.clone(),
        chains,
    }
}

fn chain_into(
    input: usize,
    name: &str,
    uses: &Uses<'_>,
    scope: &Scope,
    dir: Option<&Path>,
) -> Option<ConcatChain> {
    uses.sole_reader(name, input)?;
    let (index, producer) = uses.producer(name)?;
    let (reshape, (t_index, transpose)) = if is_op(producer, "Reshape") {
        let data = producer.input.first()?;
        uses.sole_reader(data, 0)?;
        let Ok(Value::Constant(shape)) = value_of(scope, producer.input.get(1)?, dir) else {
            return None;
        };
        let shape: Vec<i64> = shape.to_vec::<i64>().ok()?;
        let allowzero = Attributes::new(&producer.attribute)
            .ok()?
            .int("allowzero")
            .ok()?
            .unwrap_or(0)
            != 0;
        (
            Some((label(index, producer), shape, allowzero)),
            uses.producer(data)?,
        )
    } else {
        (None, (index, producer))
    };
    if !is_op(transpose, "Transpose") || transpose.input.len() != 1 {
        return None;
    }
    let perm = Attributes::new(&transpose.attribute)
        .ok()?
        .ints("perm")
        .ok()?;
    let allowzero = reshape.as_ref().is_some_and(|r| r.2);
    Some(ConcatChain {
        input,
        source: transpose.input[0].clone(),
        transpose: label(t_index, transpose),
        perm,
        reshape: reshape.map(|(node, shape, _)| (node, shape)),
        allowzero,
    })
}
