"""thunder.examine reports unsupported ops with counts and the user's source lines, and
thunder.export fails naming every one of them."""
from __future__ import annotations

import os
import subprocess

import pytest
import torch
from torch import nn

import thunder
from thunder import capture

SORT = "aten.cumprod.default"  # (the names predate sort and topk being supported)
TOPK = "aten.median.dim"


def line_of(marker: str) -> str:
    """'<this file>:<line>' of the line that carries `marker` (a comment)."""
    with open(__file__) as source:
        for number, line in enumerate(source, 1):
            if line.rstrip().endswith(marker):
                return f"{__file__}:{number}"
    raise AssertionError(f"no line ends with {marker}")


class SortAndTopk(nn.Module):
    """Two ops the importer lacks, one of them twice, around supported ones."""

    def forward(self, x):
        a = torch.cumprod(x, dim=-1)  # first sort
        b = torch.median(x, 1).values  # the topk
        c = torch.cumprod(a * 2, dim=0)  # second sort
        return a + 1, b, c


@pytest.fixture(scope="module")
def report():
    return thunder.examine(SortAndTopk(), torch.randn(4, 8))


def same_location(actual: str, expected: str) -> bool:
    actual_path, actual_line = actual.rsplit(":", 1)
    expected_path, expected_line = expected.rsplit(":", 1)
    return actual_line == expected_line and os.path.samefile(actual_path, expected_path)


def test_the_ops_are_unsupported():
    # The premise: both survive run_decompositions as ATen ops the importer lacks.
    supported = set(thunder.supported_ops())
    assert SORT not in supported and TOPK not in supported
    assert "aten.add.Tensor" in supported


def test_examine_lists_unsupported_ops(report):
    assert not report.ok
    unsupported = {op.name: op for op in report.unsupported}
    assert set(unsupported) == {SORT, TOPK}
    sort, topk = unsupported[SORT], unsupported[TOPK]
    assert sort.count == 2 and topk.count == 1
    assert len(sort.source_lines) == 2
    assert same_location(sort.source_lines[0], line_of("# first sort"))
    assert same_location(sort.source_lines[1], line_of("# second sort"))
    assert len(topk.source_lines) == 1
    assert same_location(topk.source_lines[0], line_of("# the topk"))


def test_examine_histogram(report):
    assert report.histogram[SORT] == 2
    assert report.histogram["aten.add.Tensor"] == 1
    assert report.histogram["aten.mul.Tensor"] == 1
    supported = [op for op in report.ops if op.supported]
    assert {op.name for op in supported} == {"aten.add.Tensor", "aten.mul.Tensor"}
    assert report.num_nodes >= sum(report.histogram.values())


def test_examine_text(report):
    text = str(report)
    assert SORT in text and TOPK in text
    assert os.path.basename(__file__) + ":" in text
    assert "unsupported" in text


def test_examine_matches_cli(report, thunder_compile, tmp_path):
    ep = torch.export.export(SortAndTopk(), (torch.randn(4, 8),))
    path = tmp_path / "sort.pt2"
    torch.export.save(ep.run_decompositions(capture.decomposition_table()), path)
    result = subprocess.run([str(thunder_compile), str(path), "--examine"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr  # some ops are unsupported
    assert result.stdout == str(report)


def test_examine_supported_model():
    report = thunder.examine(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), torch.randn(2, 4))
    assert report.ok and report.unsupported == []
    assert report.histogram["aten.relu.default"] == 1
    assert all(op.supported for op in report.ops)


def test_examine_exported_program():
    ep = torch.export.export(SortAndTopk(), (torch.randn(4, 8),))
    assert {op.name for op in thunder.examine(ep).unsupported} == {SORT, TOPK}


def test_export_names_every_unsupported_op():
    with pytest.raises(thunder.ImportError) as info:
        thunder.export(SortAndTopk(), (torch.randn(4, 8),))
    assert isinstance(info.value, ValueError)
    assert info.type is thunder._C.ImportError
    message = str(info.value)
    assert SORT in message and TOPK in message
    assert "2 uses" in message
    base = os.path.basename(__file__)
    for marker in ("# first sort", "# second sort", "# the topk"):
        line = line_of(marker).rsplit(":", 1)[1]
        assert f"{base}:{line}" in message, message
    # Each unsupported op is its own "file:line: error: ..." line.
    errors = [l for l in message.splitlines() if f"{base}:" in l.split(" error: ")[0]]
    assert len(errors) == 2, message
