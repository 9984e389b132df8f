#!/usr/bin/env python3
"""What fusion buys on the CPU: every zoo model compiled twice, fused and unfused.

    python tools/bench/fusion.py                      # realistic sizes, batch 1
    python tools/bench/fusion.py --size small --models mlp,gpt2 --reps 3

For each model of test/python/zoo.py: the number of kernels without fusion (one per
op, `thunder-compile --fusion=false`) and with it, and the latency of both libraries
through the C++ runner, side by side (`thunder-run --bench` on the fused library, then
the unfused one, `--reps` rounds; the median of the rounds' medians, and their
min-max), with their ratio. Both libraries are checked against eager first. The shapes
are static (batch 1), the case where every fusion rule applies.

Prints a markdown table (the one in docs/performance.md comes from this script).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))

import thunder  # noqa: E402
from thunder import report  # noqa: E402
from zoo import ZOO  # noqa: E402


def kernels(model, inputs, fuse: bool) -> int:
    text = report.fusion_report(model, inputs, fuse=fuse)
    return int(re.search(r": (\d+) kernels", text).group(1))


def first_tensor(out):
    if torch.is_tensor(out):
        return out
    for name in ("logits", "last_hidden_state"):
        if hasattr(out, name):
            return getattr(out, name)
    return first_tensor(out[0])


def bench_ms(runner: pathlib.Path, library: pathlib.Path, runs: int) -> float:
    """thunder-run's median over `runs` runs after its warm-up, in ms."""
    out = subprocess.run([str(runner), str(library), "--bench", str(runs)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="realistic", choices=["small", "realistic"])
    parser.add_argument("--models", default=",".join(ZOO))
    parser.add_argument("--reps", type=int, default=5, help="rounds of both libraries")
    parser.add_argument("--runs", type=int, default=10, help="runs per thunder-run call")
    parser.add_argument("--build-dir", default=os.environ.get("THUNDER_BUILD_DIR",
                                                              str(ROOT / "build")))
    args = parser.parse_args()
    build = pathlib.Path(args.build_dir)
    compiler, runner = build / "bin" / "thunder-compile", build / "bin" / "thunder-run"
    work = pathlib.Path(tempfile.mkdtemp(prefix="thunder-fusion-"))
    torch.set_grad_enabled(False)

    rows = []
    for name in args.models.split(","):
        model, inputs = ZOO[name].build(args.size, 1)
        reference = first_tensor(model(*inputs))
        archive = work / f"{name}.pt2"
        torch.export.save(thunder.capture.capture(model, inputs), archive)
        counts, libraries = {}, {}
        for fuse in (False, True):
            counts[fuse] = kernels(model, inputs, fuse)
            out = work / f"{name}-{'fused' if fuse else 'unfused'}"
            subprocess.run([str(compiler), str(archive), "-o", str(out), "--name", name,
                            f"--fusion={'true' if fuse else 'false'}"],
                           check=True, capture_output=True)
            libraries[fuse] = out / f"lib{name}.so"
            result = first_tensor(thunder.load(out).run(*inputs))
            error = ((result - reference).abs().max() / reference.abs().max()).item()
            if error > 1e-4:
                raise SystemExit(f"{name} (fusion={fuse}) differs from eager: {error:.2e}")
        times = {False: [], True: []}
        for _ in range(args.reps):
            for fuse in (True, False):
                times[fuse].append(bench_ms(runner, libraries[fuse], args.runs))
        med = {fuse: statistics.median(t) for fuse, t in times.items()}
        rows.append((name, counts[False], counts[True], med[False], min(times[False]),
                     max(times[False]), med[True], min(times[True]), max(times[True]),
                     med[False] / med[True]))
        print(f"{name}: {counts[False]} -> {counts[True]} kernels, "
              f"{med[False]:.2f} -> {med[True]:.2f} ms", file=sys.stderr, flush=True)

    print(f"\n{args.size} sizes, batch 1, fp32, thunder-run (OpenMP threads: all cores), "
          f"median of {args.reps} rounds of {args.runs} runs (min-max of the rounds)\n")
    print("| model | kernels unfused | kernels fused | unfused ms | fused ms | "
          "unfused / fused |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} ({r[4]:.2f}-{r[5]:.2f}) | "
              f"{r[6]:.2f} ({r[7]:.2f}-{r[8]:.2f}) | {r[9]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
