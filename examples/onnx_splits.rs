//! What will wgpu-split do with my model? Lists every `Split` and
//! `SplitToSequence` node of an ONNX model (subgraphs included), its rule
//! and output shapes, what each device class's cost model plans for it
//! under WebGPU's default limits, and the `Reshape -> Transpose` chains it
//! feeds that a permuted split fuses; then the `Concat` nodes whose inputs
//! a `Transpose` (and a `Reshape`) produce, which a permuted concat fuses.
//!
//! ```text
//! cargo run --example onnx_splits -- MODEL [--dim NAME=N]...
//! ```
//!
//! `--dim batch=1 --dim height=320` gives symbolic dimensions a value
//! (expressions of them, as exporters write, are evaluated). Exits 1 when
//! the model cannot be read, 2 on a usage error; a node that cannot be
//! resolved is reported and the listing goes on.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;

use wgpu_split::onnx::{Dim, OnnxModel, SplitNode, SplitOperator};
use wgpu_split::plan::{CostModel, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, OpId, Operator, ResolvedSplit};

/// The class models the example plans with, by name.
const CLASSES: [(&str, CostModel); 4] = [
    ("discrete", CostModel::DISCRETE_GPU),
    ("integrated", CostModel::INTEGRATED_GPU),
    ("lavapipe", CostModel::LAVAPIPE),
    ("conservative", CostModel::CONSERVATIVE),
];

fn usage(problem: &str) -> ExitCode {
    eprintln!("error: {problem}");
    eprintln!("usage: onnx_splits MODEL [--dim NAME=N]...");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut model = None;
    let mut dims = HashMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dim" => {
                let Some(binding) = args.next() else {
                    return usage("--dim needs NAME=N");
                };
                match binding
                    .rsplit_once('=')
                    .map(|(n, v)| (n, v.parse::<usize>()))
                {
                    Some((name, Ok(value))) => dims.insert(name.to_string(), value),
                    _ => return usage(&format!("--dim {binding:?} is not NAME=N")),
                };
            }
            "-h" | "--help" => return usage("help requested"),
            flag if flag.starts_with("--") => return usage(&format!("unknown flag {flag}")),
            _ if model.is_some() => return usage("one model at a time"),
            _ => model = Some(PathBuf::from(arg)),
        }
    }
    let Some(path) = model else {
        return usage("no model given");
    };
    let model = match OnnxModel::load(&path) {
        Ok(model) => model,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    print_header(&path, &model, &dims);
    for (i, node) in model.split_nodes().iter().enumerate() {
        print_node(i, node, &dims);
    }
    let chained: Vec<_> = model
        .concat_nodes()
        .iter()
        .filter(|c| !c.chains.is_empty())
        .collect();
    println!(
        "\n{} concat nodes, {} with transposed inputs a permuted concat fuses",
        model.concat_nodes().len(),
        chained.len()
    );
    for node in chained {
        println!("  {} (axis {:?})", node.path, node.axis);
        for c in &node.chains {
            let perm = c
                .perm
                .as_ref()
                .map_or("reversed".into(), |p| format!("{p:?}"));
            let reshape = c.reshape.as_ref().map_or(String::new(), |(r, shape)| {
                format!(" -> {r} (shape {shape:?})")
            });
            println!(
                "    input {}: {:?} -> {} (perm {perm}){reshape}: fused into the concat",
                c.input, c.source, c.transpose
            );
        }
    }
    ExitCode::SUCCESS
}

fn print_header(path: &std::path::Path, model: &OnnxModel, dims: &HashMap<String, usize>) {
    let opsets: Vec<String> = model
        .opsets()
        .iter()
        .map(|(domain, v)| match domain.as_str() {
            "" => format!("ai.onnx {v}"),
            d => format!("{d} {v}"),
        })
        .collect();
    let mut counts = BTreeMap::new();
    for node in model.split_nodes() {
        let opset = node.opset.map_or("?".into(), |v| v.to_string());
        *counts
            .entry(format!("{}-{opset}", node.op_type))
            .or_insert(0) += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!("{}", path.display());
    println!("  opsets: {}", opsets.join(", "));
    println!(
        "  {} nodes, {} split nodes ({})",
        model.node_count(),
        model.split_nodes().len(),
        counts.join(", ")
    );
    let mut given: Vec<String> = dims.iter().map(|(n, v)| format!("{n}={v}")).collect();
    given.sort();
    if !given.is_empty() {
        println!("  dims: {}", given.join(" "));
    }
}

fn print_node(i: usize, node: &SplitNode, dims: &HashMap<String, usize>) {
    println!("\n[{i}] {}", node.path);
    let element_type = node.element_type;
    let declared = node
        .input_shape
        .as_deref()
        .map_or("not declared".into(), shape_text);
    let type_name = element_type.map_or("?".into(), |t| t.to_string());
    println!("    input {:?}: {type_name} {declared}", node.input);
    for chain in &node.chains {
        let perm = chain
            .perm
            .as_ref()
            .map_or("reversed".into(), |p| format!("{p:?}"));
        println!(
            "    output {} feeds {} (shape {:?}) -> {} (perm {perm}): fused into the split",
            chain.output, chain.reshape, chain.shape, chain.transpose
        );
    }
    let operator = match &node.operator {
        Ok(SplitOperator::Static(op)) => op,
        Ok(SplitOperator::AtRunTime(r)) => {
            println!("    lengths known at run time: {}", r.source());
            return;
        }
        Err(e) => {
            println!("    cannot be read: {e}");
            return;
        }
    };
    match &node.lengths_input {
        Some(name) => println!("    rule: {} {name:?}", rule(operator)),
        None => println!("    rule: {}", rule(operator)),
    }
    let split = match node.resolve(dims) {
        Ok(split) => split,
        Err(e) => {
            println!("    not resolved: {e}");
            return;
        }
    };
    let outputs: Vec<String> = split
        .output_shapes()
        .iter()
        .map(|s| format!("{s:?}"))
        .collect();
    println!(
        "    {:?} along axis {}, lengths {:?} -> {}",
        split.input_shape(),
        split.axis(),
        split.lengths(),
        outputs.join(" ")
    );
    let element_type = element_type.unwrap_or_else(|| {
        println!("    (element type not declared: planned as float)");
        ElementType::Float
    });
    print_plans(&split, element_type);
    if !node.chains.is_empty() {
        match node.fuse(&split) {
            Ok(fused) => println!(
                "    fused: {} outputs -> {}, saves {} bytes (the transposes' passes)",
                split.output_count(),
                fused
                    .output_shapes()
                    .iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                node.fused_bytes_saved(&split, element_type)
            ),
            Err(e) => println!("    not fused: {e}"),
        }
    }
}

fn print_plans(split: &ResolvedSplit, element_type: ElementType) {
    for (name, model) in CLASSES {
        let options = PlanOptions::default().strategy(Strategy::Auto(model));
        match SplitPlan::new(split, element_type, &PlanLimits::WEBGPU_DEFAULT, &options) {
            Ok(plan) => {
                // Every output byte is read once and written once.
                let moved: u64 = plan.outputs().iter().map(|o| o.len_bytes).sum();
                let kernel = match plan.dispatch_count() {
                    0 => "-",
                    _ => plan.runs(),
                };
                println!(
                    "    {name:<12} kernel {kernel:<11} dispatches {:<3} copies {:<5} bytes moved {moved}",
                    plan.dispatch_count(),
                    plan.copy_count(),
                );
            }
            Err(e) => println!("    {name:<12} not planned: {e}"),
        }
    }
}

/// The operator version and where its lengths come from.
fn rule(operator: &Operator) -> String {
    let (id, lengths): (Result<OpId, _>, &str) = match operator {
        Operator::OnnxSplit(op) => {
            let lengths = if op.split_input.is_some() {
                "lengths from input split"
            } else if op.split_attribute.is_some() {
                "lengths from attribute split"
            } else if op.num_outputs.is_some() {
                "num_outputs"
            } else {
                "equal parts"
            };
            (op.op_id(), lengths)
        }
        Operator::OnnxSplitToSequence(op) => {
            let lengths = if op.split.is_some() {
                "lengths from input split"
            } else {
                "one element each"
            };
            (op.op_id(), lengths)
        }
        other => return format!("{other:?}"),
    };
    match id {
        Ok(id) => format!("{id}, {lengths}"),
        Err(e) => format!("{e}"),
    }
}

fn shape_text(shape: &[Dim]) -> String {
    let dims: Vec<String> = shape.iter().map(Dim::to_string).collect();
    format!("[{}]", dims.join(", "))
}
