#!/usr/bin/env python3
"""What fusion buys on the CPU: every zoo model compiled twice, fused and unfused.

    python tools/bench/fusion.py                      # realistic sizes, batch 1
    python tools/bench/fusion.py --size small --models mlp,gpt2 --reps 5

For each model of test/python/zoo.py: the number of kernels without fusion (one per
op, `fuse=False`) and with it, and the latency of both libraries measured side by side
in this process (interleaved: fused, unfused, fused, ... after a warm-up; median and
min-max of `--reps` runs), with their ratio. Both are checked against eager first. The
shapes are static (batch 1), the case where every fusion rule applies; the library runs
on the same threads as torch (torch.get_num_threads()).

Prints a markdown table (the one in docs/performance.md comes from this script).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="realistic", choices=["small", "realistic"])
    parser.add_argument("--models", default=",".join(ZOO))
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("THUNDER_CACHE_DIR", tempfile.mkdtemp(prefix="thunder-fusion-"))
    torch.set_grad_enabled(False)

    rows = []
    for name in args.models.split(","):
        model, inputs = ZOO[name].build(args.size, 1)
        reference = first_tensor(model(*inputs))
        counts = {fuse: kernels(model, inputs, fuse) for fuse in (False, True)}
        compiled = {fuse: thunder.compile(model, inputs, fuse=fuse, progress=False,
                                          name=f"{name}_{'fused' if fuse else 'unfused'}")
                    for fuse in (False, True)}
        for fuse, cm in compiled.items():
            out = first_tensor(cm(*inputs))
            error = ((out - reference).abs().max() / reference.abs().max()).item()
            if error > 1e-4:
                raise SystemExit(f"{name} (fuse={fuse}) differs from eager: {error:.2e}")
            for _ in range(2):
                cm(*inputs)
        times = {False: [], True: []}
        for _ in range(args.reps):
            for fuse in (True, False):
                start = time.perf_counter()
                compiled[fuse](*inputs)
                times[fuse].append((time.perf_counter() - start) * 1e3)
        med = {fuse: statistics.median(t) for fuse, t in times.items()}
        rows.append((name, counts[False], counts[True], med[False], min(times[False]),
                     max(times[False]), med[True], min(times[True]), max(times[True]),
                     med[False] / med[True]))
        print(f"{name}: {counts[False]} -> {counts[True]} kernels, "
              f"{med[False]:.2f} -> {med[True]:.2f} ms", file=sys.stderr, flush=True)

    print(f"\n{args.size} sizes, batch 1, fp32, {torch.get_num_threads()} threads, "
          f"median of {args.reps} (min-max)\n")
    print("| model | kernels unfused | kernels fused | unfused ms | fused ms | "
          "unfused / fused |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} ({r[4]:.2f}-{r[5]:.2f}) | "
              f"{r[6]:.2f} ({r[7]:.2f}-{r[8]:.2f}) | {r[9]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
