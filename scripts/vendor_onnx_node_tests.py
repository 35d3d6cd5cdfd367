#!/usr/bin/env python3
"""Copies the ONNX backend node tests for Split and SplitToSequence (19) and
Concat (12) from the onnx 1.22.0 wheel into tests/data/onnx-node/.

    pip install onnx==1.22.0
    python3 scripts/vendor_onnx_node_tests.py

Later wheels no longer ship these files, hence the pinned version.
"""
import pathlib
import shutil

import onnx

EXPECTED_VERSION = "1.22.0"
# test_split_* and test_split_to_sequence_*; not test_string_split_* (StringSplit).
# test_concat_*; not test_string_concat_* (StringConcat).
EXPECTED_COUNTS = {"test_split": 19, "test_concat_": 12}


def main() -> None:
    if onnx.__version__ != EXPECTED_VERSION:
        raise SystemExit(f"need onnx=={EXPECTED_VERSION}, found {onnx.__version__}")
    source = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    target = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "onnx-node"
    dirs = []
    for prefix, count in EXPECTED_COUNTS.items():
        found = sorted(p for p in source.iterdir() if p.is_dir() and p.name.startswith(prefix))
        if len(found) != count:
            raise SystemExit(f"expected {count} {prefix}* directories, found {len(found)}")
        dirs += found
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for d in dirs:
        shutil.copytree(d, target / d.name)
        print(d.name)


if __name__ == "__main__":
    main()
