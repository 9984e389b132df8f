"""A/B benchmark of Thunder's GEMM: the working tree's thunder_cpu_gemm.h against the one at
a git revision, in one process (gemm_ab.cpp: both headers compiled side by side under
renamed namespaces, alternating rounds), once per instruction set. What a change to the
microkernels or the blocking is measured with (docs/performance.md, GEMM microbenchmark):

    .venv/bin/python tools/bench/gemm_ab.py [--before REV] [--march native,x86-64-v3]
                                            [--threads N] [--b packed|nt|nn] [--cold] [M N K]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = "lib/Target/CPU/Support/thunder_cpu_gemm.h"
#: The headers HEADER includes (its parts): inlined into each variant, so that they are
#: renamed with it. Each is (path, its include line, its include guard).
PARTS = [(f"lib/Target/CPU/Support/{name}.h", f'#include "{name}.h"', name.upper() + "_H")
         for name in ("thunder_cpu_gemm_api", "thunder_cpu_gemm_pack", "thunder_cpu_gemm_dot")]


def renamed(text: str, parts: dict, name: str) -> str:
    """HEADER's text with its parts inlined (`parts`: include line -> the part's text; a
    revision from before a part was split off does not include it) and every namespace,
    guard and macro of its own renamed for variant `name`."""
    for include, part in parts.items():
        text = text.replace(include, part)
    for _, _, guard in PARTS:
        text = text.replace(guard, f"THUNDER_GEMM_AB_{guard}_{name}")
    return (text.replace("namespace thunder_gemm", f"namespace {name}")
            .replace("thunder_gemm::", f"{name}::")
            .replace("THUNDER_GEMM_HAS_DOT", f"THUNDER_GEMM_AB_HAS_DOT_{name}")
            .replace("THUNDER_CPU_GEMM_H", f"THUNDER_GEMM_AB_{name}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD", help="git revision of the baseline")
    parser.add_argument("--march", default="native,x86-64-v3",
                        help="comma-separated -march values, one run each")
    parser.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS")
    parser.add_argument("--b", default="packed", choices=["packed", "nt", "nn"],
                        help="B prepacked (a compiled model's weights), or given as is: "
                             "[n, k] (nt, nn.Linear's layout) or [k, n] (nn), packed per call")
    parser.add_argument("--cold", action="store_true",
                        help="each call reads another copy of B (packed or as given), 128 MiB in all: "
                             "weights from memory, as a model's are (alone, a shape's B stays "
                             "in L3 between calls)")
    parser.add_argument("shape", nargs="*", type=int, help="M N K: only this shape")
    args = parser.parse_args()
    def show(path: str) -> str:
        return subprocess.run(["git", "show", f"{args.before}:{path}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout

    old = show(HEADER)
    before = renamed(old, {include: show(path) for path, include, _ in PARTS
                           if include in old}, "before")
    after = renamed((ROOT / HEADER).read_text(),
                    {include: (ROOT / path).read_text() for path, include, _ in PARTS}, "after")
    with tempfile.TemporaryDirectory(prefix="gemm-ab-") as tmp:
        work = pathlib.Path(tmp)
        (work / "variants.h").write_text(
            before + "\n" + after +
            "\n#define VARIANTS V(before) V(after)\n")
        env = dict(os.environ)
        if args.threads:
            env["OMP_NUM_THREADS"] = str(args.threads)
        for march in args.march.split(","):
            binary = work / f"gemm_ab_{march}"
            subprocess.run(["c++", "-std=c++17", "-O2", f"-march={march}", "-fopenmp",
                            f"-I{work}", str(ROOT / "tools/bench/gemm_ab.cpp"), "-o",
                            str(binary)], check=True)
            print(f"\n-march={march}, before = {args.before}, after = the working tree\n",
                  flush=True)
            subprocess.run([str(binary), f"--b={args.b}", *(["--cold"] if args.cold else []),
                            *map(str, args.shape)], env=env,
                           check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
