//! [`OnnxModel`]: a whole model as it ships, read for its split nodes
//! (and its concat nodes, for the transposes they could take over),
//! subgraphs (`If` branches, `Loop` and `Scan` bodies) included.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::OnnxError;
use super::fused::{Uses, chains_of, is_op};
use super::fused_concat::{ConcatNode, read_concat_node};
use super::operator::is_split_node;
use super::proto::{GraphProto, ModelProto};
use super::scope::Scope;
use super::split_node::{NodePath, SplitNode, read_split_node};
use super::{decode, malformed_model};
use crate::error::Result;

/// Graphs nested deeper than this are refused (the decoder's own limit
/// stops well before it; this bounds the walk on its own terms).
const MAX_DEPTH: usize = 64;

/// A model read for its split nodes: every `Split` and `SplitToSequence`
/// of the default domain, in its graph and every subgraph, each with its
/// operator resolved as far as the model alone allows, and every `Concat`
/// with the inputs transposes produce for it ([`OnnxModel::concat_nodes`]).
/// Only the tensors that give lengths and shapes are read; weights are
/// dropped after decoding.
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use wgpu_split::onnx::{OnnxModel, SplitOperator};
/// # fn main() -> Result<(), wgpu_split::Error> {
/// # let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
/// #     .join("tests/data/onnx-models/skeletons/nudenet_320n.onnx");
/// let model = OnnxModel::load(&path)?;
/// let node = &model.split_nodes()[0];
/// assert_eq!(node.path.to_string(), "main_graph//model.2/Split");
/// assert!(matches!(node.operator, Ok(SplitOperator::Static(_))));
/// // The input is [batch, 32, floor(floor(height/2 - 1/2)/2) + 1, ...].
/// let dims = HashMap::from([
///     ("batch".to_string(), 1),
///     ("height".to_string(), 320),
///     ("width".to_string(), 320),
/// ]);
/// let split = node.resolve(&dims)?;
/// assert_eq!(split.input_shape(), &[1, 32, 80, 80]);
/// assert_eq!(split.lengths(), &[16, 16]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxModel {
    opsets: BTreeMap<String, i64>,
    node_count: usize,
    split_nodes: Vec<SplitNode>,
    concat_nodes: Vec<ConcatNode>,
}

impl OnnxModel {
    /// Reads and decodes `path`; external data is read relative to its
    /// directory.
    ///
    /// # Errors
    ///
    /// [`OnnxError::Io`] and the errors of [`OnnxModel::from_bytes_in`].
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| OnnxError::io(path, &e))?;
        let dir = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Self::from_bytes_in(&bytes, Some(&dir))
    }

    /// Decodes a serialized `ModelProto`; a tensor stored as external data
    /// gives its node an [`OnnxError::ExternalData`] error.
    ///
    /// # Errors
    ///
    /// The errors of [`OnnxModel::from_bytes_in`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_in(bytes, None)
    }

    /// Decodes a serialized `ModelProto` whose external data lives in `dir`.
    ///
    /// A node that cannot be read is an error in its own
    /// [`SplitNode::operator`], never the model's.
    ///
    /// # Errors
    ///
    /// [`OnnxError::ProtobufDecode`]; [`OnnxError::MalformedModel`] for a
    /// model without a graph or with subgraphs nested past 64 levels.
    pub fn from_bytes_in(bytes: &[u8], dir: Option<&Path>) -> Result<Self> {
        let model = decode::<ModelProto>(bytes, "ModelProto")?;
        let graph = model
            .graph
            .as_ref()
            .ok_or_else(|| malformed_model("the model has no graph"))?;
        let mut opsets = BTreeMap::new();
        for o in &model.opset_import {
            let domain = match o.domain.as_deref() {
                None | Some("ai.onnx") => "",
                Some(d) => d,
            };
            opsets.insert(domain.to_string(), o.version.unwrap_or(0));
        }
        let mut walk = Walk {
            opset: opsets.get("").copied(),
            dir,
            node_count: 0,
            split_nodes: Vec::new(),
            concat_nodes: Vec::new(),
        };
        let label = graph.name.clone().filter(|n| !n.is_empty());
        let scope = Scope::new(graph, None);
        walk.graph(graph, &scope, &[label.unwrap_or_else(|| "main".into())], 0)?;
        Ok(OnnxModel {
            opsets,
            node_count: walk.node_count,
            split_nodes: walk.split_nodes,
            concat_nodes: walk.concat_nodes,
        })
    }

    /// The opsets the model imports, by domain (`""` for the default one).
    pub fn opsets(&self) -> &BTreeMap<String, i64> {
        &self.opsets
    }

    /// The number of nodes, subgraphs included.
    pub fn node_count(&self) -> usize {
        self.node_count
    }

    /// Every split node, in graph order (a subgraph's nodes right after the
    /// node that holds it).
    pub fn split_nodes(&self) -> &[SplitNode] {
        &self.split_nodes
    }

    /// Every `Concat` node of the default domain, in graph order, each with
    /// its inputs a `Transpose` (and maybe a constant-shape `Reshape`)
    /// produces and nothing else reads ([`ConcatNode::chains`]).
    pub fn concat_nodes(&self) -> &[ConcatNode] {
        &self.concat_nodes
    }
}

/// The state of one walk over a model's graphs.
struct Walk<'d> {
    opset: Option<i64>,
    dir: Option<&'d Path>,
    node_count: usize,
    split_nodes: Vec<SplitNode>,
    concat_nodes: Vec<ConcatNode>,
}

impl Walk<'_> {
    /// Walks `graph`, whose path from the model's graph is `graphs`.
    fn graph(
        &mut self,
        graph: &GraphProto,
        scope: &Scope,
        graphs: &[String],
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(malformed_model(format!(
                "subgraphs nested more than {MAX_DEPTH} levels deep"
            )));
        }
        // Who reads each value, for the chains a split feeds or a concat
        // reads (made only for graphs that hold one).
        let is_concat = |node: &_| is_op(node, "Concat");
        let uses = graph
            .node
            .iter()
            .any(|n| is_split_node(n) || is_concat(n))
            .then(|| Uses::new(graph));
        for (index, node) in graph.node.iter().enumerate() {
            self.node_count += 1;
            let path = || NodePath {
                graphs: graphs.to_vec(),
                name: node.name.clone().filter(|n| !n.is_empty()),
                index,
            };
            if let (true, Some(uses)) = (is_split_node(node), &uses) {
                let mut found = read_split_node(node, path(), scope, self.opset, self.dir);
                found.chains = chains_of(node, uses, scope, self.dir);
                self.split_nodes.push(found);
            }
            if let (true, Some(uses)) = (is_concat(node), &uses) {
                let found = read_concat_node(node, path(), uses, scope, self.dir);
                self.concat_nodes.push(found);
            }
            let owner = match node.name.as_deref() {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => format!("{}{index}", node.op_type.as_deref().unwrap_or_default()),
            };
            for a in &node.attribute {
                let attribute = a.name.as_deref().unwrap_or_default();
                let subgraphs = a.g.iter().map(|g| (g, attribute.to_string()));
                let listed = a.graphs.iter().enumerate();
                let listed = listed.map(|(k, g)| (g, format!("{attribute}[{k}]")));
                for (sub, name) in subgraphs.chain(listed).collect::<Vec<_>>() {
                    let mut inner_graphs = graphs.to_vec();
                    inner_graphs.push(format!("{owner}.{name}"));
                    let inner = Scope::new(sub, Some(scope));
                    self.graph(sub, &inner, &inner_graphs, depth + 1)?;
                }
            }
        }
        Ok(())
    }
}
