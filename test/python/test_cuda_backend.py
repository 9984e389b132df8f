"""The CUDA backend on a machine without a GPU: every zoo model compiles and links for
CUDA, the library holds a cubin per requested architecture (sm_80 and sm_90a by default),
and loading or running it here fails with a message that names the problem.

The models' numerics on a GPU are checked by the prepared GPU check
(tools/dev.sh gpu-check, docs/cuda.md). Compiles here take ~20 s per model and
architecture on two cores, so the zoo compiles for one architecture and one model for
both.
"""
from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest
import torch

import thunder
from conftest import has_cuda_driver
from zoo import ZOO


def _compile(name: str, directory: pathlib.Path, *, dtype=torch.float32, batch: int = 2,
             cuda_arch: str = "sm_90a") -> pathlib.Path:
    model, inputs = ZOO[name].build(size="small", batch=batch)
    if dtype != torch.float32:
        model = model.to(dtype)
        inputs = tuple(i.to(dtype) if i.is_floating_point() else i for i in inputs)
    program = thunder.export(model, inputs)
    result = program.module.compile(str(directory), target="cuda", name=name,
                                    cuda_arch=cuda_arch)
    return pathlib.Path(result["library"])


def _entry(library: pathlib.Path):
    """The model's table, read without the runtime (which refuses a CUDA model here)."""
    class Table(ctypes.Structure):
        _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32),
                    ("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
                    ("device", ctypes.c_int32)]
    lib = ctypes.CDLL(str(library))
    lib.thunder_model_entry_v1.restype = ctypes.POINTER(Table)
    return lib.thunder_model_entry_v1().contents


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_compiles_and_links_for_cuda(name, tmp_path):
    library = _compile(name, tmp_path)
    assert library.is_file()
    table = _entry(library)
    assert table.target == b"cuda"
    assert table.device == 1  # THUNDER_DEVICE_CUDA
    # The CUDA runtime is linked statically: nothing of CUDA is needed to load it.
    needed = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True,
                            check=True).stdout
    assert "cudart" not in needed and "cublas" not in needed


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_compiles_for_cuda_in_bf16(name, tmp_path):
    """bf16 with static shapes: the decomposed norms and softmax as row kernels with
    bf16 row caches, and the workspaces planned in the arena (what the GPU check's
    static libraries are)."""
    library = _compile(name, tmp_path, dtype=torch.bfloat16)
    source = (tmp_path / "model.cu")
    assert library.is_file() and not source.exists()  # the build directory is removed


def _cuobjdump() -> str:
    candidates = [pathlib.Path(sysconfig.get_paths()["purelib"]) / "nvidia/cu13/bin/cuobjdump",
                  pathlib.Path("/usr/local/cuda/bin/cuobjdump")]
    for path in candidates:
        if path.is_file():
            return str(path)
    found = shutil.which("cuobjdump")
    assert found, ("cuobjdump not found: install nvidia-cuda-cuobjdump "
                   "(python/requirements-dev.txt) or the CUDA toolkit's")
    return found


def test_library_holds_sm80_and_sm90a_cubins(tmp_path):
    library = _compile("mlp", tmp_path, cuda_arch="sm_80,sm_90a")
    listing = subprocess.run([_cuobjdump(), "--list-elf", str(library)], capture_output=True,
                             text=True, check=True).stdout
    archs = {line.rsplit(".", 2)[-2] for line in listing.splitlines() if ".cubin" in line}
    assert archs == {"sm_80", "sm_90a"}, listing
    # And only the one asked for, when one is.
    single = _compile("mlp", tmp_path / "one", cuda_arch="sm_90a")
    listing = subprocess.run([_cuobjdump(), "--list-elf", str(single)], capture_output=True,
                             text=True, check=True).stdout
    assert "sm_90a" in listing and "sm_80" not in listing, listing


@pytest.fixture(scope="module")
def mlp_library(tmp_path_factory) -> pathlib.Path:
    return _compile("mlp", tmp_path_factory.mktemp("mlp"))


@pytest.mark.skipif(has_cuda_driver(), reason="this machine has a CUDA driver")
def test_loading_without_a_gpu_fails_clearly(mlp_library):
    with pytest.raises(thunder.RuntimeError) as error:
        thunder.load(mlp_library)
    assert error.value.status == "THUNDER_ERROR_DEVICE"
    assert str(error.value) == ("model 'mlp' was compiled for CUDA, but this machine has no "
                                "CUDA driver (libcuda.so.1 not found)")


@pytest.mark.skipif(has_cuda_driver(), reason="this machine has a CUDA driver")
def test_thunder_run_without_a_gpu_fails_clearly(mlp_library, build_dir):
    run = subprocess.run([str(build_dir / "bin" / "thunder-run"), str(mlp_library)],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "compiled for CUDA, but this machine has no CUDA driver" in run.stderr


@pytest.mark.skipif(has_cuda_driver(), reason="this machine has a CUDA driver")
def test_compile_for_cuda_from_python_fails_at_load_without_a_gpu(tmp_path):
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    # The library is built; loading it (to run it) needs a GPU.
    with pytest.raises(thunder.RuntimeError, match="no CUDA driver") as error:
        thunder.compile(model, inputs, target="cuda", cuda_arch="sm_90a",
                        cache_dir=tmp_path, progress=False)
    assert error.value.status == "THUNDER_ERROR_DEVICE"


def test_bad_cuda_arch_is_reported(tmp_path):
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    program = thunder.export(model, inputs)
    with pytest.raises(thunder.CompileError, match="--arch: expected a comma-separated"):
        program.module.compile(str(tmp_path), target="cuda", name="mlp", cuda_arch="ampere")
