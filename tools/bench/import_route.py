"""The two import routes side by side: torch.export's own (TRAINING-dialect) program
imported as it is, against the same program after PyTorch's run_decompositions.

    .venv/bin/python tools/bench/import_route.py [--models gpt2,bert,resnet18]
        [--size bench] [--batch 2] [--rounds 9]

For each model: two thunder.compile calls in one process (each with its own empty
cache), the second with capture's decision forced to decompose; their phase times, the
kernel units, the largest difference of each from eager, and, interleaved call by call
so that machine load hits both alike, the median time per call and the ratio
(direct / decomposed). Prints one JSON line per model.
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


def _first_tensor(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, dict):
        return _first_tensor(next(iter(value.values())))
    return _first_tensor(value[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt2,bert,resnet18")
    parser.add_argument("--size", default="bench")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    options = parser.parse_args()
    import torch

    import thunder
    from thunder import capture
    from zoo import CONV_ZOO, ZOO

    zoo = {**ZOO, **CONV_ZOO}
    decide = capture._needs_decomposition
    for name in options.models.split(","):
        model, inputs = zoo[name].build(size=options.size, batch=options.batch)
        compiled, row = {}, {"model": name}
        for route in ("direct", "decomposed"):
            capture._needs_decomposition = (
                decide if route == "direct" else lambda ep, table=None: True)
            try:
                with tempfile.TemporaryDirectory(prefix="thunder-route-") as cache:
                    cm = thunder.compile(model, cache_dir=cache, progress=False)
                    with torch.no_grad():
                        cm(*inputs)  # compiles; the library stays loaded
            finally:
                capture._needs_decomposition = decide
            record = cm.compiles[-1]
            row[route] = {"seconds": {k: round(v, 2) for k, v in record.seconds.items()}}
            compiled[route] = cm
        with torch.no_grad():
            expected = _first_tensor(model(*inputs))
            for route, cm in compiled.items():
                error = (_first_tensor(cm(*inputs)) - expected).abs().max().item()
                row[route]["max_error"] = error
            times = {route: [] for route in compiled}
            for round_ in range(options.rounds):
                order = list(compiled) if round_ % 2 else list(compiled)[::-1]
                for route in order:
                    start = time.perf_counter()
                    compiled[route](*inputs)
                    times[route].append(time.perf_counter() - start)
        for route in compiled:
            row[route]["ms"] = round(statistics.median(times[route]) * 1e3, 3)
        row["ratio"] = round(row["direct"]["ms"] / row["decomposed"]["ms"], 3)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
