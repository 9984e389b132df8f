"""MLAS through ONNX Runtime on the shapes of gemm_libraries.cpp: a one-MatMul ONNX model
per shape with B a constant initializer (which ONNX Runtime prepacks for MLAS, as Thunder
prepacks its weights), timed with I/O binding on preallocated buffers, median of rounds, in
GFLOP/s. The reference column of the GEMM microbenchmark (docs/performance.md):

    .venv/bin/python tools/bench/gemm_ort.py [--quick] [--cpu-time] [--threads N] [--with BINARY ...]

With --with, each shape's ONNX Runtime row is followed at once by the row of each
gemm_libraries binary (`BINARY --shape M N K`), so the columns are measured side by side.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

LAYERS = [(4096, 1024, "mlp fc1"), (4096, 4096, "mlp fc2"), (768, 768, "bert/llama/vit attn"),
          (2304, 768, "gpt2 c_attn"), (3072, 768, "ffn up"), (768, 3072, "ffn down"),
          (32000, 768, "lm head")]


def shapes(quick: bool):
    ms = [1, 16, 128] if quick else [1, 8, 16, 32, 128, 512, 1024]
    out = [(1024, 1024, 1024, "1024^3")]
    for n, k, what in LAYERS:
        if quick and n * k > 4096 * 1024:
            continue
        out += [(m, n, k, what) for m in ms]
    return out


def session(m: int, n: int, k: int, threads: int, spin: bool) -> ort.InferenceSession:
    b = numpy_helper.from_array(np.random.default_rng(0).uniform(-1, 1, (k, n)).astype(np.float32), "b")
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])], [b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by the process's CPU time / threads (a shared machine), "
                             "ONNX Runtime's threads not spinning")
    parser.add_argument("--skip", type=int, default=0, help="skip the first SKIP shapes")
    parser.add_argument("--with", dest="binaries", nargs="*", default=[],
                        help="gemm_libraries binaries to run on each shape")
    args = parser.parse_args()
    # OpenBLAS's threads spin for about 2^28 cycles after each call unless told
    # otherwise; the next round's Thunder and oneDNN calls then shared the cores with
    # them and read half their speed (1024^3: 102 against 204 GFLOP/s, 2026-12-06).
    # OpenMP's workers spin 10000 iterations (about 0.1 ms) before they sleep, as
    # python/thunder/__init__.py and thunder-run set it for Thunder's libraries: fully
    # passive, each small GEMM woke its threads from sleep (1 x 768 x 768: 10.8 against
    # 37.1 GFLOP/s), while ONNX Runtime's threads spin as they do by default.
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_WAIT_POLICY="passive",
               GOMP_SPINCOUNT=os.environ.get("GOMP_SPINCOUNT", "10000"),
               OPENBLAS_THREAD_TIMEOUT=os.environ.get("OPENBLAS_THREAD_TIMEOUT", "4"))
    print(f"# ONNX Runtime {ort.__version__} (MLAS), {args.threads} threads")
    print("| m x n x k | layer | ONNX Runtime (MLAS) |\n|---|---|---|")
    for m, n, k, what in shapes(args.quick)[args.skip:]:
        s = session(m, n, k, args.threads, spin=not args.cpu_time)
        clock = ((lambda: time.process_time() / args.threads) if args.cpu_time
                 else time.perf_counter)
        a = ort.OrtValue.ortvalue_from_numpy(np.random.default_rng(1).uniform(-1, 1, (m, k)).astype(np.float32))
        c = ort.OrtValue.ortvalue_from_numpy(np.empty((m, n), np.float32))
        binding = s.io_binding()
        binding.bind_ortvalue_input("a", a)
        binding.bind_ortvalue_output("c", c)
        flops = 2.0 * m * n * k
        reps = int(min(200, max(1, 2e9 / flops)))
        s.run_with_iobinding(binding)
        times = []
        for _ in range(3 if args.quick else 5):
            t0 = clock()
            for _ in range(reps):
                s.run_with_iobinding(binding)
            times.append((clock() - t0) / reps)
        times.sort()
        print(f"| {m} x {n} x {k} | {what} | {flops / times[len(times) // 2] / 1e9:.1f} |", flush=True)
        # The session's threads go before the other binaries run: spinning, they took a
        # core from them (Thunder read 80-170 GFLOP/s at a steady 80% of the peak
        # measured in its own rounds).
        del binding, s, a, c
        for binary in args.binaries:
            row = subprocess.run([binary, *(["--cpu-time"] if args.cpu_time else []), "--shape", str(m), str(n), str(k), what], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
            print(f"{row} {os.path.basename(binary)}", flush=True)


if __name__ == "__main__":
    main()
