"""The contenders: how each one compiles a model, loads what it compiled, and runs it.

Every contender's prepare() compiles into `workdir` (its own directory for the case) or,
when an earlier process left a finished artifact there, loads it: the memory worker
compiles in a fresh process with empty caches (the compile time that is reported) and the
case worker loads the same artifact for timing. torch.compile leaves no artifact; the case
worker compiles again with the worker's Inductor cache.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Any, Callable

import torch
from torch.utils import _pytree as pytree

from bench import ALL, LABELS, THUNDER_RUN  # noqa: F401 - re-exported


def tensor_leaves(result: Any) -> list:
    """The tensors of a model's output pytree (a tensor, tuples, transformers' ModelOutput),
    in pytree order: the order in which torch.export, ONNX and Thunder number outputs."""
    return [leaf for leaf in pytree.tree_leaves(result) if isinstance(leaf, torch.Tensor)]


@dataclasses.dataclass
class Prepared:
    """A contender ready to run the case's inputs."""
    call: Callable[[], Any]            #: one inference; returns the raw result
    leaves: Callable[[Any], list]      #: the result's output tensors, in eager's order
    compiled: bool = False             #: compiled here (False: loaded a finished artifact)
    compile_s: float | None = None     #: from the model to a runnable callable
    detail: dict = dataclasses.field(default_factory=dict)  #: seconds per phase, notes
    artifact: str | None = None        #: what it compiled to (path)


@dataclasses.dataclass
class Context:
    threads: int
    device: str                        #: "cpu" or "cuda"
    build_dir: pathlib.Path            #: Thunder's build (bin/thunder-compile)


def _done(directory: pathlib.Path) -> bool:
    return (directory / ".done").exists()


def _finish(directory: pathlib.Path) -> None:
    (directory / ".done").write_text("")


def _fresh(directory: pathlib.Path) -> pathlib.Path:
    """An empty directory (a half-written artifact from a failed run is removed)."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    return directory


def _inductor_cache(workdir: pathlib.Path) -> bool:
    """Points Inductor's on-disk cache at the contender's own directory; True when it was
    there already (a warm cache: an earlier process compiled the same graphs)."""
    cache = workdir / "inductor-cache"
    warm = cache.exists() and any(cache.iterdir())
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    return warm


class Contender:
    name = ""          #: key in results.json and on the command line
    label = ""         #: column header
    serves_without_model = False
    """The artifact runs without the PyTorch model (AOTInductor, ONNX, Thunder's C++
    runtime): its memory is measured in a process that loads only the artifact."""

    def prepare(self, model, inputs: tuple, workdir: pathlib.Path, ctx: Context) -> Prepared:
        raise NotImplementedError


class Eager(Contender):
    name, label = "eager", "eager"

    def prepare(self, model, inputs, workdir, ctx):
        return Prepared(call=lambda: model(*inputs), leaves=tensor_leaves)


class TorchCompile(Contender):
    name, label = "torch.compile", "torch.compile"

    def prepare(self, model, inputs, workdir, ctx):
        warm = _inductor_cache(workdir)
        torch._dynamo.reset()
        compiled = torch.compile(model)  # default mode: what a user writes first
        start = time.perf_counter()
        compiled(*inputs)
        first = time.perf_counter() - start
        steady = []
        for _ in range(2):
            start = time.perf_counter()
            compiled(*inputs)
            steady.append(time.perf_counter() - start)
        # The first call compiles and then runs: the compile is what it took beyond a run.
        seconds = max(0.0, first - min(steady))
        return Prepared(call=lambda: compiled(*inputs), leaves=tensor_leaves, compiled=True,
                        compile_s=seconds,
                        detail={"first_call_s": first, "inductor_cache": "warm" if warm
                                else "empty"})


class AOTInductor(Contender):
    name, label = "aotinductor", "AOTInductor"
    serves_without_model = True

    def prepare(self, model, inputs, workdir, ctx):
        directory = workdir / "aoti"
        package = directory / "model.pt2"
        detail, compiled, total = {}, False, None
        if not _done(directory):
            _fresh(directory)
            _inductor_cache(workdir)
            start = time.perf_counter()
            ep = torch.export.export(model, inputs)
            detail["export_s"] = time.perf_counter() - start
            mark = time.perf_counter()
            torch._inductor.aoti_compile_and_package(ep, package_path=str(package))
            detail["aoti_compile_and_package_s"] = time.perf_counter() - mark
            del ep
            _finish(directory)
            compiled = True
        mark = time.perf_counter()
        runner = torch._inductor.aoti_load_package(str(package))
        detail["load_s"] = time.perf_counter() - mark
        if compiled:
            total = detail["export_s"] + detail["aoti_compile_and_package_s"] + detail["load_s"]
        return Prepared(call=lambda: runner(*inputs), leaves=tensor_leaves, compiled=compiled,
                        compile_s=total, detail=detail, artifact=str(package))


class OnnxRuntime(Contender):
    name, label = "onnxruntime", "ONNX Runtime"
    serves_without_model = True

    def prepare(self, model, inputs, workdir, ctx):
        import onnxruntime as ort
        directory = workdir / "onnx"
        path = directory / "model.onnx"
        providers = ["CPUExecutionProvider"]
        if ctx.device == "cuda":
            if "CUDAExecutionProvider" not in ort.get_available_providers():
                raise RuntimeError("this onnxruntime has no CUDAExecutionProvider "
                                   "(pip install onnxruntime-gpu)")
            providers = ["CUDAExecutionProvider"]
        detail, compiled, total = {}, False, None
        if not _done(directory):
            _fresh(directory)
            start = time.perf_counter()
            # The dynamo-based exporter (torch.export, then onnxscript's translation).
            torch.onnx.export(model, inputs, str(path), dynamo=True, verbose=False)
            detail["export_s"] = time.perf_counter() - start
            _finish(directory)
            compiled = True
        options = ort.SessionOptions()
        options.intra_op_num_threads = ctx.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        mark = time.perf_counter()
        session = ort.InferenceSession(str(path), options, providers=providers)
        detail["session_s"] = time.perf_counter() - mark
        if compiled:
            total = detail["export_s"] + detail["session_s"]
        names = [i.name for i in session.get_inputs()]
        if len(names) != len(inputs):
            raise RuntimeError(f"the ONNX model takes {len(names)} inputs "
                               f"({', '.join(names)}), the model {len(inputs)}")
        feeds = {name: value.detach().cpu().numpy() for name, value in zip(names, inputs)}
        return Prepared(call=lambda: session.run(None, feeds), leaves=list,
                        compiled=compiled, compile_s=total, detail=detail,
                        artifact=str(path))


def _bench_packages() -> None:
    """Makes the contenders that tools/dev.sh bench installs on demand (OpenVINO, IREE)
    importable: they live in a directory of their own (THUNDER_BENCH_PACKAGES), not in
    the project's environment, and come after it on the path, so the environment's
    torch and numpy stay the ones used."""
    path = os.environ.get("THUNDER_BENCH_PACKAGES")
    if path and path not in sys.path:
        sys.path.append(path)


def _import_or_explain(module: str, package: str):
    _bench_packages()
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as error:
        raise RuntimeError(f"{package} is not installed ({error}); tools/dev.sh bench "
                           f"installs it into build/bench-packages") from error


class OpenVino(Contender):
    """OpenVINO's CPU plugin on the model converted from PyTorch (ov.convert_model),
    fp32 inference precision (its default on bf16-capable CPUs is bf16), its own
    thread count set to the case's, the latency hint."""
    name, label = "openvino", "OpenVINO"
    serves_without_model = True

    def prepare(self, model, inputs, workdir, ctx):
        if ctx.device != "cpu":
            raise RuntimeError("OpenVINO runs here on the CPU only")
        ov = _import_or_explain("openvino", "openvino")
        directory = workdir / "openvino"
        path = directory / "model.xml"
        detail, compiled, total = {}, False, None
        if not _done(directory):
            _fresh(directory)
            start = time.perf_counter()
            converted = ov.convert_model(model, example_input=inputs)
            ov.save_model(converted, str(path), compress_to_fp16=False)
            detail["convert_s"] = time.perf_counter() - start
            _finish(directory)
            compiled = True
        mark = time.perf_counter()
        core = ov.Core()
        network = core.compile_model(str(path), "CPU", {
            "INFERENCE_NUM_THREADS": str(ctx.threads), "INFERENCE_PRECISION_HINT": "f32",
            "PERFORMANCE_HINT": "LATENCY"})
        detail["compile_model_s"] = time.perf_counter() - mark
        if compiled:
            total = detail["convert_s"] + detail["compile_model_s"]
        if len(network.inputs) != len(inputs):
            raise RuntimeError(f"the OpenVINO model takes {len(network.inputs)} inputs, "
                               f"the model {len(inputs)}")
        request = network.create_infer_request()
        feeds = [value.detach().cpu().numpy() for value in inputs]
        outputs = list(network.outputs)
        return Prepared(call=lambda: request.infer(feeds),
                        leaves=lambda result: [result[o] for o in outputs],
                        compiled=compiled, compile_s=total, detail=detail,
                        artifact=str(path))


class Iree(Contender):
    """IREE: iree-turbine's aot.export of the model, iree-compile for llvm-cpu with
    the host CPU (--iree-llvmcpu-target-cpu=host), run by iree.runtime's local-task
    driver with the case's thread count."""
    name, label = "iree", "IREE"
    serves_without_model = True

    def prepare(self, model, inputs, workdir, ctx):
        if ctx.device != "cpu":
            raise RuntimeError("IREE runs here on the CPU only (llvm-cpu)")
        compiler = _import_or_explain("iree.compiler", "iree-base-compiler")
        runtime = _import_or_explain("iree.runtime", "iree-base-runtime")
        directory = workdir / "iree"
        vmfb = directory / "model.vmfb"
        detail, compiled, total = {}, False, None
        if not _done(directory):
            _fresh(directory)
            aot = _import_or_explain("iree.turbine.aot", "iree-turbine")
            start = time.perf_counter()
            exported = aot.export(model, args=tuple(inputs))
            mlir = directory / "model.mlir"
            exported.save_mlir(str(mlir))
            detail["export_s"] = time.perf_counter() - start
            mark = time.perf_counter()
            compiler.compile_file(str(mlir), target_backends=["llvm-cpu"],
                                  extra_args=["--iree-llvmcpu-target-cpu=host"],
                                  output_file=str(vmfb))
            detail["iree_compile_s"] = time.perf_counter() - mark
            _finish(directory)
            compiled = True
        mark = time.perf_counter()
        runtime.flags.parse_flags(f"--task_topology_max_group_count={ctx.threads}")
        config = runtime.Config("local-task")
        context = runtime.SystemContext(config=config)
        context.add_vm_module(runtime.VmModule.mmap(config.vm_instance, str(vmfb)))
        function = context.modules.module["main"]
        detail["load_s"] = time.perf_counter() - mark
        if compiled:
            total = detail["export_s"] + detail["iree_compile_s"] + detail["load_s"]
        feeds = [value.detach().cpu().numpy() for value in inputs]

        def leaves(result):
            items = result if isinstance(result, (list, tuple)) else [result]
            return [item.to_host() for item in items]

        call = lambda: function(*feeds)  # noqa: E731
        call.keep_alive = context
        return Prepared(call=call, leaves=leaves, compiled=compiled, compile_s=total,
                        detail=detail, artifact=str(vmfb))


class Thunder(Contender):
    name, label = "thunder", "Thunder"

    def prepare(self, model, inputs, workdir, ctx):
        import thunder
        start = time.perf_counter()
        compiled = thunder.compile(model, inputs, target=ctx.device,
                                   cache_dir=workdir / "thunder-cache", progress=False)
        seconds = time.perf_counter() - start
        record = compiled.compiles[0]
        detail = {k: round(v, 3) for k, v in record.seconds.items()}
        detail["source"] = record.source
        if record.process_peak_mb is not None:  # compiled in a process of its own
            detail["process_peak_mb"] = round(record.process_peak_mb, 1)
        built = record.source == "compiled"
        return Prepared(call=lambda: compiled(*inputs), leaves=tensor_leaves,
                        compiled=built, compile_s=seconds if built else None, detail=detail,
                        artifact=record.path)


class ThunderRuntime(Contender):
    """thunder-compile (the CLI) on a .pt2, then the C++ runtime called once per inference
    through thunder.load's binding with preallocated outputs, as a C++ application calls
    thunder::Model::run: no Python between the kernels, none around them but the call."""
    name, label = "thunder-rt", "Thunder C++ rt"
    serves_without_model = True

    def prepare(self, model, inputs, workdir, ctx):
        import thunder
        from thunder import capture
        from thunder.runtime import _TORCH_DTYPES, _input_views
        directory = workdir / "thunder-rt"
        out = directory / "out"
        detail, compiled, total = {}, False, None
        if not _done(directory):
            _fresh(directory)
            start = time.perf_counter()
            archive = directory / "model.pt2"
            torch.export.save(capture.capture(model, inputs), archive)
            detail["export_s"] = time.perf_counter() - start
            tool = ctx.build_dir / "bin" / "thunder-compile"
            mark = time.perf_counter()
            result = subprocess.run([str(tool), str(archive), f"--target={ctx.device}",
                                     "--name=model", "-o", str(out)],
                                    capture_output=True, text=True)
            detail["thunder_compile_s"] = time.perf_counter() - mark
            if result.returncode != 0:
                lines = (result.stderr or result.stdout).strip().splitlines()
                raise RuntimeError("thunder-compile failed: " + " | ".join(lines[:6]))
            _finish(directory)
            compiled = True
        mark = time.perf_counter()
        loaded = thunder.load(out)
        detail["load_s"] = time.perf_counter() - mark
        if compiled:
            total = detail["export_s"] + detail["thunder_compile_s"] + detail["load_s"]
        native = loaded.native
        views, keep_alive = _input_views(native, inputs)
        shapes = native.output_shapes(views)
        outputs = [torch.empty(shape, dtype=_TORCH_DTYPES[desc.dtype])
                   for shape, desc in zip(shapes, native.outputs)]
        out_views = [(o.data_ptr(), desc.dtype, shape)
                     for o, desc, shape in zip(outputs, native.outputs, shapes)]

        def call():
            native.run(views, out_views)
            return outputs

        call.keep_alive = (keep_alive, loaded)  # the inputs' memory the views point into
        return Prepared(call=call, leaves=lambda result: [o.clone() for o in result],
                        compiled=compiled, compile_s=total, detail=detail,
                        artifact=str(out))


CONTENDERS: dict[str, Contender] = {c.name: c for c in [
    Eager(), TorchCompile(), AOTInductor(), OnnxRuntime(), OpenVino(), Iree(), Thunder(),
    ThunderRuntime()]}
assert list(CONTENDERS) + [THUNDER_RUN] == ALL and \
    all(LABELS[c.name] == c.label for c in CONTENDERS.values())
