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


def test_training_dialect_program_is_imported_as_it_is(mlp, reference_ops):
    # Every op of torch.export's own output is one the importer takes (aten.linear,
    # aten.relu): no run_decompositions, which retraces the whole model.
    model, args = mlp
    ep = torch.export.export(model, args)
    assert ep.verifier.dialect == "TRAINING"
    program = thunder.export(ep)
    assert program.exported_program is ep
    assert mlp_ops(program) == reference_ops


class Addcmul(nn.Module):
    def forward(self, x, y):
        return torch.addcmul(x, x, y, value=0.5)


def test_training_dialect_program_with_a_composite_is_decomposed():
    # aten.addcmul is not one the importer takes: the program is decomposed first.
    args = (torch.randn(3, 4), torch.randn(3, 4))
    ep = torch.export.export(Addcmul(), args)
    assert any(n.target is torch.ops.aten.addcmul.default for n in ep.graph.nodes)
    program = thunder.export(ep)
    assert program.exported_program is not ep
    assert program.exported_program.verifier.dialect == "ATEN"
    assert program.verify()


def test_a_refused_direct_import_is_decomposed_with_a_warning(mlp, monkeypatch):
    # A converter that refuses an op as torch.export wrote it (arguments the importer
    # does not take before decomposition): the program is decomposed and imported again,
    # and the warning carries the importer's message.
    from thunder import _C, program as program_module

    model, args = mlp
    ep = torch.export.export(model, args)
    real = program_module.import_exported
    seen = []

    def refuse_undecomposed(exported, *rest):
        seen.append(exported.verifier.dialect)
        if exported.verifier.dialect == "TRAINING":
            raise _C.ImportError("aten.linear.default: a refusal made up by this test")
        return real(exported, *rest)

    monkeypatch.setattr(program_module, "import_exported", refuse_undecomposed)
    with pytest.warns(thunder.DecompositionRetryWarning, match="made up by this test"):
        program = thunder.export(ep)
    assert seen == ["TRAINING", "ATEN"]
    assert program.exported_program.verifier.dialect == "ATEN"
    mlp_ops(program)


def test_aten_program_with_composites_the_importer_takes_is_used_as_is(mlp,
                                                                        reference_ops):
    # run_decompositions({}) gives the ATEN dialect but keeps aten.linear, which the
    # importer takes as it is.
    model, args = mlp
    ep = torch.export.export(model, args).run_decompositions({})
    assert ep.verifier.dialect == "ATEN"
    assert any(n.target is torch.ops.aten.linear.default for n in ep.graph.nodes)
    program = thunder.export(ep)
    assert program.exported_program is ep
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
