"""The tpu target: StableHLO run through the runtime's PJRT executor.

Every zoo model compiled with target="tpu" runs through the Thunder runtime on XLA's CPU
PJRT plugin (the xla-cpu-pjrt package; on a TPU host libtpu runs the same library) and
matches eager within fp32 tolerance. The program the library embeds also runs in jax as a
second, independent check, after jaxlib's StableHLO dialect has parsed and verified it.
Errors name what is wrong: a missing plugin, dynamic shapes, phases the target does not have.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch
from torch.utils import _pytree as pytree

import thunder
from conftest import assert_close_tree
from zoo import ZOO


def _cpu_plugin() -> pathlib.Path:
    import xla_plugins.xla_cpu_pjrt as package  # tools/dev.sh installs xla-cpu-pjrt
    path = pathlib.Path(package.__file__).parent / "xla_cpu_pjrt.so"
    assert path.is_file(), f"{path} is missing: reinstall xla-cpu-pjrt (tools/dev.sh setup)"
    return path


@pytest.fixture(autouse=True)
def cpu_plugin(monkeypatch) -> pathlib.Path:
    """Every library of these tests runs on XLA's CPU plugin."""
    path = _cpu_plugin()
    monkeypatch.setenv("THUNDER_PJRT_PLUGIN", str(path))
    return path


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_model_runs_through_pjrt(name, cache_dir):
    zoo = ZOO[name]
    model, inputs = zoo.build(size="small", batch=2)
    with torch.no_grad():
        expected = model(*inputs)
        compiled = thunder.compile(model, inputs, target="tpu", cache_dir=cache_dir,
                                   progress=False)
        actual = compiled(*inputs)
    assert thunder.load(compiled.artifacts[0]).target == "tpu"
    assert_close_tree(actual, expected, *zoo.tolerance)


def _read_safetensors(path: pathlib.Path) -> list[np.ndarray]:
    """The tensors of a .safetensors file, in the order of their bytes (the program's
    weight arguments are laid out in argument order)."""
    dtypes = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32,
              "I8": np.int8, "BOOL": np.bool_, "F16": np.float16}
    data = path.read_bytes()
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_len])
    header.pop("__metadata__", None)
    start = 8 + header_len
    entries = sorted(header.values(), key=lambda e: e["data_offsets"][0])
    return [np.frombuffer(data[start + e["data_offsets"][0]:start + e["data_offsets"][1]],
                          dtype=dtypes[e["dtype"]]).reshape(e["shape"]) for e in entries]


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_program_verifies_and_runs_in_jax(name, thunder_compile, tmp_path):
    """The CLI's program, read by jaxlib's StableHLO dialect and run by jax's own XLA."""
    jax = pytest.importorskip("jax", reason="jax is installed by tools/dev.sh setup")
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import xla_client
    from jax.extend import backend
    from jaxlib.mlir import ir

    zoo = ZOO[name]
    model, inputs = zoo.build(size="small", batch=2)
    exported = torch.export.export(model, inputs).run_decompositions()
    archive = tmp_path / f"{name}.pt2"
    torch.export.save(exported, archive)
    out = tmp_path / "src"
    subprocess.run([thunder_compile, archive, "--target=tpu", "--compile-to=source",
                    "--external-weights", "-o", out], check=True, capture_output=True)
    text = (out / f"{name}.stablehlo.mlir").read_text()
    assert "thunder." not in text

    with jax_mlir.make_ir_context():  # func, StableHLO and CHLO, as jax registers them
        module = ir.Module.parse(text)
        assert module.operation.verify()

    cpu = backend.get_backend("cpu")
    device = cpu.devices()[0]
    executable = cpu.compile_and_load(text, [device], xla_client.CompileOptions())
    weights = _read_safetensors(out / f"{name}.safetensors")
    arguments = weights + [i.numpy() for i in inputs]
    # jax narrows int64 to int32 unless x64 mode is on: on for this call only.
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        results = executable.execute([jax.device_put(a, device) for a in arguments])
    finally:
        jax.config.update("jax_enable_x64", previous)
    with torch.no_grad():
        expected = pytree.tree_leaves(exported.module()(*inputs))
    assert len(results) == len(expected)
    for actual, want in zip(results, expected):
        torch.testing.assert_close(torch.from_numpy(np.array(actual)), want,
                                   rtol=zoo.tolerance[0], atol=zoo.tolerance[1])


def _mlp_archive(tmp_path: pathlib.Path, dynamic: bool = False) -> pathlib.Path:
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    shapes = ZOO["mlp"].dynamic_batch(inputs) if dynamic else None
    archive = tmp_path / "mlp.pt2"
    torch.export.save(torch.export.export(model, inputs, dynamic_shapes=shapes)
                      .run_decompositions(), archive)
    return archive


def test_embedded_and_external_weights_agree(thunder_compile, tmp_path):
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    archive = _mlp_archive(tmp_path)
    results = []
    for flags in ([], ["--external-weights"]):
        out = tmp_path / ("external" if flags else "embedded")
        subprocess.run([thunder_compile, archive, "--target=tpu", "-o", out, *flags],
                       check=True, capture_output=True)
        assert (out / "mlp.safetensors").exists() == bool(flags)
        results.append(thunder.load(out / "libmlp.so")(*inputs))
    with torch.no_grad():
        expected = model(*inputs)
    for result in results:
        torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-5)


def test_compile_to_stablehlo_prints_the_program(thunder_compile, tmp_path):
    archive = _mlp_archive(tmp_path)
    printed = subprocess.run([thunder_compile, archive, "--target=tpu",
                              "--compile-to=stablehlo"], check=True, capture_output=True,
                             text=True).stdout
    assert printed.startswith("module")
    assert '"stablehlo.dot_general"' in printed
    assert "thunder." not in printed and "dense_resource" not in printed


def test_compile_to_stablehlo_needs_the_tpu_target(thunder_compile, tmp_path):
    result = subprocess.run([thunder_compile, _mlp_archive(tmp_path), "--target=cpu",
                             "--compile-to=stablehlo"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "--target=tpu" in result.stderr


def test_kernel_phases_are_refused(thunder_compile, tmp_path):
    result = subprocess.run([thunder_compile, _mlp_archive(tmp_path), "--target=tpu",
                             "--compile-to=fusion"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "the tpu target emits code from phase 'graph'; it has no phase 'fusion'" in \
        result.stderr


def test_dynamic_shapes_are_refused_with_the_input_named(thunder_compile, tmp_path):
    result = subprocess.run([thunder_compile, _mlp_archive(tmp_path, dynamic=True),
                             "--target=tpu", "-o", tmp_path / "out"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "static shapes" in result.stderr and "input 0 ('x')" in result.stderr
    assert not (tmp_path / "out" / "libmlp.so").exists()


def test_a_missing_plugin_is_named(thunder_compile, tmp_path, monkeypatch):
    out = tmp_path / "out"
    subprocess.run([thunder_compile, _mlp_archive(tmp_path), "--target=tpu", "-o", out],
                   check=True, capture_output=True)
    missing = tmp_path / "no_such_plugin.so"
    monkeypatch.setenv("THUNDER_PJRT_PLUGIN", str(missing))
    with pytest.raises(thunder.RuntimeError, match="no_such_plugin.so"):
        thunder.load(out / "libmlp.so")


def test_tpu_compiles_are_static_by_default(cache_dir):
    model, inputs = ZOO["mlp"].build(size="small", batch=4)
    compiled = thunder.compile(model, inputs, target="tpu", cache_dir=cache_dir,
                               progress=False)
    model_ = thunder.load(compiled.artifacts[0])
    assert all(d >= 0 for desc in model_.inputs for d in desc.shape)
    with pytest.raises(thunder.RuntimeError):
        compiled(torch.randn(3, *inputs[0].shape[1:]))


@pytest.mark.parametrize("name", ["mlp", "bert"])
def test_bfloat16_models_run_through_pjrt(name, cache_dir):
    """bf16 weights and activations go to XLA as bf16 (no precision policy exists yet:
    the program computes in the model's dtype, as eager does)."""
    model, inputs = ZOO[name].build(size="small", batch=2)
    model = model.to(torch.bfloat16)
    inputs = tuple(i.to(torch.bfloat16) if i.is_floating_point() else i for i in inputs)
    with torch.no_grad():
        expected = model(*inputs)
        compiled = thunder.compile(model, inputs, target="tpu", cache_dir=cache_dir,
                                   progress=False)
        actual = compiled(*inputs)
    assert_close_tree(actual, expected, rtol=2e-2, atol=2e-2)
