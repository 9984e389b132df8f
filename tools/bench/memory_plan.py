#!/usr/bin/env python3
"""The memory plan of every zoo model against its lower bound and against eager.

    python tools/bench/memory_plan.py                    # small and realistic sizes
    python tools/bench/memory_plan.py --sizes small --models mlp,gpt2

For each model of test/python/zoo.py it prints (a markdown table) Thunder's arena
bytes, the lower bound (the most bytes live at one step of the schedule: no arena can
be smaller), their ratio, the naive sum (every tensor its own buffer), the bytes of
the outputs (written straight into the caller's buffers), and Thunder's peak
(arena + outputs), next to PyTorch eager's peak for one inference, measured two ways:

* eager tensors: the most bytes of tensor storage alive at once during the forward
  pass, counted at the ATen dispatcher (every op's outputs, freed when the last
  tensor on a storage dies), excluding the parameters, buffers and inputs. This is
  what Thunder's arena + outputs stands for: the apples-to-apples comparison.
* eager allocator: the peak of the CPU allocator's own count during the forward
  pass (torch.profiler's memory events), which also includes the scratch memory
  inside kernels (GEMM packing, attention work buffers), which Thunder's arena
  does not count either (its library calls have scratch of their own).

Weights are excluded on both sides. The plan is the one the compiler makes at
--compile-to=plan (the kernel pipelines as they are: with fusion the kernels are
fused, with --no-fuse one kernel per op), and again with the pipelines'
borrow-outputs option (tensors that die before a result is written live in that
result's buffer), which a backend must support before it is turned on. The
"plan ms" column is the time of the graph and kernel pipelines after export.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
build = os.environ.get("THUNDER_BUILD_DIR")
if build:
    sys.path.insert(0, os.path.join(build, "python"))

from zoo import ZOO  # noqa: E402

import thunder  # noqa: E402
from thunder import report  # noqa: E402


def human(nbytes: int | None) -> str:
    if nbytes is None:
        return "-"
    if nbytes < 2**20:
        return f"{nbytes / 2**10:.1f} KiB"
    if nbytes < 2**30:
        return f"{nbytes / 2**20:.2f} MiB"
    return f"{nbytes / 2**30:.2f} GiB"


class LiveTensorBytes(TorchDispatchMode):
    """The most bytes of tensor storage alive at once while the mode is active: every
    storage an op returns counts from its first tensor until its last tensor dies.
    Storages in `exclude` (data pointers of weights and inputs) are not counted."""

    def __init__(self, exclude: set[int]):
        super().__init__()
        self.exclude = exclude
        self.tensors: dict[int, int] = {}  # storage data_ptr -> live tensors on it
        self.sizes: dict[int, int] = {}
        self.live = 0
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for value in tree_leaves(out):
            if isinstance(value, torch.Tensor):
                self._track(value)
        return out

    def _track(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        ptr, nbytes = storage.data_ptr(), storage.nbytes()
        if ptr in self.exclude or nbytes == 0:
            return
        if ptr not in self.tensors:
            self.tensors[ptr] = 0
            self.sizes[ptr] = nbytes
            self.live += nbytes
            self.peak = max(self.peak, self.live)
        self.tensors[ptr] += 1
        weakref.finalize(tensor, self._release, ptr)

    def _release(self, ptr: int) -> None:
        self.tensors[ptr] -= 1
        if self.tensors[ptr] == 0:
            self.live -= self.sizes.pop(ptr)
            del self.tensors[ptr]


def eager_tensor_peak(model: torch.nn.Module, inputs: tuple) -> int:
    exclude = {t.untyped_storage().data_ptr()
               for t in list(model.parameters()) + list(model.buffers()) + list(inputs)
               if isinstance(t, torch.Tensor)}
    with torch.no_grad():
        mode = LiveTensorBytes(exclude)
        with mode:
            out = model(*inputs)
        del out
    return mode.peak


def eager_allocator_peak(model: torch.nn.Module, inputs: tuple) -> int | None:
    """The CPU allocator's peak during one forward pass, from the profiler's memory
    events (allocations positive, frees negative, in time order)."""
    from torch.profiler import ProfilerActivity, profile

    try:
        with torch.no_grad():
            model(*inputs)  # warm up lazily allocated state
            with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
                out = model(*inputs)
                del out
        events = sorted((e for e in prof.profiler.kineto_results.events()
                         if e.name() == "[memory]"), key=lambda e: e.start_ns())
    except Exception:  # noqa: BLE001 - the profiler's internals differ across versions
        return None
    live = peak = 0
    for event in events:
        live += event.nbytes()
        peak = max(peak, live)
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(ZOO), help="comma-separated zoo names")
    parser.add_argument("--sizes", default="small,realistic", help="small, realistic or both")
    parser.add_argument("--batch", type=int, default=None,
                        help="batch size (default: 2 for small, 1 for realistic)")
    parser.add_argument("--no-fuse", action="store_true",
                        help="plan the unfused program (one kernel per op)")
    parser.add_argument("--timeline", default=None,
                        help="a directory to write each model's memory timeline PNG into")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    header = ("| model | size | kernels | arena | lower bound | arena / bound "
              "| naive | outputs | Thunder peak | eager tensors | eager allocator "
              "| Thunder / eager | borrowing: arena | borrowing: Thunder / eager | plan ms |")
    print(header)
    print("|" + "|".join(["---"] * (header.count("|") - 1)) + "|")
    worst = 0.0
    for size in args.sizes.split(","):
        for name in args.models.split(","):
            batch = args.batch or (2 if size == "small" else 1)
            try:
                model, inputs = ZOO[name].build(size=size, batch=batch)
                program = thunder.export(model, inputs)
                start = time.perf_counter()
                plan = report.memory_plan(program, fuse=not args.no_fuse)
                seconds = time.perf_counter() - start
                borrowing = report.memory_plan(program, fuse=not args.no_fuse,
                                               borrow_outputs=True)
            except Exception as error:  # noqa: BLE001 - one model's failure is a row
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                print(f"| {name} | {size} | failed: {type(error).__name__}: {first[:80]} "
                      + "| " * (header.count("|") - 4))
                continue
            eager = eager_tensor_peak(model, inputs)
            allocator = eager_allocator_peak(model, inputs)

            def peak(p: report.MemoryPlan) -> int | None:
                return None if p.arena is None or p.outputs is None else p.arena + p.outputs

            def versus(p: report.MemoryPlan) -> str:
                return "-" if peak(p) is None or not eager else f"{peak(p) / eager:.2f}"

            ratio = plan.ratio
            if ratio is not None:
                worst = max(worst, ratio, borrowing.ratio or 0.0)
            print(f"| {name} | {size} | {plan.kernels} | {human(plan.arena)} "
                  f"| {human(plan.lower_bound)} | "
                  f"{'-' if ratio is None else f'{ratio:.3f}'} | {human(plan.naive)} "
                  f"| {human(plan.outputs)} | {human(peak(plan))} | {human(eager)} "
                  f"| {human(allocator)} | {versus(plan)} | {human(borrowing.arena)} "
                  f"| {versus(borrowing)} | {seconds * 1000:.0f} |", flush=True)
            if args.timeline:
                os.makedirs(args.timeline, exist_ok=True)
                report.plot_memory_timeline(plan, path=os.path.join(
                    args.timeline, f"{name}_{size}.png"))
                report.plot_memory_timeline(borrowing, path=os.path.join(
                    args.timeline, f"{name}_{size}_borrowing.png"))
            del model, inputs, program, plan, borrowing
    print(f"\nworst arena / lower bound (both plans): {worst:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
