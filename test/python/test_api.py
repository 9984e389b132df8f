"""The thunder package's surface and thunder._C's own checks on what it is handed."""
from __future__ import annotations

import pytest
import torch
from torch import nn

import thunder
from thunder import _C, capture


def test_version_and_all():
    assert thunder.__version__ == "0.1.0"
    for name in thunder.__all__:
        assert hasattr(thunder, name), name
    assert "ImportError" not in thunder.__all__  # would shadow the builtin on import *
    assert issubclass(thunder.ImportError, ValueError)
    assert issubclass(thunder.CompileError, ValueError)
    assert issubclass(thunder.UnsupportedModelError, ValueError)


def test_supported_ops():
    ops = thunder.supported_ops()
    assert ops == sorted(ops) and len(ops) == len(set(ops))
    assert {"aten.add.Tensor", "aten.addmm.default",
            "aten.scaled_dot_product_attention.default"} <= set(ops)


class Gelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return nn.functional.gelu(self.fc(x)).softmax(-1)  # the source line


@pytest.fixture(scope="module")
def program():
    return thunder.export(Gelu(), (torch.randn(2, 8),))


def test_printing(program):
    assert str(program) == program.mlir == program.to_string()
    assert "dense_resource<fc.weight>" in program.mlir
    assert repr(program).startswith("<thunder.ImportedProgram (tensor<2x8xf32>) with ")
    # Large blobs are elided unless asked for; small ones are printed.
    assert len(program.to_string(print_weights=True)) > len(program.mlir)
    # Locations are the user's source lines.
    with open(__file__) as source:
        line = next(n for n, text in enumerate(source, 1) if text.endswith("# the source line\n"))
    assert f'loc("{__file__}":{line}:0)' in program.to_string(locations=True)
    assert "loc(" not in program.mlir


def test_graph_pipeline():
    program = thunder.export(Gelu(), (torch.randn(2, 8),))
    assert "thunder.softmax" in program.ops
    assert program.run_graph_pipeline(decompose_composites=True) is program
    assert program.verify()
    assert "thunder.softmax" not in program.ops  # decomposed into primitives
    assert program.input_types == ["tensor<2x8xf32>"]


def linear_json_and_weights():
    model = nn.Linear(4, 3)
    ep = capture.capture(model, (torch.randn(2, 4),))
    views, keep_alive = capture.weight_views(ep)
    return capture.program_json(ep), views, keep_alive


def test_import_program_directly():
    json, views, keep_alive = linear_json_and_weights()
    module = _C.import_program(json, views, "linear")
    assert module.verify()
    assert str(module).startswith("module {")


def test_import_program_bad_json():
    with pytest.raises(thunder.ImportError, match="broken: import failed") as info:
        _C.import_program("{ not json", {}, "broken")
    assert "invalid JSON" in str(info.value)


def test_import_program_missing_weight():
    json, views, keep_alive = linear_json_and_weights()
    del views["bias"]
    with pytest.raises(thunder.ImportError, match="weight 'bias' is used by the program "
                                                   "but was not provided"):
        _C.import_program(json, views, "linear")


def test_import_program_wrong_size():
    json, views, keep_alive = linear_json_and_weights()
    pointer, nbytes, dtype, sizes = views["weight"]
    views["weight"] = (pointer, nbytes - 4, dtype, sizes)
    with pytest.raises(thunder.ImportError, match="'weight' has 44 bytes"):
        _C.import_program(json, views, "linear")


def test_import_program_wrong_dtype():
    json, views, keep_alive = linear_json_and_weights()
    pointer, nbytes, dtype, sizes = views["weight"]
    views["weight"] = (pointer, nbytes, "complex64", sizes)
    with pytest.raises(thunder.ImportError, match="'weight' has dtype complex64"):
        _C.import_program(json, views, "linear")
    views["weight"] = (pointer, nbytes // 2, "float16", sizes)
    with pytest.raises(thunder.ImportError, match="weight 'weight' is float16"):
        _C.import_program(json, views, "linear")


def test_parse_module_errors():
    with pytest.raises(thunder.ImportError, match="bad.mlir:1: error: "):
        _C.parse_module("module { foo.bar }", "bad.mlir")
