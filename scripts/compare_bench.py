#!/usr/bin/env python3
"""Side-by-side split_bench of two builds: one method (`plan` by default;
`--method gather` compares the kernels) of every case, old and new binaries
alternating case by case for several rounds, so that both see the same
machine noise. Prints the median seconds of each and the ratio old / new
(above 1: the new build is faster).

Build the old binary from a worktree, for example:

    git worktree add /tmp/old <commit>
    (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target \
        cargo build --release --example split_bench)
    cargo build --release --example split_bench
    python3 scripts/compare_bench.py /tmp/old-target/release/examples/split_bench \
        target/release/examples/split_bench --rounds 5
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile


def method_seconds(binary, case, runs, method):
    """One method's median seconds for one case from one bench run."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [binary, "--case", case, "--runs", str(runs), "--json", out.name,
             "--plot", out.name + ".png"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        results = json.load(open(out.name))["results"]
    return next(r["seconds"] for r in results if r["method"] == method)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--method", default="plan")
    parser.add_argument("--cases", nargs="*", default=[
        "f32_4096x4096_axis0_4", "f32_64x1024x256_axis1_4", "f32_4096x4096_axis1_4",
        "f16_1048576x6_axis1_123", "u8_4096x4097_axis1_2", "i4_4096x4099_axis1_3",
        "f32_1000x4096_seq", "f16_8x512x2304_qkv", "f32_1x84x8400_yolo",
        "f32_1x8400x84_yolo_t", "f32_1x3x640x640_ch",
    ])
    args = parser.parse_args()
    times = {case: {"old": [], "new": []} for case in args.cases}
    for round_ in range(args.rounds):
        for case in args.cases:
            # Alternate which build goes first, so neither always runs warm.
            order = ["old", "new"] if round_ % 2 == 0 else ["new", "old"]
            for which in order:
                binary = args.old if which == "old" else args.new
                times[case][which].append(
                    method_seconds(binary, case, args.runs, args.method))
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr)
    print(f"method {args.method}")
    print(f"{'case':<28}{'old ms':>10}{'new ms':>10}{'old/new':>10}")
    for case in args.cases:
        old = statistics.median(times[case]["old"])
        new = statistics.median(times[case]["new"])
        print(f"{case:<28}{old * 1e3:>10.3f}{new * 1e3:>10.3f}{old / new:>10.2f}")


if __name__ == "__main__":
    main()
