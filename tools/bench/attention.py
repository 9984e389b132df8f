"""Thunder's fp32 CPU attention against eager's flash kernel, side by side.

    .venv/bin/python tools/bench/attention.py [--lengths 128,512,1024,2048] [--rounds 5]

Each case compiles F.scaled_dot_product_attention alone with thunder.compile (static
shapes: the library's sdpa is thunder_cpu_attention.h's flash kernel) and times it
interleaved with torch.ops.aten._scaled_dot_product_flash_attention_for_cpu on the same
tensors, at the zoo's attention shapes (gpt2, bert and llama at their benchmark size:
12 heads of dim 64; causal for the decoders), batch 1, the threads torch uses. Prints the
best per-call time of each over `rounds` rounds of calls (a loaded machine inflates
means, not minima), the CPU time per call of each (all threads; robust to other load) and
eager/Thunder by both. OpenMP threads wait passively (OMP_WAIT_POLICY, unless set): the
process holds two OpenMP runtimes (torch's own libgomp and the system one the library
links), whose spinning idle threads would otherwise take the cores from each other.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as python/thunder/__init__.py

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Attention(torch.nn.Module):
    def __init__(self, causal: bool):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)


def best_call(fn, calls: int) -> tuple[float, float]:
    """The best wall time of one call and the mean CPU time (all threads) per call."""
    best = float("inf")
    cpu = time.process_time()
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best, (time.process_time() - cpu) / calls


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="128,512,1024,2048")
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    import thunder
    cache = pathlib.Path(tempfile.mkdtemp(prefix="thunder-attention-bench-"))
    print(f"threads {torch.get_num_threads()}, heads {args.heads}, head dim {args.head_dim}")
    print("| tokens | mask | Thunder (ms) | eager flash (ms) | eager / Thunder | "
          "Thunder CPU ms/call | eager CPU ms/call | eager / Thunder (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for causal in (True, False):
        for length in (int(x) for x in args.lengths.split(",")):
            gen = torch.Generator().manual_seed(length)
            q, k, v = (torch.randn(1, args.heads, length, args.head_dim, generator=gen)
                       for _ in range(3))
            model = Attention(causal).eval()
            compiled = thunder.compile(model, (q, k, v), dynamic=False, cache_dir=cache,
                                       progress=False)
            expected = model(q, k, v)
            torch.testing.assert_close(compiled(q, k, v), expected, rtol=1e-4, atol=1e-4)
            calls = max(3, int(2e8 / (length * length * args.heads * args.head_dim)))
            flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
            ours, theirs = [float("inf")] * 2, [float("inf")] * 2
            for _ in range(args.rounds):
                ours = [min(a, b) for a, b in zip(ours, best_call(lambda: compiled(q, k, v),
                                                                  calls))]
                theirs = [min(a, b) for a, b in zip(
                    theirs, best_call(lambda: flash(q, k, v, is_causal=causal), calls))]
            print(f"| {length} | {'causal' if causal else 'none'} | {ours[0] * 1e3:.2f} | "
                  f"{theirs[0] * 1e3:.2f} | {theirs[0] / ours[0]:.2f}x | {ours[1] * 1e3:.2f} | "
                  f"{theirs[1] * 1e3:.2f} | {theirs[1] / ours[1]:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
