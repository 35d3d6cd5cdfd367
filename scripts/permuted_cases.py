#!/usr/bin/env python3
"""Writes tests/data/permuted/cases.json: permuted splits computed by numpy.

Each case splits a tensor of random bits (NaN payloads and all) on an
axis, reshapes each piece by factoring and transposes it, as
`[np.ascontiguousarray(p.reshape(s).transpose(perm)) for p in
np.split(x, offsets, axis)]`; the test reads the input and every output
as raw bytes and compares the crate's host path bit for bit.

    python3 scripts/permuted_cases.py   # numpy 2.x; deterministic (seed 39)
"""
import json
import pathlib

import numpy as np

rng = np.random.default_rng(39)


def case(name, dtype, shape, axis, lengths, moves):
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
    if dtype == "bool":
        raw = raw & 1
    x = raw.view(dtype).reshape(shape)
    offsets = np.cumsum(lengths)[:-1]
    pieces = np.split(x, offsets, axis=axis)
    outputs = [
        np.ascontiguousarray(p.reshape(s).transpose(perm)) for p, (s, perm) in zip(pieces, moves)
    ]
    return {
        "name": name,
        "dtype": dtype,
        "shape": list(shape),
        "axis": axis,
        "lengths": list(lengths),
        "moves": [[list(s), list(p)] for s, p in moves],
        "input_hex": x.tobytes().hex(),
        "outputs_hex": [o.tobytes().hex() for o in outputs],
    }


def heads(shape, widths, d):
    *lead, s, _ = shape
    n = len(lead)
    perm = list(range(n)) + [n + 1, n, n + 2]
    return [(lead + [s, w // d, d], perm) for w in widths]


cases = [
    # GPT-2 QKV at small size: [B, S, 3 * H * D] into [B, H, S, D].
    case("gpt2 qkv f16", "float16", [2, 8, 3 * 4 * 8], 2, [32, 32, 32], heads([2, 8, 96], [32] * 3, 8)),
    # Grouped-query QKV: 4 query heads, 1 key and 1 value head.
    case("gqa qkv f32", "float32", [2, 5, 6 * 4], 2, [16, 4, 4], heads([2, 5, 24], [16, 4, 4], 4)),
    # YOLOv8's distribution head: [1, 144, A] into boxes [1, 4, 16, A]
    # with 4 and 16 swapped, and the classes kept.
    case("yolo dfl f32", "float32", [1, 144, 10], 1, [64, 80],
         [([1, 4, 16, 10], [0, 2, 1, 3]), ([1, 80, 10], [0, 1, 2])]),
    # The fastest axis moved: a transpose of each piece.
    case("transpose u8", "uint8", [6, 10], 1, [3, 7], [([6, 3], [1, 0]), ([6, 7], [1, 0])]),
    case("transpose f64", "float64", [5, 4, 3], 0, [2, 3],
         [([2, 4, 3], [2, 1, 0]), ([3, 2, 2, 3], [3, 0, 2, 1])]),
    case("int8 odd rows", "int8", [7, 9], 1, [1, 6, 2],
         [([7, 1], [1, 0]), ([7, 2, 3], [2, 0, 1]), ([7, 2], [1, 0])]),
    case("int64 split on axis 0", "int64", [6, 4], 0, [2, 4],
         [([2, 2, 2], [1, 2, 0]), ([4, 4], [1, 0])]),
    case("bool with empty piece", "bool", [3, 4, 5], 2, [0, 5],
         [([3, 4, 0], [2, 0, 1]), ([3, 4, 5], [1, 2, 0])]),
    case("complex64 1s added", "complex64", [2, 6], 1, [6], [([1, 2, 1, 3, 2], [4, 1, 0, 3, 2])]),
    case("f16 heads of 1", "float16", [3, 4, 6], 2, [2, 4], heads([3, 4, 6], [2, 4], 1)),
]

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "permuted" / "cases.json"
out.write_text(json.dumps(cases, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {out}")
