"""The tpu path's conversion, thunder-convert-to-stablehlo, checked against the real
StableHLO dialect and against PyTorch.

Each model (the zoo, and small programs per op family on random inputs of odd shapes and
several dtypes) is exported, brought to the graph phase with composites decomposed
(thunder-compile --compile-to=graph --decompose-composites, what the tpu pipeline runs
first), converted with thunder-opt --thunder-convert-to-stablehlo, stripped of its
thunder.* attributes as the tpu emitter does, parsed and verified with jaxlib's StableHLO
dialect, then compiled and run by XLA on the CPU with the weights read from the module's
resource blobs (in thunder.weights order), and compared with eager PyTorch.

jax and jaxlib (python/requirements-dev.txt) provide the dialect and XLA; without them the
module is skipped with the reason.
"""
from __future__ import annotations

import pathlib
import re
import subprocess

import numpy as np
import pytest
import torch
from torch.utils import _pytree as pytree

jax = pytest.importorskip("jax", reason="jax is not installed (python/requirements-dev.txt): "
                          "no StableHLO dialect or XLA to check the conversion with")
jax.config.update("jax_enable_x64", True)  # i64 inputs stay i64
from jax.extend import backend as jax_backend  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402

import thunder  # noqa: E402
from zoo import ZOO  # noqa: E402

_NUMPY_OF_MLIR = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16, "i64": np.int64,
    "i32": np.int32, "i8": np.int8, "i1": np.bool_,
}


def _bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


def numpy_dtype(element: ir.Type):
    text = str(element)
    if text == "bf16":
        return _bf16()
    return _NUMPY_OF_MLIR[text]


def graph_ir(model: torch.nn.Module, inputs: tuple, tmp: pathlib.Path,
             build_dir: pathlib.Path, decompose: bool = True) -> str:
    """The model's graph-phase IR with weight bytes printed, composites decomposed
    unless `decompose` is false (then the conversion pass decomposes them)."""
    prog = thunder.export(model.eval(), inputs)
    pt2 = tmp / "model.pt2"
    torch.export.save(prog.exported_program, pt2)
    out = tmp / "model.graph.mlir"
    subprocess.run([str(build_dir / "bin" / "thunder-compile"), str(pt2), "--compile-to=graph",
                    "--print-weights", "-o", str(out)]
                   + (["--decompose-composites"] if decompose else []),
                   check=True, capture_output=True, text=True)
    return out.read_text()


def convert(text: str, build_dir: pathlib.Path) -> str:
    """thunder-opt --thunder-convert-to-stablehlo on `text` (a failure names the errors)."""
    run = subprocess.run([str(build_dir / "bin" / "thunder-opt"),
                          "--thunder-convert-to-stablehlo", "-"],
                         input=text, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


_RESOURCE = re.compile(r'^\s*("?)([^"\n]+?)\1\s*:\s*"0x([0-9A-Fa-f]*)"', re.M)


def resource_blobs(text: str) -> dict[str, bytes]:
    """The builtin dialect's resource blobs of a printed module, by key (the leading
    four bytes of each hex string are its alignment)."""
    start = text.find("{-#")
    if start < 0:
        return {}
    return {key: bytes.fromhex(data)[4:]
            for _, key, data in _RESOURCE.findall(text[start:])}


class Program:
    """A converted module: the XLA-ready text (thunder.* attributes stripped, verified
    by the StableHLO dialect) and its weights in argument order."""

    def __init__(self, text: str):
        blobs = resource_blobs(text)
        with context() as ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            module = ir.Module.parse(text)
            main = next(op for op in module.body.operations
                        if ir.StringAttr(op.attributes["sym_name"]).value == "main")
            names = [ir.StringAttr(a).value for a in ir.ArrayAttr(main.attributes["thunder.weight_names"])]
            values = list(ir.ArrayAttr(main.attributes["thunder.weights"]))
            inputs = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs
            self.weights = []
            for i, (name, value) in enumerate(zip(names, values)):
                shaped = ir.RankedTensorType(inputs[i])
                dtype = numpy_dtype(shaped.element_type)
                if name:
                    raw = np.frombuffer(blobs[name], dtype=dtype)
                else:
                    raw = np.asarray(ir.DenseElementsAttr(value))
                self.weights.append(raw.reshape(shaped.shape).astype(dtype))
            self.num_inputs = len(inputs) - len(values)
            strip(module.operation)
            strip(main)
            if "arg_attrs" in main.attributes:
                del main.attributes["arg_attrs"]
            self.text = str(module)
        # Unregistered dialects are refused now: a misspelt op or a thunder op left
        # behind fails to parse.
        with context():
            verified = ir.Module.parse(self.text)
            assert verified.operation.verify()
            for op in verified.body.operations[0].regions[0].blocks[0].operations:
                name = op.operation.name
                assert name.startswith(("stablehlo.", "chlo.")) or name == "func.return", name

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        client = jax_backend.get_backend("cpu")
        device = client.devices()[0]
        exe = client.compile_and_load(self.text, client.devices()[:1],
                                      xla_client.CompileOptions())
        args = [jax.device_put(a, device) for a in (*self.weights, *inputs)]
        return [np.asarray(o) for o in exe.execute(args)]


def context() -> ir.Context:
    """An MLIR context with jax's dialects: func, StableHLO, CHLO and the upstream ones."""
    return jax_mlir.make_ir_context()


def strip(op: ir.Operation) -> None:
    names = [a if isinstance(a, str) else a.name for a in op.attributes]
    for name in names:
        if name.startswith("thunder."):
            del op.attributes[name]


def to_numpy(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(_bf16())
    return t.detach().numpy()


def check(model: torch.nn.Module, inputs: tuple, tmp: pathlib.Path, build_dir: pathlib.Path,
          rtol: float, atol: float, decompose: bool = True, expect_op: str | None = None
          ) -> Program:
    graph = graph_ir(model, inputs, tmp, build_dir, decompose)
    if expect_op:
        assert f"= {expect_op} " in graph, f"the graph IR has no {expect_op}:\n{graph}"
    program = Program(convert(graph, build_dir))
    with torch.no_grad():
        expected = model(*inputs)
    compare(program, inputs, expected, rtol, atol)
    return program


def compare(program: Program, inputs: tuple, expected, rtol: float, atol: float) -> None:
    """Runs `program` on `inputs` and compares its outputs with `expected` (a pytree)."""
    assert program.num_inputs == len(inputs)
    outs = program.run(*[to_numpy(x) for x in inputs])
    expected = [leaf for leaf in pytree.tree_leaves(expected) if isinstance(leaf, torch.Tensor)]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        want_np = want.float().numpy() if want.dtype == torch.bfloat16 else want.numpy()
        assert got.shape == want_np.shape
        if want_np.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want_np)
        else:
            np.testing.assert_allclose(got.astype(np.float64), want_np.astype(np.float64),
                                       rtol=rtol, atol=atol)
    return program


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo(name, tmp_path, build_dir):
    model, inputs = ZOO[name].build(size="small", batch=2)
    rtol, atol = ZOO[name].tolerance
    check(model, inputs, tmp_path, build_dir, rtol, atol)


# --- Op families on random inputs -------------------------------------------------------

class Fn(torch.nn.Module):
    """A module that applies a function of its inputs (and holds one weight when the
    function needs a parameter, so weights of other dtypes are exercised too)."""

    def __init__(self, fn, weight: torch.Tensor | None = None):
        super().__init__()
        self.fn = fn
        if weight is not None:
            self.weight = torch.nn.Parameter(weight, requires_grad=False)

    def forward(self, *args):
        if hasattr(self, "weight"):
            return self.fn(self.weight, *args)
        return self.fn(*args)


def _randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def _randint(low, high, *shape, dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g).to(dtype)


def _nonzero(*shape, dtype=torch.float32, seed=0):
    x = _randn(*shape, seed=seed)
    return (x + torch.where(x >= 0, 0.5, -0.5)).to(dtype)


def _positive(*shape, dtype=torch.float32, seed=0):
    return (_randn(*shape, seed=seed).abs() + 0.1).to(dtype)


_F32 = (1e-5, 1e-5)
_F16 = (1e-2, 1e-2)
_BF16 = (2e-2, 2e-2)

ELEMENTWISE = {
    "add_i32": (lambda a, b: a + b, lambda: (_randint(-50, 50, 3, 5, dtype=torch.int32),
                                             _randint(-50, 50, 3, 5, dtype=torch.int32, seed=1))),
    "sub_mul_f64": (lambda a, b: (a - b) * b, lambda: (_randn(7, 3, dtype=torch.float64),
                                                       _randn(7, 3, dtype=torch.float64, seed=1))),
    "div": (lambda a, b: a / b, lambda: (_randn(5, 7), _nonzero(5, 7, seed=1))),
    "div_trunc_f32": (lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                      lambda: (_randn(5, 7) * 10, _nonzero(5, 7, seed=1))),
    "div_floor_f32": (lambda a, b: torch.div(a, b, rounding_mode="floor"),
                      lambda: (_randn(5, 7) * 10, _nonzero(5, 7, seed=1))),
    "div_trunc_i64": (lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                      lambda: (_randint(-100, 100, 4, 9), _randint(1, 9, 4, 9, seed=1) *
                               torch.where(_randint(0, 2, 4, 9, seed=2) > 0, 1, -1))),
    "floordiv_i64": (lambda a, b: a // b,
                     lambda: (_randint(-100, 100, 4, 9), _randint(1, 9, 4, 9, seed=1) *
                              torch.where(_randint(0, 2, 4, 9, seed=2) > 0, 1, -1))),
    "remainder_f32": (torch.remainder, lambda: (_randn(6, 5) * 10, _nonzero(6, 5, seed=1) * 3)),
    "remainder_i64": (torch.remainder,
                      lambda: (_randint(-100, 100, 4, 9), _randint(1, 9, 4, 9, seed=1) *
                               torch.where(_randint(0, 2, 4, 9, seed=2) > 0, 1, -1))),
    "pow_f32": (torch.pow, lambda: (_positive(3, 11), _randn(3, 11, seed=1))),
    "pow_scalar": (lambda a: a ** 3, lambda: (_randn(3, 11),)),
    "pow_i64": (torch.pow, lambda: (_randint(-5, 5, 3, 7), _randint(0, 5, 3, 7, seed=1))),
    "unary_f32": (lambda x: torch.stack([
        -x, x.abs(), torch.relu(x), torch.exp(x), torch.log(x.abs() + 0.1),
        torch.log1p(x.abs()), torch.sqrt(x.abs()), torch.rsqrt(x.abs() + 0.1),
        torch.reciprocal(x + 10), torch.tanh(x), torch.sigmoid(x), torch.erf(x),
        torch.sin(x), torch.cos(x), torch.floor(x * 3), torch.ceil(x * 3),
        torch.nn.functional.silu(x)]), lambda: (_randn(5, 13),)),
    "unary_f16": (lambda x: torch.exp(x) + torch.tanh(x) * torch.sigmoid(x) - torch.sin(x),
                  lambda: (_randn(4, 9, dtype=torch.float16),), _F16),
    "unary_bf16": (lambda x: torch.exp(x) + torch.erf(x) * torch.rsqrt(x.abs() + 1),
                   lambda: (_randn(4, 9, dtype=torch.bfloat16),), _BF16),
    "add_mul_i8": (lambda a, b: a * b + a, lambda: (_randint(-100, 100, 5, 3, dtype=torch.int8),
                                                    _randint(-100, 100, 5, 3, dtype=torch.int8, seed=1))),
    "neg_abs_relu_i64": (lambda x: torch.stack([-x, x.abs(), torch.relu(x)]),
                         lambda: (_randint(-9, 9, 3, 5),)),
    "gelu": (torch.nn.functional.gelu, lambda: (_randn(6, 17) * 3,)),
    "gelu_tanh": (lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
                  lambda: (_randn(6, 17) * 3,)),
    "maximum_minimum": (lambda a, b: torch.maximum(a, b) - torch.minimum(a, b),
                        lambda: (_randn(3, 7), _randn(3, 7, seed=1))),
    "clamp_f32": (lambda x: torch.clamp(x, -0.5, 0.7) + torch.clamp(x, min=0.1),
                  lambda: (_randn(5, 6),)),
    "clamp_i32": (lambda x: torch.clamp(x, -3, 4), lambda: (_randint(-9, 9, 5, 6, dtype=torch.int32),)),
    "compare_where": (lambda a, b: torch.stack([
        torch.where(a < b, a, b), torch.where(a <= b, 1.0, 0.0), torch.where(a > b, a, 2.0),
        torch.where(a >= b, b, a), torch.where(a == b, 1.0, -1.0),
        torch.where(a != b, 3.0, 4.0)]),  # integral values, so that some are equal
        lambda: (_randint(-2, 2, 4, 5).float(), _randint(-2, 2, 4, 5, seed=1).float())),
    "compare_i64": (lambda a, b: (a < b).to(torch.int64) + (a == b).to(torch.int64) * 2,
                    lambda: (_randint(-3, 3, 4, 5), _randint(-3, 3, 4, 5, seed=1))),
    "logical": (lambda a, b: torch.stack([a & b, a | b, a ^ b, ~a]),
                lambda: (_randint(0, 2, 4, 7) > 0, _randint(0, 2, 4, 7, seed=1) > 0)),
    "convert": (lambda x: torch.stack([(x * 10).to(torch.int64).to(torch.float32),
                                       (x > 0).to(torch.float32), x.to(torch.bool).to(torch.float32),
                                       x.to(torch.float16).to(torch.float32)]),
                lambda: (_randn(3, 8),)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name, tmp_path, build_dir):
    fn, make, *tol = ELEMENTWISE[name]
    check(Fn(fn), make(), tmp_path, build_dir, *(tol[0] if tol else _F32))


REDUCTIONS = {
    "sum_mean": (lambda x: x.sum(dim=1) + x.mean(dim=(0, 2))[None, :, None].sum(),
                 lambda: (_randn(3, 7, 5),)),
    "sum_keepdim_i32": (lambda x: x.sum(dim=(0, 2), keepdim=True), lambda: (_randint(-9, 9, 3, 7, 5, dtype=torch.int32),)),
    "mean_f16": (lambda x: x.mean(dim=-1), lambda: (_randn(3, 301, dtype=torch.float16),), _F16),
    "amax_amin": (lambda x: x.amax(dim=1) - x.amin(dim=(0, 1)), lambda: (_randn(4, 9, 6),)),
    "amax_i64": (lambda x: x.amax(dim=0, keepdim=True), lambda: (_randint(-99, 99, 5, 3),)),
    "prod": (lambda x: x.prod(dim=1), lambda: (_positive(3, 6) + 0.5,)),
    "argmax_argmin": (lambda x: torch.stack([x.argmax(dim=1), x.argmin(dim=1)]),
                      lambda: (_randint(-2, 2, 6, 11).to(torch.float32),)),  # ties: first index
    "argmax_keepdim_i32": (lambda x: x.argmax(dim=0, keepdim=True),
                           lambda: (_randint(-2, 2, 6, 11, dtype=torch.int32),)),
    "cumsum": (lambda x: torch.cumsum(x, dim=1), lambda: (_randn(3, 17),)),
    # NaN is the extreme of max/min and of argmax/argmin (the first NaN's index).
    "nan": (lambda x: torch.stack([x.amax(dim=1), x.amin(dim=1), x.argmax(dim=1).float(),
                                   x.argmin(dim=1).float(), torch.relu(x).sum(dim=1)]),
            lambda: (torch.tensor([[1.0, float("nan"), 3.0, float("nan")],
                                   [float("nan"), -1.0, 2.0, 2.0],
                                   [0.5, 4.0, 4.0, -7.0]]),)),
    "cumsum_i64": (lambda x: torch.cumsum(x, dim=0), lambda: (_randint(-9, 9, 7, 2),)),
    # Stable sorts (ties keep their order), NaN above every number, descending too.
    "argsort": (lambda x: torch.stack([torch.argsort(x, dim=1, stable=True),
                                       torch.argsort(x, dim=1, descending=True, stable=True)]),
                lambda: (torch.tensor([[1.0, float("nan"), -3.0, 1.0, float("nan"), 0.5],
                                       [2.0, 2.0, -1.0, float("-inf"), 2.0, 7.0]]),)),
    "sort_i32": (lambda x: torch.sort(x, dim=0, stable=True).values,
                 lambda: (_randint(-3, 3, 9, 4, dtype=torch.int32),)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, tmp_path, build_dir):
    fn, make, *tol = REDUCTIONS[name]
    check(Fn(fn), make(), tmp_path, build_dir, *(tol[0] if tol else _F32))


DATA_MOVEMENT = {
    "reshape_permute": (lambda x: x.reshape(5, 3, 4).permute(2, 0, 1).reshape(4, 15),
                        lambda: (_randn(3, 5, 4),)),
    "slice_step": (lambda x: x[1:, ::2, 3:7:3], lambda: (_randn(5, 9, 11),)),
    "cat": (lambda a, b: torch.cat([a, b, a], dim=1), lambda: (_randn(3, 2), _randn(3, 5, seed=1))),
    "pad": (lambda x: torch.nn.functional.pad(x, (1, 2, 0, 3), value=1.5),
            lambda: (_randn(2, 3, 4),)),
    "pad_crop": (lambda x: torch.nn.functional.pad(x, (-1, 2, 1, -2)), lambda: (_randn(5, 6),)),
    "gather": (lambda x, i: torch.gather(x, 1, i), lambda: (_randn(4, 9), _randint(0, 9, 4, 5))),
    "gather_3d": (lambda x, i: torch.gather(x, 0, i), lambda: (_randn(4, 3, 5), _randint(0, 4, 2, 3, 5))),
    "index_select": (lambda x, i: torch.index_select(x, 1, i),
                     lambda: (_randn(3, 10, 2), _randint(0, 10, 6))),
    "embedding": (lambda w, i: torch.nn.functional.embedding(i, w),
                  lambda: (_randint(0, 17, 2, 5),), _F32, _randn(17, 6)),
    "expand": (lambda x: x.expand(3, 4, 5) * 2, lambda: (_randn(4, 1),)),
    "arange": (lambda x: x + torch.arange(7, dtype=torch.float32), lambda: (_randn(3, 7),)),
    "weights_i64": (lambda w, x: x + w, lambda: (_randint(0, 9, 10, 10),), _F32,
                    _randint(0, 9, 10, 10, seed=3)),
    # Repeated indices combine; without include_self the receiving positions start afresh.
    "scatter_reduce": (lambda x, i, s: torch.stack(
        [torch.scatter_reduce(x, 1, i, s, r, include_self=inc)
         for r in ("sum", "prod", "amax", "amin", "mean") for inc in (True, False)]),
        lambda: (_randn(3, 6), _randint(0, 6, 3, 4), _randn(3, 5, seed=1))),
    "scatter_add_i64": (lambda x, i, s: torch.scatter_add(x, 0, i, s),
                        lambda: (_randint(-9, 9, 4, 3), _randint(0, 4, 6, 3), _randint(-9, 9, 6, 3))),
}


@pytest.mark.parametrize("name", sorted(DATA_MOVEMENT))
def test_data_movement(name, tmp_path, build_dir):
    fn, make, *rest = DATA_MOVEMENT[name]
    tol = rest[0] if rest else _F32
    weight = rest[1] if len(rest) > 1 else None
    check(Fn(fn, weight), make(), tmp_path, build_dir, *tol)


def _conv(dims, **kwargs):
    conv = getattr(torch.nn, f"Conv{dims}d")(**kwargs)
    torch.manual_seed(0)
    return conv.eval()


LINALG = {
    "matmul_2d": (lambda a, b: a @ b, lambda: (_randn(5, 7), _randn(7, 3, seed=1))),
    "matmul_batched_2d_rhs": (lambda a, b: a @ b, lambda: (_randn(2, 5, 7), _randn(7, 3, seed=1))),
    "matmul_batched": (lambda a, b: a @ b.transpose(-1, -2),
                       lambda: (_randn(2, 3, 5, 7), _randn(2, 3, 4, 7, seed=1))),
    "matmul_transpose_lhs": (lambda a, b: a.transpose(-1, -2) @ b,
                             lambda: (_randn(3, 7, 5), _randn(3, 7, 4, seed=1))),
    "matmul_i64": (lambda a, b: a @ b, lambda: (_randint(-5, 5, 3, 4), _randint(-5, 5, 4, 2, seed=1))),
    "matmul_bf16": (lambda a, b: a @ b, lambda: (_randn(5, 64, dtype=torch.bfloat16),
                                                 _randn(64, 3, dtype=torch.bfloat16, seed=1)), _BF16),
    "linear": (torch.nn.Linear(13, 5).eval(), lambda: (_randn(2, 3, 13),)),
    "max_pool2d": (torch.nn.MaxPool2d(3, stride=2, padding=1), lambda: (_randn(2, 3, 9, 10),)),
    "max_pool2d_ceil_dilation": (torch.nn.MaxPool2d(2, stride=2, dilation=2, ceil_mode=True),
                                 lambda: (_randn(1, 2, 9, 8),)),
    "max_pool1d_i64": (lambda x: torch.nn.functional.max_pool1d(x.to(torch.float32), 3, 2).to(torch.int64),
                       lambda: (_randint(-9, 9, 1, 2, 11),)),
    "avg_pool2d": (torch.nn.AvgPool2d(3, stride=2, padding=1), lambda: (_randn(2, 3, 9, 10),)),
    "avg_pool2d_no_pad_count": (torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                                lambda: (_randn(2, 3, 9, 10),)),
    "avg_pool2d_ceil": (torch.nn.AvgPool2d(2, stride=2, ceil_mode=True), lambda: (_randn(1, 2, 7, 9),)),
    "avg_pool2d_ceil_pad": (torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True),
                            lambda: (_randn(1, 2, 8, 8),)),
    "avg_pool1d_ceil_pad": (torch.nn.AvgPool1d(4, stride=3, padding=2, ceil_mode=True),
                            lambda: (_randn(2, 3, 12),)),
    "max_pool3d": (torch.nn.MaxPool3d(2, stride=(1, 2, 2), padding=1), lambda: (_randn(1, 2, 4, 5, 6),)),
    "matvec": (lambda a, v: a @ v + v @ a.transpose(-1, -2) @ a, lambda: (_randn(5, 5), _randn(5, seed=1))),
    "adaptive_avg_pool": (torch.nn.AdaptiveAvgPool2d(1), lambda: (_randn(2, 3, 5, 7),)),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg(name, tmp_path, build_dir):
    fn, make, *tol = LINALG[name]
    model = fn if isinstance(fn, torch.nn.Module) else Fn(fn)
    check(model, make(), tmp_path, build_dir, *(tol[0] if tol else _F32))


CONVOLUTIONS = {
    "conv1d": (dict(in_channels=3, out_channels=5, kernel_size=3, stride=2, padding=1), 1, (2, 3, 17)),
    "conv2d_groups_dilation": (dict(in_channels=4, out_channels=6, kernel_size=3, padding=2,
                                    dilation=2, groups=2), 2, (1, 4, 9, 11)),
    "conv2d_depthwise_no_bias": (dict(in_channels=4, out_channels=4, kernel_size=(3, 1), stride=(1, 2),
                                      groups=4, bias=False), 2, (2, 4, 7, 8)),
    "conv2d_asymmetric_padding": (dict(in_channels=2, out_channels=3, kernel_size=2,
                                       padding="same"), 2, (1, 2, 6, 5)),
    "conv3d": (dict(in_channels=2, out_channels=3, kernel_size=2, stride=(1, 2, 1)), 3, (1, 2, 4, 5, 3)),
}


@pytest.mark.parametrize("name", sorted(CONVOLUTIONS))
def test_convolution(name, tmp_path, build_dir):
    kwargs, dims, shape = CONVOLUTIONS[name]
    check(_conv(dims, **kwargs), (_randn(*shape),), tmp_path, build_dir, 1e-5, 1e-5)


def test_convolution_bf16(tmp_path, build_dir):
    """bf16 weights and activations: accumulated in f32, rounded once."""
    conv = _conv(2, in_channels=3, out_channels=4, kernel_size=3, padding=1).to(torch.bfloat16)
    check(conv, (_randn(2, 3, 6, 7, dtype=torch.bfloat16),), tmp_path, build_dir, 2e-2, 2e-2)


def test_dynamic_shape_refused(tmp_path, build_dir):
    """A dynamic dim is an error at the op's location, every op reported, then failure."""
    text = """module attributes {thunder.phase = "graph"} {
  func.func @main(%x: tensor<?x4xf32>, %y: tensor<2x4xi64>) -> (tensor<?x4xf32>, tensor<2x4xi64>) {
    %0 = thunder.exp %x : tensor<?x4xf32>
    %1 = thunder.neg %0 : tensor<?x4xf32>
    %2 = thunder.add %y, %y : tensor<2x4xi64>
    return %1, %2 : tensor<?x4xf32>, tensor<2x4xi64>
  }
}"""
    run = subprocess.run([str(build_dir / "bin" / "thunder-opt"),
                          "--thunder-convert-to-stablehlo", "-"],
                         input=text, capture_output=True, text=True)
    assert run.returncode != 0
    assert run.stderr.count("has a dynamic shape") == 2, run.stderr
    assert "2 ops cannot be converted" in run.stderr


# --- Composites (decomposed by the conversion pass itself) ------------------------------

class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def _batch_norm():
    bn = torch.nn.BatchNorm2d(3)
    bn.running_mean.copy_(_randn(3, seed=4))
    bn.running_var.copy_(_positive(3, seed=5))
    bn.weight.data.copy_(_randn(3, seed=6))
    bn.bias.data.copy_(_randn(3, seed=7))
    return bn.eval()


COMPOSITES = {
    "softmax": (torch.nn.Softmax(dim=-1), lambda: (_randn(3, 11) * 4,), "thunder.softmax"),
    "log_softmax": (torch.nn.LogSoftmax(dim=1), lambda: (_randn(3, 11, 2),), "thunder.log_softmax"),
    "layer_norm": (torch.nn.LayerNorm(13).eval(), lambda: (_randn(2, 5, 13),), "thunder.layer_norm"),
    "batch_norm": (_batch_norm(), lambda: (_randn(2, 3, 5, 4),), "thunder.batch_norm"),
    "sdpa": (Attention(), lambda: (_randn(2, 3, 7, 8), _randn(2, 3, 7, 8, seed=1),
                                   _randn(2, 3, 7, 8, seed=2)), "thunder.sdpa"),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composites(name, tmp_path, build_dir):
    model, make, op = COMPOSITES[name]
    check(model, make(), tmp_path, build_dir, 1e-5, 1e-5, decompose=False, expect_op=op)


# --- Ops the importer or the graph pipeline never leave behind, written as IR -----------

def _module(args: str, body: str, result: str) -> str:
    return f"""module attributes {{thunder.phase = "graph"}} {{
  func.func @main({args}) -> {result} {{
    {body}
  }}
}}"""


DIRECT = {
    "clamp": ("%x: tensor<5x6xf32>",
              "%0 = thunder.clamp %x min = -0.5 max = 0.7 : tensor<5x6xf32>\n"
              "    %1 = thunder.clamp %x max = 0.25 : tensor<5x6xf32>\n"
              "    %2 = thunder.add %0, %1 : tensor<5x6xf32>\n    return %2 : tensor<5x6xf32>",
              "tensor<5x6xf32>", lambda: (_randn(5, 6),),
              lambda x: torch.clamp(x, -0.5, 0.7) + torch.clamp(x, max=0.25)),
    "clamp_i64": ("%x: tensor<5x6xi64>",
                  "%0 = thunder.clamp %x min = -3.0 max = 2.0 : tensor<5x6xi64>\n"
                  "    return %0 : tensor<5x6xi64>",
                  "tensor<5x6xi64>", lambda: (_randint(-9, 9, 5, 6),),
                  lambda x: torch.clamp(x, -3, 2)),
    "silu": ("%x: tensor<3x7xf32>",
             "%0 = thunder.silu %x : tensor<3x7xf32>\n    return %0 : tensor<3x7xf32>",
             "tensor<3x7xf32>", lambda: (_randn(3, 7) * 3,), torch.nn.functional.silu),
    "silu_bf16": ("%x: tensor<3x7xbf16>",
                  "%0 = thunder.silu %x : tensor<3x7xbf16>\n    return %0 : tensor<3x7xbf16>",
                  "tensor<3x7xbf16>", lambda: (_randn(3, 7, dtype=torch.bfloat16) * 3,),
                  torch.nn.functional.silu),
    # torch.export decomposes nn.RMSNorm itself; the composite comes from other importers.
    "rms_norm": ("%x: tensor<2x5x13xf32>, %g: tensor<13xf32>",
                 "%0 = thunder.rms_norm %x weight %g normalized_rank = 1 epsilon = 1.0e-06"
                 " : (tensor<2x5x13xf32>, tensor<13xf32>) -> tensor<2x5x13xf32>\n"
                 "    return %0 : tensor<2x5x13xf32>",
                 "tensor<2x5x13xf32>", lambda: (_randn(2, 5, 13), _randn(13, seed=1)),
                 lambda x, g: torch.nn.functional.rms_norm(x, (13,), g, eps=1e-6)),
    "expand": ("%x: tensor<1x4xf32>",
               "%0 = thunder.expand %x : tensor<1x4xf32> -> tensor<2x3x4xf32>\n"
               "    return %0 : tensor<2x3x4xf32>",
               "tensor<2x3x4xf32>", lambda: (_randn(1, 4),), lambda x: x.expand(2, 3, 4)),
    # Negative integer exponents: 0 unless the base is 1 or -1 (PyTorch's integer pow).
    "pow_i64_negative": ("%a: tensor<8xi64>, %b: tensor<8xi64>",
                         "%0 = thunder.pow %a, %b : tensor<8xi64>\n    return %0 : tensor<8xi64>",
                         "tensor<8xi64>",
                         lambda: (torch.tensor([2, -1, -1, 1, 3, 0, -2, 5]),
                                  torch.tensor([-1, -3, -2, -5, 2, 0, 3, 30])),
                         torch.pow),
    # f8 round trips (the importer moves f8 weights through convert).
    **{f"convert_{name}": ("%a: tensor<64xf32>",
                           f"%0 = thunder.convert %a : tensor<64xf32> -> tensor<64x{name}>\n"
                           f"    %1 = thunder.convert %0 : tensor<64x{name}> -> tensor<64xf32>\n"
                           "    return %1 : tensor<64xf32>",
                           "tensor<64xf32>", lambda: (_randn(64) * 50,),
                           lambda a, dtype=dtype: a.to(dtype).float())
       for name, dtype in (("f8E4M3FN", torch.float8_e4m3fn), ("f8E5M2", torch.float8_e5m2))},
    "literal_weight": ("%x: tensor<9x9xi32>",
                       "%w = thunder.constant dense<" + str([[i * 9 + j for j in range(9)] for i in range(9)]) +
                       "> : tensor<9x9xi32>\n    %0 = thunder.add %x, %w : tensor<9x9xi32>\n"
                       "    return %0 : tensor<9x9xi32>",
                       "tensor<9x9xi32>", lambda: (_randint(-9, 9, 9, 9, dtype=torch.int32),),
                       lambda x: x + torch.arange(81, dtype=torch.int32).reshape(9, 9)),
}


@pytest.mark.parametrize("name", sorted(DIRECT))
def test_direct_ir(name, build_dir):
    args, body, result, make, reference = DIRECT[name]
    program = Program(convert(_module(args, body, result), build_dir))
    inputs = make()
    compare(program, inputs, reference(*inputs), 1e-2 if "bf16" in name else 1e-6, 1e-6)
    if name == "literal_weight":
        assert len(program.weights) == 1  # 81 elements > 64: a weight argument
