#!/usr/bin/env python3
"""Markdown tables of access traces (examples/access_trace --json): the
split_bench cases under every class model, before and after, side by side.

    python3 scripts/trace_table.py docs/trace/06e8164.json docs/trace/after.json
    python3 scripts/trace_table.py docs/trace/sweep.json

Per row: the kernel and its lanes, load and store sectors per warp request
against the ideal at W = 32 and 64 (1.00: coalesced), the warps' footprint
at W = 32, and the invocations against those of a vec4 copy.
"""
import json
import sys


def figures(row):
    by = {c["warp"]: c for c in row["by_warp"]}
    if 32 not in by:
        return None
    ratio = lambda r: r["sectors"] / max(r["ideal_sectors"], 1)
    fp = lambda c: c["footprint_sectors"] / max(c["footprint_ideal"], 1)
    w32, w64 = by[32], by[64]
    return {
        "kernel": f'{row["kernel"]}/{row["lanes"][0]}',
        "ld32": ratio(w32["loads"]), "st32": ratio(w32["stores"]),
        "ld64": ratio(w64["loads"]), "st64": ratio(w64["stores"]),
        "fp": fp(w32),
        "inv": row["invocations"] / max(row["copy_invocations"], 1),
    }


def cell(a, b, key, fmt="{:.2f}"):
    if a is None:
        return fmt.format(b[key])
    x, y = fmt.format(a[key]), fmt.format(b[key])
    return y if x == y else f"{x} → {y}"


def main():
    paths = sys.argv[1:]
    runs = [json.load(open(p)) for p in paths]
    after = runs[-1]
    before = {(r["case"], r["class"]): figures(r) for r in runs[0]} if len(runs) > 1 else {}
    cols = ["case", "class", "kernel", "ld W32", "st W32", "ld W64", "st W64", "footprint", "invocations / copy's"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join(["---"] * 3 + ["---:"] * 6) + "|")
    for row in after:
        b, a = before.get((row["case"], row["class"])), figures(row)
        if a is None:
            continue
        kernel = a["kernel"] if b is None or b["kernel"] == a["kernel"] else f'{b["kernel"]} → {a["kernel"]}'
        print(f'| `{row["case"]}` | {row["class"]} | {kernel} | ' + " | ".join(
            cell(b, a, k) for k in ["ld32", "st32", "ld64", "st64", "fp", "inv"]) + " |")


main()
