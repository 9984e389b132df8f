"""A dynamic-batch artifact against static ones, batch by batch (issue 17, item 4).

    .venv/bin/python tools/bench/dynamic_static.py [--models mlp,bert] [--size small]
        [--batches 1,4,16,64] [--rounds 20]

For each model: one thunder.compile with the batch dynamic in [1, max(batches)]
(dynamic_shapes with a Dim of that range) and, for each batch, a static compile
(dynamic=False); then, interleaved call by call so that machine load hits both alike, the
median time per call of each at that batch, and their ratio (dynamic / static; the target
is <= 1.05). Prints one JSON line per (model, batch).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp,bert")
    parser.add_argument("--size", default="small")
    parser.add_argument("--batches", default="1,4,16")
    parser.add_argument("--rounds", type=int, default=20)
    options = parser.parse_args()
    import torch

    import thunder
    from zoo import ZOO
    batches = [int(b) for b in options.batches.split(",")]
    with tempfile.TemporaryDirectory(prefix="thunder-dyn-") as cache:
        for name in options.models.split(","):
            model, inputs = ZOO[name].build(size=options.size, batch=max(2, batches[-1]))
            batch = torch.export.Dim("batch", min=1, max=max(batches[-1], 2))
            dynamic = thunder.compile(
                model, inputs, cache_dir=cache, progress=False,
                dynamic_shapes=tuple({0: batch} for _ in inputs))
            for b in batches:
                _, at = ZOO[name].build(size=options.size, batch=b)
                static = thunder.compile(model, at, cache_dir=cache, progress=False,
                                         dynamic=False)
                times = {"dynamic": [], "static": []}
                for _ in range(3):
                    dynamic(*at), static(*at)
                for _ in range(options.rounds):
                    for label, compiled in (("dynamic", dynamic), ("static", static)):
                        start = time.perf_counter()
                        compiled(*at)
                        times[label].append(time.perf_counter() - start)
                d, s = (statistics.median(times[k]) * 1e3 for k in ("dynamic", "static"))
                print(json.dumps({"model": name, "batch": b, "dynamic_ms": round(d, 3),
                                  "static_ms": round(s, 3), "ratio": round(d / s, 3)}),
                      flush=True)


if __name__ == "__main__":
    main()
