"""Time torch's own ways of doing split_bench's split and concat cases.

Reads the cases JSON that the Rust benchmark writes, and for every case
times, on the same GPU, what torch offers for it:

  split:  torch_per_piece_copy (one ``copy_`` of ``x.narrow`` per piece),
          torch_split_with_sizes_copy (where the pieces tile the axis);
  concat: torch_per_piece_copy (one ``copy_`` into ``out.narrow`` per piece),
          torch_cat_out or torch_stack_out;
  every:  torch_d2d_copy (one device-to-device copy of the same bytes).

Inputs are random bits; every method's outputs are compared byte for byte
(after filling them with 0x00 and then 0xFF) before it is timed. Outputs are
preallocated; the timing is CUDA events around each run (perf_counter on the
CPU), methods alternating per round, and the median is reported with
GB/s = 2 * moved_bytes / seconds / 1e9, the benchmark's formula.

    python3 scripts/torch_peer.py --cases CASES.json --out PEER.json \
        [--runs 15] [--device cuda|cpu] [--case NAME]

Without torch (or without CUDA for --device cuda) it writes
{"available": false, "why": ...} and exits 0. It exits 1 if any method
failed (a mismatch or an error); the failures are rows in the output.
scripts/torch_peer_sample_cases.json holds small cases (every kind of piece,
a sub-byte case) for a check with --device cpu.
"""

import argparse
import json
import math
import statistics
import sys
import time

WARMUP = 3
# Case dtype names (ONNX's, as the benchmark writes them) -> torch attributes.
DTYPES = {
    "float": "float32", "float32": "float32", "float16": "float16",
    "bfloat16": "bfloat16", "double": "float64", "float64": "float64",
    "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16",
    "int32": "int32", "uint32": "uint32", "int64": "int64", "uint64": "uint64",
    "bool": "bool", "complex64": "complex64", "complex128": "complex128",
    "float8e4m3fn": "float8_e4m3fn", "float8e4m3fnuz": "float8_e4m3fnuz",
    "float8e5m2": "float8_e5m2", "float8e5m2fnuz": "float8_e5m2fnuz",
    "float8e8m0": "float8_e8m0fnu",
}


def torch_dtype(torch, case):
    """The case's torch dtype, or (None, why) where torch has none."""
    name = case["dtype"]
    attr = DTYPES.get(name)
    if case.get("bits", 8) < 8 or attr is None:
        return None, f"{name} has no torch dtype"
    if not hasattr(torch, attr):
        return None, f"torch {torch.__version__} has no {attr}"
    return getattr(torch, attr), None


def axis_of(case):
    return case["axis"] % len(case["shape"])


def narrow_shape(shape, axis, length):
    return [length if d == axis else n for d, n in enumerate(shape)]


def tiles(case):
    """Whether the pieces cover the axis in order, no gaps or overlaps."""
    at = 0
    for p in case["pieces"]:
        if p["start"] != at:
            return False
        at += p["length"]
    return at == case["shape"][axis_of(case)]


def random_tensor(torch, shape, dtype, device):
    """Random bits of `dtype` (0/1 for bool, whose other bytes are invalid)."""
    size = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    bits = torch.randint(0, 256, (size,), dtype=torch.uint8, device=device)
    if dtype == torch.bool:
        bits &= 1
    return bits.view(dtype).view(shape)


def as_bytes(torch, t):
    return t.contiguous().reshape(-1).view(torch.uint8)


def same_bytes(torch, got, want):
    return torch.equal(as_bytes(torch, got), as_bytes(torch, want))


def split_problem(torch, case, dtype, device):
    """Split methods as {name: run}, outputs, and the check of those."""
    axis, pieces = axis_of(case), case["pieces"]
    x = random_tensor(torch, case["shape"], dtype, device)
    outs = [torch.empty(p["shape"], dtype=dtype, device=device) for p in pieces]
    views = [o.view(narrow_shape(case["shape"], axis, p["length"])) for o, p in zip(outs, pieces)]
    srcs = [x.narrow(axis, p["start"], p["length"]) for p in pieces]

    def per_piece():
        for v, s in zip(views, srcs):
            v.copy_(s)

    methods = {"torch_per_piece_copy": per_piece}
    if not hasattr(torch, "split_with_sizes_copy"):
        why = f"torch {torch.__version__} has no split_with_sizes_copy"
    elif not tiles(case):
        why = "pieces do not tile the axis in order (overlap or gap)"
    else:
        why = None
        sizes = [p["length"] for p in pieces]
        methods["torch_split_with_sizes_copy"] = (
            lambda: torch.split_with_sizes_copy(x, sizes, dim=axis, out=views))

    def check():
        return all(same_bytes(torch, v, s) for v, s in zip(views, srcs))

    skips = {"torch_split_with_sizes_copy": why} if why else {}
    return methods, skips, outs, check


def concat_problem(torch, case, dtype, device):
    """Concat methods as {name: run}, skips, the output, and its check."""
    axis, pieces, stack = axis_of(case), case["pieces"], case["stack"]
    if not tiles(case):
        raise ValueError("pieces do not tile the output's axis")
    x = random_tensor(torch, case["shape"], dtype, device)
    inputs = [x.narrow(axis, p["start"], p["length"]).clone().view(p["shape"]) for p in pieces]
    out = torch.empty(case["shape"], dtype=dtype, device=device)
    shaped = [i.view(narrow_shape(case["shape"], axis, p["length"])) for i, p in zip(inputs, pieces)]
    dsts = [out.narrow(axis, p["start"], p["length"]) for p in pieces]

    def per_piece():
        for d, s in zip(dsts, shaped):
            d.copy_(s)

    methods = {"torch_per_piece_copy": per_piece}
    if stack:
        methods["torch_stack_out"] = lambda: torch.stack(inputs, dim=axis, out=out)
    else:
        methods["torch_cat_out"] = lambda: torch.cat(shaped, dim=axis, out=out)
    return methods, {}, [out], lambda: same_bytes(torch, out, x)


def d2d_problem(torch, case, device):
    src = torch.randint(0, 256, (case["moved_bytes"],), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    methods = {"torch_d2d_copy": lambda: dst.copy_(src)}
    return methods, {}, [dst], lambda: torch.equal(dst, src)


def check_method(torch, run, outs, check):
    """None where `run` writes the expected bytes over outputs filled with
    0x00 and with 0xFF (so no byte is left unwritten), else why not."""
    try:
        for fill in (0, 255):
            for o in outs:
                o.view(-1).view(torch.uint8).fill_(fill)
            run()
            if not check():
                return f"output bytes differ from the expected (outputs filled with {fill})"
    except Exception as e:  # an unsupported dtype, OOM: this method fails
        return f"{type(e).__name__}: {e}"
    return None


def time_methods(torch, methods, runs, cuda):
    """Median seconds per method, methods alternating within each round."""
    samples = {name: [] for name in methods}
    for round_ in range(WARMUP + runs):
        marks = []
        for name, run in methods.items():
            if cuda:
                start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
                start.record()
                run()
                end.record()
                marks.append((name, start, end))
            else:
                t0 = time.perf_counter()
                run()
                if round_ >= WARMUP:
                    samples[name].append(time.perf_counter() - t0)
        if cuda:
            torch.cuda.synchronize()
            if round_ >= WARMUP:
                for name, start, end in marks:
                    samples[name].append(start.elapsed_time(end) / 1e3)
    return {name: statistics.median(s) for name, s in samples.items()}


def bench_case(torch, case, args, result):
    """Check and time every method of `case`, adding to `result`'s lists."""
    name, cuda = case["name"], args.device == "cuda"
    dtype, why = torch_dtype(torch, case)
    problems = []
    if dtype is None:
        result["skipped"].append({"case": name, "method": None, "why": why})
    else:
        make = split_problem if case["op"] == "split" else concat_problem
        problems.append(make(torch, case, dtype, args.device))
    problems.append(d2d_problem(torch, case, args.device))
    timed = {}
    for methods, skips, outs, check in problems:
        for method, reason in skips.items():
            result["skipped"].append({"case": name, "method": method, "why": reason})
        for method, run in methods.items():
            why = check_method(torch, run, outs, check)
            if why is None:
                timed[method] = run
            else:
                result["failures"].append({"case": name, "method": method, "why": why})
    for method, seconds in time_methods(torch, timed, args.runs, cuda).items():
        gbps = 2 * case["moved_bytes"] / seconds / 1e9 if seconds > 0 else None
        result["rows"].append({"case": name, "method": method, "seconds": seconds,
                               "gbps": gbps, "checked": True})


def run_cases(torch, cases, args, result):
    for case in cases:
        try:
            bench_case(torch, case, args, result)
        except Exception as e:  # OOM, unsupported dtype, bad case: a row, go on
            result["failures"].append({"case": case["name"], "method": None,
                                       "why": f"{type(e).__name__}: {e}"})
        if args.device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


def load_torch(device):
    """(torch, None), or (None, why) where torch or its device is missing."""
    try:
        import torch
    except Exception as e:
        return None, f"torch cannot be imported: {type(e).__name__}: {e}"
    if device == "cuda" and not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA device"
    return torch, None


def print_table(result):
    print(f"{'case':<34} {'method':<28} {'us':>10} {'GB/s':>8}")
    for r in result["rows"]:
        gbps = f"{r['gbps']:.1f}" if r["gbps"] is not None else "-"
        print(f"{r['case']:<34} {r['method']:<28} {r['seconds'] * 1e6:>10.1f} {gbps:>8}")
    for s in result["skipped"]:
        print(f"skipped {s['case']} {s['method'] or '(case)'}: {s['why']}")
    for f in result["failures"]:
        print(f"FAILED {f['case']} {f['method'] or '(case)'}: {f['why']}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", required=True, help="the benchmark's cases JSON")
    p.add_argument("--out", required=True, help="where to write the peer JSON")
    p.add_argument("--runs", type=int, default=15, help="timed runs per method")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--case", help="only the case of this name")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    with open(args.cases) as f:
        cases = json.load(f)["cases"]
    torch, why = load_torch(args.device)
    if torch is None:
        result = {"available": False, "why": why}
    else:
        cuda = args.device == "cuda"
        result = {"available": True, "torch": torch.__version__,
                  "device": torch.cuda.get_device_name() if cuda else "cpu",
                  "cuda": torch.version.cuda if cuda else None, "runs": args.runs,
                  "rows": [], "skipped": [], "failures": []}
        chosen = [c for c in cases if args.case in (None, c["name"])]
        if not chosen:
            result["failures"].append({"case": args.case, "method": None, "why": "no such case"})
        run_cases(torch, chosen, args, result)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    if torch is None:
        print(f"torch peer unavailable: {why}")
        return 0
    print_table(result)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
