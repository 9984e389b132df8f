"""Makes the GPU check's bundle (the CPU side of `tools/dev.sh gpu-check`).

    python tools/gpucheck/bundle.py --build-dir build --out .gpucheck

compiles every zoo model for CUDA in float32 and bfloat16: one library each with a dynamic
batch (run at batch 1 and 8: the run-time arena, composite norms and softmax), and
libraries of static shapes (bfloat16 at batch 1 and 8, float32 at batch 8: decomposed and
fused norms and softmax, a planned arena with the library workspaces in it, what
`thunder-compile` makes of a static export); every model for the tpu target in float32
at batch 8 (StableHLO that the GPU side runs through XLA's CUDA PJRT plugin, the
jax-cuda13-pjrt package of the GPU machine's image); one model (llama where the zoo
list has it) for `--target=cuda,hip` (the --cuda-arch cubin and a gfx942 code object),
whose runtime must pick the CUDA part on the GPU machine; a fused pointwise kernel and a
GEMM for the microbenchmarks. It writes them to --out, the libraries packed in libraries.tar.xz (xz
at preset 9 keeps one copy of the weights the libraries of a model share), with the
runtime library, the reference inputs, each model's state_dict checksum and the GPU-side
scripts. The GPU machine has no MLIR and a Python that cannot import thunder._C: it runs
`bash .gpucheck/run.sh`, which unpacks the libraries and loads the runtime through
ctypes. Everything must fit in --max-mib (the device tool carries 64 MiB with the source
tree).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]

#: The fused pointwise kernel of the bandwidth benchmark: y = relu(x * 1.5 + 0.5), one
#: read and one write per element, over a dynamic length.
POINTWISE_MLIR = """
func.func @main(%x: tensor<?xf32> {thunder.name = "x", thunder.dim_symbols = ["n"]}) -> tensor<?xf32> {
  %y = thunder.fusion pointwise "fused_scale_shift_relu" (%x) : (tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: tensor<?xf32>):
    %s = thunder.constant dense<1.5> : tensor<f32>
    %b = thunder.constant dense<0.5> : tensor<f32>
    %sb = thunder.broadcast %s, dims = [] : tensor<f32> -> tensor<?xf32>
    %bb = thunder.broadcast %b, dims = [] : tensor<f32> -> tensor<?xf32>
    %m = thunder.mul %a, %sb : tensor<?xf32>
    %t = thunder.add %m, %bb : tensor<?xf32>
    %r = thunder.relu %t : tensor<?xf32>
    thunder.yield %r : tensor<?xf32>
  }
  return %y : tensor<?xf32>
}
"""

#: A bf16 GEMM over dynamic sizes, for the comparison with cuBLAS called directly.
GEMM_MLIR = """
func.func @main(%a: tensor<?x?xbf16> {thunder.name = "a", thunder.dim_symbols = ["m", "k"]},
                %b: tensor<?x?xbf16> {thunder.name = "b", thunder.dim_symbols = ["k", "n"]}) -> tensor<?x?xbf16> {
  %c = thunder.matmul %a, %b : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
  return %c : tensor<?x?xbf16>
}
"""

GPU_SIDE_FILES = ["models.py", "thunder_ctypes.py", "gpucheck.py", "run.sh"]

#: The static-shape libraries of every model: (dtype, batch).
STATIC = (("bfloat16", 1), ("bfloat16", 8), ("float32", 8))

#: The batch of the tpu-target libraries (run through XLA's CUDA PJRT plugin).
PJRT_BATCH = 8

#: The AMD architecture of the multi-vendor (cuda,hip) library: one code object keeps it
#: small; the GPU machine runs its CUDA part.
MULTIVENDOR_HIP_ARCH = "gfx942"

#: The archive the libraries travel in (gpucheck.unpack opens it there).
ARCHIVE = "libraries.tar.xz"


def _compile_model(build_dir: str, out: str, name: str, dtype: str, cuda_arch: str,
                   batch: int | None = None, target: str = "cuda") -> dict:
    """Compiles one model (in a worker process) and returns its manifest entry: with a
    dynamic batch, or static shapes at `batch`; for target "cuda,hip" one library with
    code for both vendors (`cuda_arch` and MULTIVENDOR_HIP_ARCH)."""
    sys.path.insert(0, str(pathlib.Path(build_dir) / "python"))
    sys.path.insert(0, str(REPO / "test" / "python"))
    sys.path.insert(0, str(HERE))
    import torch
    import thunder
    import models
    from zoo import ZOO

    start = time.monotonic()
    model, inputs = models.build(name, batch=batch or 8, dtype=dtype)
    reference, _ = models.build(name, batch=8, dtype="float32")
    dynamic = ZOO[name].dynamic_batch(inputs) if batch is None else None
    program = thunder.export(model, inputs, dynamic_shapes=dynamic)
    artifact = f"{name}_{dtype}" + (f"_b{batch}" if batch else "") + \
        ("_cuda_hip" if target == "cuda,hip" else "")
    directory = pathlib.Path(out) / "models" / artifact
    arch = f"{cuda_arch},{MULTIVENDOR_HIP_ARCH}" if target == "cuda,hip" else cuda_arch
    result = program.module.compile(str(directory), target=target, name=artifact, arch=arch)
    # The header is not needed on the GPU side.
    pathlib.Path(result["header"]).unlink()
    return {"model": name, "dtype": dtype, "batch": batch, "target": target, "arch": arch,
            "library": os.path.relpath(result["library"], out),
            "checksum": models.checksum(model), "fp32_checksum": models.checksum(reference),
            "seconds": round(time.monotonic() - start, 1)}


def _compile_pjrt(build_dir: str, out: str, name: str) -> dict:
    """Compiles one model for the tpu target (in a worker process): float32, static batch
    8, run on the GPU machine through XLA's CUDA PJRT plugin."""
    sys.path.insert(0, str(pathlib.Path(build_dir) / "python"))
    sys.path.insert(0, str(REPO / "test" / "python"))
    sys.path.insert(0, str(HERE))
    import thunder
    import models

    start = time.monotonic()
    model, inputs = models.build(name, batch=PJRT_BATCH)
    program = thunder.export(model, inputs)
    artifact = f"{name}_tpu_b{PJRT_BATCH}"
    directory = pathlib.Path(out) / "models" / artifact
    result = program.module.compile(str(directory), target="tpu", name=artifact)
    pathlib.Path(result["header"]).unlink()
    return {"model": name, "dtype": "float32", "batch": PJRT_BATCH,
            "library": os.path.relpath(result["library"], out),
            "checksum": models.checksum(model),
            "seconds": round(time.monotonic() - start, 1)}


def _compile_mlir(thunder_compile: pathlib.Path, text: str, name: str, out: pathlib.Path,
                  cuda_arch: str) -> str:
    source = out / "micro" / f"{name}.mlir"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(text)
    directory = out / "micro" / name
    subprocess.run([str(thunder_compile), str(source), "--target=cuda", f"--cuda-arch={cuda_arch}",
                    "-o", str(directory), "--name", name], check=True, capture_output=True,
                   text=True)
    source.unlink()
    (directory / f"{name}.h").unlink()
    return os.path.relpath(directory / f"lib{name}.so", out)


def _pack(out: pathlib.Path, folders: list[str]) -> None:
    """Moves `folders` of `out` into out/ARCHIVE, a model's libraries side by side so
    that xz's 64 MiB window finds the weights they share."""
    with tarfile.open(out / ARCHIVE, "w:xz", preset=9) as tar:
        for folder in folders:
            for path in sorted((out / folder).rglob("*")):
                if path.is_file():
                    tar.add(path, arcname=str(path.relative_to(out)))
    for folder in folders:
        shutil.rmtree(out / folder)


def _size_mib(path: pathlib.Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def make_bundle(build_dir: pathlib.Path, out: pathlib.Path, names: list[str],
                dtypes: list[str], cuda_arch: str, jobs: int, max_mib: float,
                micro: bool = True, static: bool = True, pjrt: bool = True,
                multivendor: bool = True) -> dict:
    """Writes the bundle and returns its manifest."""
    sys.path.insert(0, str(REPO / "test" / "python"))
    sys.path.insert(0, str(HERE))
    import torch
    import models

    runtime = build_dir / "lib" / "libThunderRuntime.so"
    thunder_compile = build_dir / "bin" / "thunder-compile"
    for needed in (runtime, thunder_compile):
        if not needed.exists():
            raise SystemExit(f"{needed} does not exist: build Thunder first (tools/dev.sh build)")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # The runtime (its real file, not the symlinks) and the GPU side's Python.
    shutil.copy2(runtime.resolve(), out / "libThunderRuntime.so")
    shutil.copy2(REPO / "test" / "python" / "zoo.py", out / "zoo.py")
    for name in GPU_SIDE_FILES:
        shutil.copy2(HERE / name, out / name)

    # Reference inputs, built from the zoo with the models' seed.
    inputs = {}
    for name in names:
        for batch in models.BATCHES:
            _, example = models.build(name, batch=batch)
            inputs[f"{name}/b{batch}"] = list(example)
    torch.save(inputs, out / "inputs.pt")

    entries = []
    # Fresh interpreters (spawn): forking a process that has run torch can hang.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        variants = [(dtype, None) for dtype in dtypes]
        if static:
            variants += [(dtype, batch) for dtype, batch in STATIC if dtype in dtypes]
        futures = [pool.submit(_compile_model, str(build_dir), str(out), name, dtype, cuda_arch,
                               batch)
                   for name in names for dtype, batch in variants]
        pjrt_futures = [pool.submit(_compile_pjrt, str(build_dir), str(out), name)
                        for name in names] if pjrt else []
        # One model for NVIDIA and AMD GPUs (float32, dynamic batch).
        vendor_model = "llama" if "llama" in names else names[0]
        vendor_future = pool.submit(_compile_model, str(build_dir), str(out), vendor_model,
                                    "float32", cuda_arch, None, "cuda,hip") \
            if multivendor else None
        for future in futures:
            entry = future.result()
            shapes = f"static batch {entry['batch']}" if entry["batch"] else "dynamic batch"
            print(f"[bundle] {entry['model']} {entry['dtype']} ({shapes}): "
                  f"{entry['seconds']} s", flush=True)
            entries.append(entry)
        pjrt_entries = []
        for future in pjrt_futures:
            entry = future.result()
            print(f"[bundle] {entry['model']} float32 (tpu target, batch {entry['batch']}): "
                  f"{entry['seconds']} s", flush=True)
            pjrt_entries.append(entry)
        multivendor_entries = []
        if vendor_future is not None:
            entry = vendor_future.result()
            print(f"[bundle] {entry['model']} float32 (cuda,hip for {entry['arch']}): "
                  f"{entry['seconds']} s", flush=True)
            multivendor_entries.append(entry)
    manifest = {"models": entries, "pjrt": pjrt_entries, "multivendor": multivendor_entries, "batches": list(models.BATCHES), "cuda_arch": cuda_arch,
                "torch_here": torch.__version__,
                "inputs_checksums": {k: models.inputs_checksum(v) for k, v in inputs.items()}}
    if micro:
        manifest["pointwise"] = _compile_mlir(thunder_compile, POINTWISE_MLIR, "pointwise", out,
                                              cuda_arch)
        manifest["gemm"] = _compile_mlir(thunder_compile, GEMM_MLIR, "gemm", out, cuda_arch)
    manifest["archive"] = ARCHIVE
    print(f"[bundle] packing the libraries ({_size_mib(out):.1f} MiB) into {ARCHIVE}",
          flush=True)
    _pack(out, ["models"] + (["micro"] if micro else []))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    size = _size_mib(out)
    print(f"[bundle] {out}: {size:.1f} MiB", flush=True)
    if size > max_mib:
        raise SystemExit(f"the bundle is {size:.1f} MiB, over the {max_mib} MiB the device "
                         f"tool can carry: make the 'gpu' sizes in test/python/zoo.py smaller")
    return manifest


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=str(REPO / "build"))
    parser.add_argument("--out", default=str(REPO / ".gpucheck"))
    parser.add_argument("--models", nargs="*", default=None, help="default: the whole zoo")
    parser.add_argument("--dtypes", nargs="*", default=["float32", "bfloat16"])
    parser.add_argument("--cuda-arch", default="sm_90a",
                        help="the H200 runs sm_90a code (one cubin keeps the bundle small)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-mib", type=float, default=55.0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "test" / "python"))
    sys.path.insert(0, str(HERE))
    import models
    make_bundle(pathlib.Path(args.build_dir).resolve(), pathlib.Path(args.out).resolve(),
                args.models or models.MODELS, args.dtypes, args.cuda_arch, args.jobs,
                args.max_mib)


if __name__ == "__main__":
    main()
