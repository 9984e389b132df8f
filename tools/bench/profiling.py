"""Where the time goes, for one model: `tools/dev.sh bench --profile gpt2`.

Eager: torch.profiler's self CPU time per ATen op, grouped by kind (GEMM, attention,
elementwise, normalization, data movement). Thunder: the library that thunder-compile
builds, run by thunder-run --bench under `perf record` (CPU samples of both threads), per
symbol: each generated kernel (an OpenMP region of the host program or a named kernel), the
GEMM library, libm's math functions, the OpenMP runtime. The two are shares of different
things (op self time; CPU samples) and are shown side by side with both medians, which is
what says which kinds of kernels lose and by how much. Needs `perf` (Debian: linux-perf)
for Thunder's half; without it only eager's half is written.
"""
from __future__ import annotations

import collections
import datetime
import os
import pathlib
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: ATen op -> kind, by substring of the op name (first match wins).
EAGER_KINDS = [
    ("attention", ["scaled_dot_product", "flash_attention", "_efficient_attention"]),
    ("GEMM", ["addmm", "aten::mm", "bmm", "baddbmm", "matmul", "linear", "mkldnn_matmul"]),
    ("convolution", ["conv", "mkldnn_convolution"]),
    ("normalization", ["layer_norm", "batch_norm", "rms_norm", "group_norm",
                       "native_batch_norm", "_native_batch_norm"]),
    ("softmax", ["softmax"]),
    ("pooling", ["pool"]),
    ("data movement", ["copy_", "contiguous", "clone", "cat", "index", "embedding",
                       "transpose", "permute", "view", "reshape", "expand", "slice", "select",
                       "to", "empty", "zeros", "ones", "arange", "full", "split", "unsqueeze",
                       "flatten", "masked_fill", "where", "tril", "triu"]),
    ("elementwise", ["add", "mul", "sub", "div", "gelu", "relu", "silu", "tanh", "pow", "exp",
                     "rsqrt", "sqrt", "neg", "sigmoid", "mean", "sum", "erf", "cos", "sin",
                     "max", "min", "clamp"]),
]


def _eager_kind(op: str) -> str:
    for kind, keys in EAGER_KINDS:
        if any(key in op for key in keys):
            return kind
    return "other"


def _thunder_kind(dso: str, symbol: str, library: str) -> str:
    if dso.startswith("libdnnl") or "dnnl" in symbol or dso.startswith("[JIT]"):
        return "GEMM (oneDNN and its JIT-generated kernels)"
    if dso.startswith("libopenblas") or "gemm" in symbol.lower():
        return "GEMM (Thunder's own, or OpenBLAS)"
    if dso == library:
        helper = re.search(r"thunder_cpu::(\w+)", symbol)
        if helper:
            return f"{helper[1]} kernels"
        if "run_model" in symbol:
            return "op loops in run_model (one OpenMP region each)"
        return "other code of the library"
    if dso.startswith("libm") or dso.startswith("libmvec"):
        return "libm (expf, tanhf, ... called by kernels)"
    if dso.startswith("libgomp"):
        return "OpenMP runtime (fork/join, barriers)"
    if dso.startswith("libc"):
        return "libc (memcpy, memset, malloc)"
    if dso.startswith("[kernel"):
        return "Linux kernel (page faults, scheduling)"
    return f"other ({dso})"


def profile_eager(model, inputs, runs: int) -> tuple[float, list, dict]:
    """(median ms, top ops [(op, ms per run, calls per run)], kind -> share)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            model(*inputs)
            times.append((time.perf_counter() - start) * 1e3)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(runs):
                model(*inputs)
    ops = [(e.key, e.self_cpu_time_total / 1e3 / runs, e.count / runs)
           for e in prof.key_averages()]
    total = sum(ms for _, ms, _ in ops) or 1.0
    kinds = collections.Counter()
    for op, ms, _ in ops:
        kinds[_eager_kind(op)] += ms / total
    ops.sort(key=lambda t: -t[1])
    return statistics.median(times), ops[:15], dict(kinds)


def profile_thunder(model, inputs, workdir: pathlib.Path, build_dir: pathlib.Path,
                    threads: int, runs: int) -> dict:
    """thunder-compile, then thunder-run --bench under perf record."""
    import numpy as np
    import torch
    import thunder
    from thunder import capture
    archive, out = workdir / "model.pt2", workdir / "out"
    torch.export.save(capture.capture(model, inputs), archive)
    subprocess.run([str(build_dir / "bin" / "thunder-compile"), str(archive), "--name=model",
                    "-o", str(out)], check=True, capture_output=True)
    loaded = thunder.load(out)
    np.savez(workdir / "inputs.npz", **{d.name: x.numpy() for d, x in zip(loaded.inputs, inputs)})
    library = pathlib.Path(thunder.runtime.find_library(out))
    run = [str(build_dir / "bin" / "thunder-run"), str(library), "--inputs",
           str(workdir / "inputs.npz"), "--bench", str(runs), "--warmup", "5"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    result = {"library": library.name}
    plain = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout
    result["median_ms"] = float(re.search(r"median ([\d.]+) ms", plain)[1])
    perf = shutil.which("perf")
    if perf is None:
        result["perf"] = "perf is not installed (Debian: linux-perf)"
        return result
    data = workdir / "perf.data"
    recorded = subprocess.run([perf, "record", "-F", "1999", "-q", "-o", str(data), "--", *run],
                              capture_output=True, text=True, env=env)
    if recorded.returncode != 0:
        result["perf"] = f"perf record failed: {recorded.stderr.strip()[-300:]}"
        return result
    text = subprocess.run([perf, "report", "-i", str(data), "--stdio", "--no-children",
                           "--sort", "dso,sym", "--percent-limit", "0"],
                          capture_output=True, text=True).stdout
    symbols, kinds = [], collections.Counter()
    for line in text.splitlines():
        # "  4.41%  libmodel.so  [.] thunder_cpu::sdpa<...>"; JIT code's dso is
        # "[JIT] tid 123" (oneDNN generates its GEMM kernels at run time).
        match = re.match(r"^\s*([\d.]+)%\s+(.+?)\s+\[([.kgu])\]\s+(.*)$", line)
        if not match:
            continue
        share, dso, _, symbol = float(match[1]) / 100, match[2], match[3], match[4].strip()
        symbols.append((share, dso, symbol))
        kinds[_thunder_kind(dso, symbol, library.name)] += share
    result.update(symbols=symbols[:20], kinds=dict(kinds))
    return result


def report(name: str, size: str, batch: int, threads: int, eager: tuple, ours: dict) -> str:
    median, top, eager_kinds = eager
    lines = [f"# Profile: {name} ({size}, batch {batch}), {threads} threads",
             "", f"{datetime.date.today()}, {socket.gethostname()}. Eager median "
             f"{median:.2f} ms; Thunder (thunder-run --bench) median {ours['median_ms']:.2f} "
             f"ms. The two run one after the other, not interleaved: for the ratio, see "
             f"the benchmark's table; here, the shares.", "",
             "## Eager: self CPU time per op kind (torch.profiler)", "",
             "| kind | share | ms per run (of the median) |", "|---|---|---|"]
    for kind, share in sorted(eager_kinds.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {kind} | {share:.1%} | {share * median:.2f} |")
    lines += ["", "Top ops by self time:", "", "| op | ms per run | calls per run |",
              "|---|---|---|"]
    lines += [f"| `{op}` | {ms:.2f} | {calls:.0f} |" for op, ms, calls in top]
    lines += ["", "## Thunder: CPU samples per kind (perf record on thunder-run)", ""]
    if "kinds" not in ours:
        lines += [ours.get("perf", "no profile"), ""]
        return "\n".join(lines)
    lines += ["Shares of all CPU samples of the process (both threads; the load and the "
              "warm-up runs included), and that share of the median as a rough time.", "",
              "| kind | share | ~ms per run |", "|---|---|---|"]
    for kind, share in sorted(ours["kinds"].items(), key=lambda kv: -kv[1]):
        lines.append(f"| {kind} | {share:.1%} | {share * ours['median_ms']:.2f} |")
    lines += ["", "Top symbols:", "", "| share | library | symbol |", "|---|---|---|"]
    lines += [f"| {share:.1%} | {dso} | `{symbol[:110]}` |" for share, dso, symbol in
              ours["symbols"]]
    return "\n".join(lines) + "\n"


def main(args) -> int:
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    sys.path[:0] = [str(args.build_dir / "python"), str(ROOT / "test" / "python")]
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    from zoo import ZOO
    torch.set_num_threads(args.threads)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = args.out or ROOT / "bench-results" / f"{stamp}-{socket.gethostname()}-profile"
    out.mkdir(parents=True, exist_ok=True)
    size = "small" if args.quick else args.size
    runs = 3 if args.quick else 5
    for name in args.profile.split(","):
        if name not in ZOO:
            sys.exit(f"bench: unknown model '{name}' (the zoo has {', '.join(ZOO)})")
        batch = (args.batches or [1])[0]
        model, inputs = ZOO[name].build(size=size, batch=batch)
        eager = profile_eager(model, inputs, runs)
        with tempfile.TemporaryDirectory(prefix="thunder-profile-") as workdir:
            ours = profile_thunder(model, inputs, pathlib.Path(workdir), args.build_dir,
                                   args.threads, runs * 4)
        text = report(name, size, batch, args.threads, eager, ours)
        path = out / f"profile-{name}-b{batch}.md"
        path.write_text(text)
        print(text)
        print(f"bench: wrote {path}", flush=True)
    return 0
