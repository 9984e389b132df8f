"""thunder.export takes every form of PyTorch model DESIGN names: nn.Module, FX
GraphModule, torch.export ExportedProgram (training or decomposed) and TorchScript."""
from __future__ import annotations

import pytest
import torch
from torch import nn

import thunder
from thunder import capture


class SmallMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def mlp_ops(program) -> dict:
    ops = program.ops
    assert program.verify()
    assert ops.get("thunder.matmul") == 2, ops
    assert ops.get("thunder.relu") == 1, ops
    assert ops.get("thunder.constant") == 4, ops  # two weights, two biases
    return ops


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    return SmallMLP().eval(), (torch.randn(2, 8),)


@pytest.fixture(scope="module")
def reference_ops(mlp):
    model, args = mlp
    return mlp_ops(thunder.export(model, args))


def test_nn_module(mlp):
    model, args = mlp
    program = thunder.export(model, args)
    mlp_ops(program)
    assert program.input_types == ["tensor<2x8xf32>"]
    assert program.output_types == ["tensor<2x4xf32>"]
    assert isinstance(program.exported_program, torch.export.ExportedProgram)
    assert "func.func @main" in str(program)


def test_single_tensor_args(mlp):
    model, args = mlp
    assert thunder.export(model, args[0]).input_types == ["tensor<2x8xf32>"]


def test_kwargs(mlp):
    model, args = mlp
    assert thunder.export(model, kwargs={"x": args[0]}).input_types == ["tensor<2x8xf32>"]


def test_fx_graph_module(mlp, reference_ops):
    model, args = mlp
    traced = torch.fx.symbolic_trace(model)
    assert isinstance(traced, torch.fx.GraphModule)
    assert mlp_ops(thunder.export(traced, args)) == reference_ops


def test_training_dialect_program_is_decomposed(mlp, reference_ops):
    model, args = mlp
    ep = torch.export.export(model, args)
    assert ep.verifier.dialect == "TRAINING"
    program = thunder.export(ep)
    assert program.exported_program is not ep
    assert program.exported_program.verifier.dialect == "ATEN"
    assert mlp_ops(program) == reference_ops


def test_decomposed_program_is_used_as_is(mlp, reference_ops):
    model, args = mlp
    ep = torch.export.export(model, args).run_decompositions(capture.decomposition_table())
    program = thunder.export(ep)
    assert program.exported_program is ep
    assert mlp_ops(program) == reference_ops


def test_program_without_decompositions_is_decomposed(mlp, reference_ops):
    # run_decompositions({}) gives the ATEN dialect but keeps aten.linear, which the
    # default table decomposes.
    model, args = mlp
    ep = torch.export.export(model, args).run_decompositions({})
    assert ep.verifier.dialect == "ATEN"
    assert any(n.target is torch.ops.aten.linear.default for n in ep.graph.nodes)
    program = thunder.export(ep)
    assert program.exported_program is not ep
    assert mlp_ops(program) == reference_ops


def test_dynamic_shapes_on_a_program_is_an_error(mlp):
    model, args = mlp
    ep = torch.export.export(model, args)
    with pytest.raises(ValueError, match="dynamic_shapes cannot be applied"):
        thunder.export(ep, dynamic_shapes=({0: torch.export.Dim("b")},))


def test_torchscript_scripted_module(mlp, reference_ops):
    # torch 2.13's TS2EPConverter converts a scripted MLP (it makes every dim of the
    # inputs dynamic).
    model, args = mlp
    scripted = torch.jit.script(model)
    program = thunder.export(scripted, args)
    assert mlp_ops(program) == reference_ops
    assert program.input_types[0].startswith("tensor<?x")


def test_torchscript_traced_module(mlp, reference_ops):
    model, args = mlp
    traced = torch.jit.trace(model, args)
    assert mlp_ops(thunder.export(traced, args)) == reference_ops


class DataDependentLoop(nn.Module):
    def forward(self, x: torch.Tensor):
        rows = []
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                rows.append(x[i])
        return torch.stack(rows) if len(rows) > 0 else x


def test_torchscript_that_does_not_convert():
    scripted = torch.jit.script(DataDependentLoop())
    with pytest.raises(thunder.UnsupportedModelError) as info:
        thunder.export(scripted, (torch.randn(2, 4),))
    message = str(info.value)
    assert "TorchScript conversion failed" in message
    assert "prim::Loop" in message  # why
    assert "original nn.Module" in message and "torch.export" in message  # the way out
    assert isinstance(info.value, ValueError)


def test_torchscript_with_dynamic_shapes_is_an_error(mlp):
    model, args = mlp
    with pytest.raises(thunder.UnsupportedModelError, match="dynamic_shapes"):
        thunder.export(torch.jit.script(model), args,
                       dynamic_shapes=({0: torch.export.Dim("b")},))


def test_not_a_model():
    with pytest.raises(thunder.UnsupportedModelError, match="cannot capture a function"):
        thunder.export(lambda x: x + 1, (torch.randn(2),))


class Attention(nn.Module):
    def forward(self, q, k, v):
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_sdpa_stays_one_composite():
    q = torch.randn(1, 2, 4, 8)
    program = thunder.export(Attention(), (q, q, q))
    assert program.verify()
    ops = program.ops
    assert ops.get("thunder.sdpa") == 1, ops
    assert "thunder.softmax" not in ops and "thunder.matmul" not in ops, ops
    table = capture.decomposition_table()
    assert torch.ops.aten.scaled_dot_product_attention.default not in table
    assert torch.ops.aten.linear.default in table


def test_training_mode_failure_says_to_call_eval():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Dropout(0.5))
    assert model.training
    with pytest.raises(thunder.ImportError) as info:
        thunder.export(model, (torch.randn(2, 3, 8, 8),))
    message = str(info.value)
    assert "aten._native_batch_norm_legit_functional.default" in message
    assert "model.eval()" in message
    # Dropout alone in training mode: the importer says why it cannot compile it.
    with pytest.raises(thunder.ImportError) as info:
        thunder.export(nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5)), (torch.randn(2, 3),))
    message = str(info.value)
    assert "aten.native_dropout.default" in message and "training mode" in message
    assert "model.eval()" in message
    # In eval mode the same model imports.
    assert thunder.export(model.eval(), (torch.randn(2, 3, 8, 8),)).verify()
