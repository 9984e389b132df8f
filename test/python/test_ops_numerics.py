"""Op-level numerics: every op family compiled by Thunder for the CPU and compared with
PyTorch eager, per dtype.

One test per op family, parametrized by dtype: all the family's ops go into one module (one
compile), with static shapes that have size-1 and odd dims, inputs passed in non-contiguous
layouts (transposed or channels-last views, which the runtime wrapper must hand over
correctly) and non-contiguous views inside the graph. Inputs are random and never zero
(positive where an op needs it, bounded away from zero for divisors). Each output is
compared with eager in the same dtype within a tolerance for its dtype (bfloat16 1.6e-2,
float16 1e-3, float32 1e-5, float64 1e-10, exact for integers, bools and conversions).

An op that PyTorch's CPU does not run for a dtype is left out of that dtype's module (and
listed in the test's output). An op that Thunder gets wrong is not left out silently: it
goes into XFAIL below, with the reason; test_expected_failures then compiles it alone as a
strict expected failure, and the family's module runs without it.
"""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import thunder

F32, F64, BF16, F16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
I64, I32, BOOL = torch.int64, torch.int32, torch.bool
FLOATS = [F32, F64, BF16, F16]
INTS = [I64, I32]

# ---------------------------------------------------------------------------------------
# Expected failures: (family, op, dtype key) -> what is wrong. The dtype key is the dtype's
# name ("bfloat16"), or "a,b" for the binary family's pairs. Each one is a compiler bug or
# gap with a reproducer in the report that added it.
# ---------------------------------------------------------------------------------------
_DIVISOR = ("importer: avg_pool with divisor_override is not supported "
            "('aten.avg_pool2d.default: avg_pool with divisor_override is not supported')")
XFAIL: dict[tuple[str, str, str], str] = {
    **{("pool", "avg_pool2d_divisor", t): _DIVISOR
       for t in ("float32", "float64", "bfloat16", "float16")},
}

#: (rtol, atol) by output dtype.
TOLERANCE = {
    F64: (1e-10, 1e-10),
    F32: (1e-5, 1e-5),
    BF16: (1.6e-2, 1e-2),
    F16: (1e-3, 1e-3),
}


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------

def make(shape, dtype, kind: str = "normal", layout: str = "contiguous", seed: int = 0):
    """A random tensor with no zeros.

    kind: "normal" (|x| >= 0.05), "positive" (0.1 to 2.1), "unit" (0.5 to 1.5, for
    products), "small" (values from -2, -1, 1, 2: comparisons see ties), "wide" (-20 to
    20 with fractions, for conversions); integers are from -9..9 without 0 ("positive":
    1..9). layout: "contiguous", "transposed" (the last two dims swapped in memory) or
    "channels_last" (4-d).
    """
    generator = torch.Generator().manual_seed(seed * 7919 + len(shape) * 31 + sum(shape))
    if dtype == BOOL:
        tensor = torch.rand(shape, generator=generator) > 0.5
    elif dtype.is_floating_point:
        if kind == "positive":
            tensor = torch.rand(shape, generator=generator, dtype=F64) * 2 + 0.1
        elif kind == "unit":
            tensor = torch.rand(shape, generator=generator, dtype=F64) + 0.5
        elif kind == "small":
            choices = torch.tensor([-2.0, -1.0, 1.0, 2.0], dtype=F64)
            tensor = choices[torch.randint(0, 4, shape, generator=generator)]
        elif kind == "wide":
            tensor = torch.rand(shape, generator=generator, dtype=F64) * 40 - 20
        else:
            tensor = torch.randn(shape, generator=generator, dtype=F64)
            tensor = torch.where(tensor.abs() < 0.05, torch.full_like(tensor, 0.5), tensor)
        tensor = tensor.to(dtype)
    else:
        low = 1 if kind == "positive" else -9
        high = 3 if kind == "small" else 10
        tensor = torch.randint(low, high, shape, generator=generator)
        tensor = torch.where(tensor == 0, torch.ones_like(tensor), tensor).to(dtype)
    if layout == "transposed" and tensor.dim() >= 2:
        tensor = tensor.transpose(-1, -2).contiguous().transpose(-1, -2)
        assert not tensor.is_contiguous() or 1 in tensor.shape[-2:]
    elif layout == "channels_last":
        tensor = tensor.contiguous(memory_format=torch.channels_last)
        assert not tensor.is_contiguous()
    return tensor


def index(shape, high: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed + 101)
    return torch.randint(0, high, shape, generator=generator)


# ---------------------------------------------------------------------------------------
# Families: each returns (ops, inputs); an op takes all the inputs.
# ---------------------------------------------------------------------------------------

def unary(dtype):
    if dtype == BOOL:
        return {"logical_not": lambda x, p: torch.logical_not(x),
                "bitwise_not": lambda x, p: ~x,
                "logical_not_p": lambda x, p: ~p}, \
            (make((3, 4, 7), dtype, layout="transposed"), make((5, 1, 3), dtype))
    if not dtype.is_floating_point:
        ops = {"abs": lambda x, p: x.abs(), "neg": lambda x, p: -x,
               "relu": lambda x, p: torch.relu(x), "clamp": lambda x, p: x.clamp(-3, 4),
               "clamp_min": lambda x, p: x.clamp_min(2), "square": lambda x, p: x * x,
               "pow2": lambda x, p: x ** 2, "bitwise_not": lambda x, p: ~x,
               "hardtanh": lambda x, p: F.hardtanh(x, -2, 3)}
        return ops, (make((3, 4, 7), dtype, layout="transposed"),
                     make((5, 1, 3), dtype, "positive"))
    ops = {
        "exp": lambda x, p: torch.exp(x), "log": lambda x, p: torch.log(p),
        "log1p": lambda x, p: torch.log1p(p), "sqrt": lambda x, p: torch.sqrt(p),
        "rsqrt": lambda x, p: torch.rsqrt(p), "reciprocal": lambda x, p: torch.reciprocal(x),
        "sin": lambda x, p: torch.sin(x), "cos": lambda x, p: torch.cos(x),
        "tanh": lambda x, p: torch.tanh(x), "sigmoid": lambda x, p: torch.sigmoid(x),
        "relu": lambda x, p: torch.relu(x), "gelu": lambda x, p: F.gelu(x),
        "gelu_tanh": lambda x, p: F.gelu(x, approximate="tanh"),
        "silu": lambda x, p: F.silu(x), "erf": lambda x, p: torch.erf(x),
        "abs": lambda x, p: x.abs(), "neg": lambda x, p: -x,
        "floor": lambda x, p: torch.floor(x * 3), "ceil": lambda x, p: torch.ceil(x * 3),
        "clamp": lambda x, p: x.clamp(-0.5, 0.7), "clamp_min": lambda x, p: x.clamp_min(0.1),
        "hardtanh": lambda x, p: F.hardtanh(x), "relu6": lambda x, p: F.relu6(x * 4),
        "softplus": lambda x, p: F.softplus(x), "hardswish": lambda x, p: F.hardswish(x * 3),
        "hardsigmoid": lambda x, p: F.hardsigmoid(x * 3), "mish": lambda x, p: F.mish(x),
        "logsigmoid": lambda x, p: F.logsigmoid(x), "softsign": lambda x, p: F.softsign(x),
        "threshold": lambda x, p: F.threshold(x, 0.1, 2.0), "square": lambda x, p: x * x,
        "pow2": lambda x, p: x ** 2, "pow3": lambda x, p: x ** 3.0,
        "pow_half": lambda x, p: p ** 0.5, "pow_neg": lambda x, p: p ** -1.5,
    }
    return ops, (make((3, 4, 7), dtype, layout="transposed"), make((5, 1, 3), dtype, "positive"))


#: The binary family's dtype pairs: same dtypes, and the promotions PyTorch applies.
BINARY_PAIRS = [(F32, F32), (F64, F64), (BF16, BF16), (F16, F16), (I64, I64), (I32, I32),
                (F32, F64), (I64, F32), (I32, I64), (BF16, F32), (F16, BF16), (I32, BF16)]


def binary(dtypes):
    a_dtype, b_dtype = dtypes
    floats = a_dtype.is_floating_point or b_dtype.is_floating_point
    ops = {
        "add": lambda a, b, t, s: a + b, "sub": lambda a, b, t, s: a - b,
        "mul": lambda a, b, t, s: a * b, "div": lambda a, b, t, s: a / b,
        "add_alpha": lambda a, b, t, s: torch.add(a, b, alpha=2),
        "rsub": lambda a, b, t, s: torch.rsub(a, b),
        "maximum": lambda a, b, t, s: torch.maximum(a, b),
        "minimum": lambda a, b, t, s: torch.minimum(a, b),
        "add_3d": lambda a, b, t, s: t + a, "mul_0d": lambda a, b, t, s: t * s,
        "add_float": lambda a, b, t, s: a + 2.5, "mul_int": lambda a, b, t, s: b * 3,
        "rsub_int": lambda a, b, t, s: 2 - b, "div_int": lambda a, b, t, s: a / 2,
        "floor_div": lambda a, b, t, s: torch.div(a, b, rounding_mode="floor"),
        "trunc_div": lambda a, b, t, s: torch.div(a, b, rounding_mode="trunc"),
        "remainder": lambda a, b, t, s: torch.remainder(a, b),
        "remainder_scalar": lambda a, b, t, s: torch.remainder(t, 3),
        "square": lambda a, b, t, s: a ** 2,
    }
    if floats:
        ops["pow"] = lambda a, b, t, s: (a.abs() + 0.5) ** b
        ops["pow_scalar_base"] = lambda a, b, t, s: 2.0 ** b
    return ops, (make((3, 1, 5), a_dtype), make((4, 5), b_dtype, "positive", seed=1) *
                 (1 - 2 * (make((4, 5), I64, seed=2) > 0).to(b_dtype)),
                 make((3, 4, 5), a_dtype, layout="transposed", seed=3),
                 make((), b_dtype, "positive", seed=4))


def compare(dtype):
    kind = "small"
    x = make((3, 4, 5), dtype, kind, layout="transposed")
    y = make((4, 5), dtype, kind, seed=1)
    if dtype == BOOL:
        ops = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y,
               "logical_and": lambda x, y: torch.logical_and(x, y),
               "logical_or": lambda x, y: torch.logical_or(x, y),
               "logical_xor": lambda x, y: torch.logical_xor(x, y),
               "bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
               "bitwise_xor": lambda x, y: x ^ y, "where": lambda x, y: torch.where(x, 1.5, -2.0),
               "any": lambda x, y: x.any(-1), "all": lambda x, y: (x | y).all(1),
               "lt": lambda x, y: x < y}
        return ops, (x, y)
    ops = {
        "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
        "gt_scalar": lambda x, y: x > 0.5, "eq_scalar": lambda x, y: x == 1,
        "where": lambda x, y: torch.where(x > y, x, y),
        "where_scalar": lambda x, y: torch.where(x > 0, x, 0.0),
        "masked_fill": lambda x, y: x.masked_fill(x < y, -1),
        "logical_and": lambda x, y: torch.logical_and(x > 0, y < 1),
        "logical_or": lambda x, y: torch.logical_or(x > 0, y < 1),
        "logical_xor": lambda x, y: torch.logical_xor(x > 0, y < 1),
        "logical_not": lambda x, y: torch.logical_not(x > y),
        "bool_and": lambda x, y: (x > 0) & (y > 0), "any": lambda x, y: (x > 1).any(-1),
        "all": lambda x, y: (x > -2).all(), "clamp_tensor": lambda x, y: torch.clamp(x, min=y),
    }
    if not dtype.is_floating_point:
        ops.update({"bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
                    "bitwise_xor": lambda x, y: x ^ y})
    return ops, (x, y)


def reduce(dtype):
    x = make((3, 1, 7), dtype)
    z = make((2, 5, 3), dtype, layout="transposed", seed=1)
    u = make((3, 5), dtype, "unit" if dtype.is_floating_point else "small", seed=2)
    ops = {
        "sum": lambda x, z, u: x.sum(), "sum_dim": lambda x, z, u: z.sum(-1),
        "sum_keepdim": lambda x, z, u: z.sum((0, 2), keepdim=True),
        "sum_size1": lambda x, z, u: x.sum(1), "amax": lambda x, z, u: z.amax(-1),
        "amin": lambda x, z, u: z.amin((0, 2)), "amax_keepdim": lambda x, z, u: x.amax(2, True),
        "max_dim": lambda x, z, u: z.max(1), "min_dim": lambda x, z, u: z.min(2, keepdim=True),
        "max": lambda x, z, u: z.max(), "argmax": lambda x, z, u: z.argmax(-1),
        "argmax_keepdim": lambda x, z, u: z.argmax(1, keepdim=True),
        "argmax_all": lambda x, z, u: x.argmax(), "argmin": lambda x, z, u: z.argmin(0),
        "prod": lambda x, z, u: u.prod(-1), "prod_all": lambda x, z, u: u.prod(),
        "cumsum": lambda x, z, u: z.cumsum(1), "cumsum_0": lambda x, z, u: x.cumsum(0),
    }
    if dtype.is_floating_point:
        ops.update({"mean": lambda x, z, u: z.mean(), "mean_dim": lambda x, z, u: z.mean((1, 2)),
                    "mean_keepdim": lambda x, z, u: x.mean(-1, keepdim=True),
                    "logsumexp": lambda x, z, u: z.logsumexp(-1),
                    "sum_f64": lambda x, z, u: z.sum(-1, dtype=F64)})
    return ops, (x, z, u)


def matmul(dtype):
    a, b = make((3, 5), dtype), make((5, 7), dtype, layout="transposed", seed=1)
    ops = {
        "mm": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: a @ b,
        "mm_row": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: a1 @ b,
        "bmm": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: torch.bmm(b3, c3),
        "matmul_broadcast": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: x4 @ y3,
        "linear": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: F.linear(x3, w, bias),
        "linear_nobias": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: F.linear(x3, w),
        "mv": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: a @ v,
        "dot": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: v @ v,
        "addmm": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7: torch.addmm(b7, a, b),
        "baddbmm": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7:
            torch.baddbmm(b3 @ c3, b3, c3, alpha=0.5),
        "einsum": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7:
            torch.einsum("bij,bjk->bik", b3, c3),
        # aten._trilinear: out[n, o] = sum_ij x[n, i] W[o, i, j] y[n, j] + bias[o].
        "bilinear": lambda a, b, a1, x3, w, bias, b3, c3, x4, y3, v, b7:
            F.bilinear(a.t(), w[:5], b3, bias[:2]),
    }
    return ops, (a, b, make((1, 5), dtype, seed=2), make((2, 3, 5), dtype, seed=3),
                 make((6, 5), dtype, layout="transposed", seed=4), make((6,), dtype, seed=5),
                 make((2, 3, 5), dtype, seed=6), make((2, 5, 4), dtype, seed=7),
                 make((2, 1, 3, 5), dtype, seed=8), make((4, 5, 6), dtype, seed=9),
                 make((5,), dtype, seed=10), make((7,), dtype, seed=11))


def conv(dtype):
    ops = {
        "conv1d": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv1d(
            x1, w1, b6, stride=2, padding=1, dilation=2, groups=2),
        "conv2d": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv2d(
            x2, w2, b6, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
        "conv2d_groups_same": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv2d(
            x2, w3, padding="same", groups=2),
        "conv2d_depthwise": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv2d(
            x2, w4, stride=2, padding=1, groups=4),
        "conv2d_1x1": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv2d(x2, w5),
        "conv2d_rect": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv2d(
            x2, w2[:, :, :2, :], b6),
        # Grouped, strided, dilated and padded at once, with a bias; PyTorch's floor
        # leaves the last input column unread (the high padding oneDNN is given is 0).
        "conv2d_groups_strided_dilated": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv2d(
            x2, w3, b6[:4], stride=(2, 3), padding=(2, 1), dilation=(2, 1), groups=2),
        "conv3d": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv3d(
            x2.reshape(2, 4, 3, 3, 8), w2.reshape(6, 2, 2, 3, 3), b6, stride=(1, 2, 1),
            padding=(1, 1, 0), dilation=(1, 1, 2), groups=2),
        # Transposed convolutions (the weight is [in, out / groups, k...]).
        "conv_transpose2d": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv_transpose2d(
            x2, w3, b6[:4], stride=2, padding=1, output_padding=1),
        "conv_transpose2d_groups_dilated": lambda x1, x2, w1, w2, w3, w4, w5, b6:
            F.conv_transpose2d(x2, w2[:4], None, stride=(1, 3), padding=(2, 0),
                               output_padding=(0, 2), groups=2, dilation=(2, 1)),
        "conv_transpose2d_1x1": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv_transpose2d(
            x2, w5.reshape(4, 8, 1, 1), stride=2),
        "conv_transpose1d": lambda x1, x2, w1, w2, w3, w4, w5, b6: F.conv_transpose1d(
            x1, w2.reshape(4, 6, 3)[:, :3], b6[:3], stride=3, padding=2, output_padding=1),
    }
    return ops, (make((2, 4, 11), dtype, layout="transposed"),
                 make((2, 4, 9, 8), dtype, layout="channels_last", seed=1),
                 make((6, 2, 3), dtype, seed=2), make((6, 4, 3, 3), dtype, seed=3),
                 make((4, 2, 3, 3), dtype, seed=4), make((4, 1, 3, 3), dtype, seed=5),
                 make((8, 4, 1, 1), dtype, seed=6), make((6,), dtype, seed=7))


def pool(dtype):
    ops = {
        "max_pool2d_ceil": lambda x, x1: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
        "max_pool2d": lambda x, x1: F.max_pool2d(x, 2),
        "max_pool2d_dilated": lambda x, x1: F.max_pool2d(x, (3, 2), (2, 1), dilation=2),
        "avg_pool2d_ceil": lambda x, x1: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                      count_include_pad=False),
        "avg_pool2d_ceil_pad": lambda x, x1: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
        "avg_pool2d_divisor": lambda x, x1: F.avg_pool2d(x, 2, divisor_override=3),
        "max_pool1d": lambda x, x1: F.max_pool1d(x1, 3, 2, ceil_mode=True),
        "avg_pool1d": lambda x, x1: F.avg_pool1d(x1, 4, 3, padding=2, ceil_mode=True),
        "adaptive_avg_pool2d_1": lambda x, x1: F.adaptive_avg_pool2d(x, 1),
        "adaptive_avg_pool2d_2x3": lambda x, x1: F.adaptive_avg_pool2d(x, (2, 3)),
        "adaptive_avg_pool1d": lambda x, x1: F.adaptive_avg_pool1d(x1, 4),
        "adaptive_max_pool2d_1": lambda x, x1: F.adaptive_max_pool2d(x, 1),
        "adaptive_max_pool2d_2x3": lambda x, x1: F.adaptive_max_pool2d(x, (2, 3)),
        "adaptive_max_pool2d_4x5": lambda x, x1: F.adaptive_max_pool2d(x, (4, 5)),
        "adaptive_max_pool1d": lambda x, x1: F.adaptive_max_pool1d(x1, 4),
    }
    return ops, (make((2, 3, 9, 8), dtype, layout="channels_last"),
                 make((2, 3, 11), dtype, layout="transposed", seed=1))


def conv_shapes(dtype):
    """The NCHW-native fp32 kernels' edges (thunder_cpu_conv.h's direct_conv and
    pool2d_rows): depthwise 3x3 and 7x7 with strides, padding, dilation and odd
    sizes, with and without bias; pointwise 1x1 in 1-3 spatial dims and at batch 3;
    what stays with oneDNN beside them (channel multiplier 2, strided 1x1); pooling
    with strides, padding, dilation and ceil mode on odd sizes."""
    ops = {
        "dw3": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w3, b, padding=1, groups=6),
        "dw3_s2": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w3, stride=2, padding=1,
                                                            groups=6),
        "dw3_s2_valid": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w3, b, stride=(2, 1),
                                                                  groups=6),
        "dw3_dilated": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(
            x, w3, b, padding=(2, 3), dilation=(2, 3), groups=6),
        "dw7": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w7, b, padding=3, groups=6),
        "dw7_s2_pad1": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w7, stride=2, padding=1,
                                                                 groups=6),
        "dw_multiplier": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, wm, padding=1,
                                                                   groups=6),
        "pw": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w1[:, :, None, None], b[:5]),
        "pw_batch3": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x3, w1[:, :, None, None]),
        "pw_1d": lambda x, x3, w3, w7, w1, b, wm: F.conv1d(x.flatten(2), w1[:, :, None], b[:5]),
        "pw_3d": lambda x, x3, w3, w7, w1, b, wm: F.conv3d(x[:, :, None], w1[..., None, None,
                                                                             None]),
        "pw_strided": lambda x, x3, w3, w7, w1, b, wm: F.conv2d(x, w1[:, :, None, None], b[:5],
                                                                stride=2),
        "max3_s2_p1": lambda x, x3, w3, w7, w1, b, wm: F.max_pool2d(x, 3, 2, 1),
        "max3_ceil": lambda x, x3, w3, w7, w1, b, wm: F.max_pool2d(x3, 3, 2, 1,
                                                                   ceil_mode=True),
        "max2_dilated": lambda x, x3, w3, w7, w1, b, wm: F.max_pool2d(x, 2, 1, dilation=3),
        "avg3_s1_p1": lambda x, x3, w3, w7, w1, b, wm: F.avg_pool2d(x, 3, 1, 1),
        "avg3_s1_p1_nopad": lambda x, x3, w3, w7, w1, b, wm: F.avg_pool2d(
            x, 3, 1, 1, count_include_pad=False),
        "avg3_ceil": lambda x, x3, w3, w7, w1, b, wm: F.avg_pool2d(x3, (3, 2), 2, (1, 0),
                                                                   ceil_mode=True),
        "avg7": lambda x, x3, w3, w7, w1, b, wm: F.avg_pool2d(x, 7),
    }
    return ops, (make((2, 6, 17, 13), dtype, layout="channels_last"),
                 make((3, 6, 9, 11), dtype, seed=1), make((6, 1, 3, 3), dtype, seed=2),
                 make((6, 1, 7, 7), dtype, seed=3), make((5, 6), dtype, seed=4),
                 make((6,), dtype, seed=5), make((12, 1, 3, 3), dtype, seed=6))


def norm(dtype):
    ops = {
        "softmax": lambda x, x4, w, b, w5, m, v, g: x.softmax(-1),
        "softmax_1": lambda x, x4, w, b, w5, m, v, g: x.softmax(1),
        "log_softmax": lambda x, x4, w, b, w5, m, v, g: x.log_softmax(-1),
        "log_softmax_0": lambda x, x4, w, b, w5, m, v, g: x.log_softmax(0),
        "layer_norm": lambda x, x4, w, b, w5, m, v, g: F.layer_norm(x, (8,), w, b),
        "layer_norm_2d": lambda x, x4, w, b, w5, m, v, g: F.layer_norm(x, (5, 8)),
        "rms_norm": lambda x, x4, w, b, w5, m, v, g: F.rms_norm(x, (8,), w, eps=1e-6),
        "rms_norm_noweight": lambda x, x4, w, b, w5, m, v, g: F.rms_norm(x, (5, 8)),
        "batch_norm": lambda x, x4, w, b, w5, m, v, g: F.batch_norm(
            x4, m[:3], v[:3], g[:3], w5[:3], training=False, eps=1e-5),
        "batch_norm_noaffine": lambda x, x4, w, b, w5, m, v, g: F.batch_norm(
            x4, m[:3], v[:3], training=False),
        "batch_norm_1d": lambda x, x4, w, b, w5, m, v, g: F.batch_norm(
            x, m, v, g, w5, training=False, eps=1e-3),
    }
    return ops, (make((3, 5, 8), dtype, layout="transposed"),
                 make((2, 3, 5, 4), dtype, layout="channels_last", seed=1),
                 make((8,), dtype, seed=2), make((8,), dtype, seed=3),
                 make((5,), dtype, seed=4), make((5,), dtype, seed=5),
                 make((5,), dtype, "positive", seed=6), make((5,), dtype, "positive", seed=7))


def attention(dtype):
    ops = {
        "sdpa": lambda q, k, v, q7, mask, bias: F.scaled_dot_product_attention(q, k, v),
        "sdpa_causal": lambda q, k, v, q7, mask, bias: F.scaled_dot_product_attention(
            q7, k, v, is_causal=True),
        "sdpa_causal_rect": lambda q, k, v, q7, mask, bias: F.scaled_dot_product_attention(
            q, k, v, is_causal=True),
        "sdpa_bool_mask": lambda q, k, v, q7, mask, bias: F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask),
        "sdpa_float_mask": lambda q, k, v, q7, mask, bias: F.scaled_dot_product_attention(
            q, k, v, attn_mask=bias),
        "sdpa_scale": lambda q, k, v, q7, mask, bias: F.scaled_dot_product_attention(
            q, k, v, scale=0.3),
    }
    mask = make((5, 7), BOOL, seed=4)
    mask[:, 0] = True  # no row fully masked (eager gives NaN there)
    return ops, (make((2, 3, 5, 8), dtype),
                 make((2, 7, 3, 8), dtype, seed=1).transpose(1, 2),  # heads-last layout
                 make((2, 3, 7, 8), dtype, layout="transposed", seed=2),
                 make((2, 3, 7, 8), dtype, seed=3), mask,
                 make((2, 1, 5, 7), dtype, seed=5))


def attention_shapes(dtype):
    """The flash kernel's edges (fp32 goes through thunder_cpu_attention.h): head dims
    1, 7, 64, 80, 128 (whole, partial and several SIMD vectors), sequence lengths 1, 17
    and 255 (partial query and key tiles, more than one of each), 56 and 58 queries (the
    register blocks' other row remainders), L < S and L > S under
    the causal mask, masks of each kind, a value head dim unlike the query's, and GQA as
    models write it (key/value heads repeated)."""
    sdpa = F.scaled_dot_product_attention
    ops = {
        "e1": lambda *t: sdpa(t[0], t[1], t[2]),
        "e1_causal": lambda *t: sdpa(t[0], t[1], t[2], is_causal=True),
        "e7": lambda *t: sdpa(t[3], t[4], t[5]),
        "e7_causal": lambda *t: sdpa(t[3], t[4], t[5], is_causal=True),
        "e64_causal": lambda *t: sdpa(t[6], t[7], t[8], is_causal=True),
        "e64_bool_mask": lambda *t: sdpa(t[6], t[7], t[8], attn_mask=t[15]),
        "e64_float_mask": lambda *t: sdpa(t[6], t[7], t[8], attn_mask=t[16]),
        "e64_value_dim_7": lambda *t: sdpa(t[6], t[7], t[8][..., :7].contiguous()),
        "e64_gqa_repeated": lambda *t: sdpa(
            t[6], t[7][:, :1].repeat_interleave(2, 1), t[8][:, 1:].repeat_interleave(2, 1),
            is_causal=True),
        "e80_one_query": lambda *t: sdpa(t[9], t[10], t[11]),
        "e80_one_query_mask": lambda *t: sdpa(t[9], t[10], t[11], attn_mask=t[17]),
        "e128": lambda *t: sdpa(t[12], t[13], t[14]),
        "e128_scale_causal": lambda *t: sdpa(t[12], t[13], t[14], is_causal=True, scale=0.05),
        # 58 and 56 queries: a 48-row tile (AVX2), then 10 and 8 rows, whose 6-row
        # register blocks leave 4 and 2 (1, 3 and 5 come from 1, 255 and 17).
        "e64_58_queries": lambda *t: sdpa(t[18], t[19], t[20]),
        "e64_58_queries_causal": lambda *t: sdpa(t[18], t[19], t[20], is_causal=True),
        "e64_56_queries": lambda *t: sdpa(t[21], t[22], t[23]),
    }
    mask = make((255, 255), BOOL, seed=20)
    mask[:, 0] = True  # no row fully masked (eager gives NaN there)
    qkv = lambda b, h, l, s, e, seed: (make((b, h, l, e), dtype, seed=seed),  # noqa: E731
                                        make((b, h, s, e), dtype, seed=seed + 1),
                                        make((b, h, s, e), dtype, seed=seed + 2))
    return ops, (*qkv(1, 2, 17, 255, 1, 0), *qkv(2, 3, 255, 17, 7, 3),
                 *qkv(1, 2, 255, 255, 64, 6), *qkv(2, 2, 1, 17, 80, 9),
                 *qkv(1, 2, 17, 17, 128, 12), mask, make((1, 2, 255, 255), dtype, seed=21),
                 make((2, 1, 1, 17), dtype, seed=22), *qkv(1, 2, 58, 40, 64, 23),
                 *qkv(1, 1, 56, 40, 64, 26))


def move(dtype):
    ops = {
        "permute": lambda x, y, g, s, ids, t: x.permute(2, 0, 1),
        "transpose_reshape": lambda x, y, g, s, ids, t: x.transpose(1, 2).reshape(3, -1),
        "slice_step": lambda x, y, g, s, ids, t: x[:, 1::2],
        "slice_step3": lambda x, y, g, s, ids, t: x[..., ::3],
        "slice_2d": lambda x, y, g, s, ids, t: x[:, 1:3, 2:],
        "select": lambda x, y, g, s, ids, t: x[:, 0],
        "select_last": lambda x, y, g, s, ids, t: x[:, -1],
        "cat": lambda x, y, g, s, ids, t: torch.cat([x, y], 1),
        "stack": lambda x, y, g, s, ids, t: torch.stack([x, x], 0),
        "pad": lambda x, y, g, s, ids, t: F.pad(x, (1, 2)),
        "pad_2d": lambda x, y, g, s, ids, t: F.pad(x, (1, 1, 2, 0)),
        "pad_reflect": lambda x, y, g, s, ids, t: F.pad(x, (2, 1), mode="reflect"),
        "pad_replicate": lambda x, y, g, s, ids, t: F.pad(x, (1, 2), mode="replicate"),
        "gather": lambda x, y, g, s, ids, t: torch.gather(x, 2, g),
        "index_select": lambda x, y, g, s, ids, t: torch.index_select(x, 1, s),
        "index": lambda x, y, g, s, ids, t: x[s % 3],
        "index_neg": lambda x, y, g, s, ids, t: x[:, s - 2],
        "embedding": lambda x, y, g, s, ids, t: F.embedding(ids, t),
        "expand": lambda x, y, g, s, ids, t: x[:, :1].expand(3, 4, 5),
        "split": lambda x, y, g, s, ids, t: torch.split(x, [1, 3], dim=1),
        "chunk": lambda x, y, g, s, ids, t: x.chunk(2, -1),
        "unbind": lambda x, y, g, s, ids, t: x.unbind(0)[1],
        "unsqueeze_squeeze": lambda x, y, g, s, ids, t: x.unsqueeze(1).squeeze(0),
        "flatten": lambda x, y, g, s, ids, t: x.flatten(1),
        "view": lambda x, y, g, s, ids, t: x.contiguous().view(5, 12),
        "t": lambda x, y, g, s, ids, t: t.t(),
        "narrow": lambda x, y, g, s, ids, t: x.narrow(2, 1, 3),
        "tril": lambda x, y, g, s, ids, t: x.tril(),
        "unfold": lambda x, y, g, s, ids, t: x.unfold(2, 2, 1),
        "unfold_step": lambda x, y, g, s, ids, t: x.unfold(-1, 3, 2),
        "unfold_whole": lambda x, y, g, s, ids, t: x.unfold(1, 4, 4),
    }
    return ops, (make((3, 4, 5), dtype, layout="transposed"), make((3, 2, 5), dtype, seed=1),
                 index((3, 4, 2), 5), index((3,), 4, seed=1), index((2, 7), 10, seed=2),
                 make((10, 6), dtype, seed=3))


def math(dtype):
    """Trigonometric and hyperbolic functions and inverses, expm1, log2/log10, rounding,
    sign, isnan/isinf, atan2, fmod, elu/leaky_relu; bitwise ops on integers."""
    if not dtype.is_floating_point:
        ops = {
            "sign": lambda x, p, u: torch.sign(x), "trunc": lambda x, p, u: torch.trunc(x),
            "round": lambda x, p, u: torch.round(x), "fmod": lambda x, p, u: torch.fmod(x, p),
            "fmod_scalar": lambda x, p, u: torch.fmod(x, 4),
            "isnan": lambda x, p, u: torch.isnan(x), "isinf": lambda x, p, u: torch.isinf(x),
            "and": lambda x, p, u: x & p, "or": lambda x, p, u: x | p,
            "xor": lambda x, p, u: x ^ p, "not": lambda x, p, u: ~x,
            "and_scalar": lambda x, p, u: x & 6, "or_scalar": lambda x, p, u: x | 3,
            "xor_scalar": lambda x, p, u: x ^ 5, "bool_xor": lambda x, p, u: (x > 0) ^ (p > 4),
            "sinh_int": lambda x, p, u: torch.sinh(x), "atan_int": lambda x, p, u: torch.atan(x),
            "atan2_int": lambda x, p, u: torch.atan2(x, p),
        }
        return ops, (make((3, 4, 7), dtype, layout="transposed"),
                     make((4, 7), dtype, "positive", seed=1), make((0, 7), dtype))
    ops = {
        "tan": lambda x, p, u: torch.tan(x * 0.4), "asin": lambda x, p, u: torch.asin(u - 1),
        "acos": lambda x, p, u: torch.acos(u - 1), "atan": lambda x, p, u: torch.atan(x * 3),
        "sinh": lambda x, p, u: torch.sinh(x), "cosh": lambda x, p, u: torch.cosh(x),
        "asinh": lambda x, p, u: torch.asinh(x * 5), "acosh": lambda x, p, u: torch.acosh(p + 1),
        "atanh": lambda x, p, u: torch.atanh(u - 1), "expm1": lambda x, p, u: torch.expm1(x),
        "log2": lambda x, p, u: torch.log2(p), "log10": lambda x, p, u: torch.log10(p),
        "trunc": lambda x, p, u: torch.trunc(x * 3), "round": lambda x, p, u: torch.round(x * 3),
        "round_half": lambda x, p, u: torch.round(torch.floor(x * 4) + 0.5),
        "sign": lambda x, p, u: torch.sign(x), "isnan": lambda x, p, u: torch.isnan(torch.log(x)),
        "isinf": lambda x, p, u: torch.isinf(torch.exp(x * 200)),
        "atan2": lambda x, p, u: torch.atan2(x, u - 1), "fmod": lambda x, p, u: torch.fmod(x * 4, p),
        "fmod_scalar": lambda x, p, u: torch.fmod(x * 4, 1.5),
        "elu": lambda x, p, u: F.elu(x), "elu_alpha": lambda x, p, u: F.elu(x, 0.5),
        "selu": lambda x, p, u: F.selu(x), "celu": lambda x, p, u: F.celu(x, 2.0),
        "leaky_relu": lambda x, p, u: F.leaky_relu(x, 0.2),
        "empty_tan": lambda x, p, u: torch.sinh(x[:, :0]),
    }
    return ops, (make((3, 4, 7), dtype, layout="transposed"), make((4, 7), dtype, "positive"),
                 make((4, 1), dtype, "unit", seed=2))


def index_ops(dtype):
    """Sorting, scattering and the constant index maps (flip, repeat, index padding,
    diagonal, as_strided, slice/select/masked scatter), with empty dims."""
    ops = {
        "sort": lambda x, g, s, y, m, e: torch.sort(x, stable=True, dim=-1),
        "sort_desc": lambda x, g, s, y, m, e: torch.sort(x, stable=True, dim=1, descending=True),
        "argsort": lambda x, g, s, y, m, e: torch.argsort(x, stable=True, dim=0),
        "topk": lambda x, g, s, y, m, e: torch.topk(x, 2, -1)[0],
        "topk_smallest": lambda x, g, s, y, m, e: torch.topk(x, 3, 1, largest=False)[0],
        "kthvalue": lambda x, g, s, y, m, e: torch.kthvalue(x, 2, 1)[0],
        "flip": lambda x, g, s, y, m, e: torch.flip(x, (0, 2)),
        "repeat": lambda x, g, s, y, m, e: x[:, :2].repeat(2, 1, 3),
        "repeat_new_dims": lambda x, g, s, y, m, e: x[0].repeat(2, 1, 2),
        "diagonal": lambda x, g, s, y, m, e: torch.diagonal(x, 0, 1, 2),
        "diagonal_offset": lambda x, g, s, y, m, e: torch.diagonal(x, 1, 2, 1),
        "diagonal_neg": lambda x, g, s, y, m, e: torch.diagonal(x, -2, 0, 1),
        "as_strided": lambda x, g, s, y, m, e: x.contiguous().as_strided((2, 3), (4, 2), 1),
        "scatter": lambda x, g, s, y, m, e: torch.scatter(x, 2, g, y),
        "scatter_value": lambda x, g, s, y, m, e: torch.scatter(x, 2, g, 2),
        "scatter_add": lambda x, g, s, y, m, e: torch.scatter_add(x, 2, g, y),
        "scatter_amax": lambda x, g, s, y, m, e: torch.scatter_reduce(x, 2, g, y, "amax"),
        "scatter_amin_excl": lambda x, g, s, y, m, e: torch.scatter_reduce(
            x, 2, g, y, "amin", include_self=False),
        "scatter_prod": lambda x, g, s, y, m, e: torch.scatter_reduce(x, 2, g, y, "prod"),
        "scatter_sum_excl": lambda x, g, s, y, m, e: torch.scatter_reduce(
            x, 2, g, y, "sum", include_self=False),
        "index_put": lambda x, g, s, y, m, e: x.index_put((s,), x[0] * 2),
        "index_put_acc": lambda x, g, s, y, m, e: x.index_put((s, s), y[0, 0, :1],
                                                               accumulate=True),
        "index_put_mask": lambda x, g, s, y, m, e: x.index_put((m,), torch.tensor(3).to(x.dtype)),
        "index_put_mid": lambda x, g, s, y, m, e: _set_columns(x, s),
        "slice_scatter": lambda x, g, s, y, m, e: torch.slice_scatter(x, x[:, :2] * 2, 1, 1, 4, 2),
        "select_scatter": lambda x, g, s, y, m, e: torch.select_scatter(x, x[:, 0] * 3, 1, -1),
        "masked_scatter": lambda x, g, s, y, m, e: x.masked_scatter(m, y * 3),
        "empty_sort": lambda x, g, s, y, m, e: torch.sort(e, stable=True, dim=0),
        "empty_flip": lambda x, g, s, y, m, e: torch.flip(e, (0, 1)),
        "empty_scatter": lambda x, g, s, y, m, e: torch.scatter_add(x, 2, g[:, :, :0], y[:, :, :0]),
    }
    if dtype.is_floating_point:
        ops.update({
            "pad_reflect_2d": lambda x, g, s, y, m, e: F.pad(x, (2, 1, 1, 3), mode="reflect"),
            "pad_replicate_2d": lambda x, g, s, y, m, e: F.pad(x, (1, 2, 3, 0), mode="replicate"),
            "pad_reflect_3d": lambda x, g, s, y, m, e: F.pad(x[None], (1, 1, 2, 0, 1, 1),
                                                              mode="reflect"),
            "pad_replicate_3d": lambda x, g, s, y, m, e: F.pad(x[None], (1, 0, 0, 2, 1, 1),
                                                                mode="replicate"),
            "nearest": lambda x, g, s, y, m, e: F.interpolate(x[None], scale_factor=2),
            "nearest_size": lambda x, g, s, y, m, e: F.interpolate(x[None], size=(7, 3)),
            "bilinear": lambda x, g, s, y, m, e: F.interpolate(x[None], size=(7, 9),
                                                               mode="bilinear"),
            "bilinear_corners": lambda x, g, s, y, m, e: F.interpolate(
                x[None], scale_factor=1.5, mode="bilinear", align_corners=True),
            "bilinear_down": lambda x, g, s, y, m, e: F.interpolate(x[None], size=(3, 2),
                                                                    mode="bilinear"),
            "scatter_mean": lambda x, g, s, y, m, e: torch.scatter_reduce(x, 2, g, y, "mean"),
        })
    else:
        ops["topk_idx"] = lambda x, g, s, y, m, e: torch.topk(x * 0 + torch.arange(5), 2)[1]
    kind = "normal" if dtype.is_floating_point else "normal"
    return ops, (make((3, 4, 5), dtype, kind, layout="transposed"), index((3, 4, 3), 5),
                 index((2,), 3, seed=1), make((3, 4, 3), dtype, seed=2),
                 make((3, 4, 5), BOOL, seed=3), make((0, 3), dtype, seed=4))


def _set_columns(x, s):
    """`x[:, s] += 2` on a copy: index_put with a None before the index tensor."""
    y = x.clone()
    y[:, s] += 2
    return y


def stats(dtype):
    """var, group norm, batch norm with batch statistics, distances and vector norms,
    empty/fill/copy."""
    ops = {
        "var": lambda x, a, b, w: x.var(), "var_dim": lambda x, a, b, w: x.var(1),
        "var_biased": lambda x, a, b, w: torch.var(x, (0, 2), correction=0, keepdim=True),
        "var_corr2": lambda x, a, b, w: torch.var(x, -1, correction=2),
        "std": lambda x, a, b, w: x.std(-1),
        "group_norm": lambda x, a, b, w: F.group_norm(x.transpose(0, 1)[None], 2, w[:4], w[4:8]),
        "group_norm_plain": lambda x, a, b, w: F.group_norm(x.transpose(0, 1)[None], 4),
        "batch_norm_train": lambda x, a, b, w: F.batch_norm(x, None, None, w[:4], w[4:8],
                                                            training=True),
        "cdist": lambda x, a, b, w: torch.cdist(a, b),
        "cdist_p1": lambda x, a, b, w: torch.cdist(a, b, p=1),
        "cdist_inf": lambda x, a, b, w: torch.cdist(a, b, p=float("inf")),
        "cdist_p3": lambda x, a, b, w: torch.cdist(a, b, p=3),
        "pdist": lambda x, a, b, w: F.pdist(a[0]),
        "vector_norm": lambda x, a, b, w: torch.linalg.vector_norm(x, dim=-1),
        "vector_norm_3": lambda x, a, b, w: torch.linalg.vector_norm(x, 3, dim=(0, 1)),
        "vector_norm_inf": lambda x, a, b, w: torch.linalg.vector_norm(x, float("inf")),
        "fill": lambda x, a, b, w: torch.empty(3, 4, dtype=x.dtype).fill_(2.5),
        "copy": lambda x, a, b, w: torch.zeros(3, 4, 5, dtype=x.dtype).copy_(x[0, 0]),
        "empty_var": lambda x, a, b, w: x[:, :, :0].var(-1),
    }
    return ops, (make((3, 4, 5), dtype, layout="transposed"), make((2, 5, 3), dtype, seed=1),
                 make((2, 4, 3), dtype, seed=2), make((8,), dtype, seed=3))


#: Every dtype a tensor may be converted to (float8 from floating sources only).
CONVERT_TARGETS = [F32, F64, BF16, F16, I64, I32, torch.int8, BOOL]


def convert(dtype):
    targets = [t for t in CONVERT_TARGETS if t != dtype]
    if dtype.is_floating_point:
        targets += [torch.float8_e4m3fn, torch.float8_e5m2]
    ops = {f"to_{name_of(t)}": (lambda t: lambda x: x.to(t))(t) for t in targets}
    return ops, (make((3, 1, 7), dtype, "wide" if dtype.is_floating_point else "normal"),)


# ---------------------------------------------------------------------------------------
# The harness
# ---------------------------------------------------------------------------------------

class Ops(torch.nn.Module):
    """One output per op, in a dict keyed by the op's name."""

    def __init__(self, ops: dict):
        super().__init__()
        self.ops = ops

    def forward(self, *inputs):
        return {name: op(*inputs) for name, op in self.ops.items()}


def dtype_key(dtype) -> str:
    return ",".join(name_of(d) for d in dtype) if isinstance(dtype, tuple) else name_of(dtype)


def assert_matches(name: str, actual, expected, exact: bool, reference) -> str | None:
    """None when `actual` matches eager's `expected`, else what differs.

    In bfloat16 and float16 eager rounds every intermediate (a batch norm computes its
    scale in half precision) where Thunder may keep float32: an element outside the
    tolerance still passes when Thunder is at least as close as eager to the op computed
    in float64 (`reference()`), so a more accurate result is not a failure and a wrong one
    still is.
    """
    actual_leaves = torch.utils._pytree.tree_leaves(actual)
    expected_leaves = torch.utils._pytree.tree_leaves(expected)
    if len(actual_leaves) != len(expected_leaves):
        return f"{name}: {len(actual_leaves)} outputs, eager has {len(expected_leaves)}"
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves)):
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"{name}: {a.dtype}{list(a.shape)}, eager gives {e.dtype}{list(e.shape)}"
        dtype = e.dtype
        if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            a, e = a.float(), e.float()
        rtol, atol = (0.0, 0.0) if exact else TOLERANCE.get(dtype, (0.0, 0.0))
        close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True) if \
            a.is_floating_point() else a == e
        if close.all():
            continue
        if dtype in (BF16, F16) and not exact:
            exact_value = torch.utils._pytree.tree_leaves(reference())[i].double()
            allowed = (e.double() - exact_value).abs() + atol + rtol * exact_value.abs()
            close |= (a.double() - exact_value).abs() <= allowed
            if close.all():
                continue
        where = (~close).nonzero()[0].tolist()
        return (f"{name} ({dtype}): {int((~close).sum())} of {close.numel()} elements "
                f"differ, e.g. at {where}: thunder {a[tuple(where)].item()!r}, eager "
                f"{e[tuple(where)].item()!r} (rtol {rtol}, atol {atol})")
    return None


def run_family(family: str, build, dtype, cache_dir, only: str | None = None) -> None:
    ops, inputs = build(dtype)
    key = dtype_key(dtype)
    expected, unsupported = {}, []
    for name, op in list(ops.items()):
        if only is not None and name != only:
            ops.pop(name)
            continue
        if only is None and (family, name, key) in XFAIL:
            ops.pop(name)  # compiled alone by test_expected_failures
            continue
        try:
            with torch.no_grad():
                expected[name] = op(*inputs)
        except (RuntimeError, NotImplementedError, TypeError):
            ops.pop(name)  # PyTorch's CPU does not run it for this dtype
            unsupported.append(name)
    if unsupported:
        print(f"\n{family}[{key}]: not run by PyTorch's CPU: {', '.join(unsupported)}")
    assert ops, f"{family}[{key}]: no op left to test"
    model = Ops(ops)
    compiled = thunder.compile(model, inputs, dynamic=False, cache_dir=cache_dir,
                               progress=False, name=f"{family}_{key.replace(',', '_')}")
    actual = compiled(*inputs)
    assert sorted(actual) == sorted(ops)
    exact = family == "convert"

    def reference(name):
        def compute():
            with torch.no_grad():
                return ops[name](*[t.double() if t.is_floating_point() else t
                                   for t in inputs])
        return compute

    problems = [p for name in ops
                if (p := assert_matches(name, actual[name], expected[name], exact,
                                        reference(name)))]
    assert not problems, f"{family}[{key}]: {len(problems)} of {len(ops)} ops differ " \
                         f"from eager:\n" + "\n".join(problems)


FAMILIES = {"unary": unary, "binary": binary, "compare": compare, "reduce": reduce,
            "matmul": matmul, "conv": conv, "pool": pool, "norm": norm,
             "attention": attention, "move": move, "convert": convert, "math": math,
             "index": index_ops, "stats": stats,
             "attention_shapes": attention_shapes, "conv_shapes": conv_shapes}


def ids(dtypes) -> list[str]:
    return [dtype_key(d) for d in dtypes]


@pytest.mark.parametrize("dtype", FLOATS + INTS + [BOOL], ids=ids(FLOATS + INTS + [BOOL]))
def test_unary(dtype, cache_dir):
    run_family("unary", unary, dtype, cache_dir)


@pytest.mark.parametrize("dtypes", BINARY_PAIRS, ids=ids(BINARY_PAIRS))
def test_binary_broadcast_promote(dtypes, cache_dir):
    run_family("binary", binary, dtypes, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [BOOL], ids=ids(FLOATS + INTS + [BOOL]))
def test_compare_where_logical(dtype, cache_dir):
    run_family("compare", compare, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=ids(FLOATS + INTS))
def test_reduce(dtype, cache_dir):
    run_family("reduce", reduce, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_matmul_bmm_linear(dtype, cache_dir):
    run_family("matmul", matmul, dtype, cache_dir)


class _EmptyInnerDim(torch.nn.Module):
    """GEMMs whose inner dimension is 0: an empty sum, so zeros (plus the bias)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(5, 0))
        self.b = torch.nn.Parameter(make((5,), torch.float32, seed=3))

    def forward(self, a, b, x):
        return (a @ b, F.linear(x, self.w, self.b),
                torch.bmm(a.unsqueeze(0).expand(2, 3, 0), b.unsqueeze(0).expand(2, 0, 4)))


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_matmul_with_an_empty_inner_dim(dtype, cache_dir):
    """[m, 0] @ [0, n] is zeros. oneDNN and OpenBLAS refuse lda = 0 and write nothing,
    which returned whatever the arena held (values up to 1e33, run to run)."""
    model = _EmptyInnerDim().to(dtype).eval()
    inputs = (torch.randn(3, 0, dtype=dtype), torch.randn(0, 4, dtype=dtype),
              torch.randn(2, 0, dtype=dtype))
    compiled = thunder.compile(model, inputs, dynamic=False, cache_dir=cache_dir,
                               progress=False, name=f"empty_k_{dtype_key(dtype)}")
    with torch.no_grad():
        expected = model(*inputs)
    for _ in range(2):
        for got, want in zip(compiled(*inputs), expected):
            assert torch.equal(got, want), (got, want)


class _Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _check_like_eager(fn, inputs, cache_dir, name: str) -> None:
    model = _Lambda(fn).eval()
    compiled = thunder.compile(model, inputs, dynamic=False, cache_dir=cache_dir,
                               progress=False, name=name)
    with torch.no_grad():
        expected = model(*inputs)
    got = compiled(*inputs)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        torch.testing.assert_close(g, w, equal_nan=True)


def test_bool_arithmetic_is_logic(cache_dir):
    """bool + bool is `or` and bool * bool is `and` in PyTorch (maximum and minimum too);
    the importer built thunder.add on i1, which its verifier refuses (issue 18)."""
    a, b = make((3, 5), torch.bool, seed=1), make((3, 5), torch.bool, seed=2)
    _check_like_eager(lambda x, y: (x + y, x * y, torch.maximum(x, y), torch.minimum(x, y)),
                      (a, b), cache_dir, "bool_arith")


@pytest.mark.parametrize("dtype", [I64], ids=ids([I64]))  # eager has no int32 avg_pool2d
def test_integer_avg_pool_truncates(dtype, cache_dir):
    """Integer average pooling divides the integer sum and truncates toward zero, as
    PyTorch does (the importer built thunder.avg_pool on i64, which refuses it)."""
    x = torch.randint(-100, 100, (1, 2, 5, 7), generator=torch.Generator().manual_seed(0))
    _check_like_eager(lambda t: (F.avg_pool2d(t, 2), F.avg_pool2d(t, 3, 2, 1)),
                      (x.to(dtype),), cache_dir, f"int_avg_pool_{dtype_key(dtype)}")


def test_an_op_its_thunder_op_refuses_is_unsupported_at_its_line(cache_dir):
    """A conversion that would build an op its verifier refuses is reported as the ATen
    op being unsupported for those operands, at the source line, never as an invalid op."""
    model = _Lambda(lambda x: x.amax(0)).eval()
    with pytest.raises(thunder.ImportError) as raised:
        thunder.compile(model, (make((3, 2), torch.bool),), dynamic=False,
                        cache_dir=cache_dir, progress=False, fallback="error")
    message = str(raised.value)
    assert "unsupported: aten.amax.default on operands of type tensor<3x2xi1>" in message
    assert "test_ops_numerics.py" in message


def test_a_splat_constant_into_a_gemm(cache_dir):
    """A constant weight of one value (torch.ones) was cloned into the GEMM kernel, whose
    library call then had no buffer to read: the generated C++ did not compile."""
    x = make((3, 4), torch.float32)
    _check_like_eager(lambda t: F.linear(t, torch.ones(5, 4)) + F.linear(t, torch.full((5, 4), 0.5)),
                      (x,), cache_dir, "splat_gemm")


@pytest.mark.parametrize("case", ["sum", "prod", "mean", "softmax_rows", "softmax_cols",
                                  "mm_m0", "mm_n0", "bmm_b0", "layer_norm", "cumsum",
                                  "linear_b0"])
def test_empty_dims(case, cache_dir):
    """Zero-size dims (issue 18's audit): an empty sum is 0, an empty product 1, an empty
    mean NaN; zero rows, columns or batches give empty results of the right shape."""
    fns = {
        "sum": (lambda a: a.sum(1), (make((3, 0), torch.float32),)),
        "prod": (lambda a: a.prod(1), (make((3, 0), torch.float32),)),
        "mean": (lambda a: a.mean(1), (make((3, 0), torch.float32),)),
        "softmax_rows": (lambda a: a.softmax(1), (make((0, 5), torch.float32),)),
        "softmax_cols": (lambda a: a.softmax(1), (make((3, 0), torch.float32),)),
        "mm_m0": (lambda a, b: a @ b, (make((0, 4), torch.float32), make((4, 5), torch.float32))),
        "mm_n0": (lambda a, b: a @ b, (make((3, 4), torch.float32), make((4, 0), torch.float32))),
        "bmm_b0": (lambda a, b: a @ b, (make((0, 3, 4), torch.float32),
                                        make((0, 4, 5), torch.float32))),
        "layer_norm": (lambda a: F.layer_norm(a, (5,)), (make((0, 5), torch.float32),)),
        "cumsum": (lambda a: a.cumsum(1), (make((3, 0), torch.float32),)),
        "linear_b0": (lambda a: F.linear(a, torch.ones(5, 4)), (make((0, 4), torch.float32),)),
    }
    fn, inputs = fns[case]
    _check_like_eager(fn, inputs, cache_dir, f"empty_{case}")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_conv(dtype, cache_dir):
    run_family("conv", conv, dtype, cache_dir)


class _ConstantWeightConvs(torch.nn.Module):
    """Convolutions whose weights are model constants (the CPU backend reorders those
    once for oneDNN and keeps the copy, keyed by the weights): two of one shape with
    different weights, grouped, strided, dilated and padded, and 1-D and 3-D ones."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        conv = lambda: torch.nn.Conv2d(4, 6, 3, stride=(2, 1), padding=(2, 1),  # noqa: E731
                                       dilation=(2, 1), groups=2)
        self.a, self.b = conv(), conv()
        self.depthwise = torch.nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4, bias=False)
        self.c1 = torch.nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)
        self.c3 = torch.nn.Conv3d(4, 6, (2, 3, 3), padding=1, groups=2)

    def forward(self, x):
        return (self.a(x), self.b(x), self.depthwise(x), self.c1(x.flatten(2)),
                self.c3(x.reshape(2, 4, 3, 3, 8)))


def _matches_eager(what: str, model, compiled, x) -> str | None:
    """assert_matches of compiled(x) against model(x), a float64 copy of the model as
    the reference where they differ (made only then)."""
    with torch.no_grad():
        return assert_matches(what, compiled(x), model(x), False,
                              lambda: copy.deepcopy(model).double()(x.double()))


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_conv_constant_weights(dtype, cache_dir):
    """Constant weights through two runs with different inputs: the second run reuses
    the first one's cached primitives and reordered weights and must still match eager."""
    model = _ConstantWeightConvs().to(dtype).eval()
    inputs = [make((2, 4, 9, 8), dtype, seed=seed) for seed in (1, 2)]
    compiled = thunder.compile(model, (inputs[0],), dynamic=False, cache_dir=cache_dir,
                               progress=False, name=f"conv_constant_{dtype_key(dtype)}")
    for x in inputs + inputs[:1]:
        problem = _matches_eager("constant-weight convs", model, compiled, x)
        assert problem is None, problem


class _ConvEpilogues(torch.nn.Module):
    """Convolutions with elementwise ops after them, which the CPU backend fuses as
    their epilogue and runs on each piece of the output the convolution finishes: a
    pointwise convolution (Thunder's GEMM: per register tile) with a per-channel shift
    added after it (read by the channel of the [image * channel, position] view) and
    SiLU; a depthwise one (per plane) with ReLU6 and a residual add; a 3x3 one
    (oneDNN: after it, a row per thread) with ReLU."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.pointwise = torch.nn.Conv2d(5, 7, 1, bias=False)
        self.shift = torch.nn.Parameter(torch.randn(7))
        self.depthwise = torch.nn.Conv2d(5, 5, 3, padding=1, groups=5)
        self.full = torch.nn.Conv2d(5, 6, 3, padding=1)

    def forward(self, x):
        a = F.silu(self.pointwise(x) + self.shift.view(1, 7, 1, 1))
        b = x + F.relu6(self.depthwise(x))
        c = torch.relu(self.full(x))
        return a, b, c


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_conv_epilogues(dtype, cache_dir):
    """Fused convolution epilogues against eager, at batch 3 (rows span images)."""
    model = _ConvEpilogues().to(dtype).eval()
    x = make((3, 5, 9, 11), dtype, seed=3)
    compiled = thunder.compile(model, (x,), dynamic=False, cache_dir=cache_dir,
                               progress=False, name=f"conv_epilogues_{dtype_key(dtype)}")
    problem = _matches_eager("conv epilogues", model, compiled, x)
    assert problem is None, problem


class _ChannelsLastChain(torch.nn.Module):
    """3x3 convolutions (oneDNN) that hand each other tensors channels last
    (lib/Target/CPU/ChannelsLast.cpp): one kept so is read both as a convolution's
    input and, elementwise with a scalar, in the epilogue of a convolution whose output
    is kept so too; a dilated and a strided one; the last writes a model output (channels
    first), and one writes channels last for a sum over the positions, which reads it
    so."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c0 = torch.nn.Conv2d(5, 8, 3, padding=1)
        self.c1 = torch.nn.Conv2d(8, 8, 3, padding=2, dilation=2)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.c3 = torch.nn.Conv2d(8, 6, 3, stride=2, padding=1)
        self.c4 = torch.nn.Conv2d(8, 4, 3)

    def forward(self, x):
        x0 = torch.relu(self.c0(x))
        x1 = torch.relu(self.c1(x0))
        x2 = torch.relu(self.c2(x1) * 0.5 + x0)
        return self.c3(x2), torch.sigmoid(self.c4(x2)).sum(dim=(2, 3))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_convolutions_channels_last(dynamic, cache_dir):
    """Convolutions passing tensors channels last, against eager at batch 3 (and, with
    a dynamic batch, at batch 2 too)."""
    _compiled_matching_eager("channels-last convolutions", _ChannelsLastChain().eval(),
                             (5, 10, 9), 5, dynamic, "native", cache_dir, "channels_last")


def _compiled_matching_eager(what: str, model, image: tuple, seed: int, dynamic: bool,
                             cpu: str, cache_dir, name: str):
    """thunder.compile(model) for `cpu` on a random batch of 3 `image`s, checked against
    eager on it (and, dynamic, on a batch of 2); returns the compiled model."""
    x = make((3, *image), F32, seed=seed)
    compiled = thunder.compile(model, (x,), dynamic=dynamic, cpu=cpu, cache_dir=cache_dir,
                               progress=False, name=f"{name}_{dynamic}")
    for inputs in [x] + ([make((2, *image), F32, seed=seed + 1)] if dynamic else []):
        problem = _matches_eager(what, model, compiled, inputs)
        assert problem is None, problem
    return compiled


class _PoolsBetweenConvolutions(torch.nn.Module):
    """Pooling between convolutions that oneDNN runs channels last, which then runs
    channels last too (thunder_cpu_pool.h's pool2d_channels_last): ResNet's stem (3x3
    max pool, stride 2, padding 1), then average pools with and without the padding in
    their divisor, one in ceil mode, and a dilated max pool, each read by a convolution;
    one's output is also added in a convolution's epilogue. The last pool's output is
    returned, so it and the convolution before it stay channels first
    (test/Target/CPU/emit_pool_channels_last.test checks the layouts on the same
    structure)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.a = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.c = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.d = torch.nn.Conv2d(16, 4, 3)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.stem(x)), 3, 2, 1)
        y = torch.relu(self.a(x)) + x
        y = F.avg_pool2d(y, 3, 1, 1, count_include_pad=False)
        z = F.avg_pool2d(torch.relu(self.b(y)), 3, 2, 1, ceil_mode=True)
        w = F.max_pool2d(torch.relu(self.c(z)), 2, 1, dilation=2)
        return F.max_pool2d(self.d(w), 2)


class _PoolThenConvolution(torch.nn.Module):
    """A stem, its 3x3 / 2 max pool kept channels last, then a 2x2 / 2 convolution."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.down = torch.nn.Conv2d(8, 4, 2, stride=2)

    def forward(self, x):
        return self.down(F.max_pool2d(torch.relu(self.stem(x)), 3, 2, 1))


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"], ids=["native", "v3"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_pools_between_convolutions_channels_last(dynamic, cpu, cache_dir):
    """Against eager at batch 3 (and, dynamic, at batch 2), on odd sizes; then a NaN in
    the image, which a channels-last max pool must pass on as PyTorch's does."""
    _compiled_matching_eager("pools between convolutions", _PoolsBetweenConvolutions().eval(),
                             (3, 23, 19), 9, dynamic, cpu, cache_dir, "pools_channels_last")
    # A NaN in the image: the stem spreads it over rows 10-12 and columns 6-8 of
    # every channel, and max pool outputs (5-6, 3-4) see it, all but (6, 4) at a later
    # tap than their first; the 2x2 / 2 convolution after the pool maps each pooled 2x2
    # block to one output, so a pool that kept only a first tap's NaN shows.
    model = _PoolThenConvolution().eval()
    compiled = _compiled_matching_eager("a pool then a convolution", model, (3, 23, 19), 11,
                                        dynamic, cpu, cache_dir, "pool_nan_channels_last")
    x = make((3, 3, 23, 19), F32, seed=13)
    x[1, 2, 11, 7] = float("nan")
    with torch.no_grad():
        expected = model(x)
    got = compiled(x)
    assert expected.isnan().sum() == 4 * 4, expected.isnan().nonzero()
    torch.testing.assert_close(got, expected, equal_nan=True)


class _InvertedResiduals(torch.nn.Module):
    """MobileNet-style blocks (pointwise expand, depthwise 3x3, pointwise project),
    the first adding its input, the second strided: channels last between oneDNN's
    convolutions in kernels compiled for AVX-512, channels first on Thunder's kernels
    otherwise (THUNDER_CONV_LAYOUT, lib/Target/CPU/ChannelsLast.cpp)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.expand1 = torch.nn.Conv2d(16, 48, 1)
        self.dw1 = torch.nn.Conv2d(48, 48, 3, padding=1, groups=48)
        self.project1 = torch.nn.Conv2d(48, 16, 1)
        self.expand2 = torch.nn.Conv2d(16, 48, 1)
        self.dw2 = torch.nn.Conv2d(48, 48, 3, stride=2, padding=1, groups=48)
        self.project2 = torch.nn.Conv2d(48, 24, 1)

    def forward(self, x):
        relu6 = torch.nn.functional.relu6
        x = relu6(self.stem(x))
        y = self.project1(relu6(self.dw1(relu6(self.expand1(x))))) + x
        z = self.project2(relu6(self.dw2(relu6(self.expand2(y)))))
        return z.mean(dim=(2, 3)), z


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"], ids=["native", "v3"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_inverted_residuals_channels_last(dynamic, cpu, cache_dir):
    """Depthwise and pointwise convolutions in either layout (channels last on oneDNN
    where the build has AVX-512; x86-64-v3's kernels keep them channels first on
    Thunder's), against eager at batch 3 (and, dynamic, at batch 2)."""
    _compiled_matching_eager("inverted residual blocks", _InvertedResiduals().eval(),
                             (3, 19, 17), 7, dynamic, cpu, cache_dir, "inverted_residuals")


class _ConvNeXtBlocks(torch.nn.Module):
    """ConvNeXt's structure: a 4x4 / 4 stem, a LayerNorm over channels through
    permute(0, 2, 3, 1), blocks of a depthwise 7x7 convolution, the LayerNorm, an MLP
    on [N, H, W, C] and a per-channel scale, added back to the block's input through
    permute(0, 3, 1, 2); a downsampling LayerNorm and 2x2 / 2 convolution between
    stages. The LayerNorms read the convolutions' outputs kept channels last, and the
    residual adds write the stream channels last (lib/Target/CPU/ChannelsLast.cpp;
    test/Target/CPU/emit_convnext_channels_last.test checks the layouts). One more add
    reads the stream kept channels last through a slice of one channel broadcast over
    the others, with a per-channel scale; the last stage's output is also returned, so
    it stays channels first."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = torch.nn.Conv2d(3, 8, 4, stride=4)
        self.stem_norm = torch.nn.LayerNorm(8, eps=1e-6)
        self.blocks1 = torch.nn.ModuleList([self._block(8), self._block(8)])
        self.down_norm = torch.nn.LayerNorm(8, eps=1e-6)
        self.down = torch.nn.Conv2d(8, 16, 2, stride=2)
        self.blocks2 = torch.nn.ModuleList([self._block(16)])
        self.scale = torch.nn.Parameter(torch.randn(16, 1, 1))

    @staticmethod
    def _block(c):
        return torch.nn.ModuleDict({
            "dw": torch.nn.Conv2d(c, c, 7, padding=3, groups=c),
            "norm": torch.nn.LayerNorm(c, eps=1e-6),
            "up": torch.nn.Linear(c, 4 * c), "down": torch.nn.Linear(4 * c, c)})

    @staticmethod
    def _norm(norm, x):
        return norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    def _run(self, block, x):
        y = block["norm"](block["dw"](x).permute(0, 2, 3, 1))
        y = block["down"](F.gelu(block["up"](y))) * 0.5
        return x + y.permute(0, 3, 1, 2)

    def forward(self, x):
        x = self._norm(self.stem_norm, self.stem(x))
        for block in self.blocks1:
            x = self._run(block, x)
        x = self.down(self._norm(self.down_norm, x))
        for block in self.blocks2:
            x = self._run(block, x)
        x = x * self.scale + x[:, :1]
        return x.mean(dim=(2, 3)), self._run(self.blocks2[0], x)


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"], ids=["native", "v3"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_convnext_blocks_channels_last(dynamic, cpu, cache_dir):
    """ConvNeXt-style blocks, whose LayerNorms and residual adds read and write tensors
    kept channels last, against eager at batch 3 (and, dynamic, at batch 2), on odd
    sizes. Built for the machine (native) and for x86-64-v3: on an AVX-512 machine the
    first runs the loops written for AVX-512 builds, where the depthwise convolutions
    run on oneDNN channels last too (emit_convnext_channels_last.test checks both
    builds' sources on any machine)."""
    _compiled_matching_eager("ConvNeXt-style blocks", _ConvNeXtBlocks().eval(),
                             (3, 36, 28), 17, dynamic, cpu, cache_dir, "convnext_blocks")


class _SelfConvolution(torch.nn.Module):
    """A convolution's output used as both the input and the filter of the next one:
    it stays channels first (the filter is read as O I H W)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.Conv2d(8, 8, 3)

    def forward(self, x):
        y = torch.relu(self.a(x))
        return F.conv2d(y, y, padding=1)


def test_convolution_filter_from_a_convolution(cache_dir):
    model = _SelfConvolution().eval()
    x = make((8, 8, 5, 5), F32, seed=7)
    compiled = thunder.compile(model, (x,), dynamic=False, cache_dir=cache_dir,
                               progress=False, name="self_convolution")
    problem = _matches_eager("a convolution's filter from a convolution", model, compiled, x)
    assert problem is None, problem


def test_filter_copies_follow_the_callers_weights(cache_dir):
    """A library keeps its own copy of a constant filter (oneDNN's reordered 3x3, the
    GEMM's packed 1x1) by the filter's address. With the weights in the caller's memory
    (thunder.compile's libraries read the module's tensors in place), a model freed and
    another loaded over the same memory holding other values must not run on the first
    one's copies."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 8, 1)).eval()
    other = copy.deepcopy(model)
    for p in other.parameters():
        torch.nn.init.normal_(p)
    x = make((1, 16, 10, 12), F32, seed=4)
    compiled = thunder.compile(model, (x,), dynamic=False, cache_dir=cache_dir,
                               progress=False, name="filter_copies")
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        first = thunder.load(compiled.artifacts[0], weights=state)
        torch.testing.assert_close(first(x), model(x), rtol=1e-4, atol=1e-4)
        del first
        # The same memory, other weights.
        for name, tensor in other.state_dict().items():
            state[name].copy_(tensor)
        second = thunder.load(compiled.artifacts[0], weights=state)
        torch.testing.assert_close(second(x), other(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [F32, F64], ids=ids([F32, F64]))
def test_conv_shapes(dtype, cache_dir):
    run_family("conv_shapes", conv_shapes, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_pool(dtype, cache_dir):
    run_family("pool", pool, dtype, cache_dir)


def test_max_pool_propagates_nan(cache_dir):
    """A NaN anywhere in a max pool's window is its output, as in PyTorch: in the first
    row or a later one of the window, its first tap or a later one, at strides 1, 2 and 3
    (a constant stride, or one known at run time) with padding and ceil mode
    (thunder_cpu_pool.h's pool2d_rows combines rows, then taps, with a padded row)."""
    x = torch.randn(1, 3, 13, 17, generator=torch.Generator().manual_seed(3))
    for c, h, w in ((0, 0, 0), (0, 6, 9), (1, 12, 16), (1, 3, 4), (2, 7, 1), (2, 11, 13)):
        x[0, c, h, w] = float("nan")
    _check_like_eager(lambda t: (F.max_pool2d(t, 3, 2, 1), F.max_pool2d(t, 3, 1, 1),
                                 F.max_pool2d(t, (2, 3), 3, ceil_mode=True),
                                 F.avg_pool2d(t, 3, 2, 1)),
                      (x,), cache_dir, "max_pool_nan")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_norm(dtype, cache_dir):
    run_family("norm", norm, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_attention(dtype, cache_dir):
    run_family("attention", attention, dtype, cache_dir)


@pytest.mark.parametrize("dtype", [F32], ids=ids([F32]))
def test_attention_shapes(dtype, cache_dir):
    run_family("attention_shapes", attention_shapes, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [BOOL], ids=ids(FLOATS + INTS + [BOOL]))
def test_data_movement(dtype, cache_dir):
    run_family("move", move, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [BOOL], ids=ids(FLOATS + INTS + [BOOL]))
def test_convert(dtype, cache_dir):
    run_family("convert", convert, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=ids(FLOATS + INTS))
def test_math(dtype, cache_dir):
    run_family("math", math, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=ids(FLOATS + INTS))
def test_sort_scatter_index_maps(dtype, cache_dir):
    run_family("index", index_ops, dtype, cache_dir)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_statistics(dtype, cache_dir):
    run_family("stats", stats, dtype, cache_dir)


def _dtype_from_key(key: str):
    dtypes = tuple(getattr(torch, name) for name in key.split(","))
    return dtypes if len(dtypes) > 1 else dtypes[0]


@pytest.mark.parametrize("family, op, key", [
    pytest.param(family, op, key, marks=pytest.mark.xfail(strict=True, reason=reason))
    for (family, op, key), reason in sorted(XFAIL.items())])
def test_expected_failures(family, op, key, cache_dir):
    run_family(family, FAMILIES[family], _dtype_from_key(key), cache_dir, only=op)


def test_xfail_table_names_real_ops():
    for family, op, key in XFAIL:
        ops, _ = FAMILIES[family](_dtype_from_key(key))
        assert op in ops, (family, op, key)


@pytest.mark.parametrize("dtype", [F32, F64], ids=ids([F32, F64]))
@pytest.mark.parametrize("case", ["embedding_bag_sum", "embedding_bag_mean", "embedding_bag_max",
                                  "embedding_bag_weights", "embedding_bag_last", "fold",
                                  "fold_strided", "grid_bilinear", "grid_nearest",
                                  "grid_border_corners"])
def test_bags_folds_and_grid_sampling(case, dtype, cache_dir):
    """_embedding_bag (a scatter into bags, empty bags 0), col2im (a scatter-add with
    constant indices) and grid_sampler_2d (gathers at computed corners)."""
    weight = make((10, 3), dtype, seed=1)
    idx = torch.tensor([1, 4, 4, 9, 0, 2, 7])
    offsets = torch.tensor([0, 2, 2, 5])
    grid = (torch.rand(2, 3, 4, 2, generator=torch.Generator().manual_seed(5)) * 2.4 - 1.2)
    fns = {
        "embedding_bag_sum": (lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
                              (weight, idx, offsets)),
        "embedding_bag_mean": (lambda w, i, o: F.embedding_bag(i, w, o, mode="mean"),
                               (weight, idx, offsets)),
        "embedding_bag_max": (lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
                              (weight, idx, offsets)),
        "embedding_bag_weights": (lambda w, i, o, s: F.embedding_bag(
            i, w, o, mode="sum", per_sample_weights=s), (weight, idx, offsets,
                                                         make((7,), dtype, seed=2))),
        "embedding_bag_last": (lambda w, i, o: F.embedding_bag(
            i, w, o, mode="sum", include_last_offset=True, padding_idx=4),
            (weight, idx, torch.tensor([0, 2, 3, 7]))),
        "fold": (lambda x: F.fold(x, (4, 5), (2, 2)), (make((2, 12, 12), dtype),)),
        "fold_strided": (lambda x: F.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1,
                                          stride=(2, 1)), (make((1, 6, 12), dtype),)),
        "grid_bilinear": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                          (make((2, 3, 5, 6), dtype), grid.to(dtype))),
        "grid_nearest": (lambda x, g: F.grid_sample(x, g, mode="nearest", align_corners=False),
                         (make((2, 3, 5, 6), dtype), grid.to(dtype))),
        "grid_border_corners": (lambda x, g: F.grid_sample(x, g, padding_mode="border",
                                                           align_corners=True),
                                (make((2, 3, 5, 6), dtype), grid.to(dtype))),
    }
    fn, inputs = fns[case]
    _check_like_eager(fn, inputs, cache_dir, f"bag_fold_grid_{case}_{dtype_key(dtype)}")


def test_unsupported_by_design_says_why(cache_dir):
    """An op that cannot be compiled (a data-dependent output shape) is refused with the
    reason, not only its name."""
    model = _Lambda(lambda x: torch.nonzero(x)).eval()
    with pytest.raises(thunder.ImportError) as raised:
        thunder.compile(model, (make((3, 2), torch.float32),), dynamic=False,
                        cache_dir=cache_dir, progress=False, fallback="error") \
            if "fallback" in thunder.compile.__code__.co_varnames else \
            thunder.compile(model, (make((3, 2), torch.float32),), dynamic=False,
                            cache_dir=cache_dir, progress=False)
    assert "known only from the data" in str(raised.value)
