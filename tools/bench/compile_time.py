"""Compile time per zoo model, phase by phase, beside ONNX Runtime's export + session.

    .venv/bin/python tools/bench/compile_time.py [--size bench] [--models mlp,gpt2]
        [--contenders thunder,onnxruntime] [--json out.json]

Each (model, contender) compiles in a fresh subprocess with an empty cache (a cold
compile), interleaved model by model so that a loaded machine slows both alike. The
thunder row gives thunder.compile's phases (export, key, decompose, import, graph =
Thunder's passes, build = C++ emission + the system compiler, load). With --warm, a
second thunder row per model ("thunder-other-weights") compiles it again in a fresh
process against the cache of the cold compile with other weights: a cache hit when the
library reads every weight in place (it holds none of their values), else a build whose
kernels are all in the kernel cache; its "source" says which.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))

MODELS = ["mlp", "resnet18", "bert", "gpt2", "llama", "vit"]


def _child(model_name: str, contender: str, size: str, cache: str, seed: int) -> dict:
    import torch
    from zoo import ZOO
    torch.manual_seed(seed)
    model, inputs = ZOO[model_name].build(size=size, batch=2, seed=seed)
    out: dict = {}
    if contender == "thunder":
        import thunder
        start = time.perf_counter()
        compiled = thunder.compile(model, inputs, cache_dir=cache, progress=False)
        out["total_s"] = time.perf_counter() - start
        out.update({k: round(v, 3) for k, v in compiled.compiles[0].seconds.items()})
        stats = pathlib.Path(compiled.compiles[0].path) / "entry.json"
        record = json.loads(stats.read_text())
        out["kernels"] = record.get("kernels")
        out["source"] = compiled.compiles[0].source
    else:
        import onnxruntime as ort
        path = pathlib.Path(cache) / "model.onnx"
        start = time.perf_counter()
        torch.onnx.export(model, inputs, str(path), dynamo=True, verbose=False)
        out["export_s"] = time.perf_counter() - start
        mark = time.perf_counter()
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        out["session_s"] = time.perf_counter() - mark
        out["total_s"] = time.perf_counter() - start
    return out


def _run(model: str, contender: str, size: str, cache: str, seed: int = 0) -> dict:
    command = [sys.executable, __file__, "--child", model, contender, size, cache, str(seed)]
    env = dict(os.environ, THUNDER_QUIET="1")
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        model, contender, size, cache, seed = sys.argv[2:7]
        print(json.dumps(_child(model, contender, size, cache, int(seed))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="bench")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--contenders", default="thunder,onnxruntime")
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--json")
    options = parser.parse_args()
    results = []
    for model in options.models.split(","):
        with tempfile.TemporaryDirectory(prefix=f"thunder-ct-{model}-") as cache:
            for contender in options.contenders.split(","):
                row = {"model": model, "contender": contender,
                       **_run(model, contender, options.size, cache)}
                results.append(row)
                print(json.dumps(row), flush=True)
            if options.warm and "thunder" in options.contenders:
                row = {"model": model, "contender": "thunder-other-weights",
                       **_run(model, "thunder", options.size, cache, seed=1)}
                results.append(row)
                print(json.dumps(row), flush=True)
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
