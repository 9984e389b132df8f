"""The GPU check's models, built identically here (to compile them) and on the GPU
machine (to run them in eager PyTorch): the zoo's architectures at the "gpu" size, with
parameters re-initialized from a fixed seed by name and shape, so that the weights do not
depend on the installed transformers' own initialization. A checksum of the state_dict,
recorded here and recomputed there, proves both sides built the same model.

Runs on Python 3.11 with torch 2.13 (here) and Python 3.12 with torch 2.11 (there).
"""
from __future__ import annotations

import hashlib
import math

import torch

from zoo import ZOO

#: The models of the check: the whole zoo.
MODELS = sorted(ZOO)
DTYPES = ("float32", "bfloat16")
BATCHES = (1, 8)


def _reinitialize(model: torch.nn.Module, seed: int = 1234) -> None:
    """Every parameter from one generator, in name order: matrices ~ N(0, 1/fan_in),
    1-D weights (norm scales) ~ 1 + N(0, 0.1), 1-D biases ~ N(0, 0.02)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda item: item[0]):
            if p.dim() >= 2:
                fan_in = p[0].numel()
                value = torch.randn(p.shape, generator=gen) / math.sqrt(fan_in)
            elif name.endswith("weight"):
                value = 1.0 + 0.1 * torch.randn(p.shape, generator=gen)
            else:
                value = 0.02 * torch.randn(p.shape, generator=gen)
            p.copy_(value.to(p.dtype))


def build(name: str, batch: int, dtype: str = "float32"):
    """(model in eval mode on the CPU, example inputs) of `name`."""
    model, inputs = ZOO[name].build(size="gpu", batch=batch, seed=0)
    _reinitialize(model)
    if dtype != "float32":
        torch_dtype = getattr(torch, dtype)
        model = model.to(torch_dtype)
        inputs = tuple(i.to(torch_dtype) if i.is_floating_point() else i for i in inputs)
    return model.eval(), inputs


def checksum(model: torch.nn.Module) -> str:
    """sha256 over the state_dict: names, dtypes, shapes and bytes, in name order."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().to("cpu").contiguous()
        digest.update(f"{name}|{t.dtype}|{list(t.shape)}|".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def inputs_checksum(inputs) -> str:
    digest = hashlib.sha256()
    for t in inputs:
        t = t.detach().to("cpu").contiguous()
        digest.update(f"{t.dtype}|{list(t.shape)}|".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def flat_outputs(output) -> list[torch.Tensor]:
    """The tensors of a model's output, in pytree order (what a compiled model returns)."""
    from torch.utils import _pytree as pytree
    return [leaf for leaf in pytree.tree_leaves(output) if isinstance(leaf, torch.Tensor)]
