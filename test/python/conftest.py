"""pytest setup for test/python: the zoo on sys.path, the thunder package of the build
under test, and the build's tools.

The build directory is $THUNDER_BUILD_DIR (as tools/dev.sh sets it), by default build/ at
the repository root. Its python/ folder goes first on sys.path, so the tests exercise that
build's thunder._C even when the venv's thunder.pth points elsewhere. Nothing is skipped:
without a built package the run stops with a message saying how to build it.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import sys

import pytest
import torch

def has_cuda_driver() -> bool:
    """Whether this machine has the CUDA driver (the tests of the no-GPU paths skip
    where it does)."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


TEST_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = TEST_DIR.parents[1]
# A relative THUNDER_BUILD_DIR is taken from the current directory, as tools/dev.sh does.
BUILD_DIR = pathlib.Path(os.environ.get("THUNDER_BUILD_DIR", REPO_ROOT / "build")).resolve()

sys.path.insert(0, str(TEST_DIR))  # zoo.py
sys.path.insert(0, str(BUILD_DIR / "python"))

_HOW_TO_BUILD = ("build it with tools/dev.sh build (or set THUNDER_BUILD_DIR to the build "
                 "directory)")
try:
    import thunder
except ImportError as error:
    pytest.exit(f"cannot import thunder from {BUILD_DIR / 'python'} ({error}): "
                f"{_HOW_TO_BUILD}", returncode=1)
# Not some other build's package that the venv's thunder.pth happens to name.
if pathlib.Path(thunder.__file__).resolve().parent != (BUILD_DIR / "python" / "thunder").resolve():
    pytest.exit(f"thunder was imported from {thunder.__file__}, not from "
                f"{BUILD_DIR / 'python'}: {_HOW_TO_BUILD}", returncode=1)


@pytest.fixture(scope="session")
def build_dir() -> pathlib.Path:
    return BUILD_DIR


@pytest.fixture(scope="session")
def thunder_compile(build_dir) -> pathlib.Path:
    """The thunder-compile binary of the build under test (a failure, not a skip, when it
    is missing)."""
    path = build_dir / "bin" / "thunder-compile"
    assert path.is_file(), f"{path} does not exist: build it with tools/dev.sh build"
    return path


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> pathlib.Path:
    """A thunder.compile cache of the test module's own: its tests reuse what earlier ones
    compiled, and nothing comes from (or goes to) the user's ~/.cache/thunder."""
    return tmp_path_factory.mktemp("thunder-cache")


def assert_close_tree(actual, expected, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """Same pytree structure (types included: a ModelOutput stays a ModelOutput), tensors
    equal within the tolerance, other leaves equal."""
    from torch.utils import _pytree as pytree

    assert type(actual) is type(expected), (type(actual), type(expected))
    actual_leaves, actual_spec = pytree.tree_flatten(actual)
    expected_leaves, expected_spec = pytree.tree_flatten(expected)
    assert actual_spec == expected_spec, (actual_spec, expected_spec)
    for a, e in zip(actual_leaves, expected_leaves):
        if isinstance(e, torch.Tensor):
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol)
        else:
            assert a == e


def pytest_configure(config):
    # A converter that refuses an op before decomposition is a bug the retry would hide.
    config.addinivalue_line("filterwarnings", "error::thunder.errors.DecompositionRetryWarning")
    # torch 2.13's own deprecation noise, raised inside torch (run_decompositions
    # deep-copies pytree specs; torch.jit is deprecated, and the TorchScript path is what
    # those tests are about).
    config.addinivalue_line("filterwarnings",
                            r"ignore:.*isinstance\(treespec, LeafSpec\).*:FutureWarning")
    config.addinivalue_line("filterwarnings",
                            r"ignore:`torch\.jit\.\w+` is deprecated:DeprecationWarning")
