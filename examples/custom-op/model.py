"""A model with a custom op (a fused RMSNorm written by hand), compiled by Thunder.

    python examples/custom-op/model.py              # compile from Python, compare with eager
    python examples/custom-op/model.py --export D   # D/model.pt2, D/inputs.npz, D/expected.npz
                                                    # for thunder-compile --custom-ops + thunder-run

The op is a torch.library custom op, so torch.export keeps it whole
(mylib.rms_norm.default); thunder.register_kernel gives Thunder its kernel, which is
compiled into the artifact (README.md).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent


@torch.library.custom_op("mylib::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """The reference (what eager PyTorch runs)."""
    scale = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return x * scale * weight


@rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x)


class Block(torch.nn.Module):
    """A pre-norm MLP block: rms_norm (the custom op), then linear, gelu, linear."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.norm_weight = torch.nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = rms_norm(x, self.norm_weight, 1e-6)
        return x + self.down(torch.nn.functional.gelu(self.up(h)))


def build(seed: int = 0):
    torch.manual_seed(seed)
    return Block().eval(), (torch.randn(2, 8, 64),)


def register():
    """Registers the hand-written kernels with Thunder (cpu and cuda sources)."""
    import thunder

    return thunder.register_kernel("mylib::rms_norm",
                                   cpu=(HERE / "rms_norm.cpp").read_text(),
                                   cuda=(HERE / "rms_norm.cu").read_text())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", metavar="DIR", help="write model.pt2 and .npz files")
    args = parser.parse_args(argv)
    model, inputs = build()
    with torch.no_grad():
        expected = model(*inputs)
    if args.export:
        out = pathlib.Path(args.export)
        out.mkdir(parents=True, exist_ok=True)
        from thunder import capture
        torch.export.save(capture.capture(model, inputs), out / "model.pt2")
        np.savez(out / "inputs.npz", x=inputs[0].numpy())
        np.savez(out / "expected.npz", expected.numpy())
        print(f"wrote {out}/model.pt2, inputs.npz, expected.npz")
        return 0
    import thunder

    register()
    compiled = thunder.compile(model, inputs, fallback="error")  # all compiled, or raise
    actual = compiled(*inputs)
    error = (actual - expected).abs().max().item()
    print(compiled.report())
    print(f"max |thunder - eager| = {error:.2e}")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
