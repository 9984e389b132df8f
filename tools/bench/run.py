#!/usr/bin/env python3
"""Thunder's benchmark: the zoo against eager, torch.compile, AOTInductor, ONNX Runtime.

Side by side in one process per case, with compile times and peak memory.

    tools/dev.sh bench                         # every zoo model, realistic sizes, batch 1
                                               # and a throughput batch (~1 hour on 2 cores)
    tools/dev.sh bench --quick                 # tiny configs: tests the driver, not speed
    tools/dev.sh bench --models gpt2,bert --batch 1
    tools/dev.sh bench --update-docs           # also rewrite docs/performance.md's table
    tools/dev.sh bench --profile gpt2          # where the time goes, eager vs Thunder
    tools/dev.sh bench --call-overhead         # per-call µs of a tiny model (call_overhead.py)

For each case (model, batch) one process loads every contender, checks its outputs against
eager (a contender with wrong outputs is reported as FAIL and not timed), warms them up and
times them round-robin, rotating the order each round. Before it, one fresh process per
contender compiles from empty caches (the compile time reported) and measures peak resident
memory. Results go to bench-results/<date>-<host>/: results.json, results.md,
speedup.png, compile_time.png.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import importlib.metadata
import json
import os
import pathlib
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The package by its name (bench.*), not this folder's files as top-level modules.
sys.path[:] = [p for p in sys.path
               if pathlib.Path(p or ".").resolve() != ROOT / "tools" / "bench"]
sys.path[:0] = [str(ROOT / "tools")]

from bench import report  # noqa: E402
from bench import ALL, THUNDER_RUN  # noqa: E402

MODELS = ["mlp", "resnet18", "bert", "gpt2", "llama", "vit"]
#: Models run only when named (--models, --cases): test/python/zoo.py's CONV_ZOO.
EXTRA_MODELS = ["mobilenet", "convnext"]
#: The throughput batch: what a server would batch for each kind of model.
THROUGHPUT_BATCH = {"mlp": 16, "resnet18": 16, "bert": 8, "gpt2": 8, "llama": 8, "vit": 8,
                    "mobilenet": 16, "convnext": 16}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="all",
                        help=f"comma-separated zoo models (default all: {','.join(MODELS)})")
    parser.add_argument("--batch", default=None,
                        help="comma-separated batch sizes (default: 1 and the model's "
                             "throughput batch; 1 with --quick)")
    parser.add_argument("--cases", default=None, metavar="MODEL:BATCH[,...]",
                        help="exactly these cases (e.g. gpt2:1,gpt2:8) instead of "
                             "--models x --batch")
    parser.add_argument("--contenders", default="all",
                        help=f"comma-separated, from {','.join(ALL)} (eager is always run)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny configs, few repetitions, no memory pass, two processes "
                             "at once: tests the driver in CI, measures nothing")
    parser.add_argument("--size", choices=["small", "realistic"], default=None,
                        help="zoo size (default realistic; small with --quick)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="timed rounds per case (default 15; 3 with --quick)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed calls per contender first (default 3; 1 with --quick)")
    parser.add_argument("--min-sample-ms", type=float, default=None,
                        help="calls are repeated until one sample lasts this long "
                             "(default 50; 1 with --quick)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for every contender (default: the CPUs this process "
                             "may use)")
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--memory", action=argparse.BooleanOptionalAction, default=None,
                        help="the per-contender processes for compile time and peak memory "
                             "(default on; off with --quick)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes at once (default 1; 2 with --quick). More than 1 "
                             "disturbs the timings")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="results directory (default bench-results/<date>-<host>)")
    parser.add_argument("--workdir", type=pathlib.Path, default=None,
                        help="where the compiled artifacts go (default: a temporary "
                             "directory, removed case by case)")
    parser.add_argument("--update-docs", action="store_true",
                        help="rewrite the generated section of docs/performance.md and copy "
                             "the charts to docs/images/")
    parser.add_argument("--report-only", type=pathlib.Path, default=None, metavar="DIR",
                        help="write the report (and with --update-docs the docs) again from "
                             "DIR/results.json, measuring nothing")
    parser.add_argument("--call-overhead", action="store_true",
                        help="instead of the benchmark: per-call microseconds of a tiny "
                             "model for eager, torch.compile, ONNX Runtime, thunder.compile "
                             "and the C runtime (call_overhead.py)")
    parser.add_argument("--profile", default=None, metavar="MODEL[,MODEL]",
                        help="instead of the benchmark: eager's time per op kind "
                             "(torch.profiler) and Thunder's per kernel (perf on thunder-run)")
    parser.add_argument("--build-dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("THUNDER_BUILD_DIR", ROOT / "build")))
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds one process may take (default 1800; 600 with --quick)")
    args = parser.parse_args(argv)
    quick = args.quick
    args.size = args.size or ("small" if quick else "realistic")
    args.rounds = args.rounds or (3 if quick else 15)
    args.warmup = args.warmup if args.warmup is not None else (1 if quick else 3)
    args.min_sample_ms = args.min_sample_ms if args.min_sample_ms is not None else (
        1.0 if quick else 50.0)
    args.memory = (not quick) if args.memory is None else args.memory
    args.jobs = args.jobs or (2 if quick else 1)
    args.timeout = args.timeout or (600.0 if quick else 1800.0)
    args.threads = args.threads or len(os.sched_getaffinity(0))
    args.models = MODELS if args.models == "all" else args.models.split(",")
    for name in args.models:
        if name not in MODELS + EXTRA_MODELS:
            parser.error(f"unknown model '{name}' (the zoo has {', '.join(MODELS + EXTRA_MODELS)})")
    contenders = ALL if args.contenders == "all" else args.contenders.split(",")
    for name in contenders:
        if name not in ALL:
            parser.error(f"unknown contender '{name}' (choose from {', '.join(ALL)})")
    args.contenders = [c for c in ALL if c == "eager" or c in contenders]
    if THUNDER_RUN in args.contenders and "thunder-rt" not in args.contenders:
        args.contenders.insert(args.contenders.index(THUNDER_RUN), "thunder-rt")
    args.batches = [int(b) for b in args.batch.split(",")] if args.batch else None
    if args.cases:
        try:
            args.cases = [(m, int(b)) for m, b in (c.split(":") for c in args.cases.split(","))]
        except ValueError:
            parser.error(f"--cases takes MODEL:BATCH[,MODEL:BATCH...], got '{args.cases}'")
        for name, _ in args.cases:
            if name not in MODELS + EXTRA_MODELS:
                parser.error(f"unknown model '{name}' "
                             f"(the zoo has {', '.join(MODELS + EXTRA_MODELS)})")
    else:
        # Every model at batch 1 first, so that a run stopped early has the main table.
        batches = args.batches or ([1] if quick else None)
        args.cases = [(m, b) for b in (batches or [1, "throughput"]) for m in args.models]
        args.cases = [(m, THROUGHPUT_BATCH[m] if b == "throughput" else b)
                      for m, b in args.cases]
    return args


def check_target(target: str) -> None:
    """--target cuda needs a GPU that torch sees; say so plainly when there is none."""
    if target != "cuda":
        return
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.is_available(), "
         "torch.version.cuda, torch.cuda.device_count())"],
        capture_output=True, text=True)
    fields = probe.stdout.split()
    if probe.returncode != 0 or not fields or fields[0] != "True":
        cuda = fields[1] if len(fields) > 1 else "?"
        sys.exit("bench: --target cuda needs an NVIDIA GPU, and torch sees none here "
                 f"(torch.cuda.is_available() is False; torch built with CUDA {cuda}). "
                 "Run it on a machine with a GPU, or drop --target cuda.")


#: The /proc/cpuinfo flags that decide which kernels a CPU can run, as the report names them.
ISA_FLAGS = {"avx2": "AVX2", "fma": "FMA", "avx512f": "AVX-512F", "avx512bw": "AVX-512BW",
             "avx512vl": "AVX-512VL", "avx512_vnni": "AVX-512-VNNI",
             "avx512_bf16": "AVX-512-BF16", "amx_tile": "AMX"}


def instruction_sets() -> list[str]:
    """The instruction sets of ISA_FLAGS this machine has (first CPU's flags)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return [name for flag, name in ISA_FLAGS.items() if flag in flags]
    except OSError:
        pass
    return []


def fma_peak(threads: int) -> float | None:
    """The measured fp32 FMA peak in GFLOP/s on `threads` threads (tools/bench/fma_peak.cpp,
    compiled for this machine), or None when it cannot be built or run."""
    with tempfile.TemporaryDirectory() as tmp:
        binary = pathlib.Path(tmp) / "fma_peak"
        try:
            subprocess.run(["c++", "-O2", "-march=native", "-fopenmp",
                            str(ROOT / "tools" / "bench" / "fma_peak.cpp"), "-o", str(binary)],
                           check=True, capture_output=True, timeout=120)
            out = subprocess.run([str(binary), str(threads)], check=True, capture_output=True,
                                 text=True, timeout=120)
            return float(out.stdout.split()[0])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
            print(f"bench: the FMA peak was not measured ({e})", file=sys.stderr)
            return None


def environment(args) -> dict:
    """What the numbers depend on: the machine, the versions, the settings."""
    def version(package):
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return None

    def lscpu(field):
        try:
            for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout \
                    .splitlines():
                if line.split(":")[0].strip() == field:
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return None

    def git(*command):
        try:
            return subprocess.run(["git", "-C", str(ROOT), *command], capture_output=True,
                                  text=True).stdout.strip() or None
        except OSError:
            return None

    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    sys.path.insert(0, str(args.build_dir / "python"))
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpu": lscpu("Model name") or platform.processor(),
        "hypervisor": lscpu("Hypervisor vendor"),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gib": round(mem_kb / 2**20, 1),
        "isa": instruction_sets(),
        "fma_peak_gflops": None if args.quick else fma_peak(args.threads),
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": {p: version(p) for p in ["torch", "onnxruntime", "onnx", "onnxscript",
                                             "transformers", "numpy"]},
        "thunder_commit": git("rev-parse", "--short", "HEAD"),
        "thunder_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "threads": args.threads,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
        "gomp_spincount": os.environ.get("GOMP_SPINCOUNT", "10000"),
        "target": args.target,
        "size": args.size,
        "quick": args.quick,
        "rounds": args.rounds,
        "warmup": args.warmup,
        "min_sample_ms": args.min_sample_ms,
        "memory_pass": args.memory,
        "jobs": args.jobs,
        "command": "tools/dev.sh bench " + " ".join(sys.argv[1:]),
    }


def run_worker(spec: dict, workdir: pathlib.Path, tag: str, timeout: float,
               own_group: bool = True) -> dict:
    """Runs worker.py on `spec` in a fresh process and returns its result. The process
    leads a process group of its own (own_group), so that a timeout ends the processes it
    started too (the memory pass's serving process), which would otherwise run on beside
    the next; a worker's own child (own_group=False) stays in its group, and goes with
    it."""
    spec_path, result_path = workdir / f"{tag}.spec.json", workdir / f"{tag}.result.json"
    spec_path.write_text(json.dumps(spec))
    log = workdir / f"{tag}.log"
    start = time.perf_counter()
    result_path.unlink(missing_ok=True)
    with open(log, "w") as f:
        proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "bench" / "worker.py"),
                                 str(spec_path), str(result_path)], stdout=f,
                                stderr=subprocess.STDOUT, start_new_session=own_group)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if own_group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
            proc.wait()
            return {"ok": False, "reason": f"timed out after {timeout:.0f} s"}
    if result_path.exists():
        return json.loads(result_path.read_text())
    tail = " | ".join(log.read_text().strip().splitlines()[-3:])
    return {"ok": False, "reason": f"the worker died (exit {code}) after "
                                   f"{time.perf_counter() - start:.0f} s: {tail}"}


def run_case(args, model: str, batch: int, workdir: pathlib.Path, pool) -> dict:
    spec = {"root": str(ROOT), "build_dir": str(args.build_dir.resolve()), "model": model,
            "size": args.size, "batch": batch, "seed": 0, "threads": args.threads,
            "device": args.target, "workdir": str(workdir),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
            "gomp_spincount": os.environ.get("GOMP_SPINCOUNT", "10000"),
            "rounds": args.rounds, "warmup": args.warmup,
            "min_sample_s": args.min_sample_ms / 1e3, "memory_runs": 3, "quick": args.quick,
            "timeout": args.timeout}
    case = {"model": model, "batch": batch, "load_before": os.getloadavg()[0]}
    start = time.perf_counter()
    if args.memory:
        names = [c for c in args.contenders if c != THUNDER_RUN]
        futures = {name: pool.submit(run_worker, {**spec, "mode": "memory", "contender": name},
                                     workdir, f"memory-{name}", args.timeout)
                   for name in names}
        case["memory"] = {name: f.result() for name, f in futures.items()}
    timing = run_worker({**spec, "mode": "case", "contenders": args.contenders}, workdir,
                        "case", args.timeout)
    case.update(timing)
    case["wall_s"] = time.perf_counter() - start
    case["load_after"] = os.getloadavg()[0]
    return case


def main(argv=None) -> int:
    args = parse_args(argv)
    check_target(args.target)
    # Thunder's setting for OpenMP's idle workers (see docs/user-guide.md); all contenders
    # share one libgomp in one process, so they share it. Set before any worker starts.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.report_only:
        results = json.loads((args.report_only / "results.json").read_text())
        report.write(results, args.report_only)
        print(f"bench: wrote {args.report_only / 'results.md'}", flush=True)
        if args.update_docs:
            report.update_docs(results, args.report_only, ROOT)
            print(f"bench: updated {ROOT / 'docs' / 'performance.md'}", flush=True)
        return 0
    if args.profile:
        from bench import profiling
        return profiling.main(args)
    if args.call_overhead:
        from bench import call_overhead
        return call_overhead.main(["--build-dir", str(args.build_dir)])
    if any(c.startswith("thunder") for c in args.contenders) and \
            not (args.build_dir / "bin" / "thunder-compile").exists():
        sys.exit(f"bench: no Thunder build in {args.build_dir} (run tools/dev.sh build, "
                 f"or leave the thunder contenders out with --contenders)")
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = args.out or ROOT / "bench-results" / f"{stamp}-{socket.gethostname()}"
    out.mkdir(parents=True, exist_ok=True)
    work_root = args.workdir or pathlib.Path(tempfile.mkdtemp(prefix="thunder-bench-"))
    cases = args.cases
    results = {"environment": environment(args), "contenders": args.contenders, "cases": []}
    print(f"bench: {len(cases)} cases x {len(args.contenders)} contenders, "
          f"{args.size} sizes, {args.threads} threads -> {out}", flush=True)
    start = time.perf_counter()

    def one(case):
        model, batch = case
        workdir = work_root / f"{model}-b{batch}"
        workdir.mkdir(parents=True, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as inner:
            result = run_case(args, model, batch, workdir, inner)
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
        print(f"bench: {report.case_line(result)}", flush=True)
        return result

    # Cases in parallel only with --jobs > 1 (quick mode): timings are disturbed then.
    # The results so far are written after each case: a run stopped early leaves them.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(one, cases):
            results["cases"].append(result)
            results["environment"]["wall_s"] = time.perf_counter() - start
            (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    results["environment"]["wall_s"] = time.perf_counter() - start
    if args.workdir is None:
        shutil.rmtree(work_root, ignore_errors=True)
    report.write(results, out)
    print(f"bench: done in {results['environment']['wall_s']:.0f} s; "
          f"{out / 'results.md'}", flush=True)
    if args.update_docs:
        report.update_docs(results, out, ROOT)
        print(f"bench: updated {ROOT / 'docs' / 'performance.md'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
