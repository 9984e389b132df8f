"""thunder.compile with pack_weights=False (GEMM weights read in place, the default) against
pack_weights=True (packed at compile time, a second copy), per zoo model at batch 1 (or
--batch): both compiled, checked against eager, then called alternately in one process;
medians.

    .venv/bin/python tools/bench/pack_weights.py [--rounds N] [--batch B] MODEL [MODEL ...]
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "test" / "python"))

import thunder  # noqa: E402
import zoo  # noqa: E402


def first(value):
    return value if isinstance(value, torch.Tensor) else first(value[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("models", nargs="+", choices=sorted(zoo.ZOO))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| model | in place, ms | packed, ms | in place / packed |\n|---|---|---|---|")
    for name in args.models:
        model, inputs = zoo.ZOO[name].build("large", args.batch)
        rtol, atol = zoo.ZOO[name].tolerance
        with torch.no_grad():
            expected = first(model(*inputs))
            compiled = {pack: thunder.compile(model, inputs, pack_weights=pack, progress=False,
                                              name=f"{name}_{'packed' if pack else 'inplace'}")
                        for pack in (False, True)}
            times = {pack: [] for pack in compiled}
            for cm in compiled.values():
                torch.testing.assert_close(first(cm(*inputs)), expected, rtol=rtol, atol=atol)
                cm(*inputs)
            for _ in range(args.rounds):
                for pack, cm in compiled.items():
                    start = time.perf_counter()
                    cm(*inputs)
                    times[pack].append(time.perf_counter() - start)
        median = {pack: statistics.median(t) * 1e3 for pack, t in times.items()}
        print(f"| {name} | {median[False]:.1f} | {median[True]:.1f} | "
              f"{median[False] / median[True]:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
