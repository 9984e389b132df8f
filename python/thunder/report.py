"""thunder.report: what the kernel pipelines make of a model, for people.

    from thunder import report
    print(report.fusion_report(model, (x,)))     # every kernel and why it was not merged
    print(report.memory_report(model, (x,)))     # the arena, its lower bound, every tensor
    report.plot_memory_timeline(model, (x,), path="memory.png")

Each function takes an nn.Module (or FX GraphModule, TorchScript module,
ExportedProgram) with its example inputs, a path to a .pt2 archive, an
ImportedProgram (thunder.export), or a MemoryPlan already computed. The graph and
kernel pipelines run on a copy of the program, exactly as ``thunder-compile
--compile-to=plan --report=fusion,memory`` runs them; the texts are the CLI's.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

from . import _C

__all__ = ["MemoryPlan", "PlannedTensor", "fusion_report", "memory_plan",
           "memory_report", "plot_memory_timeline"]


@dataclasses.dataclass(frozen=True)
class PlannedTensor:
    """One kernel result as the memory plan placed it."""

    name: str                   #: "<kernel_name>#<result>"
    type: str                   #: the MLIR type, "tensor<2x768xf32>"
    kernel: int                 #: the producing kernel's position in schedule order
    result: int                 #: its result number on that kernel
    bytes: int | None           #: None when a dim is dynamic
    offset: int | None          #: arena offset; None for outputs and run-time packing
    output: int | None          #: the function result it is written to, or None
    first: int                  #: live from this schedule step...
    last: int                   #: ...to this one (its last reader), inclusive
    inplace_from: str | None    #: the tensor whose bytes it takes (in place), or None
    inplace_operand: int | None  #: that tensor's operand index on the kernel
    #: with borrow_outputs: the function result whose buffer holds it (before that
    #: result is written; `offset` is into that buffer), or None (the arena)
    in_output: int | None = None


@dataclasses.dataclass(frozen=True)
class MemoryPlan:
    """The memory plan of a compiled model's function. ``str(plan)`` is the report
    that ``thunder-compile --report=memory`` prints."""

    function: str
    kernels: int                #: kernels in the schedule
    alignment: int              #: arena offsets and sizes are multiples of this
    arena: int | None           #: arena bytes; None when packed at run time
    lower_bound: int | None     #: the most bytes live at once: no arena is smaller
    naive: int | None           #: every arena tensor in its own buffer
    outputs: int | None         #: bytes written straight into the caller's buffers
    dynamic: bool               #: sizes known only at run time
    borrowed: int | None        #: with borrow_outputs: bytes placed in output buffers
    tensors: tuple[PlannedTensor, ...]
    report: str                 #: the memory report's text
    fusion: str                 #: the fusion report's text

    @property
    def ratio(self) -> float | None:
        """arena / lower bound (1.0 is optimal); None when dynamic."""
        if self.arena is None or not self.lower_bound:
            return None
        return self.arena / self.lower_bound

    def __str__(self) -> str:
        return self.report


def _module(model_or_program: Any, example_inputs: Any, dynamic_shapes: Any) -> _C.Module:
    """The native module of whatever the caller has."""
    from .program import ImportedProgram, export, load_pt2

    if isinstance(model_or_program, _C.Module):
        return model_or_program
    if isinstance(model_or_program, ImportedProgram):
        return model_or_program.module
    if isinstance(model_or_program, (str, os.PathLike)):
        return load_pt2(model_or_program).module
    args = () if example_inputs is None else example_inputs
    return export(model_or_program, args, dynamic_shapes=dynamic_shapes).module


def memory_plan(model_or_program: Any, example_inputs: Any = None, *, fuse: bool = True,
                borrow_outputs: bool = False, dynamic_shapes: Any = None) -> MemoryPlan:
    """The memory plan of `model_or_program` (see the module's docstring for what it
    takes) after the graph and kernel pipelines; `fuse=False` plans the unfused
    program (one kernel per op); `borrow_outputs=True` lets tensors that die before a
    result is written live in that result's buffer (the kernel pipelines'
    borrow-outputs option). Raises thunder.CompileError if a pipeline fails."""
    if isinstance(model_or_program, MemoryPlan):
        return model_or_program
    module = _module(model_or_program, example_inputs, dynamic_shapes)
    raw = module.memory_plan(fuse=fuse, borrow_outputs=borrow_outputs)
    tensors = tuple(PlannedTensor(**t) for t in raw["tensors"])
    return MemoryPlan(function=raw["function"], kernels=raw["kernels"],
                      alignment=raw["alignment"], arena=raw["arena"],
                      lower_bound=raw["lower_bound"], naive=raw["naive"],
                      outputs=raw["outputs"], dynamic=raw["dynamic"],
                      borrowed=raw["borrowed"], tensors=tensors,
                      report=raw["memory_report"], fusion=raw["fusion_report"])


def memory_report(model_or_program: Any, example_inputs: Any = None, **options: Any) -> str:
    """The memory report (arena bytes, lower bound, naive sum, every tensor's bytes,
    offset, lifetime and in-place source) as ``thunder-compile --report=memory``
    prints it. Options as for memory_plan."""
    return memory_plan(model_or_program, example_inputs, **options).report


def fusion_report(model_or_program: Any, example_inputs: Any = None, **options: Any) -> str:
    """The fusion report (every kernel with its ops and source lines, and why
    neighbours were not merged) as ``thunder-compile --report=fusion`` prints it."""
    return memory_plan(model_or_program, example_inputs, **options).fusion


def _human(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{nbytes} B"


def plot_memory_timeline(model_or_program: Any, example_inputs: Any = None,
                         path: str | os.PathLike = "memory_timeline.png", *,
                         dpi: int = 120, **options: Any) -> str:
    """Draws the memory plan as a PNG at `path` and returns the path: one rectangle
    per arena tensor (x: the schedule steps it is live, y: its bytes in the arena),
    in-place chains in one colour, the outputs hatched in a band above the arena
    (they live in the caller's buffers; tensors borrowing an output's buffer are
    dotted inside it), and the bytes live in the arena at each step as a line under
    the arena's top and the lower bound. Needs matplotlib; a plan packed at run time
    (dynamic shapes) has no offsets to draw and raises ValueError."""
    plan = memory_plan(model_or_program, example_inputs, **options)
    if plan.dynamic:
        raise ValueError(
            "the memory plan is packed at run time (dynamic shapes): there are no "
            "offsets to draw; export with static shapes to see the timeline")
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle
    except ImportError as error:  # pragma: no cover - matplotlib is a dev dependency
        raise ImportError("plot_memory_timeline needs matplotlib (pip install "
                          "matplotlib)") from error

    scale, unit = 1.0, "bytes"
    top = max(plan.arena or 0, 1) + (plan.outputs or 0)
    for factor, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if top >= 4 * factor:
            scale, unit = float(factor), name
            break
    steps = max([t.last for t in plan.tensors] + [plan.kernels - 1, 0]) + 1

    # Byte-for-byte live profile (in-place chains counted once, as the bound does).
    owner = {t.name: t.name for t in plan.tensors}
    for t in plan.tensors:
        if t.inplace_from is not None and t.inplace_from in owner:
            owner[t.name] = owner[t.inplace_from]
    live = [0] * (steps + 1)
    counted: dict[str, tuple[int, int, int]] = {}
    for t in plan.tensors:
        if t.offset is None or t.in_output is not None or not t.bytes:
            continue
        size = -(-t.bytes // plan.alignment) * plan.alignment
        first, last, most = counted.get(owner[t.name], (t.first, t.last, 0))
        counted[owner[t.name]] = (min(first, t.first), max(last, t.last), max(most, size))
    for first, last, size in counted.values():
        for step in range(first, last + 1):
            live[step] += size

    figure = Figure(figsize=(12, 6), dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    colours = [f"C{i}" for i in range(10)]
    chains = sorted(set(owner.values()))
    colour_of = {chain: colours[i % len(colours)] for i, chain in enumerate(chains)}
    # The outputs' buffers, stacked above the arena in result order.
    base: dict[int, int] = {}
    output_top = plan.arena or 0
    for t in sorted((t for t in plan.tensors if t.output is not None), key=lambda t: t.output):
        base[t.output] = output_top
        output_top += t.bytes or 0
    for t in plan.tensors:
        if not t.bytes:
            continue
        if t.output is not None:  # written into the caller's buffer
            y, colour, hatch = base[t.output], "lightgrey", "//"
        elif t.in_output is not None:  # borrowing that buffer before it is written
            y, colour, hatch = base[t.in_output] + t.offset, colour_of[owner[t.name]], ".."
        else:
            y, colour, hatch = t.offset, colour_of[owner[t.name]], None
        axes.add_patch(Rectangle((t.first, y / scale), t.last - t.first + 1,
                                 t.bytes / scale, facecolor=colour, edgecolor="black",
                                 linewidth=0.3, alpha=0.85, hatch=hatch))
    axes.step(range(steps + 1), [b / scale for b in live], where="post", color="black",
              linewidth=1.5, alpha=0.6, zorder=3, label="bytes live at each step")
    if plan.arena:
        axes.axhline(plan.arena / scale, color="red", linestyle="-", linewidth=1,
                     label=f"arena {_human(plan.arena)}")
    if plan.lower_bound:
        axes.axhline(plan.lower_bound / scale, color="blue", linestyle="--", linewidth=1,
                     label=f"lower bound {_human(plan.lower_bound)}")
    axes.set_xlim(0, steps)
    # Headroom above the outputs' band for the legend.
    axes.set_ylim(0, max(output_top, plan.arena or 0, 1) / scale * 1.3)
    axes.set_xlabel("schedule step (kernel)")
    axes.set_ylabel(f"offset ({unit}): the arena, then the output buffers")
    ratio = f"{plan.ratio:.3f}x" if plan.ratio is not None else "-"
    axes.set_title(f"@{plan.function}: arena {_human(plan.arena or 0)}, lower bound "
                   f"{_human(plan.lower_bound or 0)} ({ratio}), naive "
                   f"{_human(plan.naive or 0)}; outputs {_human(plan.outputs or 0)} "
                   f"(hatched, in the caller's buffers)"
                   + (f"; {_human(plan.borrowed)} borrowing them (dotted)"
                      if plan.borrowed else ""), fontsize="medium")
    axes.legend(loc="upper left", ncol=3, fontsize="small")
    figure.tight_layout()
    path = os.fspath(path)
    figure.savefig(path, format="png")
    return path
