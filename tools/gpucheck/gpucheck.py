"""The GPU side of the GPU check: `bash .gpucheck/run.sh` on a machine with a GPU.

For every model of the bundle (compiled here by tools/gpucheck/bundle.py) in float32 and
bfloat16 at batch 1 and 8: rebuilds the eager model from the zoo with the same seed and
checks its state_dict checksum against the one recorded when it was compiled, runs the
compiled libraries through Thunder's runtime (ctypes over the C API) on CUDA tensors and
the current stream (the library with a dynamic batch at both batches, and the static-shape
library of that dtype and batch where the bundle has one), compares with eager PyTorch on
the GPU (TF32 off for float32) after the first run, after a CUDA graph replay and with new
tensors (the staging path), and times eager, Thunder, torch.compile (default, with CUDA
graphs ("reduce-overhead", as Thunder replays one), then
max-autotune-no-cudagraphs) and AOTInductor with CUDA events (median of many runs). Then
the fused pointwise kernel against a device-to-device copy (256 MB and 1 GB) and the GEMM
against torch.matmul (cuBLAS), each timed over back-to-back calls. The tpu-target
libraries (StableHLO) run through the same runtime on XLA's CUDA PJRT plugin (the image's
jax-cuda13-pjrt) with host tensors, against eager on the GPU. The multi-vendor library
(--target=cuda,hip) must load its CUDA part here: the runtime must report the CUDA device
and this GPU's architecture, and its outputs must match eager's. Prints one markdown
report and writes it to $OUT/gpucheck.md when OUT is set.

Nothing here has run on a GPU before, so the run is built to say as much as it can:

* every step runs under try/except (a failure is a table entry, not the end of the run);
  a model whose CUDA graph fails is reported so and timed again without graphs;
* the report is rewritten after every model and step, and a watchdog writes it and
  exits before --deadline, so a hang or a slow compiler still leaves a report;
* a failure that leaves the CUDA context unusable (a sticky error) ends the run at once
  with the report so far and the model to leave out next time (--models);
* the slow compilers come last, within --budget, and are skipped with a note when it
  runs out.
"""
from __future__ import annotations

import time

START = time.monotonic()  # before torch's import: the deadline counts from here

import argparse  # noqa: E402
import datetime  # noqa: E402
import faulthandler  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import pathlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import models  # noqa: E402
import thunder_ctypes  # noqa: E402


def log(message: str) -> None:
    print(f"[gpucheck {time.monotonic() - START:6.1f}s] {message}", flush=True)


class Budget:
    def __init__(self, seconds: float):
        self.deadline = START + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()


class ContextLost(RuntimeError):
    """The CUDA context is unusable (a sticky error): nothing after this can run."""


def time_ms(fn, target_s: float = 0.25, min_iters: int = 10, max_iters: int = 300,
            warmup: int = 3, calls: int = 1) -> float:
    """Median milliseconds of fn() on the current stream, timed with CUDA events. With
    calls=1 each sample is one synchronized call (a latency: host overheads count); with
    more, `calls` back-to-back calls per sample, divided (the device time of small
    kernels, host overheads hidden as in a real pipeline)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    begin = time.perf_counter()
    while len(times) < max_iters and (len(times) < min_iters or
                                      time.perf_counter() - begin < target_s):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


#: The bound on a bfloat16 library's error relative to float32 arithmetic on the same
#: (bfloat16) weights and inputs, ||out - ref|| / ||ref||: bf16 operands land between 1e-3
#: and 1e-2; where eager bf16's own error is larger (llama: 1.2e-2 on the H200,
#: 2026-12-04), Thunder may not exceed it by more than BF16_OVER_EAGER.
BF16_REL_TOL = 1e-2
BF16_OVER_EAGER = 1.25


def relative_error(actual: torch.Tensor, reference: torch.Tensor) -> float:
    """||actual - reference|| / ||reference|| in float64 (NaN when actual has a NaN)."""
    a, r = actual.double(), reference.double()
    denominator = r.norm().item()
    return (a - r).norm().item() / (denominator if denominator > 0 else 1.0)


def compare(actual: list, expected: list, dtype: str,
            reference: list | None = None) -> tuple[bool, str]:
    """float32: allclose with eager (rtol = atol = 1e-3). bfloat16, with `reference` (the
    float32 model on the bf16 weights and inputs): eager bf16 rounds every intermediate to
    bf16 and Thunder keeps fused intermediates in fp32, so they differ by more than an
    elementwise bound allows where outputs are small; each is measured against float32
    arithmetic instead, and Thunder's relative error must stay under BF16_REL_TOL, or
    under BF16_OVER_EAGER times eager's where eager's is larger."""
    if len(actual) != len(expected):
        return False, f"{len(actual)} outputs, eager has {len(expected)}"
    tol = 1e-3 if dtype == "float32" else 2e-2
    against_fp32 = reference is not None and dtype != "float32"
    worst, ok = 0.0, True
    ours, eager = 0.0, 0.0
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.shape != e.shape:
            return False, f"shape {list(a.shape)} vs eager {list(e.shape)}"
        if not e.is_floating_point():
            ok = ok and bool(torch.equal(a, e))
            continue
        a32, e32 = a.float(), e.float()
        worst = max(worst, (a32 - e32).abs().max().item() if a.numel() else 0.0)
        if against_fp32:
            if a.numel():
                rel = relative_error(a, reference[i])
                eager_rel = relative_error(e, reference[i])
                ours = rel if math.isnan(rel) else max(ours, rel)
                eager = max(eager, eager_rel)
                bound = max(BF16_REL_TOL, BF16_OVER_EAGER * eager_rel)
                ok = ok and rel <= bound  # False for NaN
        else:
            ok = ok and torch.allclose(a32, e32, rtol=tol, atol=tol)
    if against_fp32:
        return ok, (f"rel err {ours:.1e} vs fp32 arithmetic, eager's {eager:.1e}; "
                    f"max abs err vs eager {worst:.2e}")
    return ok, f"max abs err {worst:.2e}"


def unpack(bundle: pathlib.Path, manifest: dict) -> None:
    """Unpacks the libraries (bundle.py packs them into one xz archive) beside the
    manifest, once."""
    archive = manifest.get("archive")
    done = bundle / ".unpacked"
    if not archive or done.exists():
        return
    import tarfile
    with tarfile.open(bundle / archive) as tar:
        tar.extractall(bundle, filter="data")
    done.write_text(archive + "\n")


def ensure_context() -> None:
    """Raises ContextLost when the CUDA context has a sticky error."""
    try:
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001
        raise ContextLost(f"{type(error).__name__}: {error}") from error


def float32_reference(model, x) -> list:
    """The outputs of `model` (bfloat16) in float32 arithmetic: a float32 copy of it (the
    same weights, exactly) on the inputs widened to float32."""
    import copy
    wide = copy.deepcopy(model).float()
    with torch.inference_mode():
        return models.flat_outputs(wide(*[t.float() if t.is_floating_point() else t
                                          for t in x]))


def check_and_time(load, model, x, dtype, reference=None) -> tuple[str, float | None]:
    """Loads a library with load(), runs it on `x` against eager `model` (and, for
    bfloat16, against `reference`, float32_reference's outputs: compare()): the check
    ("ok (...)", "MISMATCH (...)", with what failed) and Thunder's median milliseconds.
    The first run is direct, the later ones replay a CUDA graph and are checked again,
    and so is a call on new tensors (the graph then goes through its staging buffers).
    When the graph fails the library is loaded again with THUNDER_CUDA_GRAPHS=0 and
    timed so."""
    compiled = load()
    try:
        with torch.inference_mode():
            expected = models.flat_outputs(model(*x))
            run, outputs = compiled.bind(x)
            run()
            torch.cuda.synchronize()
            ok, detail = compare(outputs, expected, dtype, reference)
            check = ("ok" if ok else "MISMATCH") + f" ({detail})"
            try:
                ms = time_ms(run)
                for out in outputs:
                    out.fill_(float("nan") if out.is_floating_point() else 0)
                run()
                torch.cuda.synchronize()
                replay_ok, replay = compare(outputs, expected, dtype, reference)
                fresh_ok, fresh = compare(compiled(*[t.clone() for t in x]), expected, dtype,
                                          reference)
                if ok and not replay_ok:
                    check = f"MISMATCH after graph replay ({replay})"
                elif ok and not fresh_ok:
                    check = f"MISMATCH on new tensors ({fresh})"
                return check, ms
            except thunder_ctypes.ThunderError as error:
                ensure_context()
                check += (f"; CUDA graph FAILED ({error.status}: {error}), timed without "
                          f"graphs")
    finally:
        compiled.close()
    os.environ["THUNDER_CUDA_GRAPHS"] = "0"  # read when a model is loaded
    try:
        compiled = load()
    finally:
        os.environ.pop("THUNDER_CUDA_GRAPHS", None)
    try:
        with torch.inference_mode():
            run, _ = compiled.bind(x)
            return check, time_ms(run)
    finally:
        compiled.close()


def fmt(ms) -> str:
    return "-" if ms is None else (ms if isinstance(ms, str) else f"{ms:.3f}")


def ratio(base, other) -> str:
    if not isinstance(base, float) or not isinstance(other, float) or other <= 0:
        return "-"
    return f"{base / other:.2f}x"


class Report:
    """The report, rewritten to $OUT/gpucheck.md whenever something is added."""

    def __init__(self, title: str):
        self.title = title
        self.rows = {}    # (model, dtype, batch) -> dict of columns
        self.micro = []   # (what, Thunder, reference, ratio)
        self.pjrt = []    # (model, check, thunder ms, eager ms) of the tpu target
        self.vendor = []  # (model, dtype, batch, device chosen, check, thunder ms, eager ms)
        self.notes = []
        self.lock = threading.Lock()

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def text(self) -> str:
        lines = [self.title, "",
                 "| model | dtype | batch | check | eager | thunder | vs eager | compile "
                 "| vs compile | max-autotune | vs autotune | AOTI | vs AOTI | static check "
                 "| thunder static | vs eager | compile, CUDA graphs | vs it |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        speedups = {}
        for (name, dtype, batch), row in sorted(self.rows.items()):
            t, st = row.get("thunder"), row.get("static")
            lines.append(
                f"| {name} | {dtype} | {batch} | {row.get('check', '-')} "
                f"| {fmt(row.get('eager'))} | {fmt(t)} | {ratio(row.get('eager'), t)} "
                f"| {fmt(row.get('compile'))} | {ratio(row.get('compile'), t)} "
                f"| {fmt(row.get('autotune'))} | {ratio(row.get('autotune'), t)} "
                f"| {fmt(row.get('aoti'))} | {ratio(row.get('aoti'), t)} "
                f"| {row.get('static check', '-')} | {fmt(st)} | {ratio(row.get('eager'), st)} "
                f"| {fmt(row.get('graphs'))} | {ratio(row.get('graphs'), t)} |")
            for kind, ms in (("dynamic batch", t), ("static shapes", st)):
                if isinstance(ms, float) and isinstance(row.get("eager"), float):
                    speedups.setdefault((dtype, batch, kind), []).append((row["eager"] / ms, name))
        lines.append("")
        for (dtype, batch, kind), values in sorted(speedups.items()):
            geomean = math.exp(sum(math.log(v) for v, _ in values) / len(values))
            slowest = min(values)
            lines.append(f"- {dtype} batch {batch}, {kind}: geomean speedup over eager "
                         f"{geomean:.2f}x over {len(values)} models; slowest {slowest[1]} "
                         f"{slowest[0]:.2f}x")
        if self.pjrt:
            lines += ["", "The tpu target (StableHLO) through XLA's CUDA PJRT plugin, float32, "
                      "host tensors in and out (the transfers are in Thunder's time):", "",
                      "| model | batch | check | eager (GPU) | thunder via PJRT |",
                      "|---|---|---|---|---|"]
            lines += [f"| {m} | {b} | {c} | {fmt(e)} | {fmt(t)} |" for m, b, c, t, e in self.pjrt]
        if self.vendor:
            lines += ["", "One library for NVIDIA and AMD GPUs (--target=cuda,hip): the part "
                      "the runtime chose here and what it reports:", "",
                      "| model | dtype | batch | runs on | check | eager | thunder |",
                      "|---|---|---|---|---|---|---|"]
            lines += [f"| {m} | {d} | {b} | {on} | {c} | {fmt(e)} | {fmt(t)} |"
                      for m, d, b, on, c, t, e in self.vendor]
        lines += ["", "| microbenchmark | Thunder | reference | ratio |", "|---|---|---|---|"]
        lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in self.micro]
        if self.notes:
            lines += [""] + [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)

    def write(self) -> str:
        with self.lock:
            text = self.text()
            if os.environ.get("OUT"):
                path = pathlib.Path(os.environ["OUT"], "gpucheck.md")
                path.with_suffix(".tmp").write_text(text + "\n")
                path.with_suffix(".tmp").replace(path)
            return text

    def failures(self) -> list:
        """Rows whose outputs differ from eager's or whose run failed (a CUDA graph
        included, though the row is then still timed without graphs)."""
        def bad(check: str) -> bool:
            return not check.startswith("ok") or "FAILED" in check
        return [k for k, r in self.rows.items()
                if bad(str(r.get("check", ""))) or bad(str(r.get("static check", "ok")))] + \
            [(m, "float32", b) for m, b, c, _, _ in self.pjrt if bad(str(c))] + \
            [(m, d, b) for m, d, b, _, c, _, _ in self.vendor if bad(str(c))]


def load_inputs(inputs: dict, manifest: dict, name: str, batch: int, dtype: str,
                device) -> list:
    """The reference inputs of `name` at `batch`, checked against their checksum, in
    `dtype` on `device`."""
    key = f"{name}/b{batch}"
    tensors = inputs[key]
    if models.inputs_checksum(tensors) != manifest["inputs_checksums"][key]:
        raise RuntimeError(f"the reference inputs of {key} do not match their checksum")
    torch_dtype = getattr(torch, dtype)
    return [(t.to(torch_dtype) if t.is_floating_point() else t).to(device) for t in tensors]


def make_other(column: str, model, x):
    """The callable that another compiler (`column`) makes of `model`."""
    if column == "compile":
        return torch.compile(model, dynamic=False)
    if column == "graphs":  # torch.compile replaying CUDA graphs, as Thunder does
        return torch.compile(model, dynamic=False, mode="reduce-overhead")
    if column == "autotune":
        return torch.compile(model, dynamic=False, mode="max-autotune-no-cudagraphs")
    if column == "aoti":
        ep = torch.export.export(model, tuple(x))
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(tempfile.mkdtemp(), "model.pt2"))
        return torch._inductor.aoti_load_package(path)
    raise ValueError(f"unknown compiler column {column!r}")


def time_other(column: str, model, x) -> tuple[float, float]:
    """(median ms, compile seconds) of `model` compiled by another compiler."""
    mark = time.monotonic()
    try:
        with torch.inference_mode():
            fn = make_other(column, model, x)
            fn(*x)
            torch.cuda.synchronize()
            compiled_s = time.monotonic() - mark
            return time_ms(lambda: fn(*x)), compiled_s
    finally:
        torch._dynamo.reset()


#: The compilers run in a child process of their own: loading an AOTInductor package
#: dies of SIGSEGV in the H200 image's torch 2.11 (in _load_aoti, 2026-12-04; in the
#: check's process and in a clean child alike), and took the check's report with it.
ISOLATED = {"aoti"}

#: What prefixes the child's one line of result on its stdout.
CHILD_MARK = "GPUCHECK_CHILD "


def child_main(bundle: pathlib.Path, column: str, name: str, dtype: str, batch: int) -> int:
    """`gpucheck.py --child COLUMN MODEL DTYPE BATCH`: times one model under another
    compiler and prints CHILD_MARK + JSON."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    manifest = json.loads((bundle / "manifest.json").read_text())
    device = torch.device("cuda")
    model = models.build(name, batch=1, dtype=dtype)[0].to(device)
    x = load_inputs(torch.load(bundle / "inputs.pt"), manifest, name, batch, dtype, device)
    ms, compiled_s = time_other(column, model, x)
    print(CHILD_MARK + json.dumps({"ms": ms, "compiled_s": compiled_s}), flush=True)
    return 0


def crash_site(stderr: str) -> str:
    """' in FILE:LINE FUNCTION' of the innermost frame faulthandler printed for the
    crashing thread, or ''."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Current thread"):
            for frame in lines[i + 1:]:
                frame = frame.strip()
                if frame.startswith('File "'):
                    path, _, rest = frame[len('File "'):].partition('", line ')
                    short = "/".join(pathlib.Path(path).parts[-3:])
                    return f" in {short}:{rest.replace(' in ', ' ')}"
    return ""


def run_isolated(bundle: pathlib.Path, column: str, name: str, dtype: str, batch: int,
                 timeout: float) -> tuple[float, float]:
    """time_other in a child process: a crash there is this row's failure, not the run's."""
    import signal
    import subprocess
    try:
        proc = subprocess.run(
            [sys.executable, str(pathlib.Path(__file__).resolve()), "--bundle", str(bundle),
             "--child", column, name, dtype, str(batch)],
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout:.0f} s") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(CHILD_MARK):
            result = json.loads(line[len(CHILD_MARK):])
            return result["ms"], result["compiled_s"]
    if proc.returncode < 0:
        raise RuntimeError(f"crashed ({signal.Signals(-proc.returncode).name})"
                           f"{crash_site(proc.stderr)}")
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    raise RuntimeError(f"exit status {proc.returncode}: {last[:160]}")


#: The steps of a run, in order (--steps chooses some): the libraries against eager, the
#: tpu target through PJRT, the multi-vendor library, the microbenchmarks, then the other
#: compilers (COLUMN:BATCH), slowest last. AOTInductor is last of all: on the H200's image
#: (torch 2.11, 2026-12-04) each model compiled for 70-90 s, then its loader crashed.
STEPS = ("models", "pjrt", "multivendor", "micro", "compile:8", "graphs:8", "compile:1",
         "graphs:1", "autotune:8", "aoti:8")

#: Per compiler: the budget it must find left to start one more model (what one more
#: compile may take: AOTInductor's C++ build and max-autotune's search run for minutes on
#: large models).
RESERVE_S = {"compile": 60, "graphs": 60, "aoti": 120, "autotune": 240}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundle", default=str(HERE))
    parser.add_argument("--budget", type=float, default=450.0,
                        help="seconds for everything but the slow compilers' last run "
                             "(the device run allows 10 minutes)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds after which the watchdog writes the report and exits "
                             "(default: the budget + 90)")
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--steps", default=",".join(STEPS),
                        help="comma-separated, from: " + ",".join(STEPS) + " (the compilers "
                             "compare with the rows of 'models')")
    parser.add_argument("--child", nargs=4, metavar=("COLUMN", "MODEL", "DTYPE", "BATCH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    faulthandler.enable()  # a crash in native code still prints where it happened
    if args.child:
        column, name, dtype, batch = args.child
        return child_main(pathlib.Path(args.bundle), column, name, dtype, int(batch))
    steps = [step.strip() for step in args.steps.split(",") if step.strip()]
    unknown = [step for step in steps if step not in STEPS]
    if unknown:
        parser.error(f"unknown steps {unknown}: choose from {', '.join(STEPS)}")
    budget = Budget(args.budget)
    bundle = pathlib.Path(args.bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    unpack(bundle, manifest)
    inputs = torch.load(bundle / "inputs.pt")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    log(f"{props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
        f"bundle compiled with torch {manifest['torch_here']} for {manifest['cuda_arch']}")
    report = Report(f"GPU check, {datetime.date.today().isoformat()}, {props.name} "
                    f"({props.multi_processor_count} SMs), torch {torch.__version__}; times "
                    f"are milliseconds per inference (median, CUDA events), ratios are "
                    f"speedups of Thunder over each")
    rows = report.rows

    # The watchdog: whatever hangs or runs long, a report comes back.
    deadline = args.deadline if args.deadline is not None else args.budget + 90

    def on_deadline():
        report.note(f"stopped by the watchdog at {deadline:.0f} s: the rows without "
                    f"numbers did not run")
        for _ in range(3):  # the main thread may be adding a row this instant
            try:
                print(report.write(), flush=True)
                break
            except RuntimeError:
                time.sleep(0.1)
        log("deadline reached")
        os._exit(3)
    watchdog = threading.Timer(max(1.0, deadline - (time.monotonic() - START)), on_deadline)
    watchdog.daemon = True
    watchdog.start()

    runtime = thunder_ctypes.Runtime(str(bundle / "libThunderRuntime.so"))
    entries = [e for e in manifest["models"]
               if args.models is None or e["model"] in args.models]
    eager_models = {}  # (model, dtype) -> eager module on the GPU

    def inputs_for(name, batch, dtype):
        return load_inputs(inputs, manifest, name, batch, dtype, device)

    references = {}  # (model, dtype, batch) -> float32_reference, shared by its libraries

    def reference_for(name, dtype, batch, model, x):
        if dtype == "float32":
            return None
        if (name, dtype, batch) not in references:
            references[(name, dtype, batch)] = float32_reference(model, x)
        return references[(name, dtype, batch)]

    def context_lost(where: str, error: Exception) -> int:
        report.note(f"the CUDA context was lost at {where} ({error}); everything after it "
                    f"was skipped: rerun with --models leaving that model out")
        print(report.write(), flush=True)
        return 2

    # 1. Correctness and timing against eager: the eager models, then every library.
    for name, dtype in dict.fromkeys((e["model"], e["dtype"]) for e in entries):
        entry = next(e for e in entries if (e["model"], e["dtype"]) == (name, dtype))
        try:
            model, _ = models.build(name, batch=1, dtype=dtype)
            digest = models.checksum(model)
            if digest != entry["checksum"]:
                raise RuntimeError(
                    f"CHECKSUM MISMATCH: the eager {name} ({dtype}) built here has state_dict "
                    f"sha256 {digest[:16]}..., the compiled one {entry['checksum'][:16]}... "
                    f"(zoo.py, transformers or torch builds the model differently)")
            eager_models[(name, dtype)] = model.to(device)
        except Exception as error:  # noqa: BLE001
            log(f"{name} {dtype}: {error}")
            for batch in manifest["batches"]:
                rows[(name, dtype, batch)] = {"check": f"FAILED: {error}"}
    for entry in entries if "models" in steps else []:
        name, dtype, static = entry["model"], entry["dtype"], entry.get("batch")
        model = eager_models.get((name, dtype))
        if model is None:
            continue
        # The dynamic-batch library fills "check"/"thunder" at every batch, a static one
        # "static check"/"static" at its own.
        check, column = ("static check", "static") if static else ("check", "thunder")
        library = str(bundle / entry["library"])
        for batch in [static] if static else manifest["batches"]:
            row = rows.setdefault((name, dtype, batch), {})
            try:
                x = inputs_for(name, batch, dtype)
                row[check], row[column] = check_and_time(
                    lambda: thunder_ctypes.Model(runtime, library), model, x, dtype,
                    reference_for(name, dtype, batch, model, x))
                if "eager" not in row:
                    with torch.inference_mode():
                        row["eager"] = time_ms(lambda: model(*x))
                log(f"{name} {dtype} b{batch} ({column}): {row[check]}, "
                    f"eager {fmt(row['eager'])} ms, thunder {fmt(row[column])} ms")
            except Exception as error:  # noqa: BLE001
                row[check] = f"FAILED: {type(error).__name__}: {error}"
                log(f"{name} {dtype} b{batch} ({column}): {row[check]}")
                traceback.print_exc()
                try:
                    ensure_context()
                except ContextLost as lost:
                    return context_lost(f"{name} {dtype} b{batch} ({column})", lost)
            report.write()

    # 1b. The tpu target through XLA's CUDA PJRT plugin (the same runtime, host tensors).
    def cuda_pjrt_plugin():
        """xla_cuda_plugin.so as the image's jax-cuda13-pjrt installs it; None without."""
        try:
            import jax_plugins.xla_cuda13 as package
        except ImportError:
            return None
        path = pathlib.Path(package.__file__).parent / "xla_cuda_plugin.so"
        return path if path.exists() else None

    pjrt_entries = [e for e in manifest.get("pjrt", []) if "pjrt" in steps and
                    (args.models is None or e["model"] in args.models)]
    plugin = cuda_pjrt_plugin() if pjrt_entries else None
    if pjrt_entries and plugin is None:
        report.note("the tpu-target libraries did not run: no jax_plugins.xla_cuda13 "
                    "(jax-cuda13-pjrt) on this machine")
    for entry in pjrt_entries if plugin else []:
        name, batch = entry["model"], entry["batch"]
        row = [name, batch, "-", None, None]
        report.pjrt.append(row)
        os.environ["THUNDER_PJRT_PLUGIN"] = str(plugin)  # read when a model is loaded
        try:
            model = eager_models.get((name, "float32"))
            if model is None:
                raise RuntimeError("no eager model to compare with (see its row above)")
            x = inputs_for(name, batch, "float32")
            host = [t.cpu() for t in x]
            compiled = thunder_ctypes.Model(runtime, str(bundle / entry["library"]))
            try:
                with torch.inference_mode():
                    expected = models.flat_outputs(model(*x))
                    actual = compiled(*host)
                    ok, detail = compare([a.to(device) for a in actual], expected, "float32")
                    row[2] = ("ok" if ok else "MISMATCH") + f" ({detail})"
                    row[3] = time_ms(lambda: compiled(*host))
                    row[4] = time_ms(lambda: model(*x))
            finally:
                compiled.close()
        except Exception as error:  # noqa: BLE001
            row[2] = f"FAILED: {type(error).__name__}: {error}"
            traceback.print_exc()
        finally:
            os.environ.pop("THUNDER_PJRT_PLUGIN", None)
        log(f"{name} tpu target via PJRT b{batch}: {row[2]}")
        report.write()

    # 1c. The multi-vendor library: the runtime must choose its CUDA part on this GPU.
    expected_arch = f"sm_{props.major}{props.minor}"
    for entry in [e for e in manifest.get("multivendor", []) if "multivendor" in steps and
                  (args.models is None or e["model"] in args.models)]:
        name, dtype = entry["model"], entry["dtype"]
        library = str(bundle / entry["library"])
        for batch in manifest["batches"]:
            row = [name, dtype, batch, "-", "-", None, None]
            report.vendor.append(row)
            try:
                model = eager_models.get((name, dtype))
                if model is None:
                    raise RuntimeError("no eager model to compare with (see its row above)")
                probe = thunder_ctypes.Model(runtime, library)
                try:
                    row[3] = f"{probe.vendor}: {probe.device_description}"
                    chose = (probe.vendor, probe.device_arch)
                finally:
                    probe.close()
                if chose != ("cuda", expected_arch) or props.name not in row[3]:
                    raise RuntimeError(f"the runtime chose {chose[0]} ({chose[1]}), not the "
                                       f"CUDA part for {props.name} ({expected_arch})")
                x = inputs_for(name, batch, dtype)
                row[4], row[5] = check_and_time(
                    lambda: thunder_ctypes.Model(runtime, library), model, x, dtype,
                    reference_for(name, dtype, batch, model, x))
                with torch.inference_mode():
                    row[6] = time_ms(lambda: model(*x))
            except Exception as error:  # noqa: BLE001
                row[4] = f"FAILED: {type(error).__name__}: {error}"
                traceback.print_exc()
                try:
                    ensure_context()
                except ContextLost as lost:
                    return context_lost(f"{name} {dtype} b{batch} (cuda,hip)", lost)
            log(f"{name} {dtype} b{batch} (cuda,hip) on {row[3]}: {row[4]}")
            report.write()

    # 2. Microbenchmarks: fused pointwise bandwidth, GEMM against cuBLAS; each timed over
    # 20 back-to-back calls (the kernels alone, not the host's call overhead).
    def microbenchmark(what, body):
        try:
            report.micro.append(body())
            log(f"{what}: {report.micro[-1]}")
        except Exception as error:  # noqa: BLE001
            report.micro.append((f"{what}: FAILED: {type(error).__name__}: {error}",
                                 "-", "-", "-"))
            traceback.print_exc()
            ensure_context()
        report.write()

    def pointwise_bandwidth(mib):
        n = mib * 2**20 // 4
        x = torch.randn(n, device=device)
        pointwise = thunder_ctypes.Model(runtime, str(bundle / manifest["pointwise"]))
        try:
            run, (y,) = pointwise.bind([x])
            run()
            torch.cuda.synchronize()
            # Against float64: the kernel may contract x*1.5+0.5 into one FMA (nvcc's
            # default), which rounds once where torch's two kernels round twice, so near
            # zero the two differ by more than allclose's atol. Each element must be within
            # 2 ulps of the operands' scale of the exact value.
            wide = x.double()
            exact = torch.relu(wide * 1.5 + 0.5)
            bound = 2.0 ** -22 * (wide.abs() * 1.5 + 0.5)
            off = int(((y.double() - exact).abs() > bound).sum().item())
            eager_off = int(((torch.relu(x * 1.5 + 0.5).double() - exact).abs() > bound)
                            .sum().item())
            del wide, exact, bound
            good = off == 0
            ours = time_ms(run, min_iters=20, calls=20)
            copy_dst = torch.empty_like(x)
            copy = time_ms(lambda: copy_dst.copy_(x), min_iters=20, calls=20)
        finally:
            pointwise.close()
        moved = 2 * n * 4 / 1e9  # GB read + written
        verdict = "" if good else f" WRONG ({off} elements off by > 2 ulps)"
        if eager_off:
            verdict += f" (eager's: {eager_off} elements > 2 ulps off)"
        return (f"pointwise relu(x*1.5+0.5), {mib} MB f32" + verdict,
                f"{moved / (ours / 1e3):.0f} GB/s", f"{moved / (copy / 1e3):.0f} GB/s",
                f"{copy / ours * 100:.0f}% of copy")

    def gemm_throughput(m, n, k):
        a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=device, dtype=torch.bfloat16)
        gemm = thunder_ctypes.Model(runtime, str(bundle / manifest["gemm"]))
        try:
            run, (c,) = gemm.bind([a, b])
            run()
            torch.cuda.synchronize()
            good = torch.allclose(c.float(), (a @ b).float(), rtol=2e-2, atol=2e-1)
            ours = time_ms(run, min_iters=20, calls=20)
            cublas = time_ms(lambda: torch.matmul(a, b), min_iters=20, calls=20)
        finally:
            gemm.close()
        flops = 2 * m * n * k / 1e12
        return (f"GEMM bf16 {m}x{n}x{k}" + ("" if good else " WRONG"),
                f"{flops / (ours / 1e3):.0f} TFLOP/s", f"{flops / (cublas / 1e3):.0f} TFLOP/s",
                f"{cublas / ours * 100:.0f}% of cuBLAS")

    os.environ["THUNDER_CUDA_GRAPHS"] = "0"  # read at load: time the kernels alone
    try:
        for mib in (256, 1024) if "micro" in steps else ():
            microbenchmark(f"pointwise {mib} MB", lambda: pointwise_bandwidth(mib))
        for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192), (1024, 4096, 4096),
                        (128, 4096, 4096)) if "micro" in steps else ():
            microbenchmark(f"gemm {m}x{n}x{k}", lambda: gemm_throughput(m, n, k))
    except ContextLost as lost:
        return context_lost("the microbenchmarks", lost)
    finally:
        os.environ.pop("THUNDER_CUDA_GRAPHS", None)

    # 3. The other compilers, slowest last, while the budget lasts.
    def other(column, batch):
        for (name, dtype), model in eager_models.items():
            row = rows.get((name, dtype, batch), {})
            if not isinstance(row.get("thunder"), float):
                continue  # nothing to compare with
            if budget.left() < RESERVE_S[column]:
                row[column] = "skipped"
                continue
            try:
                if column in ISOLATED:
                    timeout = max(30.0, deadline - (time.monotonic() - START) - 10)
                    ms, compiled_s = run_isolated(bundle, column, name, dtype, batch, timeout)
                else:
                    ms, compiled_s = time_other(column, model, inputs_for(name, batch, dtype))
                row[column] = ms
                log(f"{column} {name} {dtype} b{batch}: {ms:.3f} ms "
                    f"(compiled in {compiled_s:.0f} s)")
            except Exception as error:  # noqa: BLE001
                row[column] = f"failed: {str(error)[:80]}"
                log(f"{column} {name} {dtype} b{batch}: {type(error).__name__}: {error}")
                try:
                    ensure_context()
                except ContextLost as lost:
                    return context_lost(f"{column} {name} {dtype} b{batch}", lost)
            report.write()
        if any(rows[k].get(column) == "skipped" for k in rows):
            report.note(f"{column}: some runs skipped, the time budget ran out")
        return None

    for step in steps:
        if ":" in step:
            column, batch = step.split(":")
            lost = other(column, int(batch))
            if lost is not None:
                return lost

    # 4. The report.
    watchdog.cancel()
    print(report.write(), flush=True)
    log("done")
    return 1 if report.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
