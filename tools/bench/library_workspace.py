#!/usr/bin/env python3
"""Where the CUDA target's library workspaces cost memory: in the planned arena, or per
stream after it.

    python tools/bench/library_workspace.py                # zoo at the GPU size, batch 8
    python tools/bench/library_workspace.py --batch 1 --models bert,gpt2

cuBLASLt and cuDNN calls each get 32 MiB of workspace. With static shapes
thunder-plan-memory places them in the arena (library-workspace: an interval per gemm/conv
kernel, live while kernels not ordered after it may run; same-stream neighbours share
bytes); a run-time arena (dynamic shapes) cannot, and the backend then gives every
stream 32 MiB after the arena (what it did for every model before). For every zoo model
(float32, static batch) this plans the fused kernels both ways with thunder-opt and
prints, as a markdown table, the streams, the arena without workspaces, the old layout
(that arena + 32 MiB per stream) and the arena with the workspaces planned in it.
No GPU is needed: it reads the plans.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import warnings

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))
from zoo import ZOO  # noqa: E402

WORKSPACE = 32 << 20  # lib/Target/CUDA/CUDABackend.cpp's kLibWorkspace


def plan(tools: pathlib.Path, fused: pathlib.Path, workspace: int) -> tuple[int, int]:
    """Arena bytes and stream count of the fused module planned with `workspace`."""
    out = subprocess.run(
        [str(tools / "thunder-opt"), str(fused), "--mlir-elide-resource-strings-if-larger=1",
         "-thunder-schedule", f"-thunder-plan-memory=library-workspace={workspace}"],
        check=True, capture_output=True, text=True).stdout
    arena = re.search(r"thunder\.arena = \{alignment = \d+ : i64, bytes = (-?\d+)", out)
    if not arena or int(arena.group(1)) < 0:
        raise SystemExit("the plan has a run-time arena: use a static batch")
    streams = max([int(s) for s in re.findall(r"thunder\.stream = (\d+)", out)] + [0]) + 1
    return int(arena.group(1)), streams


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(sorted(ZOO)))
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", default="gpu", choices=["small", "realistic", "gpu"])
    parser.add_argument("--build-dir", default=os.environ.get("THUNDER_BUILD_DIR", ROOT / "build"))
    args = parser.parse_args()
    tools = pathlib.Path(args.build_dir) / "bin"
    warnings.filterwarnings("ignore")
    mib = lambda b: f"{b / 2**20:.1f} MiB"
    print(f"| model ({args.size} size, batch {args.batch}, fp32) | streams | arena, no workspaces "
          f"| + 32 MiB per stream (before) | arena with workspaces (now) | saved |")
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, inputs = ZOO[name].build(size=args.size, batch=args.batch)
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            program = torch.export.export(model.eval(), inputs).run_decompositions()
            torch.export.save(program, tmp / "model.pt2")
            subprocess.run([str(tools / "thunder-compile"), str(tmp / "model.pt2"), "--target=cuda",
                            "--compile-to=fusion", "-o", str(tmp / "fused.mlir")],
                           check=True, capture_output=True)
            bare, streams = plan(tools, tmp / "fused.mlir", 0)
            planned, _ = plan(tools, tmp / "fused.mlir", WORKSPACE)
        before = bare + streams * WORKSPACE
        print(f"| {name} | {streams} | {mib(bare)} | {mib(before)} | {mib(planned)} "
              f"| {mib(before - planned)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
