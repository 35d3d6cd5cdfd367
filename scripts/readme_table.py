#!/usr/bin/env python3
"""The README's performance table (GB/s per method, then ratios) from a
split_bench JSON report:

    cargo run --release --example split_bench -- --runs 15 \
        --json docs/split_bench.json --plot docs/split_bench.png
    python3 scripts/readme_table.py docs/split_bench.json
"""

import json
import sys

METHODS = ["plan", "destinations", "gather", "per_output_dispatch", "per_output_copy",
           "copy_limit", "shader_copy", "host", "host_memcpy"]
RATIOS = [("plan", "best_fixed"), ("plan", "copy_limit"), ("plan", "shader_copy"),
          ("host", "host_memcpy")]


def main():
    report = json.load(open(sys.argv[1]))
    rows = {}
    for r in report["results"]:
        rows.setdefault(r["case"], {})[r["method"]] = r
    header = METHODS + [f"{a} / {b}" for a, b in RATIOS]
    print("| case | " + " | ".join(header) + " |")
    print("|---|" + "---:|" * len(header))
    for case, methods in rows.items():
        cells = [f"{methods[m]['gbps']:.2f}" if m in methods else "n/a" for m in METHODS]
        for a, b in RATIOS:
            if a in methods and b in methods:
                cells.append(f"{methods[b]['seconds'] / methods[a]['seconds']:.2f}")
            else:
                cells.append("n/a")
        print(f"| `{case}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
