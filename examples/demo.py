#!/usr/bin/env python3
"""Thunder's demo: compile a GPT-2-style model (110M parameters) for the CPU,
run it, and compare it with PyTorch eager: the largest error and the speed of
both, measured side by side in this process.

Run through `tools/dev.sh demo`. The first run compiles (about 10 s on two
cores); later runs hit the on-disk cache.
"""
import argparse
import pathlib
import statistics
import sys
import time
import warnings

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "python"))  # the model zoo

warnings.filterwarnings("ignore")


def median_ms(fn, repeats):
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2",
                        help="zoo model: gpt2, resnet18, bert, llama, vit, mlp")
    parser.add_argument("--size", default="realistic", choices=["small", "realistic"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import thunder
    from zoo import ZOO

    torch.manual_seed(0)
    model, inputs = ZOO[args.model].build(size=args.size, batch=1)
    params = sum(p.numel() for p in model.parameters())
    shape = "x".join(str(d) for d in inputs[0].shape)
    print(f"== {args.model} ({args.size}): {params / 1e6:.1f}M parameters, "
          f"input {shape}, {torch.get_num_threads()} threads\n")

    start = time.perf_counter()
    compiled = thunder.compile(model, inputs)
    print(f"thunder.compile: {time.perf_counter() - start:.1f} s "
          "(export + import + codegen + C++ build, or a cache hit)\n")

    with torch.no_grad():
        expected = model(*inputs)
    got = compiled(*inputs)
    first = lambda out: out if isinstance(out, torch.Tensor) else out[0]
    error = (first(got).float() - first(expected).float()).abs().max().item()
    scale = first(expected).abs().max().item()
    print(f"largest |thunder - eager| = {error:.3g} (outputs up to {scale:.3g})")

    with torch.no_grad():
        eager = median_ms(lambda: model(*inputs), args.repeats)
    ours = median_ms(lambda: compiled(*inputs), args.repeats)
    print(f"\n{'':10}{'median ms':>12}{'min':>10}{'max':>10}")
    print(f"{'eager':10}{eager[0]:12.1f}{eager[1]:10.1f}{eager[2]:10.1f}")
    print(f"{'thunder':10}{ours[0]:12.1f}{ours[1]:10.1f}{ours[2]:10.1f}")
    print(f"\nthunder / eager speedup: {eager[0] / ours[0]:.2f}x (fused kernels, one planned "
          "arena; docs/performance.md compares torch.compile, AOTInductor and ONNX Runtime)")
    if error > 1e-3 * max(1.0, scale):
        sys.exit(f"error {error} is above the tolerance")


if __name__ == "__main__":
    main()
