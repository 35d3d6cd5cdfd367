#!/usr/bin/env python3
"""Prints what public implementations do with the concat cases docs/SEMANTICS.md
("Concat") states observations for: onnx.reference, ONNX shape inference,
onnxruntime (kernel behaviour: inputs declared without shapes), OpenVINO,
torch and numpy. Each section runs when its package is installed.

    pip install onnx==1.22.0 onnxruntime numpy torch openvino
    python3 scripts/observe_concat.py

Observed for the crate with onnx 1.22.0, onnxruntime 1.32.0, numpy 2.4.6,
torch 2.15.0 and OpenVINO 2026.4.1.
"""
import importlib.util

import numpy as np


def have(name):
    return importlib.util.find_spec(name) is not None


def show(tag, run):
    try:
        r = run()
        if isinstance(r, str):
            print(f"  {tag}: {r}")
        else:
            print(f"  {tag}: {tuple(r.shape)} {np.asarray(r).ravel()[:6].tolist()}")
    except Exception as e:  # every failure is an observation here
        print(f"  {tag}: ERROR {type(e).__name__}: {str(e).strip().splitlines()[0][:150]}")


def arrays(shapes):
    return [np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) + 100 * i for i, s in enumerate(shapes)]


ONNX_CASES = [
    # (what, opset, shapes, axis)
    ("opset 1, axis absent (default 1)", 1, [[2, 3], [2, 4]], None),
    ("opset 4, axis absent", 4, [[2, 3], [2, 4]], None),
    ("opset 4, axis -1", 4, [[2, 3], [2, 4]], -1),
    ("opset 10, axis -1", 10, [[2, 3], [2, 4]], -1),
    ("opset 13, axis = rank", 13, [[2, 3], [2, 3]], 2),
    ("opset 13, empty input off-axis mismatch", 13, [[2, 3], [0, 5]], 0),
    ("opset 13, empty rank-3 input beside rank 2", 13, [[2, 3], [0, 0, 0]], 1),
    ("opset 13, scalars", 13, [[], []], 0),
]

SEQUENCE_CASES = [
    # (what, shapes, axis, new_axis)
    ("new_axis 2", [[2, 3], [2, 3]], 0, 2),
    ("new_axis -1", [[2, 3], [2, 3]], 0, -1),
    ("stack axis -1", [[2, 3], [2, 3]], -1, 1),
    ("stack of [2, 3] and empty [0, 5]", [[2, 3], [0, 5]], 0, 1),
    ("empty sequence", [], 0, 0),
]


def onnx_section():
    import onnx
    from onnx import TensorProto, helper, shape_inference
    from onnx.reference import ReferenceEvaluator

    ort = None
    if have("onnxruntime"):
        import onnxruntime as ort

        ort.set_default_logger_severity(4)
    print(f"onnx {onnx.__version__}" + (f", onnxruntime {ort.__version__}" if ort else ""))

    def concat_model(opset, count, axis, shapes=None):
        names = [f"x{i}" for i in range(count)]
        attrs = {} if axis is None else {"axis": axis}
        node = helper.make_node("Concat", names, ["y"], **attrs)
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None if shapes is None else shapes[i])
                  for i, n in enumerate(names)]
        graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        return model

    for what, opset, shapes, axis in ONNX_CASES:
        print(f"Concat {what}: {shapes}")
        feeds = {f"x{i}": a for i, a in enumerate(arrays(shapes))}
        show("onnx.reference", lambda: ReferenceEvaluator(concat_model(opset, len(shapes), axis)).run(None, feeds)[0])

        def inferred():
            m = shape_inference.infer_shapes(concat_model(opset, len(shapes), axis, shapes), strict_mode=True)
            t = m.graph.output[0].type.tensor_type
            if not t.HasField("shape"):
                return "no shape inferred"
            return f"shape {[d.dim_value for d in t.shape.dim]}"

        show("shape inference", inferred)
        if ort:
            session = lambda: ort.InferenceSession(  # noqa: E731
                concat_model(opset, len(shapes), axis).SerializeToString(), providers=["CPUExecutionProvider"])
            show("onnxruntime", lambda: session().run(None, feeds)[0])

    for what, shapes, axis, new_axis in SEQUENCE_CASES:
        print(f"ConcatFromSequence {what}: {shapes}")
        node = helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)
        graph = helper.make_graph([node], "g", [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
        model.ir_version = 8
        seq = arrays(shapes)
        show("onnx.reference", lambda: ReferenceEvaluator(model).run(None, {"s": seq})[0])
        if ort:
            session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            show("onnxruntime", lambda: session.run(None, {"s": seq})[0])


def openvino_section():
    import openvino as ov
    import openvino.opset1 as ops

    print(f"OpenVINO {ov.__version__}")
    core = ov.Core()
    for what, shapes, axis in [
        ("axis -1", [[2, 3], [2, 4]], -1),
        ("axis = rank", [[2, 3], [2, 3]], 2),
        ("empty input off-axis mismatch", [[2, 3], [0, 5]], 0),
        ("scalars", [[], []], 0),
    ]:
        print(f"Concat-1 {what}: {shapes}")

        def run(dynamic):
            params = [ops.parameter(ov.PartialShape([-1] * len(s)) if dynamic else s, np.float32) for s in shapes]
            compiled = core.compile_model(ov.Model([ops.concat(params, axis)], params), "CPU")
            return compiled(arrays(shapes))[0]

        show("static shapes", lambda: run(False))
        show("dynamic shapes", lambda: run(True))


def torch_section():
    import torch

    print(f"torch {torch.__version__}")
    t = [torch.from_numpy(a) for a in arrays([[0], [2, 3], [2, 2]])]
    show("cat skips [0] beside rank 2", lambda: torch.cat(t, 1))
    show("cat of only [0], dim 5", lambda: torch.cat([t[0], t[0]], 5))
    show("cat [0, 3] beside [2, 4]", lambda: torch.cat([torch.empty(0, 3), torch.zeros(2, 4)], 0))
    show("cat scalar at position 1", lambda: torch.cat([torch.zeros(2), torch.tensor(1.0)]))
    show("stack scalars", lambda: torch.stack([torch.tensor(1.0), torch.tensor(2.0)]))


def numpy_section():
    print(f"numpy {np.__version__}")
    show("concatenate axis=None", lambda: np.concatenate(arrays([[2, 3], [4], []]), axis=None))
    show("concatenate scalar first", lambda: np.concatenate(arrays([[], [2]])))
    show("concatenate scalar second", lambda: np.concatenate(arrays([[2], []])))
    show("stack scalars", lambda: np.stack(arrays([[], []])))


def main():
    if have("onnx"):
        onnx_section()
    if have("openvino"):
        openvino_section()
    if have("torch"):
        torch_section()
    numpy_section()


if __name__ == "__main__":
    main()
