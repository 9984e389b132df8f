"""The CPU side of the GPU check (tools/gpucheck): the bundle it writes, the models'
checksums the GPU side relies on, and the ctypes loader failing cleanly without a GPU.
The GPU side itself runs only on a GPU (bash .gpucheck/run.sh)."""
from __future__ import annotations

import ctypes
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
import torch

from conftest import REPO_ROOT, has_cuda_driver

sys.path.insert(0, str(REPO_ROOT / "tools" / "gpucheck"))
import bundle  # noqa: E402
import gpucheck  # noqa: E402
import models  # noqa: E402
import thunder_ctypes  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory, build_dir):
    out = tmp_path_factory.mktemp("bundle") / ".gpucheck"
    manifest = bundle.make_bundle(build_dir, out, ["mlp"], ["float32"], "sm_90a", jobs=1,
                                  max_mib=55.0)
    return out, manifest


def test_bundle_holds_everything_the_gpu_side_needs(made, tmp_path):
    out, manifest = made
    for name in ["libThunderRuntime.so", "zoo.py", "models.py", "thunder_ctypes.py",
                 "gpucheck.py", "run.sh", "inputs.pt", "manifest.json", bundle.ARCHIVE]:
        assert (out / name).is_file(), name
    assert json.loads((out / "manifest.json").read_text()) == manifest
    # A library with a dynamic batch, and the static-shape one of float32 at batch 8.
    dynamic, static = manifest["models"]
    assert (dynamic["model"], dynamic["dtype"], dynamic["batch"]) == ("mlp", "float32", None)
    assert (static["model"], static["dtype"], static["batch"]) == ("mlp", "float32", 8)
    # The libraries travel packed; the GPU side unpacks them beside the manifest, once.
    assert not (out / "models").exists()
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    gpucheck.unpack(copy, manifest)
    for entry in manifest["models"]:
        assert (copy / entry["library"]).is_file()
    assert (copy / manifest["pointwise"]).is_file() and (copy / manifest["gemm"]).is_file()
    # One library for both vendors: the CUDA cubin and a gfx942 code object.
    [vendors] = manifest["multivendor"]
    assert (vendors["model"], vendors["target"], vendors["arch"]) == (
        "mlp", "cuda,hip", "sm_90a,gfx942")
    sections = subprocess.run(["objdump", "-h", str(copy / vendors["library"])],
                              capture_output=True, text=True, check=True).stdout
    assert ".nv_fatbin" in sections and ".hip_fatbin" in sections
    (copy / dynamic["library"]).unlink()
    gpucheck.unpack(copy, manifest)
    assert not (copy / dynamic["library"]).exists()
    # Only what runs there: no headers, sources or build directories.
    assert not list(copy.rglob("*.h")) and not list(copy.rglob("*.cu"))
    assert not list(copy.rglob(".thunder-build*"))
    # The recorded checksums are those of the models and inputs built from the zoo.
    model, _ = models.build("mlp", batch=1)
    assert dynamic["checksum"] == static["checksum"] == models.checksum(model)
    inputs = torch.load(out / "inputs.pt")
    assert set(inputs) == {"mlp/b1", "mlp/b8"}
    assert inputs["mlp/b8"][0].shape[0] == 8
    for key, tensors in inputs.items():
        assert manifest["inputs_checksums"][key] == models.inputs_checksum(tensors)


def test_run_script_is_valid_bash(made):
    out, _ = made
    subprocess.run(["bash", "-n", str(out / "run.sh")], check=True)


def test_bundle_over_the_size_limit_is_refused(tmp_path, build_dir):
    with pytest.raises(SystemExit, match="over the 0.1 MiB the device tool can carry"):
        bundle.make_bundle(build_dir, tmp_path / "b", ["mlp"], ["float32"], "sm_90a", jobs=1,
                           max_mib=0.1, micro=False, static=False)


def test_checksum_is_deterministic_and_covers_every_weight():
    a, _ = models.build("mlp", batch=1)
    b, _ = models.build("mlp", batch=8)
    assert models.checksum(a) == models.checksum(b)
    with torch.no_grad():
        b.fc3.bias[3] += 1e-6
    assert models.checksum(a) != models.checksum(b)
    bf16, _ = models.build("mlp", batch=1, dtype="bfloat16")
    assert models.checksum(bf16) != models.checksum(a)
    # Parameters come from the check's own seed, not from the library's initialization.
    assert torch.equal(a.fc1.weight, models.build("mlp", batch=2)[0].fc1.weight)


@pytest.mark.skipif(has_cuda_driver(), reason="this machine has a CUDA driver")
def test_ctypes_loader_fails_cleanly_without_a_gpu(made):
    out, manifest = made
    runtime = thunder_ctypes.Runtime(str(out / "libThunderRuntime.so"))
    gpucheck.unpack(out, manifest)
    with pytest.raises(thunder_ctypes.ThunderError) as error:
        thunder_ctypes.Model(runtime, str(out / manifest["models"][0]["library"]))
    assert error.value.status == "THUNDER_ERROR_DEVICE"
    assert "compiled for CUDA, but this machine has no CUDA driver" in str(error.value)
    with pytest.raises(thunder_ctypes.ThunderError) as error:
        thunder_ctypes.Model(runtime, str(out / manifest["multivendor"][0]["library"]))
    assert error.value.status == "THUNDER_ERROR_DEVICE"
    assert "holds code for NVIDIA (CUDA) and AMD (HIP) GPUs, but neither" in str(error.value)
    with pytest.raises(thunder_ctypes.ThunderError) as error:
        thunder_ctypes.Model(runtime, str(out / "no-such-model.so"))
    assert error.value.status == "THUNDER_ERROR_LOAD"


def test_ctypes_loader_runs_a_cpu_model(tmp_path, build_dir):
    """The same loader on a CPU model: inputs, outputs and shapes cross as the GPU side
    passes them."""
    import thunder
    model, inputs = models.build("mlp", batch=2)
    program = thunder.export(model, inputs)
    library = program.module.compile(str(tmp_path), target="cpu", name="mlp")["library"]
    runtime = thunder_ctypes.Runtime(str(build_dir / "lib" / "libThunderRuntime.so"))
    compiled = thunder_ctypes.Model(runtime, library)
    try:
        assert compiled.device == "cpu" and compiled.vendor == "cpu"
        assert compiled.device_description.startswith("cpu")
        assert compiled.device_arch  # the -march it was built for
        [out] = compiled(*inputs)
        torch.testing.assert_close(out, model(*inputs), rtol=1e-4, atol=1e-4)
    finally:
        compiled.close()


class _FakeEvent:
    def __init__(self, enable_timing=False):
        self.t = 0.0

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


def _fake_gpu(monkeypatch, made, *, graph_fails=False, wrong_vendor=False):
    """gpucheck's torch with a CPU standing in for the GPU, and a Thunder model that runs
    the eager model (what the check compares with): the GPU side's control flow, not its
    numbers. With graph_fails, every run after a model's first fails as a broken CUDA
    graph would."""
    import types
    fake = types.ModuleType("torch")
    fake.__dict__.update(torch.__dict__)
    fake.device = lambda kind: torch.device("cpu")
    props = types.SimpleNamespace(name="FakeGPU", multi_processor_count=132, major=9, minor=0)
    fake.cuda = types.SimpleNamespace(
        Event=_FakeEvent, synchronize=lambda: None, get_device_properties=lambda d: props,
        current_stream=lambda: types.SimpleNamespace(cuda_stream=0))
    fake.compile = lambda model, **kw: model
    fake._dynamo = types.SimpleNamespace(reset=lambda: None)
    fake._inductor = types.SimpleNamespace(
        aoti_compile_and_package=lambda ep, package_path=None: package_path,
        aoti_load_package=lambda path: (lambda *x: None))
    # The microbenchmarks' 1 GiB vectors and 8192^2 matrices, made small.
    fake.randn = lambda *shape, **kw: torch.randn(
        *((min(shape[0], 1 << 16),) if len(shape) == 1 else (64, 64)), dtype=kw.get("dtype"))

    class FakeModel:
        def __init__(self, runtime, path):
            name = pathlib.Path(path).name
            self.graphs = os.environ.get("THUNDER_CUDA_GRAPHS") != "0"
            # What the runtime says of the GPU it chose (wrong_vendor: the HIP part).
            self.vendor, self.device_arch = ("hip", "gfx942") if wrong_vendor else ("cuda", "sm_90")
            self.device_description = f"{self.vendor.upper()} device 0: FakeGPU ({self.device_arch})"
            if name.startswith("libmlp"):
                dtype = "bfloat16" if "bfloat16" in name else "float32"
                self.fn = models.build("mlp", batch=1, dtype=dtype)[0]
            elif name == "libpointwise.so":
                self.fn = lambda x: torch.relu(x * 1.5 + 0.5)
            else:
                self.fn = lambda a, b: a @ b
            self.runs = 0

        def bind(self, inputs):
            outputs = [torch.empty_like(o) for o in models.flat_outputs(self.fn(*inputs))]

            def run():
                self.runs += 1
                if graph_fails and self.graphs and self.runs > 1:
                    raise thunder_ctypes.ThunderError("THUNDER_ERROR_DEVICE",
                                                      "cudaGraphInstantiate: bad")
                for o, r in zip(outputs, models.flat_outputs(self.fn(*inputs))):
                    o.copy_(r)
            return run, outputs

        def __call__(self, *inputs):
            run, outputs = self.bind(list(inputs))
            run()
            return outputs

        def close(self):
            pass

    monkeypatch.setattr(gpucheck, "torch", fake)

    def run_in_process(bundle_dir, column, name, dtype, batch, timeout):
        """run_isolated without the child process (which would import the real torch)."""
        manifest = json.loads((bundle_dir / "manifest.json").read_text())
        x = gpucheck.load_inputs(torch.load(bundle_dir / "inputs.pt"), manifest, name, batch,
                                 dtype, torch.device("cpu"))
        return gpucheck.time_other(column, models.build(name, batch=1, dtype=dtype)[0], x)
    monkeypatch.setattr(gpucheck, "run_isolated", run_in_process)
    monkeypatch.setattr(gpucheck, "thunder_ctypes", types.SimpleNamespace(
        Runtime=lambda path: None, Model=FakeModel, ThunderError=thunder_ctypes.ThunderError))
    # The check's clock starts when its module is imported (before torch, on the GPU
    # machine); here that was at collection, and the tests before this one must not
    # spend its budget.
    monkeypatch.setattr(gpucheck, "START", time.monotonic())
    out, manifest = made
    bundle_copy = pathlib.Path(tempfile.mkdtemp()) / "bundle"
    shutil.copytree(out, bundle_copy)
    return bundle_copy


def test_gpu_side_runs_end_to_end_on_a_fake_gpu(made, monkeypatch, tmp_path):
    bundle_dir = _fake_gpu(monkeypatch, made)
    monkeypatch.setenv("OUT", str(tmp_path))
    assert gpucheck.main(["--bundle", str(bundle_dir), "--budget", "600"]) == 0
    report = (tmp_path / "gpucheck.md").read_text()
    assert "GPU check" in report and "FakeGPU" in report
    # The dynamic-batch library at batch 1 and 8, the static one at 8, all checked.
    assert "| mlp | float32 | 1 | ok (" in report
    assert "| mlp | float32 | 8 | ok (" in report
    row8 = next(line for line in report.splitlines() if line.startswith("| mlp | float32 | 8 "))
    assert row8.count("ok (") == 2
    assert "float32 batch 8, static shapes: geomean speedup" in report
    # Every microbenchmark ran, and the other compilers were timed.
    assert report.count("| pointwise relu") == 2 and report.count("| GEMM bf16") == 4
    assert "FAILED" not in report and "skipped" not in report
    # The multi-vendor library ran its CUDA part, at both batches, checked.
    for batch in (1, 8):
        assert (f"| mlp | float32 | {batch} | cuda: CUDA device 0: FakeGPU (sm_90) | ok ("
                in report), report


def test_gpu_side_fails_a_multi_vendor_library_that_picks_hip(made, monkeypatch, tmp_path):
    bundle_dir = _fake_gpu(monkeypatch, made, wrong_vendor=True)
    monkeypatch.setenv("OUT", str(tmp_path))
    assert gpucheck.main(["--bundle", str(bundle_dir), "--budget", "600"]) == 1
    report = (tmp_path / "gpucheck.md").read_text()
    assert ("| mlp | float32 | 8 | hip: HIP device 0: FakeGPU (gfx942) | FAILED: RuntimeError: "
            "the runtime chose hip (gfx942), not the CUDA part for FakeGPU (sm_90) |") in report


def test_gpu_side_reports_a_failing_cuda_graph_and_times_without(made, monkeypatch, tmp_path):
    bundle_dir = _fake_gpu(monkeypatch, made, graph_fails=True)
    monkeypatch.setenv("OUT", str(tmp_path))
    # A failing graph fails the check, though the rows are still timed.
    assert gpucheck.main(["--bundle", str(bundle_dir), "--budget", "600"]) == 1
    report = (tmp_path / "gpucheck.md").read_text()
    row1 = next(line for line in report.splitlines() if line.startswith("| mlp | float32 | 1 "))
    assert "ok (" in row1 and "CUDA graph FAILED (THUNDER_ERROR_DEVICE" in row1
    assert "timed without graphs" in row1
    # Still timed: the thunder column holds a number.
    cells = [c.strip() for c in row1.split("|")]
    assert float(cells[6]) > 0


def test_gpu_side_runs_only_the_steps_asked_for(made, monkeypatch, tmp_path):
    bundle_dir = _fake_gpu(monkeypatch, made)
    monkeypatch.setenv("OUT", str(tmp_path))
    assert gpucheck.main(["--bundle", str(bundle_dir), "--budget", "600",
                          "--steps", "models,aoti:8"]) == 0
    report = (tmp_path / "gpucheck.md").read_text()
    assert "| mlp | float32 | 8 | ok (" in report
    assert "| pointwise relu" not in report and "cuda: CUDA device" not in report
    row8 = next(line for line in report.splitlines() if line.startswith("| mlp | float32 | 8 "))
    cells = [c.strip() for c in row8.split("|")]
    assert cells[8] == "-" and float(cells[12]) >= 0  # compile not run, AOTI timed
    with pytest.raises(SystemExit):
        gpucheck.main(["--bundle", str(bundle_dir), "--steps", "models,nonsense"])


def test_isolated_compiler_crash_is_the_rows_failure(monkeypatch, tmp_path):
    """A child that dies of a signal (as AOTInductor's loader did on the H200) is reported
    so; a child that prints its result is read back."""
    crash = tmp_path / "crash.py"
    crash.write_text("import faulthandler, os, signal\nfaulthandler.enable()\n"
                     "def load():\n    os.kill(os.getpid(), signal.SIGSEGV)\nload()\n")
    monkeypatch.setattr(gpucheck, "__file__", str(crash))
    with pytest.raises(RuntimeError, match=r"crashed \(SIGSEGV\) in .*crash.py:4 load"):
        gpucheck.run_isolated(tmp_path, "aoti", "mlp", "float32", 8, timeout=60)
    fine = tmp_path / "fine.py"
    fine.write_text(f"print('noise')\nprint({gpucheck.CHILD_MARK!r} + "
                    f"'{{\"ms\": 1.5, \"compiled_s\": 7.0}}')\n")
    monkeypatch.setattr(gpucheck, "__file__", str(fine))
    assert gpucheck.run_isolated(tmp_path, "aoti", "mlp", "float32", 8, timeout=60) == (1.5, 7.0)


def test_bfloat16_is_checked_against_float32_arithmetic():
    """bf16 outputs are measured against float32 arithmetic on the same weights, not
    elementwise against eager bf16 (whose own rounding differs where outputs are small)."""
    torch.manual_seed(0)
    reference = [torch.randn(64, 256)]
    eager = [reference[0].to(torch.bfloat16)]
    # Rounded differently from eager (as fp32 intermediates do): still within bf16 error.
    ours = [(reference[0] * (1 + 2e-3 * torch.randn(64, 256))).to(torch.bfloat16)]
    ok, detail = gpucheck.compare(ours, eager, "bfloat16", reference)
    assert ok, detail
    assert "rel err" in detail and "eager's" in detail
    wrong = [ours[0].clone()]
    wrong[0][3, :40] += 2.0  # a wrong block of one row
    assert not gpucheck.compare(wrong, eager, "bfloat16", reference)[0]
    # Where eager bf16's own error is over 1e-2 (llama on the H200: 1.2e-2), Thunder may
    # match it, not much more.
    coarse = [(reference[0] * (1 + 2e-2 * torch.randn(64, 256))).to(torch.bfloat16)]
    assert gpucheck.compare(coarse, coarse, "bfloat16", reference)[0]
    assert not gpucheck.compare(coarse, eager, "bfloat16", reference)[0]
    nan = [ours[0].clone()]
    nan[0][0, 0] = float("nan")
    assert not gpucheck.compare(nan, eager, "bfloat16", reference)[0]
    # float32 keeps the elementwise check against eager.
    assert gpucheck.compare([reference[0] + 1e-5], reference, "float32")[0]
    assert not gpucheck.compare([reference[0] + 1e-2], reference, "float32")[0]
