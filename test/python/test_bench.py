"""The benchmark driver (tools/bench): its quick mode end to end on two zoo models (an MLP
and a transformer; `tools/dev.sh bench --quick` runs them all, which takes four minutes), the
memory pass, the correctness check that keeps a wrong contender from being timed, and the
report's arithmetic. These test the driver; they measure nothing."""
from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
import time

import pytest
import torch

from conftest import BUILD_DIR, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))
from bench import measure, report  # noqa: E402
from bench import ALL  # noqa: E402
from zoo import ZOO  # noqa: E402

#: The models the quick run covers: every contender on each, a small and a large graph.
QUICK_MODELS = ["mlp", "bert"]

RUN = REPO_ROOT / "tools" / "bench" / "run.py"


def run_bench(*args: str, timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ, THUNDER_BUILD_DIR=str(BUILD_DIR),
               PYTHONPATH=str(BUILD_DIR / "python"))
    return subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def assert_timed_or_failed(case: dict, name: str) -> None:
    """A contender has a median with a passing check, or is FAIL with its reason."""
    row = case["contenders"][name]
    where = f"{name} on {case['model']} batch {case['batch']}"
    if row["status"] == "ok":
        assert row["check"]["ok"], where
        assert row["median_ms"] > 0, where
        if name != "thunder-run":
            assert len(row["samples_ms"]) == row["samples"] >= 1, where
    else:
        assert row["status"] == "FAIL", where
        assert row.get("reason"), f"{where} failed without a reason"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """tools/dev.sh bench --quick into a temporary results folder."""
    out = tmp_path_factory.mktemp("bench-quick")
    result = run_bench("--quick", "--models", ",".join(QUICK_MODELS), "--out", str(out),
                       timeout=1200)
    assert result.returncode == 0, result.stdout + result.stderr
    return out, json.loads((out / "results.json").read_text()), result.stdout


def test_quick_mode_covers_its_models_and_every_contender(quick):
    out, results, stdout = quick
    assert set(QUICK_MODELS) <= set(ZOO)
    assert sorted(c["model"] for c in results["cases"]) == sorted(QUICK_MODELS)
    assert results["contenders"] == ALL
    for case in results["cases"]:
        assert case["ok"], case.get("reason")
        assert case["batch"] == 1
        assert set(case["contenders"]) == set(ALL)
        for name in ALL:
            assert_timed_or_failed(case, name)
        # eager is the reference: it is always timed.
        assert case["contenders"]["eager"]["status"] == "ok"
    env = results["environment"]
    assert env["quick"] and env["threads"] >= 1 and env["versions"]["torch"]
    assert "done in" in stdout


def test_quick_mode_writes_the_table_and_charts(quick):
    out, results, _ = quick
    text = (out / "results.md").read_text()
    assert "Quick mode" in text
    for heading in ("Speedup over eager, batch 1", "Latency", "Compile time", "Correctness"):
        assert heading in text, heading
    for model in QUICK_MODELS:
        assert f"| {model} |" in text, model
    # Every FAIL cell points at a numbered reason in the Failures section.
    for number in {int(n) for n in __import__("re").findall(r"FAIL \[(\d+)\]", text)}:
        assert f"\n{number}. " in text.split("# Failures", 1)[1]
    for png in ("speedup.png", "compile_time.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, png


def test_memory_pass_measures_compile_and_serving(tmp_path):
    """--memory: one fresh process per contender, compile time and peak memory above the
    baseline; a contender that serves from its artifact serves in a process of its own
    (which never exported or compiled); the case's process then loads what the memory
    pass compiled."""
    out = tmp_path / "results"
    result = run_bench("--quick", "--memory", "--models", "mlp",
                       "--contenders", "eager,thunder,thunder-rt,onnxruntime",
                       "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [case] = json.loads((out / "results.json").read_text())["cases"]
    for name in ("eager", "thunder", "thunder-rt", "onnxruntime"):
        memory = case["memory"][name]
        assert memory["ok"], memory
        assert memory["base_rss_mb"] > 50  # the interpreter with torch
        assert memory["run_peak_mb"] > -memory["base_rss_mb"]
        # Served in a process of its own, measured against that process's baseline.
        assert ("serve_base_rss_mb" in memory) == (name in ("thunder-rt", "onnxruntime")), name
        if name != "eager":
            assert memory["compiled"] and memory["compile_s"] > 0, memory
            # The timing process found the artifact instead of compiling again.
            assert not case["contenders"][name]["compiled_here"], name
    assert case["contenders"]["thunder"]["compile_detail"]["source"] == "cache"
    assert "Peak memory, MiB" in (out / "results.md").read_text()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_target_without_a_gpu_says_so():
    result = run_bench("--quick", "--target", "cuda", timeout=120)
    assert result.returncode != 0
    assert "needs an NVIDIA GPU" in result.stderr, result.stderr


def test_unknown_model_is_refused():
    result = run_bench("--models", "alexnet", timeout=60)
    assert result.returncode == 2 and "unknown model 'alexnet'" in result.stderr


# ---------------------------------------------------------------------------------------
# The pieces, without running anything
# ---------------------------------------------------------------------------------------


def test_compare_rejects_wrong_outputs():
    ref = [torch.linspace(-50, 50, 1000)]
    assert measure.compare([ref[0] + 1e-4], ref, 1e-4, 1e-4)["ok"]  # within atol x 50
    wrong = ref[0].clone()
    wrong[3] += 0.1
    check = measure.compare([wrong], ref, 1e-4, 1e-4)
    assert not check["ok"] and "1 of 1000 elements" in check["reason"]
    assert not measure.compare([ref[0][:10]], ref, 1e-4, 1e-4)["ok"]  # shape
    assert not measure.compare([], ref, 1e-4, 1e-4)["ok"]  # count
    nan = ref[0].clone()
    nan[0] = float("nan")
    assert not measure.compare([nan], ref, 1e-4, 1e-4)["ok"]


def test_interleaved_rotates_and_times_every_contender():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    samples = measure.interleaved(fns, {"a": 1, "b": 2, "c": 1}, rounds=3)
    assert calls == ["a", "b", "b", "c", "b", "b", "c", "a", "c", "a", "b", "b"]
    assert all(len(s) == 3 and min(s) >= 0 for s in samples.values())
    # Each contender follows each other equally often over the design's rounds.
    for n in (2, 3, 4, 5, 9):
        rounds = 2 * n if n % 2 else n
        follows = {}
        for r in range(rounds):
            order = measure.balanced_order(n, r)
            assert sorted(order) == list(range(n))
            for a, b in zip(order, order[1:]):
                follows[a, b] = follows.get((a, b), 0) + 1
        assert len(set(follows.values())) == 1 and len(follows) == n * (n - 1), n
    stats = measure.summarize([3.0, 1.0, 2.0, 10.0])
    assert stats["median_ms"] == 2.5 and stats["min_ms"] == 1.0 and stats["max_ms"] == 10.0


def test_settle_waits_for_a_spinning_thread():
    """A thread that spins after a contender's call (ONNX Runtime's pool does, ~45 ms)
    must be idle before the next sample starts; an idle process is not kept waiting."""
    import threading
    stop = time.perf_counter() + 0.15

    def spin():
        while time.perf_counter() < stop:
            pass

    spinner = threading.Thread(target=spin)
    spinner.start()
    waited = measure.settle(max_s=2.0)
    assert 0.1 <= waited < 1.0, waited
    spinner.join()
    assert measure.settle(max_s=2.0) < 0.15
    # A process that never goes quiet is waited for at most max_s.
    stop = time.perf_counter() + 1.0
    spinner = threading.Thread(target=spin)
    spinner.start()
    assert measure.settle(max_s=0.2) < 0.5
    spinner.join()


def test_report_geomean_and_failures():
    def case(model, eager, thunder, onnx):
        rows = {"eager": {"status": "ok", "median_ms": eager, "p25_ms": eager,
                          "p75_ms": eager}}
        rows["thunder"] = ({"status": "ok", "median_ms": thunder, "p25_ms": thunder,
                            "p75_ms": thunder} if thunder else
                           {"status": "FAIL", "reason": "thunder.ImportError: aten.foo"})
        rows["onnxruntime"] = {"status": "ok", "median_ms": onnx, "p25_ms": onnx,
                               "p75_ms": onnx}
        return {"model": model, "batch": 1, "ok": True, "contenders": rows, "info": {}}

    env = {"date": "2026-01-01T00:00:00", "host": "h", "cpu": "cpu", "cpus_usable": 2,
           "memory_gib": 1, "os": "linux", "python": "3", "versions": {"torch": "2"},
           "threads": 2, "omp_wait_policy": "PASSIVE", "target": "cpu", "size": "small",
           "rounds": 3, "warmup": 1, "min_sample_ms": 1, "command": "c", "wall_s": 1}
    results = {"environment": env, "contenders": ["eager", "thunder", "onnxruntime"],
               "cases": [case("a", 10.0, 5.0, 10.0), case("b", 10.0, 20.0, 5.0),
                         case("c", 10.0, None, 10.0)]}
    # Thunder: 2x and 0.5x -> geomean 1x over the two models where it ran.
    assert math.isclose(report.thunder_targets(results)[0][1], 1.0)
    # Against ONNX Runtime: 10/5 and 5/20 -> sqrt(0.5).
    assert math.isclose(report.thunder_targets(results)[1][1], math.sqrt(0.5))
    # The lowest model against ONNX Runtime: b, at 0.25x, under the 0.9x floor.
    lowest = report.thunder_targets(results)[-1]
    assert lowest[0] == "lowest model over ONNX Runtime" and math.isclose(lowest[1], 0.25)
    # No throughput cases: no throughput targets.
    assert all(t[1] is None for t in report.thunder_targets(results, kind="throughput batch"))
    text = report.markdown(results)
    assert "| over ONNX Runtime | >= 1.1x | 0.71x | **no** (2 models)" in text
    assert "| lowest model over ONNX Runtime | >= 0.9x | 0.25x | **no** (2 models)" in text
    assert "Instruction sets" not in text  # results written before they were recorded
    env.update(isa=["AVX2", "FMA"], fma_peak_gflops=204.6)
    assert ("- Instruction sets: AVX2, FMA (no AVX-512); measured fp32 FMA peak 205 GFLOP/s "
            "on 2 threads" in report.markdown(results))
    assert "| c |" in text and "FAIL [1]" in text
    assert "1. thunder.ImportError: aten.foo" in text
    assert "**1.00x** (2 of 3)" in text
