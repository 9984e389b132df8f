"""thunder.examine: which ops of a model Thunder supports, without compiling it."""
from __future__ import annotations

import dataclasses
from typing import Any

from . import _C

__all__ = ["ExamineReport", "OpReport", "examine"]


@dataclasses.dataclass(frozen=True)
class OpReport:
    """One ATen op of the program."""

    name: str                      #: "aten.sort.default"
    count: int                     #: how many nodes call it
    supported: bool                #: whether the importer converts it
    source_lines: tuple[str, ...]  #: "model.py:12", unique, in program order


class ExamineReport:
    """What ``thunder.examine`` found: every op with its count, whether it is supported,
    and the user's source lines that call it. ``str(report)`` is the text that
    ``thunder-compile --examine`` prints."""

    def __init__(self, raw: dict, partitions: Any = None):
        self._raw = raw
        #: With unsupported ops: how thunder.compile (fallback="eager") would split the
        #: program (a thunder.partition.PartitionPlan: compiled partitions, eager groups,
        #: the ops that fall back with their source lines, the FLOPs compiled;
        #: ``print(report.partitions)``); else None. ``str(report)`` stays the CLI's text.
        self.partitions = partitions
        self.num_nodes: int = raw["num_nodes"]
        self.ops: list[OpReport] = [
            OpReport(op["name"], op["count"], op["supported"], tuple(op["source_lines"]))
            for op in raw["ops"]]

    @property
    def unsupported(self) -> list[OpReport]:
        """The ops the importer does not convert, most frequent first."""
        return [op for op in self.ops if not op.supported]

    @property
    def ok(self) -> bool:
        """Whether every op is supported."""
        return not self.unsupported

    @property
    def histogram(self) -> dict[str, int]:
        """Op name -> count."""
        return {op.name: op.count for op in self.ops}

    def __str__(self) -> str:
        return _C.format_examine_report(self._raw)

    def __repr__(self) -> str:
        return (f"<thunder.ExamineReport {self.num_nodes} nodes, {len(self.ops)} ops, "
                f"{len(self.unsupported)} unsupported>")


def examine(model: Any, *args: Any, kwargs: dict | None = None,
            dynamic_shapes: Any = None) -> ExamineReport:
    """Captures `model` like thunder.export (same model forms, decompositions) and reports
    which of its ops Thunder supports, without importing anything.

        report = thunder.examine(model, x)
        if not report.ok:
            print(report)
    """
    from . import capture

    from . import custom_ops, partition

    ep = capture.capture(model, args, kwargs, dynamic_shapes)
    name = capture.source_name(model)
    raw = _C.examine_program(capture.program_json(ep), name)
    registered = custom_ops.registered_names()
    for op in raw["ops"]:  # custom ops with a kernel (thunder.register_kernel) import
        if op["name"] in registered:
            op["supported"] = True
    report = ExamineReport(raw)
    if not report.ok:
        report.partitions = partition.plan(ep, name=name)
    return report
