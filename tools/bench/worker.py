"""One benchmark process: `worker.py SPEC.json RESULT.json`.

mode "case": one model at one batch size with every contender in this process: eager's
outputs, each contender loaded (or compiled) and checked against them, then the
interleaved timing, then thunder-run --bench in a subprocess.

mode "memory": one contender on one case in a fresh process: the compile from empty caches
(its time and peak resident memory), then the peak resident memory while serving, with
what serving needs and no more: the artifact alone for AOTInductor, ONNX Runtime,
OpenVINO, IREE and Thunder's C++ runtime, loaded in a process of its own (mode "serve", started by "memory")
that never exported or compiled, as a deployment loads it.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import time
import traceback
import warnings


def _setup(spec: dict) -> None:
    """The environment every contender shares; before torch is imported, since OpenMP
    reads it when torch loads libgomp (Thunder's models use the same libgomp)."""
    os.environ["OMP_NUM_THREADS"] = str(spec["threads"])
    os.environ.setdefault("OMP_WAIT_POLICY", spec["omp_wait_policy"])
    os.environ.setdefault("GOMP_SPINCOUNT", spec.get("gomp_spincount", "10000"))
    os.environ["THUNDER_QUIET"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if spec.get("quick"):
        # Quick mode tests the driver: Inductor compiles in this process rather than
        # starting a pool of compile workers (each one imports torch again).
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    root = pathlib.Path(spec["root"])
    # The package by its name (bench.*), not this folder's files as top-level modules.
    sys.path[:] = [p for p in sys.path
                   if pathlib.Path(p or ".").resolve() != root / "tools" / "bench"]
    sys.path[:0] = [str(pathlib.Path(spec["build_dir"]) / "python"),
                    str(root / "tools"), str(root / "test" / "python")]
    warnings.filterwarnings("ignore")
    import logging
    logging.disable(logging.WARNING)  # the ONNX exporter and Inductor log per op


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    lines = [line for line in text.splitlines() if line.strip()]
    text = " | ".join(lines[:4])
    return text if len(text) < 600 else text[:600] + "..."


def _build(spec: dict):
    import torch
    from zoo import CONV_ZOO, ZOO
    entry = {**ZOO, **CONV_ZOO}[spec["model"]]
    model, inputs = entry.build(size=spec["size"], batch=spec["batch"], seed=spec["seed"])
    if spec["device"] == "cuda":
        model = model.to("cuda")
        inputs = tuple(x.to("cuda") for x in inputs)
    info = {"params": sum(p.numel() for p in model.parameters()),
            "inputs": [f"{str(x.dtype).replace('torch.', '')}"
                       f"[{'x'.join(str(d) for d in x.shape)}]" for x in inputs]}
    return model, inputs, info, entry.tolerance


def _context(spec: dict):
    from bench.contenders import Context
    return Context(threads=spec["threads"], device=spec["device"],
                   build_dir=pathlib.Path(spec["build_dir"]))


def _sync(spec: dict):
    import torch
    return torch.cuda.synchronize if spec["device"] == "cuda" else (lambda: None)


# ---------------------------------------------------------------------------------------
# mode "case": correctness and interleaved timing
# ---------------------------------------------------------------------------------------


def run_case(spec: dict) -> dict:
    import torch
    from bench import measure
    from bench.contenders import CONTENDERS, THUNDER_RUN, tensor_leaves
    torch.set_num_threads(spec["threads"])
    model, inputs, info, tolerance = _build(spec)
    rtol, atol = spec.get("tolerance") or tolerance
    result = {"info": info, "tolerance": [rtol, atol], "contenders": {}}
    ctx, workdir = _context(spec), pathlib.Path(spec["workdir"])
    prepared, rows = {}, result["contenders"]
    with torch.no_grad():
        reference = [t.detach().cpu().clone() for t in tensor_leaves(model(*inputs))]
        for name in spec["contenders"]:
            if name == THUNDER_RUN:
                continue
            row = rows[name] = {"status": "FAIL"}
            try:
                p = CONTENDERS[name].prepare(model, inputs, workdir / name, ctx)
                row.update(compiled_here=p.compiled, compile_s=p.compile_s,
                           compile_detail=p.detail)
                check = measure.compare(p.leaves(p.call()), reference, rtol, atol)
            except Exception as error:  # noqa: BLE001 - every failure is reported
                row["reason"] = _error_text(error)
                row["traceback"] = traceback.format_exc(limit=6)
                continue
            row["check"] = check
            if not check["ok"]:
                row["reason"] = "wrong output: " + check["reason"]
                continue
            row["status"] = "ok"
            prepared[name] = p
        # Warm up everyone, then time them round-robin.
        inner = {name: measure.calibrate(p.call, spec["warmup"], spec["min_sample_s"])
                 for name, p in prepared.items()}
        samples = measure.interleaved({n: p.call for n, p in prepared.items()}, inner,
                                      spec["rounds"], _sync(spec))
    for name, times in samples.items():
        rows[name].update(measure.summarize(times), calls_per_sample=inner[name],
                          samples_ms=[round(t, 4) for t in times])
    if THUNDER_RUN in spec["contenders"]:
        rows[THUNDER_RUN] = thunder_run(spec, workdir / "thunder-rt" / "thunder-rt",
                                        inputs, reference, rtol, atol,
                                        rows.get("thunder-rt", {}))
    return result


def _poll_peak_rss(proc: subprocess.Popen) -> int:
    """The child's peak resident set (kB), from its VmHWM, read until it exits. Not
    wait4's ru_maxrss: Linux carries the forking parent's high-water mark across exec, so
    a child of this large process would report this process's size."""
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                match = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
            peak = max(peak, int(match[1])) if match else peak
        except OSError:
            pass
        time.sleep(0.01)
    return peak


def thunder_run(spec, directory, inputs, reference, rtol, atol, rt_row) -> dict:
    """thunder-run --check --bench on thunder-rt's library, in its own process (so not
    interleaved with the others), with its peak resident memory."""
    import numpy as np
    import thunder
    row = {"status": "FAIL"}
    out = directory / "out"
    if not (directory / ".done").exists():
        row["reason"] = "no library: thunder-rt " + (
            f"failed ({rt_row.get('reason')})" if rt_row.get("reason") else "did not run")
        return row
    if spec["device"] != "cpu":
        row["reason"] = "thunder-run runs CPU models only so far"
        return row
    try:
        loaded = thunder.load(out)
        np.savez(directory / "inputs.npz", **{d.name: x.cpu().numpy()
                                              for d, x in zip(loaded.inputs, inputs)})
        np.savez(directory / "reference.npz", **{d.name: r.numpy()
                                                 for d, r in zip(loaded.outputs, reference)})
        scale = max([1.0] + [r.abs().max().item() for r in reference if r.numel()])
        per_call = rt_row.get("median_ms") or 10.0
        runs = max(spec["rounds"], int(spec["rounds"] * spec["min_sample_s"] * 1e3 / per_call))
        command = [str(pathlib.Path(spec["build_dir"]) / "bin" / "thunder-run"),
                   thunder.runtime.find_library(out), "--inputs", str(directory / "inputs.npz"),
                   "--check", str(directory / "reference.npz"), "--rtol", str(rtol),
                   "--atol", str(atol * scale), "--bench", str(runs),
                   "--warmup", str(max(1, spec["warmup"]))]
        log = directory / "thunder-run.log"
        with open(log, "w") as f:
            proc = subprocess.Popen(command, stdout=f, stderr=subprocess.STDOUT)
            peak_kb = _poll_peak_rss(proc)
        text = log.read_text()
    except Exception as error:  # noqa: BLE001
        row["reason"] = _error_text(error)
        return row
    row["command"] = " ".join(command)
    row["peak_rss_mb"] = peak_kb / 1024  # the whole process: no interpreter
    if "check: PASS" not in text:
        lines = [line for line in text.splitlines() if "check" in line or "error" in line]
        row["reason"] = "thunder-run: " + (" | ".join(lines[-4:]) or text[-300:])
        return row
    match = re.search(r"median ([\d.]+) ms, min ([\d.]+) ms, p90 ([\d.]+) ms", text)
    if proc.returncode != 0 or not match:
        row["reason"] = f"thunder-run exited {proc.returncode}: {text[-300:]}"
        return row
    row.update(status="ok", median_ms=float(match[1]), min_ms=float(match[2]),
               p90_ms=float(match[3]), samples=runs,
               check={"ok": True, "reason": None, "max_abs_err": None, "scale": scale})
    return row


# ---------------------------------------------------------------------------------------
# mode "memory": compile time from empty caches, peak resident memory
# ---------------------------------------------------------------------------------------


def _import_every_library() -> None:
    """Every library any contender loads, before a baseline: the differences between
    contenders are then what each one does, not what it imports."""
    import importlib
    for library in ("onnxruntime", "thunder", "torch._dynamo", "torch._inductor",
                    "torch.onnx", "transformers"):
        try:
            importlib.import_module(library)
        except ImportError:
            pass  # a contender that needs it fails with its own message


def _memory_process(spec: dict):
    """This process set up for a memory measurement of spec's contender: every library
    imported, torch's threads set; its contender, context, work directory and baseline
    resident size (MiB)."""
    import torch
    from bench import measure
    from bench.contenders import CONTENDERS
    _import_every_library()
    torch.set_num_threads(spec["threads"])
    contender = CONTENDERS[spec["contender"]]
    ctx, workdir = _context(spec), pathlib.Path(spec["workdir"]) / contender.name
    measure.release_freed_memory()
    return contender, ctx, workdir, measure.rss_mb()


def _serve_peak(spec: dict, prepared, result: dict, base: float) -> None:
    """The resident memory once loaded and the peak over a warm-up and memory_runs calls,
    above `base`, into `result`."""
    import torch
    from bench import measure
    measure.release_freed_memory()
    result["loaded_mb"] = measure.rss_mb() - base
    measure.reset_peak_rss()
    if spec["device"] == "cuda":
        torch.cuda.reset_peak_memory_stats()
    for _ in range(1 + spec["memory_runs"]):
        prepared.call()
    result["run_peak_mb"] = measure.peak_rss_mb() - base
    if spec["device"] == "cuda":
        result["cuda_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20


def run_memory(spec: dict) -> dict:
    """Mode "memory": the compile from empty caches, then serving. A contender that
    serves from its artifact alone serves in a process of its own (mode "serve"), as a
    deployment does: one that never exported or compiled, so that what the compile left
    behind (torch.export's lazily imported modules, a compiler's code) is not charged to
    serving."""
    import torch
    from bench import measure
    contender, ctx, workdir, base = _memory_process(spec)
    result = {"base_rss_mb": base}
    with torch.no_grad():
        model, inputs, info, _ = _build(spec)
        result["model_mb"] = measure.rss_mb() - base
        measure.release_freed_memory()
        measure.reset_peak_rss()
        start = time.perf_counter()
        prepared = contender.prepare(model, inputs, workdir, ctx)
        wall = time.perf_counter() - start
        result.update(compile_s=prepared.compile_s, compiled=prepared.compiled,
                      compile_detail=prepared.detail, prepare_wall_s=wall)
        result["compile_peak_mb"] = measure.peak_rss_mb() - base
        apart_mb = prepared.detail.get("process_peak_mb")
        if apart_mb is not None:
            # Compiled in a fork of this process (the model built), which added this
            # much at its peak beyond the pages it shared with this one.
            result["compile_peak_mb"] = max(result["compile_peak_mb"],
                                            result["model_mb"] + apart_mb)
        if not contender.serves_without_model:
            _serve_peak(spec, prepared, result, base)
            return result
    del prepared, model
    from bench.run import run_worker
    # Within this worker's own time limit: run.py kills this process's group, the
    # serving process with it, when that passes.
    served = run_worker({**spec, "mode": "serve"}, workdir, "serve", spec["timeout"],
                        own_group=False)
    if not served.get("ok"):
        # The compile's numbers stand; the case reports why serving has none.
        result.update(ok=False, reason=f"serving from the artifact failed: {served.get('reason')}")
        return result
    result.update({key: served[key] for key in
                   ("loaded_mb", "run_peak_mb", "cuda_peak_mb", "serve_base_rss_mb")
                   if key in served})
    return result


def run_serve(spec: dict) -> dict:
    """Mode "serve": a contender that serves from its artifact, loaded in a process that
    only built the inputs (the model built with them is freed before loading). The
    artifacts are on disk first (os.sync), as a deployment's are: pages of a file just
    written stay dirty, and the kernel does not reclaim dirty pages that a runtime hands
    back (Thunder's runtime releases the plain filters it reordered for oneDNN)."""
    os.sync()
    import torch
    from bench import measure
    contender, ctx, workdir, base = _memory_process(spec)
    result = {"serve_base_rss_mb": base}
    with torch.no_grad():
        model, inputs, _, _ = _build(spec)
        del model
        measure.release_freed_memory()
        prepared = contender.prepare(None, inputs, workdir, ctx)
        _serve_peak(spec, prepared, result, base)
    return result


MODES = {"case": run_case, "memory": run_memory, "serve": run_serve}


def main() -> int:
    spec = json.loads(pathlib.Path(sys.argv[1]).read_text())
    _setup(spec)
    start = time.perf_counter()
    try:
        result = MODES[spec["mode"]](spec)
        result.setdefault("ok", True)
    except Exception as error:  # noqa: BLE001 - the orchestrator reports it
        result = {"ok": False, "reason": _error_text(error),
                  "traceback": traceback.format_exc(limit=8)}
    result["wall_s"] = time.perf_counter() - start
    pathlib.Path(sys.argv[2]).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
