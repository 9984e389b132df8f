"""aten._local_scalar_dense (`.item()`): the value stays on the device as a 0-d tensor.

Each model reads a number out of a tensor and uses it where PyTorch takes a Python number
(an arithmetic operand, a comparison, a where/clamp/fill value, add's alpha, Python-level
arithmetic on the number). The compiled module must match eager on several random inputs
(so the value is not baked in at export), with PyTorch's promotion (a Python number does
not promote a tensor of its own category; a float number promotes an integer tensor to
the default float dtype). Uses that need the value on the host (a size, a returned Python
number) are refused with the reason, at the source line.
"""
from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import thunder


class _Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _inputs(kinds, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape, dtype in kinds:
        if dtype == torch.bool:
            out.append(torch.rand(shape, generator=g) > 0.5)
        elif dtype.is_floating_point:
            out.append((torch.randn(shape, generator=g, dtype=torch.float64) + 0.5).to(dtype))
        else:
            out.append(torch.randint(1, 9, shape, generator=g, dtype=dtype))
    return tuple(out)


F32, F16, I64, I32, BOOL = torch.float32, torch.float16, torch.int64, torch.int32, torch.bool

CASES = {
    # name: (fn, [(shape, dtype)...])
    "float_mul": (lambda x, y: x * y.sum().item(), [((4, 3), F32), ((5,), F32)]),
    "float_div": (lambda x, y: x / y.abs().sum().item(), [((4, 3), F32), ((5,), F32)]),
    "int_item_float_tensor": (lambda x, n: x + n.item(), [((4, 3), F32), ((1,), I64)]),
    "float_item_int_tensor": (lambda i, y: i * y.mean().item(), [((4, 3), I64), ((5,), F32)]),
    "int_item_int32_tensor": (lambda i, n: i * n.item() + n.item(), [((4, 3), I32), ((), I64)]),
    "half_item": (lambda x, y: x * y[1].item(), [((4, 3), F16), ((3,), F16)]),
    "bool_item": (lambda x, b: x * b.any().item(), [((4, 3), F32), ((2,), BOOL)]),
    "compare": (lambda x, y: x > y.max().item(), [((4, 3), F32), ((5,), F32)]),
    "where": (lambda x, y: torch.where(x > y.mean().item(), x, y.min().item()),
              [((4, 3), F32), ((5,), F32)]),
    "clamp": (lambda x, y: torch.clamp(x, min=y.min().item(), max=y.max().item()),
              [((4, 3), F32), ((5,), F32)]),
    "full_like": (lambda x, y: torch.full_like(x, y.sum().item()) + x,
                  [((4, 3), F32), ((5,), F32)]),
    "alpha": (lambda x, y: torch.add(x, x, alpha=y.sum().item()), [((4, 3), F32), ((5,), F32)]),
    "python_arith": (lambda x, y, n: x * (y.sum().item() * 2 + 1) - (n.item() // 2) % 3,
                     [((4, 3), F32), ((5,), F32), ((), I64)]),
    "two_items": (lambda x, y: x * y[0].item() + y[1].item() / 4, [((4, 3), F32), ((2,), F32)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_item_matches_eager(case, tmp_path):
    fn, kinds = CASES[case]
    model = _Lambda(fn).eval()
    compiled = thunder.compile(model, _inputs(kinds, 0), dynamic=False, cache_dir=tmp_path,
                               progress=False, fallback="error", name=f"item_{case}")
    for seed in range(3):
        inputs = _inputs(kinds, seed)
        expected = fn(*inputs)
        actual = compiled(*inputs)
        assert actual.dtype == expected.dtype, case
        assert actual.shape == expected.shape, case
        if expected.dtype.is_floating_point:
            tol = 1e-3 if expected.dtype == F16 else 1e-5
            torch.testing.assert_close(actual, expected, rtol=tol, atol=tol)
        else:
            assert torch.equal(actual, expected), case


class _Dynamic(torch.nn.Module):
    def forward(self, x, y):
        return x * y.sum().item() + torch.clamp(x, max=y.max().item())


def test_item_dynamic_batch(tmp_path):
    model = _Dynamic().eval()
    fn = model.forward
    x, y = torch.randn(4, 3), torch.randn(5)
    compiled = thunder.compile(model, (x, y), dynamic_shapes={"x": {0: Dim("batch", max=64)}, "y": None},
                               cache_dir=tmp_path, progress=False, fallback="error",
                               name="item_dynamic")
    for batch, seed in ((4, 0), (1, 1), (9, 2)):
        g = torch.Generator().manual_seed(seed)
        x, y = torch.randn(batch, 3, generator=g), torch.randn(5, generator=g)
        torch.testing.assert_close(compiled(x, y), fn(x, y), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["size", "output"])
def test_item_needed_on_host_is_refused(case, tmp_path):
    if case == "size":
        fn, inputs = (lambda x, n: x.new_zeros(n.item())), (torch.randn(3), torch.tensor(4))
    else:
        fn, inputs = (lambda x: (x, x.sum().item())), (torch.randn(3),)
    with pytest.raises(thunder.ImportError) as raised:
        thunder.compile(_Lambda(fn).eval(), inputs, dynamic=False, cache_dir=tmp_path,
                        progress=False, fallback="error")
    message = str(raised.value)
    assert "value read from tensor data (.item())" in message
    assert "compiled programs never read device data" in message
    assert "test_item.py" in message
