"""argsort and scatter on the tpu target (stablehlo.sort, stablehlo.scatter), run through
the runtime's PJRT executor on XLA's CPU plugin and compared with eager: stable sorts
(ties keep their order, NaN sorts above every number), descending too, over several
dtypes; scatter, scatter_add and scatter_reduce with every reduce mode, with and without
include_self, repeated indices, a src larger than the index."""
from __future__ import annotations

import pathlib

import pytest
import torch

import thunder


@pytest.fixture(autouse=True)
def cpu_plugin(monkeypatch):
    import xla_plugins.xla_cpu_pjrt as package  # tools/dev.sh installs xla-cpu-pjrt
    path = pathlib.Path(package.__file__).parent / "xla_cpu_pjrt.so"
    assert path.is_file(), f"{path} is missing: reinstall xla-cpu-pjrt (tools/dev.sh setup)"
    monkeypatch.setenv("THUNDER_PJRT_PLUGIN", str(path))


class _Ops(torch.nn.Module):
    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def forward(self, *args):
        return {name: op(*args) for name, op in self.ops.items()}


def _run(ops, inputs, tmp_path, name):
    with torch.no_grad():
        expected = {k: op(*inputs) for k, op in ops.items()}
    compiled = thunder.compile(_Ops(ops).eval(), inputs, target="tpu", dynamic=False,
                               cache_dir=tmp_path, progress=False, fallback="error", name=name)
    actual = compiled(*inputs)
    for key, want in expected.items():
        got = actual[key]
        assert got.dtype == want.dtype, key
        if want.dtype.is_floating_point:
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True,
                                       msg=lambda m: f"{key}: {m}")
        else:
            assert torch.equal(got, want), f"{key}:\n{got}\n{want}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16])
def test_argsort(dtype, tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-3, 4, (5, 7), generator=g).to(dtype)  # many ties
    if dtype.is_floating_point:
        x[1, 2] = float("nan")
        x[3, 0] = float("nan")
        x[2, 4] = float("-inf")
    ops = {
        "asc0": lambda x: torch.argsort(x, dim=0, stable=True),
        "asc1": lambda x: torch.argsort(x, dim=1, stable=True),
        "desc1": lambda x: torch.argsort(x, dim=1, descending=True, stable=True),
        "desc0": lambda x: torch.argsort(x, dim=0, descending=True, stable=True),
        "sort_values": lambda x: torch.sort(x, dim=-1, stable=True).values,
        "topk": lambda x: torch.topk(x.float(), 3, dim=1).values,
    }
    _run(ops, (x,), tmp_path, f"tpu_argsort_{str(dtype)[6:]}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_scatter(dtype, tmp_path):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(-9, 10, (4, 6), generator=g).to(dtype)
    src = torch.randint(-9, 10, (3, 6), generator=g).to(dtype)
    # Repeated indices along dim 0 (reductions), a negative one; a permutation for the
    # overwriting scatter, whose order among repeats PyTorch leaves undefined.
    index = torch.tensor([[0, 1, 3, 3, 2, -1], [0, 0, 3, 1, 2, 0]])
    perm = torch.tensor([[2, 0, 1, 3, 1, 0], [0, 3, 2, 1, 0, 2]])
    ops = {
        "scatter": lambda x, s, i, p: torch.scatter(x, 0, p, s),
        "scatter_dim1": lambda x, s, i, p: torch.scatter(x, 1, p[:, :4].remainder(6) + 2 * 0, s),
        "scatter_add": lambda x, s, i, p: torch.scatter_add(x, 0, i.remainder(4), s),
    }
    for reduce in ("sum", "prod", "amax", "amin", "mean"):
        for include_self in (True, False):
            ops[f"{reduce}_{include_self}"] = (
                lambda x, s, i, p, r=reduce, inc=include_self:
                torch.scatter_reduce(x, 0, i.remainder(4), s, r, include_self=inc))
    _run(ops, (x, src, index, perm), tmp_path, f"tpu_scatter_{str(dtype)[6:]}")
