#!/usr/bin/env python3
"""The graph pipeline on a GPT-2-style block written in the thunder dialect.

    .venv/bin/python examples/dialect_demo.py [--build-dir build]

Runs the pipelines the compiler runs (through thunder-opt) on
examples/mlir/transformer_block.mlir and shows the op histogram before and
after, and with composites decomposed into primitives.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mlir" / "transformer_block.mlir"


def run_opt(opt, args, text):
    start = time.perf_counter()
    proc = subprocess.run([str(opt), *args], input=text, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"thunder-opt {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout, elapsed


def histogram(ir):
    return collections.Counter(re.findall(r"= (thunder\.[a-z_]+)", ir))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    args = parser.parse_args()
    opt = pathlib.Path(args.build_dir) / "bin" / "thunder-opt"
    if not opt.exists():
        sys.exit(f"{opt} does not exist: run tools/dev.sh build first")

    source = EXAMPLE.read_text()
    print(f"== {EXAMPLE.relative_to(ROOT)}: a GPT-2-style block (1x128x768, 12 heads)\n")

    parsed, t_parse = run_opt(opt, ["--verify-each"], source)
    graph, t_graph = run_opt(opt, ["--thunder-graph-pipeline"], source)
    decomposed, t_decomp = run_opt(
        opt, ["--thunder-graph-pipeline=decompose-composites=true"], source)

    before, after, prims = histogram(parsed), histogram(graph), histogram(decomposed)
    names = sorted(set(before) | set(after) | set(prims))
    print(f"{'op':<24}{'as written':>12}{'graph':>8}{'decomposed':>12}")
    for name in names:
        print(f"{name:<24}{before[name]:>12}{after[name]:>8}{prims[name]:>12}")
    print(f"{'total':<24}{sum(before.values()):>12}{sum(after.values()):>8}"
          f"{sum(prims.values()):>12}\n")

    print("Columns: the block as written; after the graph pipeline (canonicalize,\n"
          "fold, CSE: the c_proj weight transpose becomes the matmul's transpose_rhs\n"
          "flag); and with composites decomposed into primitives for targets without\n"
          "fused kernels (layer_norm, sdpa and the softmax inside it).\n")
    print(f"verify {t_parse * 1e3:.0f} ms, graph pipeline {t_graph * 1e3:.0f} ms, "
          f"with decomposition {t_decomp * 1e3:.0f} ms (process start included)\n")

    print("Graph after the pipeline:\n")
    print(graph)


if __name__ == "__main__":
    main()
