#!/usr/bin/env python3
"""Medians over several split_bench JSON reports, as a markdown table.

    python3 scripts/bench_runs.py run1.json run2.json run3.json [--per-run] [--short] [--host-last]

Each ratio is the median over the runs of each run's ratio (itself the
median of its per-round ratios); `plan GB/s` the median of the runs' plan
medians. `--per-run` adds every run's plan / best_fixed; `--short` leaves
out plan / shader_copy (the README's table). `--host LAST`
takes host / host_memcpy from the last report only (when only the host
path changed between the builds).
"""
import json
import statistics
import sys

COLUMNS = [
    ("plan / copy_limit", "plan/copy_limit"),
    ("plan / shader_copy", "plan/shader_copy"),
    ("plan / best_fixed", "plan/best_fixed"),
    ("gpu_discrete / shader_copy", "gpu_discrete/shader_copy"),
    ("host / memcpy", "host/host_memcpy"),
]


def main(argv):
    per_run = "--per-run" in argv
    host_last = "--host-last" in argv
    columns = [c for c in COLUMNS if not ("--short" in argv and c[1] == "plan/shader_copy")]
    paths = [a for a in argv if not a.startswith("--")]
    reports = [json.load(open(p)) for p in paths]
    cases = list(dict.fromkeys(r["case"] for r in reports[0]["results"]))
    header = ["case", "plan GB/s"] + [c for c, _ in columns]
    if per_run:
        header.append("plan / best_fixed, each run")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for case in cases:
        gbps = statistics.median(
            next(r["gbps"] for r in rep["results"] if r["case"] == case and r["method"] == "plan")
            for rep in reports
        )
        row = [f"`{case}`", f"{gbps:.2f}"]
        for _, key in columns:
            runs = reports[-1:] if host_last and key.startswith("host/") else reports
            row.append(f"{statistics.median(rep['summary'][case][key] for rep in runs):.2f}")
        if per_run:
            row.append(", ".join(f"{rep['summary'][case]['plan/best_fixed']:.2f}" for rep in reports))
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
