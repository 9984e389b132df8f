"""A dynamic-shape artifact against static ones, size by size (issue 17, item 4).

    .venv/bin/python tools/bench/dynamic_static.py [--models mlp,bert] [--size small]
        [--batches 1,4,16] [--rounds 20]
    .venv/bin/python tools/bench/dynamic_static.py --dim seq --models gpt2,bert
        [--lengths 16,64,128]

For each model: one thunder.compile with the batch (or, with --dim seq, the token ids'
sequence length, batch 1) dynamic in [1 or 2, the largest size] (dynamic_shapes with a Dim
of that range) and, for each size, a static compile (dynamic=False); then, interleaved call
by call so that machine load hits both alike, the median time per call of each at that
size, and their ratio (dynamic / static; the target is <= 1.05). Prints one JSON line per
(model, size).
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
    parser.add_argument("--dim", choices=("batch", "seq"), default="batch",
                        help="the dim that is dynamic: dim 0 of every input, or dim 1 of "
                             "the token ids (language models)")
    parser.add_argument("--batches", default="1,4,16", help="sizes with --dim batch")
    parser.add_argument("--lengths", default="16,64,128", help="sizes with --dim seq")
    parser.add_argument("--rounds", type=int, default=20)
    options = parser.parse_args()
    import torch

    import thunder
    from zoo import ZOO
    by_seq = options.dim == "seq"
    sizes = [int(s) for s in (options.lengths if by_seq else options.batches).split(",")]
    largest = max(2, *sizes)

    def build(name: str, size: int):
        if not by_seq:
            return ZOO[name].build(size=options.size, batch=size)
        model, (ids,) = ZOO[name].build(size=options.size, batch=1)
        vocab = model.config.vocab_size
        return model, (torch.randint(0, vocab, (1, size),
                                     generator=torch.Generator().manual_seed(size)),)

    with tempfile.TemporaryDirectory(prefix="thunder-dyn-") as cache:
        for name in options.models.split(","):
            model, inputs = build(name, largest)
            if by_seq:
                dim = torch.export.Dim("seq", min=2, max=largest)
                shapes = tuple({1: dim} for _ in inputs)
            else:
                dim = torch.export.Dim("batch", min=1, max=largest)
                shapes = tuple({0: dim} for _ in inputs)
            dynamic = thunder.compile(model, inputs, cache_dir=cache, progress=False,
                                      dynamic_shapes=shapes, fallback="error")
            for size in sizes:
                _, at = build(name, size)
                static = thunder.compile(model, at, cache_dir=cache, progress=False,
                                         dynamic=False, fallback="error")
                times = {"dynamic": [], "static": []}
                with torch.no_grad():
                    for _ in range(3):
                        dynamic(*at), static(*at)
                    for _ in range(options.rounds):
                        for label, compiled in (("dynamic", dynamic), ("static", static)):
                            start = time.perf_counter()
                            compiled(*at)
                            times[label].append(time.perf_counter() - start)
                d, s = (statistics.median(times[k]) * 1e3 for k in ("dynamic", "static"))
                print(json.dumps({"model": name, options.dim: size,
                                  "dynamic_ms": round(d, 3), "static_ms": round(s, 3),
                                  "ratio": round(d / s, 3)}), flush=True)


if __name__ == "__main__":
    main()
