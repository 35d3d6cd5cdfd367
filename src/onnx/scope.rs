//! The values a graph sees: its own initializers, inputs and node outputs,
//! then those of the graphs enclosing it (a subgraph may name any value of
//! an outer graph).

use std::collections::{HashMap, HashSet};

use super::proto::{GraphProto, NodeProto, TensorProto, ValueInfoProto};

/// Where a value comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Definition<'a> {
    /// An initializer (also when a graph input of the same name may
    /// override it: runtimes use the initializer unless fed).
    Initializer(&'a TensorProto),
    /// A graph input without an initializer; `main` for the model's own
    /// graph, otherwise an input that an `If`, `Loop` or `Scan` binds.
    Input { main: bool },
    /// An output of a node.
    Node(&'a NodeProto),
}

/// One graph's names, chained to the graph that holds it.
pub(crate) struct Scope<'a> {
    parent: Option<&'a Scope<'a>>,
    initializers: HashMap<&'a str, &'a TensorProto>,
    inputs: HashSet<&'a str>,
    producers: HashMap<&'a str, &'a NodeProto>,
    infos: HashMap<&'a str, &'a ValueInfoProto>,
}

impl<'a> Scope<'a> {
    pub(crate) fn new(graph: &'a GraphProto, parent: Option<&'a Scope<'a>>) -> Self {
        let name = |n: &'a Option<String>| n.as_deref().unwrap_or_default();
        let initializers = graph
            .initializer
            .iter()
            .map(|t| (name(&t.name), t))
            .collect();
        let inputs = graph.input.iter().map(|v| name(&v.name)).collect();
        let producers = graph
            .node
            .iter()
            .flat_map(|n| {
                n.output
                    .iter()
                    .filter(|o| !o.is_empty())
                    .map(move |o| (o.as_str(), n))
            })
            .collect();
        let infos = graph
            .input
            .iter()
            .chain(&graph.output)
            .chain(&graph.value_info)
            .map(|v| (name(&v.name), v))
            .collect();
        Scope {
            parent,
            initializers,
            inputs,
            producers,
            infos,
        }
    }

    /// Where `name` is defined, searching outward; `None` when nowhere.
    pub(crate) fn define(&self, name: &str) -> Option<Definition<'a>> {
        if let Some(t) = self.initializers.get(name) {
            return Some(Definition::Initializer(t));
        }
        if let Some(n) = self.producers.get(name) {
            return Some(Definition::Node(n));
        }
        if self.inputs.contains(name) {
            return Some(Definition::Input {
                main: self.parent.is_none(),
            });
        }
        self.parent?.define(name)
    }

    /// The declared type of `name` (graph inputs, outputs, `value_info`),
    /// searching outward.
    pub(crate) fn info(&self, name: &str) -> Option<&'a ValueInfoProto> {
        match self.infos.get(name) {
            Some(v) => Some(v),
            None => self.parent?.info(name),
        }
    }
}
