#!/usr/bin/env python3
"""A fused pointwise region with transcendental math against eager and memcpy.

    python tools/bench/fused_math.py                 # 1 and 2 threads
    python tools/bench/fused_math.py --threads 1 --rounds 5

`exp(gelu(1.5 x + 0.25))` over 64 x 4096 fp32 (test/Target/Inputs/exp_gelu.mlir),
compiled by thunder-compile for this machine (--cpu=native) and as the
multi-architecture library (--cpu=x86-64-v3,x86-64-v4, run on its best path and
capped to x86-64-v3 with THUNDER_CPU_ISA), against PyTorch eager on the same
tensor and a copy of the same bytes (numpy's copyto, one thread's memcpy: the
read of x and the write of the result are the region's whole memory traffic). Every
candidate is checked against eager first, then timed in interleaved rounds
(each round: every candidate, `--iters` calls, the median per call), so load
from other processes hits all of them alike; each thread count runs in a
process of its own (OMP_NUM_THREADS and torch.set_num_threads, with
OMP_WAIT_POLICY=PASSIVE so that two OpenMP runtimes in one process do not spin
against each other on a small machine). Prints a
markdown table: the median of the rounds' medians in microseconds, the
bandwidth reached (2 x 1 MiB per call), and the ratio to the memcpy.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "test" / "Target" / "Inputs" / "exp_gelu.mlir"


def thunder_compile(out: pathlib.Path, cpu: str) -> pathlib.Path:
    build = pathlib.Path(os.environ.get("THUNDER_BUILD_DIR", ROOT / "build"))
    subprocess.run([str(build / "bin" / "thunder-compile"), str(MODEL), f"--cpu={cpu}",
                    "-o", str(out), "--name", "expgelu"], check=True)
    return out / "libexpgelu.so"


def measure(libs: dict[str, str], threads: int, rounds: int, iters: int) -> dict:
    """Runs in a process of its own with OMP_NUM_THREADS = threads."""
    import torch

    import thunder.runtime as rt

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x = torch.rand(64, 4096) * 4 - 2
    expected = torch.exp(torch.nn.functional.gelu(1.5 * x + 0.25))
    import numpy as np
    x_np, copy_out = x.numpy(), np.empty_like(x.numpy())
    candidates = {"eager": lambda: torch.exp(torch.nn.functional.gelu(1.5 * x + 0.25)),
                  "memcpy": lambda: np.copyto(copy_out, x_np)}
    for name, path in libs.items():
        env_cap = name.endswith("(v3 path)")
        if env_cap:
            os.environ["THUNDER_CPU_ISA"] = "x86-64-v3"
        model = rt.load(path)
        os.environ.pop("THUNDER_CPU_ISA", None)
        candidates[name] = (lambda m: lambda: m(x))(model)
        got = candidates[name]()
        got = got[0] if isinstance(got, (list, tuple)) else got
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for fn in candidates.values():
        for _ in range(5):
            fn()
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples = []
            for _ in range(iters):
                start = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - start)
            times[name].append(statistics.median(samples))
    return {name: [statistics.median(t) * 1e6, min(t) * 1e6, max(t) * 1e6]
            for name, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        print(json.dumps(measure(spec["libs"], spec["threads"], args.rounds, args.iters)))
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        libs = {"thunder (native)": str(thunder_compile(pathlib.Path(tmp) / "native", "native"))}
        multi = str(thunder_compile(pathlib.Path(tmp) / "multi", "x86-64-v3,x86-64-v4"))
        libs["thunder v3+v4 (best path)"] = multi
        libs["thunder v3+v4 (v3 path)"] = multi
        results = {}
        for threads in [int(t) for t in args.threads.split(",")]:
            # Passive waits: PyTorch's and the library's OpenMP runtimes
            # share two cores, and one's threads spinning after its loop
            # would steal the other's.
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="PASSIVE")
            out = subprocess.run([sys.executable, __file__, "--rounds", str(args.rounds),
                                  "--iters", str(args.iters), "--worker",
                                  json.dumps({"libs": libs, "threads": threads})],
                                 env=env, check=True, capture_output=True, text=True)
            results[threads] = json.loads(out.stdout.strip().splitlines()[-1])

    flags = ""
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags"))
    except (OSError, StopIteration):
        pass
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), platform.processor())
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")
           if f" {f}" in flags]
    print(f"`exp(gelu(1.5 x + 0.25))`, 64 x 4096 fp32, {datetime.date.today()}, "
          f"{model}, {os.cpu_count()} CPUs ({' '.join(isa)}); interleaved rounds of "
          f"{args.iters} calls, median of {args.rounds} rounds' medians [min-max]; "
          f"bandwidth counts 1 MiB read + 1 MiB written per call.\n")
    print("| threads | candidate | µs per call | GB/s | vs memcpy | vs eager |")
    print("|---|---|---|---|---|---|")
    for threads, res in results.items():
        copy, eager = res["memcpy"][0], res["eager"][0]
        for name, (med, lo, hi) in res.items():
            gbs = 2 * (1 << 20) / (med * 1e-6) / 1e9
            print(f"| {threads} | {name} | {med:.0f} [{lo:.0f}-{hi:.0f}] | {gbs:.1f} | "
                  f"{copy / med:.2f}× | {eager / med:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
