"""Measurements: timing statistics, the correctness check against eager, resident memory."""
from __future__ import annotations

import ctypes
import gc
import math
import re
import statistics
import time
from typing import Callable, Sequence

# ---------------------------------------------------------------------------------------
# Resident memory (Linux)
# ---------------------------------------------------------------------------------------


def _status() -> dict[str, int]:
    with open("/proc/self/status") as f:
        return {k: int(v) for k, v in re.findall(r"^(Vm\w+):\s+(\d+) kB", f.read(), re.M)}


def rss_mb() -> float:
    """The process's resident set now, in MiB."""
    return _status()["VmRSS"] / 1024


def peak_rss_mb() -> float:
    """The most the resident set has been since the last reset_peak_rss(), in MiB."""
    return _status()["VmHWM"] / 1024


def reset_peak_rss() -> None:
    """Starts a new peak: writing 5 to clear_refs resets VmHWM to the current RSS
    (Linux 4.0+); ru_maxrss cannot be reset."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def release_freed_memory() -> None:
    """Collects garbage and hands the heap's free pages back to the system, so memory
    freed by an earlier phase does not count as resident in the next one."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


# ---------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------


def summarize(samples_ms: Sequence[float]) -> dict:
    """Median, quartiles, min and max of the samples (ms)."""
    s = sorted(samples_ms)
    if not s:
        return {}
    q = statistics.quantiles(s, n=4, method="inclusive") if len(s) >= 2 else [s[0]] * 3
    return {"median_ms": statistics.median(s), "p25_ms": q[0], "p75_ms": q[2],
            "min_ms": s[0], "max_ms": s[-1], "samples": len(s)}


def calibrate(fn: Callable[[], object], warmup: int, min_sample_s: float) -> int:
    """Runs `fn` `warmup` times and returns how many calls make one sample of at least
    min_sample_s (1 for anything slower)."""
    per_call = math.inf
    for _ in range(max(1, warmup)):
        start = time.perf_counter()
        fn()
        per_call = min(per_call, time.perf_counter() - start)
    return max(1, math.ceil(min_sample_s / max(per_call, 1e-9)))


def balanced_order(n: int, r: int) -> list[int]:
    """Round r's order of n contenders: a Williams design, the rounds' orders shifts of
    0, 1, n-1, 2, n-2, ... (every contender at every position), mirrored every other n
    rounds when n is odd, so that each contender follows each other equally often. With
    the plain rotation the order had before, a contender always ran right after the same
    one: after ONNX Runtime, whose threads spin a while after each run, thunder.compile's
    MLP at batch 16 read 16 ms instead of 9."""
    base, lo, hi = [0], 1, n - 1
    while len(base) < n:
        base.append(lo)
        lo += 1
        if len(base) < n:
            base.append(hi)
            hi -= 1
    order = [(b + r) % n for b in base]
    if n % 2 and (r // n) % 2:
        order.reverse()
    return order


def settle(max_s: float = 0.5, window_s: float = 0.01, busy: float = 0.2) -> float:
    """Waits until this process's threads are idle: until two `window_s` windows in a row
    in which they used at most `busy` of one CPU, or `max_s`. Returns the seconds waited.
    (Two windows: the kernel adds a thread's CPU time running on another CPU to the
    process's at a scheduler tick, so one short window can miss a spinning thread.)

    A thread pool that spins after its run takes a CPU from whatever runs next. ONNX
    Runtime's pool spins about 45 ms after each call on the 2-vCPU machines of
    performance.md; on two CPUs the next contender's two threads then share one, and a
    ViT call right after ONNX Runtime's took 229 ms against 187-198 ms after eager's or
    after a pause (tools/bench, 2026-12-05). Each contender's sample starts on an idle
    process, as it would in a process of its own; a contender's spinning between its
    own back-to-back calls within a sample still counts for it."""
    start, quiet = time.perf_counter(), 0
    while True:
        cpu, mark = time.process_time(), time.perf_counter()
        time.sleep(window_s)
        now = time.perf_counter()
        quiet = quiet + 1 if time.process_time() - cpu <= busy * (now - mark) else 0
        if quiet == 2 or now - start >= max_s:
            return now - start


def interleaved(fns: dict[str, Callable[[], object]], inner: dict[str, int], rounds: int,
                sync: Callable[[], None] = lambda: None) -> dict[str, list[float]]:
    """Times every callable once per round, in an order that changes each round
    (balanced_order), so that a slow phase of the machine falls on every contender alike.
    Each sample is the mean of `inner[name]` back-to-back calls, in ms, started once the
    threads of the contender before have gone idle (settle)."""
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in (names[i] for i in balanced_order(len(names), r)):
            fn, n = fns[name], inner[name]
            sync()
            settle()
            start = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            samples[name].append((time.perf_counter() - start) * 1e3 / n)
    return samples


def geomean(values: Sequence[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


# ---------------------------------------------------------------------------------------
# Correctness
# ---------------------------------------------------------------------------------------


def compare(outputs: Sequence, reference: Sequence, rtol: float, atol: float) -> dict:
    """Checks each output against eager's like torch.allclose, with atol scaled by the
    reference's largest magnitude (logits of a 12-layer model are not all near 1):
    |got - ref| <= atol * max(1, max|ref|) + rtol * |ref|.

    Returns {"ok", "max_abs_err", "scale", "reason"}."""
    import numpy as np
    import torch

    def as_tensor(value):
        if isinstance(value, np.ndarray):
            return torch.from_numpy(value)
        return value.detach().cpu() if isinstance(value, torch.Tensor) else value

    outputs = [as_tensor(v) for v in outputs]
    reference = [as_tensor(v) for v in reference]
    if len(outputs) != len(reference):
        return {"ok": False, "max_abs_err": None, "scale": None,
                "reason": f"{len(outputs)} outputs, eager has {len(reference)}"}
    worst, scale_all = 0.0, 0.0
    for i, (got, ref) in enumerate(zip(outputs, reference)):
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(ref.shape):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return {"ok": False, "max_abs_err": None, "scale": None,
                    "reason": f"output {i}: shape {shape}, eager's {tuple(ref.shape)}"}
        got, ref = got.double(), ref.double()
        if ref.numel() == 0:
            continue
        scale = max(1.0, ref.abs().max().item())
        scale_all = max(scale_all, scale)
        diff = (got - ref).abs()
        bad = diff > atol * scale + rtol * ref.abs()
        nan = torch.isnan(got) != torch.isnan(ref)
        err = diff[~torch.isnan(diff)].max().item() if (~torch.isnan(diff)).any() else 0.0
        worst = max(worst, err)
        if bad.any() or nan.any():
            count = int(bad.sum().item() + nan.sum().item())
            return {"ok": False, "max_abs_err": worst, "scale": scale,
                    "reason": f"output {i}: {count} of {ref.numel()} elements off, max "
                              f"|err| {err:.3g} > {atol:g} x {scale:.3g} + {rtol:g} x |ref|"}
    return {"ok": True, "max_abs_err": worst, "scale": scale_all, "reason": None}
