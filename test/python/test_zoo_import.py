"""Every zoo model imports by both paths: the live model through thunder.export, and a
.pt2 archive through thunder.load_pt2 and the thunder-compile CLI. All give IR that
verifies, with the same op histogram for the same program: thunder.export imports
torch.export's own (TRAINING-dialect) program as it is, the archive holds the
decomposed one (run_decompositions, as a user may save it), and an archive of the
undecomposed program imports as thunder.export does."""
from __future__ import annotations

import re
import subprocess

import pytest
import torch

import thunder
from thunder import capture
from zoo import ZOO


class ZooCase:
    def __init__(self, name, program, decomposed, pt2_path, training_pt2_path):
        self.name = name
        self.program = program  # thunder.export of the model: undecomposed
        self.decomposed = decomposed  # thunder.export of the archive's program
        self.pt2_path = pt2_path
        self.training_pt2_path = training_pt2_path
        self._loaded = None

    @property
    def loaded(self):
        """The .pt2 archive through thunder.load_pt2 (imported once)."""
        if self._loaded is None:
            self._loaded = thunder.load_pt2(self.pt2_path)
        return self._loaded


@pytest.fixture(scope="module", params=sorted(ZOO))
def case(request, tmp_path_factory) -> ZooCase:
    """One zoo model (small, dynamic batch) exported once per test module."""
    zoo_model = ZOO[request.param]
    model, inputs = zoo_model.build(size="small", batch=2)
    dynamic = zoo_model.dynamic_batch(inputs)
    program = thunder.export(model, inputs, dynamic_shapes=dynamic)
    # The archive path is written the way a user would, independently of thunder.export.
    ep = torch.export.export(model, inputs, dynamic_shapes=dynamic)
    directory = tmp_path_factory.mktemp(request.param)
    training_pt2_path = directory / f"{request.param}.training.pt2"
    torch.export.save(ep, training_pt2_path)
    ep = ep.run_decompositions(capture.decomposition_table())
    pt2_path = directory / f"{request.param}.pt2"
    torch.export.save(ep, pt2_path)
    return ZooCase(request.param, program, thunder.export(ep), pt2_path, training_pt2_path)


def test_export_verifies_with_dynamic_batch(case):
    assert case.program.verify()
    # The batch dim of the first argument is dynamic in the IR.
    assert re.search(r"func\.func @main\(%arg0: tensor<\?x", case.program.mlir), \
        case.program.mlir[:500]
    assert case.program.input_types[0].startswith("tensor<?x")
    assert case.program.ops.get("thunder.constant", 0) > 0  # the weights came along


def test_load_pt2_matches_export(case):
    assert case.loaded.verify()
    assert case.loaded.input_types[0].startswith("tensor<?x")
    assert case.loaded.ops == case.decomposed.ops


def test_training_dialect_archive_matches_export(case):
    # torch.export.export's output saved as it is: the importer takes it whole, as
    # thunder.export does.
    loaded = thunder.load_pt2(case.training_pt2_path)
    assert loaded.verify()
    assert loaded.ops == case.program.ops


def test_cli_matches_load_pt2(case, thunder_compile):
    result = subprocess.run(
        [str(thunder_compile), str(case.pt2_path), "--compile-to=import"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    cli_module = thunder._C.parse_module(result.stdout, f"{case.name}.mlir")
    assert cli_module.verify()
    assert cli_module.op_histogram() == case.decomposed.ops
    # Same importer, same archive: the same text.
    assert result.stdout.strip() == case.loaded.mlir.strip()


def test_graph_pipeline_runs(case):
    # On the .pt2 import so that the export's module stays at the import phase for the
    # other tests whatever the order.
    program = thunder.load_pt2(case.pt2_path)
    program.run_graph_pipeline()
    assert program.verify()
    assert program.input_types == case.program.input_types
