//! The layering, checked on the source: the crate's top-level modules
//! depend on each other one way only (semantics <- kernels <- plan <- gpu,
//! host; leaves below), each layer's errors live beside it and only the top
//! layers return the crate's `Error`, and no two files import each other in
//! a circle. And the house rules of the developer guide: kernel variants
//! named only in `src/kernels/` (the rest
//! of the crate reads the kernel table generically), and a placement
//! matched on in at most two files.

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
    ("kernels", &["element", "semantics"]),
    ("plan", &["element", "kernels", "semantics"]),
    ("host", &["element", "error", "plan", "semantics", "tensor"]),
    (
        "gpu",
        &["element", "error", "kernels", "plan", "semantics", "tensor"],
    ),
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

/// The module path of a file under `src/`, e.g. `plan::passes::pass_table`.
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

/// Every `.rs` file under `src/`, with its path relative to the crate
/// (`src/plan/passes/mod.rs`) and its text.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(root).unwrap().to_string_lossy();
            (rel.replace('\\', "/"), std::fs::read_to_string(f).unwrap())
        })
        .collect()
}

/// The kernels' variants as the table in `src/kernels/mod.rs` names
/// them (`Words => words,`).
fn kernel_variants() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(root.join("src/kernels/mod.rs")).unwrap();
    let body = table
        .split("kernel_table! {")
        .nth(1)
        .expect("src/kernels/mod.rs invokes kernel_table!");
    let body = &body[..body.find("\n}").expect("the table ends")];
    let variants: Vec<String> = code(body)
        .lines()
        .filter_map(|line| {
            let (variant, module) = line.trim().split_once("=>")?;
            let module = module.trim().trim_end_matches(',');
            let word =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
            (word(variant.trim()) && word(module)).then(|| variant.trim().to_string())
        })
        .collect();
    assert!(
        variants.len() >= 3,
        "kernel_table! in src/kernels/mod.rs lists {variants:?}"
    );
    variants
}

#[test]
fn kernel_variants_are_named_only_under_kernels() {
    let variants = kernel_variants();
    let mut violations = Vec::new();
    for (path, text) in sources() {
        if path.starts_with("src/kernels/") {
            continue;
        }
        let code = code(&text);
        for (n, line) in code.lines().enumerate() {
            // A glob or a list of variants imported by name.
            if line.contains("Kernel::{") || line.contains("Kernel::*") {
                violations.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
            for variant in &variants {
                let name = format!("Kernel::{variant}");
                let named = line.match_indices(&name).any(|(at, _)| {
                    let next = line[at + name.len()..].chars().next();
                    !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if named {
                    violations.push(format!("{path}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "kernel variants named outside src/kernels/ (read the table: \
         Kernel::ALL, Kernel::from_name, Kernel::spec): {violations:#?}"
    );
}

/// Whether the `Placement::` variant at `at` in `line` is matched on: a
/// pattern (followed by `=>` or `|`, in a tuple or not), a comparison, a
/// `matches!` or an `if let` / `let` pattern.
fn matched_at(line: &str, at: usize, variant_end: usize) -> bool {
    let after = line[variant_end..].trim_start_matches([')', ',', ' ', '_']);
    let before = &line[..at];
    after.starts_with("=>")
        || after.starts_with('|')
        || before.trim_end().ends_with('|')
        || before.trim_end().ends_with("let")
        || ["==", "!=", "matches!("].iter().any(|p| before.contains(p))
}

/// Files whose code matches on a placement's variants (a `match` arm, an
/// `==`, a `matches!` or a `let` pattern), with their line numbers.
fn placement_matches() -> BTreeMap<String, Vec<usize>> {
    let mut files: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (path, text) in sources() {
        for (n, line) in code(&text).lines().enumerate() {
            for variant in ["Placement::Separate", "Placement::Arena"] {
                let hit = line
                    .match_indices(variant)
                    .any(|(at, _)| matched_at(line, at, at + variant.len()));
                if hit {
                    files.entry(path.clone()).or_default().push(n + 1);
                }
            }
        }
    }
    files
}

#[test]
fn placement_is_matched_in_at_most_two_files() {
    let files = placement_matches();
    assert!(
        !files.is_empty(),
        "no file matches on Placement: the check no longer sees the code"
    );
    assert!(
        files.len() <= 2,
        "Placement matched in {} files (at most 2: what a placement means \
         belongs in its own methods): {files:#?}",
        files.len()
    );
}

#[test]
fn the_placement_check_sees_each_form_of_match() {
    let line = |l: &str| {
        let at = l.find("Placement::Arena").unwrap();
        matched_at(l, at, at + "Placement::Arena".len())
    };
    assert!(line("            Placement::Arena => 1,"));
    assert!(line(
        "            (Some(layout), Placement::Arena) => layout"
    ));
    assert!(line("        self == Placement::Arena"));
    assert!(line("        Placement::Separate | Placement::Arena => 0,"));
    assert!(line("    if matches!(p, Placement::Arena) {"));
    assert!(line("    if let Placement::Arena = p {"));
    assert!(!line(
        "    let options = options.placement(Placement::Arena);"
    ));
    assert!(!line("    [Placement::Separate, Placement::Arena]"));
}
