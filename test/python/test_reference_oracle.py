"""The reference interpreter (lib/Dialect/Thunder/Reference) as an oracle for the CPU kernels.

The same pointwise ops run twice through thunder.compile, on the same values: once on
inputs, so that the generated CPU kernels compute them, and once on buffers, so that
thunder-fold-weights computes them at compile time with the reference interpreter and the
library only returns constants. Inputs hold the edge cases (signed zeros, infinities,
NaN, values at rounding ties, tiny and huge magnitudes) beside random values. Ops that
IEEE defines exactly must agree bit for bit (NaN with NaN); transcendental ones within a
few units in the last place, as neither side is correctly rounded.

A kernel that differs from the reference on purpose or by a known bug goes into
KNOWN_DIFFERENCES with the reason, where its test is a strict expected failure: when the
kernel is fixed, the entry must go.
"""
from __future__ import annotations

import re
import subprocess

import pytest
import torch
import torch.nn.functional as F

import thunder
from thunder import capture

F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16
DTYPES = [F32, BF16, F16]

# name -> (function of x and y, how it is compared): "exact" bit for bit; "ulps" within
# ULPS units in the last place of the reference; "cancels" also within ULPS * eps(f32) *
# |x|, as the f32 formula x / 2 * (1 + erf(...)) that PyTorch and the kernels compute
# cancels in the tail (PyTorch's own gelu(-2.5) in f32 is 8 ulp from the exact value).
OPS = {
    "add": (lambda x, y: x + y, "exact"),
    "sub": (lambda x, y: x - y, "exact"),
    "mul": (lambda x, y: x * y, "exact"),
    "div": (lambda x, y: x / y, "exact"),
    "div_trunc": (lambda x, y: torch.div(x, y, rounding_mode="trunc"), "exact"),
    "div_floor": (lambda x, y: torch.div(x, y, rounding_mode="floor"), "exact"),
    "remainder": (lambda x, y: torch.remainder(x, y), "exact"),
    "maximum": (lambda x, y: torch.maximum(x, y), "exact"),
    "minimum": (lambda x, y: torch.minimum(x, y), "exact"),
    "neg": (lambda x, y: -x, "exact"),
    "abs": (lambda x, y: x.abs(), "exact"),
    "relu": (lambda x, y: torch.relu(x), "exact"),
    "floor": (lambda x, y: torch.floor(x), "exact"),
    "ceil": (lambda x, y: torch.ceil(x), "exact"),
    "sqrt": (lambda x, y: torch.sqrt(x), "exact"),
    "reciprocal": (lambda x, y: torch.reciprocal(x), "exact"),
    "where_gt": (lambda x, y: torch.where(x > y, x, y), "exact"),
    "to_bf16": (lambda x, y: x.to(BF16), "exact"),
    "to_f16": (lambda x, y: x.to(F16), "exact"),
    "exp": (lambda x, y: torch.exp(x), "ulps"),
    "tanh": (lambda x, y: torch.tanh(x), "ulps"),
    "sigmoid": (lambda x, y: torch.sigmoid(x), "ulps"),
    "gelu": (lambda x, y: F.gelu(x), "cancels"),
    "gelu_tanh": (lambda x, y: F.gelu(x, approximate="tanh"), "cancels"),
}

# (op, dtype name) -> why the CPU kernel differs from the reference (and from PyTorch).
# Empty: the two kernels this test found differing (floor division computed as
# floor(a / b), relu(-0.) giving +0.) follow PyTorch now (thunder_scalar.h).
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}

# Ulps of the output dtype that an inexact op may differ by.
ULPS = 4


def inputs(dtype: torch.dtype, n: int = 512) -> tuple[torch.Tensor, torch.Tensor]:
    """x and y: every pair of edge cases, then `n` pairs of random values of several
    scales."""
    info = torch.finfo(dtype)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -3.0, 0.1, 5.0,
               float("inf"), float("-inf"), float("nan"), info.max, -info.max, info.tiny,
               -info.tiny, info.eps, 1.0 + info.eps, 1e-30, 1e30]
    special_x = torch.tensor(special, dtype=torch.float64).repeat_interleave(len(special))
    special_y = torch.tensor(special, dtype=torch.float64).repeat(len(special))
    generator = torch.Generator().manual_seed(0)
    scales = torch.tensor([1e-3, 1.0, 30.0, 1e4], dtype=torch.float64)
    random = torch.randn(2, n, generator=generator, dtype=torch.float64)
    random *= scales[torch.randint(0, 4, random.shape, generator=generator)]
    x = torch.cat([special_x, random[0]]).to(dtype)
    y = torch.cat([special_y, random[1]]).to(dtype)
    return x, y


class OnInputs(torch.nn.Module):
    def forward(self, x, y):
        return {name: fn(x, y) for name, (fn, _) in OPS.items()}


class OnBuffers(torch.nn.Module):
    """The same ops on buffers: everything folds at compile time. The input only gives
    the model one (its output does not depend on it)."""

    def __init__(self, x, y):
        super().__init__()
        self.register_buffer("x", x)
        self.register_buffer("y", y)

    def forward(self, unused):
        return {name: fn(self.x, self.y) for name, (fn, _) in OPS.items()}


def ulp(t: torch.Tensor) -> torch.Tensor:
    """The spacing of t's dtype at each of t's values (in float64)."""
    wide = t.double().abs()
    up = torch.nextafter(t.abs(), torch.full_like(t, float("inf"))).double()
    return (up - wide).abs()


def computed_ops(model, example, thunder_compile, directory) -> list[str]:
    """The ops other than constants left after the fusion phase (which folds first)."""
    archive = directory / "model.pt2"
    torch.export.save(capture.capture(model, example), archive)
    result = subprocess.run([str(thunder_compile), str(archive), "--compile-to=fusion"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    ops = re.findall(r"= (thunder\.\w+)", result.stdout)
    return [op for op in ops if op != "thunder.constant"]


@pytest.fixture(scope="module", params=DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def results(request, cache_dir, thunder_compile, tmp_path_factory):
    """For one dtype: (kernels' outputs, the reference's outputs), by op name."""
    dtype = request.param
    x, y = inputs(dtype)
    name = str(dtype).removeprefix("torch.")
    # Every op on buffers folds: nothing is left for a kernel to compute, so the
    # "reference" side is the interpreter's alone.
    leftover = computed_ops(OnBuffers(x, y), (torch.zeros(1),), thunder_compile,
                            tmp_path_factory.mktemp(f"oracle_{name}"))
    assert leftover == [], leftover
    kernels = thunder.compile(OnInputs(), (x, y), dynamic=False, cache_dir=cache_dir,
                              progress=False, name=f"oracle_kernels_{name}")(x, y)
    unused = torch.zeros(1)
    folded = thunder.compile(OnBuffers(x, y), (unused,), dynamic=False, cache_dir=cache_dir,
                             progress=False, name=f"oracle_folded_{name}")(unused)
    return dtype, x, y, kernels, folded


@pytest.mark.parametrize("op", sorted(OPS))
def test_kernel_matches_reference(op, results, request):
    dtype, x, y, kernels, folded = results
    key = (op, str(dtype).removeprefix("torch."))
    if key in KNOWN_DIFFERENCES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_DIFFERENCES[key], strict=True))
    actual, expected = kernels[op], folded[op]
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    how = OPS[op][1]
    if how == "exact":
        # Bitwise, so that -0.0 and +0.0 differ; any NaN matches any NaN.
        same = (actual.view(torch.int16 if actual.element_size() == 2 else torch.int32)
                == expected.view(torch.int16 if expected.element_size() == 2 else torch.int32))
    else:
        f32 = torch.finfo(torch.float32)
        # Results below f32's normal range are flushed by some kernels (sigmoid(-94.5)
        # is 0. in PyTorch's f32, 9.4e-42 exactly).
        allowed = ULPS * ulp(expected) + f32.tiny
        if how == "cancels":
            allowed = allowed + ULPS * f32.eps * x.double().abs()
        same = (actual.double() - expected.double()).abs() <= allowed
        same |= actual == expected  # infinities
    same |= actual.isnan() & expected.isnan()
    if not same.all():
        bad = (~same).nonzero().flatten()[:8].tolist()
        details = ", ".join(f"f({x[i].item()!r}, {y[i].item()!r}): kernel "
                            f"{actual[i].item()!r}, reference {expected[i].item()!r}"
                            for i in bad)
        pytest.fail(f"{op} ({dtype}): {int((~same).sum())} of {same.numel()} elements "
                    f"differ: {details}")
