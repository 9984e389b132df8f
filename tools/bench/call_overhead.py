"""The call-overhead case: per-call microseconds of a tiny model (nn.Linear(8, 8), batch 1)
whose kernels take about a microsecond, so what is measured is each contender's call path.

    tools/dev.sh bench --call-overhead          # or: python tools/bench/call_overhead.py

Contenders, timed round-robin in one process (medians of --rounds samples, each the mean
of --calls calls): eager (`m(x)`), torch.compile, ONNX Runtime (`session.run` on numpy
arrays), thunder.compile (`cm(x)`, the fast path after the first call), Thunder's C runtime
called through the binding (`Signature.run` on preallocated outputs: the C call plus
pybind11's argument conversion), and thunder-run --bench on the same library (the C runtime
alone, in its own process). A benchmark, not a timed test: the numbers are the machine's.
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

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _per_call_us(call, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def contenders(workdir: pathlib.Path, skip: set[str], layers: int = 1) -> dict:
    import torch
    import thunder
    from thunder import capture

    torch.manual_seed(0)
    model = (torch.nn.Linear(8, 8) if layers == 1 else
             torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(layers)])).eval()
    x = torch.randn(1, 8)
    calls = {"eager": lambda: model(x)}
    if "torch.compile" not in skip:
        try:
            compiled = torch.compile(model)
            compiled(x)
            calls["torch.compile"] = lambda: compiled(x)
        except Exception as error:  # noqa: BLE001 - a missing toolchain is reported
            print(f"call-overhead: torch.compile skipped ({error})", file=sys.stderr)
    if "onnxruntime" not in skip:
        try:
            import onnxruntime
            path = workdir / "linear.onnx"
            torch.onnx.export(model, (x,), str(path), input_names=["x"], dynamo=False)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            session = onnxruntime.InferenceSession(str(path), options,
                                                   providers=["CPUExecutionProvider"])
            feeds = {"x": x.numpy()}
            calls["ONNX Runtime"] = lambda: session.run(None, feeds)
        except Exception as error:  # noqa: BLE001
            print(f"call-overhead: ONNX Runtime skipped ({error})", file=sys.stderr)
    cm = thunder.compile(model, (x,), cache_dir=workdir / "thunder-cache", progress=False)
    cm(x)
    calls["thunder.compile"] = lambda: cm(x)
    native = cm._entries[0].model.native
    signature = native.prepare([(0, "float32", [1, 8])])
    out = torch.empty(1, 8)
    inputs, outputs = [x.data_ptr()], [out.data_ptr()]

    def c_runtime():
        signature.run(inputs, outputs)
        return out  # and keeps the output alive: the run writes into its memory
    calls["C runtime via binding"] = c_runtime
    library = cm.artifacts[0]
    del capture
    return calls, library


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000, help="calls per sample")
    parser.add_argument("--skip", default="", help="comma-separated contenders to leave out")
    parser.add_argument("--layers", type=int, default=1,
                        help="Linear(8, 8) layers in sequence (2 weights each: what a "
                             "call costs per weight)")
    parser.add_argument("--build-dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("THUNDER_BUILD_DIR",
                                                            ROOT / "build")))
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    torch.set_num_threads(1)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="thunder-call-overhead-"))
    skip = set(args.skip.split(","))
    with torch.no_grad():
        calls, library = contenders(workdir, skip, args.layers)
        calls = {name: call for name, call in calls.items() if name not in skip}
        samples = {name: [] for name in calls}
        names = list(calls)
        for name in names:  # warm-up
            _per_call_us(calls[name], 100)
        for r in range(args.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                samples[name].append(_per_call_us(calls[name], args.calls))
    rows = {name: statistics.median(values) for name, values in samples.items()}
    tool = args.build_dir / "bin" / "thunder-run"
    if tool.exists():
        text = subprocess.run([str(tool), library, "--bench", str(args.calls * 5)],
                              capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"}).stdout
        match = re.search(r"median ([\d.]+) ms", text)
        if match:
            rows["thunder-run (C, own process)"] = float(match[1]) * 1e3
    print("| contender | µs per call |\n|---|---|")
    for name, value in rows.items():
        print(f"| {name} | {value:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
