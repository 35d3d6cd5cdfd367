//! The one-node ONNX model a case is (a Split or a Concat), as the pages
//! that run onnxruntime-web beside the crate describe it
//! (`web/ortweb/onnx_model.mjs` encodes it): `tests/ortweb` through
//! `webgpu_recordings --timing`, and the bench page (`web/src/bench.rs`
//! includes this file).

use serde_json::json;
use wgpu_split::{ResolvedConcat, ResolvedSplit};

/// The one ONNX Split node of `split`, or null with
/// why not: overlapping or gapped windows, a removed axis.
pub fn onnx_split(split: &ResolvedSplit) -> serde_json::Value {
    let tiles = split.is_contiguous()
        && split.lengths().iter().sum::<usize>() == split.input_shape()[split.axis()];
    if !split.keep_axis() || !tiles {
        let why = if split.keep_axis() {
            "windows that do not tile the axis"
        } else {
            "outputs without the axis (SplitToSequence keepdims 0)"
        };
        return json!({"op": null, "why": why});
    }
    json!({
        "op": "Split",
        "axis": split.axis(),
        "split": split.lengths(),
        "input_shapes": [split.input_shape()],
        "output_shapes": split.output_shapes(),
    })
}

/// The one ONNX Concat node of `concat`, or null with why not (a stack).
pub fn onnx_concat(concat: &ResolvedConcat) -> serde_json::Value {
    let rank = concat.output_shape().len();
    if concat.input_shapes().iter().any(|s| s.len() != rank) {
        return json!({"op": null, "why": "a stack (ConcatFromSequence new_axis 1)"});
    }
    json!({
        "op": "Concat",
        "axis": concat.axis(),
        "input_shapes": concat.input_shapes(),
        "output_shapes": [concat.output_shape()],
    })
}
