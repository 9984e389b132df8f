"""examples/cpp-inference, built against an installed Thunder, gives PyTorch's numbers.

The full C++ user path: thunder-compile writes the artifact, `cmake --install`
installs Thunder into a scratch prefix, the example finds it with
find_package(Thunder CONFIG) and links only Thunder::runtime, and its printed
outputs match eager PyTorch (with a dynamic batch the compiled model never saw).
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest
import torch

from zoo import ZOO


@pytest.fixture(scope="module")
def installed_prefix(build_dir, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", str(build_dir), "--prefix", str(prefix)],
                   check=True, capture_output=True)
    return prefix


@pytest.fixture(scope="module")
def cpp_inference(installed_prefix, tmp_path_factory):
    root = build_root = tmp_path_factory.mktemp("cpp-inference")
    source = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "cpp-inference"
    configure = subprocess.run(
        ["cmake", "-G", "Ninja", "-S", str(source), "-B", str(build_root),
         f"-DCMAKE_PREFIX_PATH={installed_prefix}", "-DCMAKE_BUILD_TYPE=Release"],
        capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build = subprocess.run(["cmake", "--build", str(build_root)], capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    # The app links only the runtime: no MLIR or LLVM library in its dependencies.
    deps = subprocess.run(["ldd", str(root / "cpp-inference")], capture_output=True,
                          text=True).stdout
    assert "libThunderRuntime" in deps and "libMLIR" not in deps and "libLLVM" not in deps, deps
    return root / "cpp-inference"


def test_cpp_app_matches_pytorch(cpp_inference, thunder_compile, tmp_path):
    zoo = ZOO["mlp"]
    model, inputs = zoo.build(size="small", batch=2)
    ep = torch.export.export(model, inputs, dynamic_shapes=zoo.dynamic_batch(inputs))
    torch.export.save(ep.run_decompositions(), tmp_path / "mlp.pt2")
    subprocess.run([str(thunder_compile), str(tmp_path / "mlp.pt2"), "-o",
                    str(tmp_path / "out")], check=True, capture_output=True)

    _, inputs = zoo.build(size="small", batch=5)  # a batch the export never saw
    inputs[0].numpy().astype("<f4").tofile(tmp_path / "x.bin")
    run = subprocess.run([str(cpp_inference), str(tmp_path / "out" / "libmlp.so"),
                          str(tmp_path / "x.bin")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "output 0 float32 [5, 10]", run.stdout
    got = np.array([float(v) for v in lines[1:]], dtype=np.float32).reshape(5, 10)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_cpp_app_reports_a_wrong_input(cpp_inference, thunder_compile, tmp_path):
    zoo = ZOO["mlp"]
    model, inputs = zoo.build(size="small", batch=2)
    torch.export.save(torch.export.export(model, inputs).run_decompositions(),
                      tmp_path / "mlp.pt2")
    subprocess.run([str(thunder_compile), str(tmp_path / "mlp.pt2"), "-o",
                    str(tmp_path / "out")], check=True, capture_output=True)
    # Batch 3 for a model compiled with a static batch of 2.
    np.zeros((3, 32), dtype="<f4").tofile(tmp_path / "x.bin")
    run = subprocess.run([str(cpp_inference), str(tmp_path / "out" / "libmlp.so"),
                          str(tmp_path / "x.bin")], capture_output=True, text=True)
    assert run.returncode == 1
    assert "the file for input 'x' has 384 bytes" in run.stderr, run.stderr
