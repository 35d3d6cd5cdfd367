//! The layering, checked on the source: the crate's top-level modules
//! depend on each other one way only (semantics <- plan <- gpu, host;
//! leaves below), each layer's errors live beside it and only the top
//! layers return the crate's `Error`, and no two files import each other in
//! a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which top-level modules each may use (`lib.rs` re-exports everything).
/// `error` gathers the layers' error enums (and may use only their `error`
/// modules); the layers below `gpu`, `host` and `onnx` return their own
/// enums and never the crate's `Error`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("op", &[]),
    ("element", &[]),
    ("semantics", &["element", "op"]),
    ("tensor", &["element", "semantics"]),
    ("plan", &["element", "semantics"]),
    ("host", &["element", "error", "plan", "semantics", "tensor"]),
    ("gpu", &["element", "error", "plan", "semantics", "tensor"]),
    ("onnx", &["element", "error", "semantics", "tensor"]),
    ("error", &["gpu", "onnx", "plan", "semantics", "tensor"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src/`, e.g. `plan::passes`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p != "mod" && p != "lib")
        .collect();
    parts.join("::")
}

/// Code lines (comments dropped, so doc links do not count as imports).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `crate::a::b` and `super::x` paths a file names, resolved to module paths.
fn imports(module: &str, text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = code(text);
    let mut found = BTreeSet::new();
    let parent: Vec<&str> = module.split("::").collect();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", parent[..parent.len().saturating_sub(1)].to_vec()),
    ] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut parts: Vec<&str> = base.clone();
            parts.extend(path.split("::").filter(|p| !p.is_empty()));
            // The longest prefix that names a module of the crate.
            while !parts.is_empty() && !modules.contains(&parts.join("::")) {
                parts.pop();
            }
            let target = parts.join("::");
            if !target.is_empty() && target != module {
                found.insert(target);
            }
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    files
        .iter()
        .map(|f| {
            let module = module_of(&src, f);
            let text = std::fs::read_to_string(f).unwrap();
            let deps = imports(&module, &text, &modules);
            (module, deps)
        })
        .collect()
}

fn layer(module: &str) -> &str {
    module.split("::").next().unwrap_or("")
}

#[test]
fn layers_depend_on_each_other_one_way() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut violations = Vec::new();
    for (module, deps) in graph() {
        let from = layer(&module);
        if from.is_empty() || from == "docs" {
            continue; // lib.rs re-exports every layer
        }
        let may = allowed
            .get(from)
            .unwrap_or_else(|| panic!("layer {from} is not in ALLOWED"));
        for dep in deps {
            let to = layer(&dep);
            let error_enum = from != "error" || dep.ends_with("::error");
            if to != from && (!may.contains(&to) || !error_enum) {
                violations.push(format!("{module} uses {dep}"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn no_module_imports_form_a_circle() {
    let graph = graph();
    // Depth-first search for a back edge, reporting the circle.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut circle = stack[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for dep in graph.get(node).into_iter().flatten() {
            // A parent module re-exporting its children is not a use.
            if dep.starts_with(&format!("{node}::")) || node.is_empty() {
                continue;
            }
            if let Some(circle) = visit(dep, graph, stack, done) {
                return Some(circle);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(circle) = visit(node, &graph, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}
