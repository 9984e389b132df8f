"""Convolutional models through thunder.compile against ONNX Runtime, side by side.

    .venv/bin/python tools/bench/conv_models.py [--models resnet18,mobilenet,convnext]
        [--batch 1] [--rounds 15]

A quick interleaved check of the CPU convolution kernels (the full harness is
`tools/dev.sh bench --cases mobilenet:1`): each model at its benchmark size
(test/python/zoo.py: ZOO's resnet18, CONV_ZOO's mobilenet and convnext) is compiled by
Thunder (static shapes) and exported to ONNX for ONNX Runtime (CPU provider, the threads
torch uses, sequential), checked against eager, then called alternately `rounds` times.
Prints the median and best wall time of each, the mean CPU time per call (all threads;
robust to other load on a shared machine) and ONNX Runtime / Thunder by each. Idle threads
wait passively in both (OMP_WAIT_POLICY unless set; ONNX Runtime's allow_spinning 0):
spinning pools of two runtimes in one process take the cores from each other.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as python/thunder/__init__.py

import torch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenet,convnext")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    import onnxruntime as ort

    import thunder
    from zoo import CONV_ZOO, ZOO
    work = pathlib.Path(tempfile.mkdtemp(prefix="thunder-conv-bench-"))
    threads = torch.get_num_threads()
    print(f"threads {threads}, batch {args.batch}, {args.rounds} interleaved rounds")
    print("| model | Thunder median / best (ms) | ONNX Runtime median / best (ms) | "
          "ORT / Thunder (best) | Thunder CPU ms/call | ORT CPU ms/call | "
          "ORT / Thunder (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        zoo = {**ZOO, **CONV_ZOO}[name]
        model, inputs = zoo.build("large", args.batch)
        path = work / f"{name}.onnx"
        torch.onnx.export(model, inputs, str(path), dynamo=True, verbose=False)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)}
        compiled = thunder.compile(model, inputs, dynamic=False, cache_dir=work / "cache",
                                   progress=False)
        with torch.no_grad():
            expected = model(*inputs)
        torch.testing.assert_close(compiled(*inputs), expected, rtol=1e-3, atol=1e-3)
        torch.testing.assert_close(torch.from_numpy(session.run(None, feeds)[0]), expected,
                                   rtol=1e-3, atol=1e-3)
        calls = {"thunder": lambda: compiled(*inputs), "ort": lambda: session.run(None, feeds)}
        wall = {k: [] for k in calls}
        cpu = dict.fromkeys(calls, 0.0)
        for fn in calls.values():
            fn()
        for _ in range(args.rounds):
            for key, fn in calls.items():
                c, start = time.process_time(), time.perf_counter()
                fn()
                wall[key].append(time.perf_counter() - start)
                cpu[key] += time.process_time() - c
        med = {k: statistics.median(v) * 1e3 for k, v in wall.items()}
        best = {k: min(v) * 1e3 for k, v in wall.items()}
        cpu = {k: v / args.rounds * 1e3 for k, v in cpu.items()}
        print(f"| {name} | {med['thunder']:.2f} / {best['thunder']:.2f} | "
              f"{med['ort']:.2f} / {best['ort']:.2f} | {best['ort'] / best['thunder']:.2f}x | "
              f"{cpu['thunder']:.1f} | {cpu['ort']:.1f} | {cpu['ort'] / cpu['thunder']:.2f}x |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
