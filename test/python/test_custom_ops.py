"""Custom operators (thunder.register_kernel, thunder-compile --custom-ops): the
examples/custom-op RMSNorm compiled from Python and through the CLI + C++ runtime matches
eager; a kernel from a shared library; an op without a kernel is a clear error (or falls
back)."""
from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess

import pytest
import torch

import thunder
from conftest import REPO_ROOT, assert_close_tree
from thunder import partition

EXAMPLE = REPO_ROOT / "examples" / "custom-op"


def load_example():
    spec = importlib.util.spec_from_file_location("custom_op_example", EXAMPLE / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = load_example()


@pytest.fixture(autouse=True)
def clean_registry():
    yield
    thunder.unregister_kernel("mylib::rms_norm")


def eager(model, inputs):
    with torch.no_grad():
        return model(*inputs)


def test_example_from_python(cache_dir):
    model, inputs = example.build()
    example.register()
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, progress=False,
                               fallback="error")
    assert_close_tree(compiled(*inputs), eager(model, inputs), 1e-4, 1e-5)
    assert not isinstance(compiled._entries[0], partition.FallbackEntry)
    assert "1 compiled partition, 0 eager groups" in compiled.report()
    assert thunder.examine(model, *inputs).ok  # registered: supported
    # The import: one custom_call of the registered symbol.
    program = thunder.export(model, inputs)
    assert program.ops.get("thunder.custom_call") == 1, program.ops
    assert '@mylib_rms_norm "mylib.rms_norm.default"' in program.mlir


def test_example_script(tmp_path, build_dir):
    """examples/custom-op/model.py as a user runs it (with the build under test)."""
    env = dict(__import__("os").environ, THUNDER_CACHE_DIR=str(tmp_path / "cache"),
               THUNDER_QUIET="1", PYTHONPATH=str(build_dir / "python"))
    run = subprocess.run([__import__("sys").executable, str(EXAMPLE / "model.py")],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "max |thunder - eager|" in run.stdout


def test_example_through_cli_and_runtime(tmp_path, thunder_compile, build_dir):
    """thunder-compile --custom-ops ops.yaml, then thunder-run (the C++ runtime)."""
    assert example.main(["--export", str(tmp_path)]) == 0
    out = tmp_path / "out"
    result = subprocess.run([str(thunder_compile), str(tmp_path / "model.pt2"), "--custom-ops",
                             str(EXAMPLE / "ops.yaml"), "-o", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    [library] = out.glob("lib*.so")
    run = subprocess.run([str(build_dir / "bin" / "thunder-run"), str(library), "--inputs",
                          str(tmp_path / "inputs.npz"), "--check",
                          str(tmp_path / "expected.npz"), "--rtol", "1e-4", "--atol", "1e-5"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    # Without the registration the CLI refuses, naming the op and how to register it.
    result = subprocess.run([str(thunder_compile), str(tmp_path / "model.pt2"), "-o",
                             str(tmp_path / "none")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode != 0
    assert "mylib.rms_norm.default" in result.stderr and "--custom-ops" in result.stderr


def test_kernel_from_a_shared_library(tmp_path, cache_dir):
    library = tmp_path / "librms.so"
    subprocess.run(["c++", "-O2", "-fPIC", "-shared", "-fopenmp",
                    f"-I{REPO_ROOT / 'include'}", str(EXAMPLE / "rms_norm.cpp"), "-o",
                    str(library)], check=True, timeout=300)
    thunder.register_kernel("mylib::rms_norm", cpu=(str(library), "mylib_rms_norm"))
    model, inputs = example.build(seed=1)
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, progress=False,
                               fallback="error")
    assert_close_tree(compiled(*inputs), eager(model, inputs), 1e-4, 1e-5)


def test_unregistered_op(cache_dir):
    model, inputs = example.build()
    with pytest.raises(thunder.ImportError, match="register_kernel"):
        thunder.compile(model, inputs, cache_dir=cache_dir, progress=False, fallback="error")
    # The default falls back to PyTorch for it.
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, progress=False)
    assert_close_tree(compiled(*inputs), eager(model, inputs), 1e-4, 1e-5)
    assert "mylib.rms_norm.default" in compiled.report()


def test_register_kernel_arguments(tmp_path):
    with pytest.raises(ValueError, match="cpu= or cuda="):
        thunder.register_kernel("mylib::rms_norm")
    with pytest.raises(FileNotFoundError):
        thunder.register_kernel("mylib::rms_norm", cpu=(str(tmp_path / "no.so"), "f"))
    with pytest.raises(ValueError, match="C identifier"):
        thunder.register_kernel("mylib::rms_norm", cpu="", cuda="x", symbol="1x")
    kernel = thunder.register_kernel(torch.ops.mylib.rms_norm, cpu="// source")
    assert kernel.op == "mylib.rms_norm.default" and kernel.symbol == "mylib_rms_norm"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (compile only)")
def test_cuda_kernel_compiles(tmp_path):
    """The cuda target builds the CUDA kernel into the artifact (nothing runs here)."""
    model, inputs = example.build()
    example.register()
    program = thunder.export(model, inputs)
    result = program.module.compile(str(tmp_path), target="cuda", name="block",
                                    arch="sm_80")
    assert pathlib.Path(result["library"]).is_file()
