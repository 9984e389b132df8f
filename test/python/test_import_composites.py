"""The composites torch.export's TRAINING dialect keeps (linear, conv2d, batch_norm,
matmul, dropout, diff, ...), imported as they are, without run_decompositions: each one's
numerics against eager, and that the program really was imported undecomposed (a
converter that refused it would be retried decomposed, which conftest turns into an
error)."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import thunder
from thunder import capture

aten = torch.ops.aten


class Composites(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3)  # stride, padding, dilation left at their defaults
        self.bn = nn.BatchNorm2d(4)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 1.5)
        self.drop = nn.Dropout(0.3)
        self.w = nn.Parameter(torch.randn(6, 5))

    def forward(self, x, seq, image, mask):
        n = image.shape[0]
        y = self.bn(self.conv(image)).flatten(1)  # conv2d, batch_norm
        steps = torch.diff(seq)  # an int64 difference along the last dim
        second = torch.diff(x, n=2, dim=1, prepend=x[:, :1], append=x[:, -1:])
        flips = torch.diff(mask, dim=-1)  # bool: x[i + 1] != x[i]
        both = (mask & (x > 0)) | (mask ^ (x < -1))  # __and__, __or__, __xor__
        kept = torch.where(mask, x, 2.0)  # where.ScalarOther
        filled = torch.where(mask, -1.0, x)  # where.ScalarSelf
        moved = self.drop(x).to(x.device, torch.float64) * 1.5  # dropout (eval), to.device
        products = {
            "matmul_2d": x[:, :5] @ self.w.t(),
            "matmul_3d_2d": x.reshape(n, 2, 5) @ self.w.t(),
            "matmul_2d_3d": self.w @ x.reshape(n, 5, 2),
            "matmul_batched_broadcast": x.reshape(n, 1, 2, 5) @ x.reshape(n, 5, 2),
            "matmul_vector_right": x.reshape(n, 2, 5) @ self.w[0],
            "matmul_vector_left": self.w[0] @ x.reshape(n, 5, 2),
            "matmul_dot": self.w[0] @ self.w[1],
        }
        return {"conv_bn": y, "diff_int": steps, "diff_twice": second, "diff_bool": flips,
                "bitwise": both, "where_scalar_other": kept, "where_scalar_self": filled,
                "dropout_to": moved, **products}


def inputs(batch: int = 2):
    generator = torch.Generator().manual_seed(1)
    return (torch.randn(batch, 10, generator=generator),
            torch.randint(-50, 50, (batch, 7), generator=generator),
            torch.randn(batch, 3, 8, 8, generator=generator),
            torch.rand(batch, 10, generator=generator) > 0.5)


@pytest.fixture(scope="module")
def model():
    return Composites().eval()


def test_the_training_dialect_keeps_the_composites(model):
    # The premise: these are the ops the importer now takes undecomposed.
    ep = torch.export.export(model, inputs())
    assert ep.verifier.dialect == "TRAINING"
    targets = {node.target for node in ep.graph.nodes}
    for op in (aten.conv2d.default, aten.batch_norm.default, aten.diff.default,
               aten.matmul.default, aten.dropout.default, aten.where.ScalarOther,
               aten.where.ScalarSelf, aten.__and__.Tensor, aten.__or__.Tensor,
               aten.__xor__.Tensor, aten.to.device):
        assert op in targets, op
    assert not capture._needs_decomposition(ep, capture.decomposition_table())
    assert thunder.export(ep).exported_program is ep  # imported as it is


@pytest.mark.parametrize("dynamic", [False, None], ids=["static", "dynamic_batch"])
def test_composites_match_eager(model, dynamic, tmp_path):
    compiled = thunder.compile(model, dynamic=dynamic, cache_dir=tmp_path, progress=False)
    for batch in ([2] if dynamic is False else [2, 3]):
        args = inputs(batch)
        with torch.no_grad():
            expected = model(*args)
        actual = compiled(*args)
        assert sorted(actual) == sorted(expected)
        for name, value in expected.items():
            if value.dtype in (torch.bool, torch.int64):
                assert torch.equal(actual[name], value), name
            else:
                torch.testing.assert_close(actual[name], value, rtol=1e-5, atol=1e-5,
                                           msg=name)
    assert all(record.seconds.get("decompose", 0.0) < 0.5 for record in compiled.compiles)


class TrainingDropout(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, training=True)


def test_dropout_in_training_mode_is_refused_by_name():
    x = torch.randn(4, 4)
    with pytest.raises(thunder.ImportError, match="dropout in training mode"):
        thunder.export(TrainingDropout(), (x,))


class GlobalPool(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, 1) + F.adaptive_max_pool2d(x, (1, 1))


def test_global_pooling_is_one_reduction(tmp_path):
    program = thunder.export(GlobalPool(), (torch.randn(2, 3, 7, 5),))
    assert program.ops.get("thunder.mean") == 1 and program.ops.get("thunder.max") == 1
    x = torch.randn(2, 3, 7, 5)
    compiled = thunder.compile(GlobalPool(), (x,), cache_dir=tmp_path, progress=False)
    torch.testing.assert_close(compiled(x), GlobalPool()(x), rtol=1e-5, atol=1e-6)
