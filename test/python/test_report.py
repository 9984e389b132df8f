"""thunder.report: the memory plan as data, the reports as text, the timeline as a PNG.

The plan's numbers are checked against each other, not against constants: no two
tensors live at one step share a byte, offsets are aligned, the arena is at least the
lower bound and at most the naive sum, and the lower bound is the most bytes live at
one step (recomputed here from the tensors).
"""
from __future__ import annotations

import pytest
import torch
from torch import nn

import thunder
from thunder import report


def _align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


class Residual(nn.Module):
    """An MLP block with a residual connection and a side branch: tensors of several
    sizes and lifetimes, several outputs, one returned through a view."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 128)
        self.down = nn.Linear(128, 32)
        self.side = nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.up(x))
        y = self.down(h) + x
        return torch.tanh(y), self.side(x).reshape(-1)


@pytest.fixture(scope="module")
def residual_plan():
    return report.memory_plan(Residual().eval(), (torch.randn(4, 32),))


def _check_consistent(plan: report.MemoryPlan) -> None:
    arena = [t for t in plan.tensors if t.offset is not None and t.in_output is None]
    outputs = [t for t in plan.tensors if t.output is not None]
    assert arena and outputs
    for t in arena:
        assert t.offset % plan.alignment == 0, t
        assert t.offset + _align(t.bytes, plan.alignment) <= plan.arena, t
        assert 0 <= t.first <= t.last < plan.kernels, t
    for t in outputs:
        assert t.offset is None and t.output >= 0
    # No two tensors live at one step share a byte (unless one works in place over
    # the other: then the bytes are handed over at that step).
    inplace = {(t.name, t.inplace_from) for t in arena if t.inplace_from}
    for i, a in enumerate(arena):
        for b in arena[i + 1:]:
            if not a.bytes or not b.bytes:
                continue
            live_together = a.first <= b.last and b.first <= a.last
            share_bytes = (a.offset < b.offset + b.bytes and b.offset < a.offset + a.bytes)
            handed_over = (a.name, b.name) in inplace or (b.name, a.name) in inplace
            assert not (live_together and share_bytes and not handed_over), (a, b)
    # The lower bound is the most (aligned) bytes live at one step, in-place chains
    # counted once; the arena cannot beat it and does not lose to the naive sum.
    owner = {t.name: t.name for t in arena}
    for t in arena:
        if t.inplace_from in owner:
            owner[t.name] = owner[t.inplace_from]
    chains: dict[str, list] = {}
    for t in arena:
        chains.setdefault(owner[t.name], []).append(t)
    most = 0
    for step in range(plan.kernels):
        live = sum(max(_align(t.bytes, plan.alignment) for t in members)
                   for members in chains.values()
                   if min(t.first for t in members) <= step <= max(t.last for t in members))
        most = max(most, live)
    assert plan.lower_bound == most
    assert plan.lower_bound <= plan.arena <= plan.naive
    borrowed = [t for t in plan.tensors if t.in_output is not None]
    assert plan.naive == sum(_align(t.bytes, plan.alignment) for t in arena + borrowed)
    assert plan.outputs == sum(t.bytes for t in outputs)
    # A tensor in an output's buffer fits in it, dies before that output is written,
    # and shares no byte with another one live at the same step there.
    written = {t.output: t for t in outputs}
    for t in borrowed:
        out = written[t.in_output]
        assert t.last < out.first, (t, out)
        assert t.offset % plan.alignment == 0 and t.offset + t.bytes <= out.bytes, (t, out)
    for i, a in enumerate(borrowed):
        for b in borrowed[i + 1:]:
            if a.in_output != b.in_output or (a.name, b.name) in inplace or (
                    b.name, a.name) in inplace:
                continue
            live_together = a.first <= b.last and b.first <= a.last
            share_bytes = (a.offset < b.offset + b.bytes and b.offset < a.offset + a.bytes)
            assert not (live_together and share_bytes), (a, b)


def test_plan_is_consistent(residual_plan):
    plan = residual_plan
    assert plan.function == "main" and not plan.dynamic
    _check_consistent(plan)
    # Both results go to the caller's buffers, the second through a reshape view.
    assert sorted(t.output for t in plan.tensors if t.output is not None) == [0, 1]
    assert plan.ratio is not None and plan.ratio >= 1.0


def test_unfused_plan_is_consistent():
    plan = report.memory_plan(Residual().eval(), (torch.randn(4, 32),), fuse=False)
    _check_consistent(plan)


def test_reports_are_the_cli_text(residual_plan):
    text = report.memory_report(residual_plan)
    assert text == str(residual_plan) == residual_plan.report
    assert text.startswith("memory plan of @main:")
    assert "arena / lower bound" in text and "output 0" in text
    for t in residual_plan.tensors:
        assert t.name in text
    fusion = report.fusion_report(residual_plan)
    assert isinstance(fusion, str) and fusion


def test_program_is_left_as_it_was():
    program = thunder.export(Residual().eval(), (torch.randn(4, 32),))
    before = program.mlir
    plan = report.memory_plan(program)
    assert plan.arena is not None
    assert program.mlir == before
    assert "thunder.arena" not in program.mlir
    # The same module planned again gives the same plan.
    assert report.memory_plan(program.module) == plan


def test_pt2_path(tmp_path):
    model, x = Residual().eval(), torch.randn(4, 32)
    path = tmp_path / "residual.pt2"
    torch.export.save(torch.export.export(model, (x,)).run_decompositions(), path)
    plan = report.memory_plan(str(path))
    _check_consistent(plan)


def test_timeline_png(residual_plan, tmp_path):
    path = tmp_path / "timeline.png"
    assert report.plot_memory_timeline(residual_plan, path=path) == str(path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    import matplotlib.image
    image = matplotlib.image.imread(str(path))
    assert image.shape[0] > 100 and image.shape[1] > 100
    # Not blank: the rectangles put many colours on the page.
    assert len({tuple(pixel) for pixel in image.reshape(-1, image.shape[-1])[::97]}) > 5


def test_dynamic_shapes_are_packed_at_run_time(tmp_path):
    model, x = Residual().eval(), torch.randn(4, 32)
    batch = torch.export.Dim("batch", min=2, max=64)
    plan = report.memory_plan(model, (x,), dynamic_shapes=({0: batch},))
    assert plan.dynamic
    assert plan.arena is None and plan.lower_bound is None and plan.naive is None
    arena = [t for t in plan.tensors if t.output is None]
    assert arena and all(t.offset is None for t in arena)
    assert any(t.bytes is None for t in plan.tensors)
    assert all(0 <= t.first <= t.last < plan.kernels for t in plan.tensors)
    assert "packed at run time" in plan.report and "runtime" in plan.report
    with pytest.raises(ValueError, match="run time"):
        report.plot_memory_timeline(plan, path=tmp_path / "dynamic.png")


class Head(nn.Module):
    """A language model's shape: a body with a wide intermediate, then a head (no
    bias, as in GPT-2 and Llama) whose result is the largest tensor (the logits)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 1024), nn.GELU(), nn.Linear(1024, 32))
        self.head = nn.Linear(32, 4096, bias=False)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x)))


def test_borrowing_output_buffers():
    program = thunder.export(Head().eval(), (torch.randn(8, 32),))
    plain = report.memory_plan(program)
    assert plain.borrowed is None
    assert all(t.in_output is None for t in plain.tensors)
    plan = report.memory_plan(program, borrow_outputs=True)
    _check_consistent(plan)
    assert plan.borrowed > 0
    assert any(t.in_output == 0 for t in plan.tensors)
    # The body's tensors moved into the logits' buffer: the arena only holds what
    # the head reads.
    assert plan.arena < plain.arena
    assert plan.arena + plan.outputs < plain.arena + plain.outputs
    assert "in output buffers before the outputs are written" in plan.report
