#!/usr/bin/env python3
"""Captures with onnxruntime the Split -> Reshape -> Transpose chains of the
real models (tests/data/onnx-models): what `SplitNode::resolve_permuted`
and `HostTensor::split_permuted` must give, bit for bit.

    pip install onnx==1.22.0 onnxruntime==1.32.0 numpy
    python3 scripts/capture_fused.py

For each split node of a skeleton (`skeletons/<model>.onnx`) whose output
feeds a Reshape whose output feeds a Transpose, each used nowhere else, the
script extends the node's captured model (`nodes/<dir>/model.onnx`, the
split with its lengths) with the chain's Reshape (its constant shape and
`allowzero`) and Transpose (its `perm`), runs onnxruntime on the captured
input (`nodes/<dir>/test_data_set_0/input_0.pb`) and writes, per split
output (the Transpose's output where chained), its shape and the SHA-256
of its raw bytes to `tests/data/onnx-models/fused.json` (the outputs are
megabytes; the inputs are committed already).
"""
import hashlib
import json
import pathlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "onnx-models"


def constant_of(graph, name):
    for init in graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    for node in graph.node:
        if name in node.output and node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def chains(graph):
    readers = {}
    for node in graph.node:
        for i in node.input:
            readers.setdefault(i, []).append(node)
    kept = {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type not in ("Split", "SplitToSequence"):
            continue
        found = []
        for k, out in enumerate(node.output):
            r = readers.get(out, [])
            if out in kept or len(r) != 1 or r[0].op_type != "Reshape" or r[0].input[0] != out:
                continue
            reshape = r[0]
            t = readers.get(reshape.output[0], [])
            if reshape.output[0] in kept or len(t) != 1 or t[0].op_type != "Transpose":
                continue
            shape = constant_of(graph, reshape.input[1])
            if shape is None:
                continue
            found.append((k, reshape, t[0], shape))
        if found:
            yield node, found


def main():
    manifest = json.loads((ROOT / "models.json").read_text())
    cases = []
    for model in manifest:
        skeleton = onnx.load(ROOT / "skeletons" / f"{model['name']}.onnx", load_external_data=False)
        for split, found in chains(skeleton.graph):
            listed = [n for n in model["nodes"] if n["path"].split("/")[-1] == split.name.split("/")[-1]
                      and n["path"].endswith(split.name)]
            assert len(listed) == 1, (model["name"], split.name, listed)
            node_dir = ROOT / "nodes" / listed[0]["dir"]
            base = onnx.load(node_dir / "model.onnx")
            g = base.graph
            (captured,) = [n for n in g.node if n.op_type in ("Split", "SplitToSequence")]
            outputs = list(g.output)
            for k, reshape, transpose, shape in found:
                piece = captured.output[k]
                shape_name = f"fused_shape_{k}"
                g.initializer.append(numpy_helper.from_array(shape.astype(np.int64), shape_name))
                reshaped, moved = f"fused_reshaped_{k}", f"fused_moved_{k}"
                g.node.append(helper.make_node("Reshape", [piece, shape_name], [reshaped],
                                               **{a.name: a.i for a in reshape.attribute if a.name == "allowzero"}))
                perm = [list(a.ints) for a in transpose.attribute if a.name == "perm"]
                g.node.append(helper.make_node("Transpose", [reshaped], [moved],
                                               **({"perm": perm[0]} if perm else {})))
                index = [o.name for o in outputs].index(piece)
                elem = outputs[index].type.tensor_type.elem_type
                outputs[index] = helper.make_tensor_value_info(moved, elem, None)
            del g.output[:]
            g.output.extend(outputs)
            x = numpy_helper.to_array(onnx.load_tensor(str(node_dir / "test_data_set_0" / "input_0.pb")))
            session = ort.InferenceSession(base.SerializeToString(), providers=["CPUExecutionProvider"])
            results = session.run(None, {g.input[0].name: x})
            cases.append({
                "model": model["name"],
                "node": listed[0]["path"],
                "dir": listed[0]["dir"],
                "chains": [{"output": k, "reshape": r.name, "transpose": t.name} for k, r, t, _ in found],
                "outputs": [{"shape": list(r.shape), "sha256": hashlib.sha256(np.ascontiguousarray(r).tobytes()).hexdigest()}
                            for r in results],
            })
            print(model["name"], listed[0]["path"], [list(r.shape) for r in results])
    out = ROOT / "fused.json"
    out.write_text(json.dumps(cases, indent=1) + "\n")
    print(f"wrote {len(cases)} nodes to {out}")


if __name__ == "__main__":
    main()
