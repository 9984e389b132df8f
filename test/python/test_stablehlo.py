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
             build_dir: pathlib.Path) -> str:
    """The model's graph-phase IR with composites decomposed and weight bytes printed."""
    prog = thunder.export(model.eval(), inputs)
    pt2 = tmp / "model.pt2"
    torch.export.save(prog.exported_program, pt2)
    out = tmp / "model.graph.mlir"
    subprocess.run([str(build_dir / "bin" / "thunder-compile"), str(pt2), "--compile-to=graph",
                    "--decompose-composites", "--print-weights", "-o", str(out)],
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
          rtol: float, atol: float) -> Program:
    program = Program(convert(graph_ir(model, inputs, tmp, build_dir), build_dir))
    assert program.num_inputs == len(inputs)
    outs = program.run(*[to_numpy(x) for x in inputs])
    with torch.no_grad():
        expected = model(*inputs)
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
