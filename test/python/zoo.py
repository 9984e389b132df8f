"""The model zoo: real PyTorch models with random weights, no downloads.

Each entry builds a model in eval mode and example inputs, at a small size for
tests or at a realistic size for benchmarks. The transformer models come from
`transformers` with small configs.

    from zoo import ZOO
    model, inputs = ZOO["gpt2"].build(size="small", batch=2)
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch
from torch import nn

# --------------------------------------------------------------------------
# Hand-written models
# --------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, features: int, hidden: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        x = nn.functional.gelu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.down is None else self.down(x)
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + identity)


class ResNet18(nn.Module):
    """ResNet-18's structure (torchvision's resnet18) with a configurable width."""

    def __init__(self, width: int = 64, classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.pool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], width
        for i, cout in enumerate([width, width * 2, width * 4, width * 8]):
            stride = 1 if i == 0 else 2
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _randomize_batchnorm(model: nn.Module) -> nn.Module:
    """Non-trivial running statistics, so batch norm is not the identity."""
    gen = torch.Generator().manual_seed(0)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
    return model


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------


@dataclasses.dataclass
class ZooModel:
    name: str
    build_fn: Callable[[str, int], tuple[nn.Module, tuple]]
    #: Tolerances (rtol, atol) against eager in fp32: reductions reorder sums.
    tolerance: tuple[float, float] = (1e-4, 1e-4)

    def build(self, size: str = "small", batch: int = 2, seed: int = 0):
        torch.manual_seed(seed)
        model, inputs = self.build_fn(size, batch)
        return model.eval(), inputs

    def dynamic_batch(self, inputs: tuple):
        """dynamic_shapes for torch.export with dim 0 of every input dynamic."""
        batch = torch.export.Dim("batch", min=1, max=1024)
        return tuple({0: batch} for _ in inputs)


# Sizes: "small" for tests, "large" for benchmarks, "gpu" for the prepared GPU check
# (tools/gpucheck: small enough that every artifact travels in a few tens of MB).


def _mlp(size, batch):
    features, hidden = {"small": (32, 64), "gpu": (256, 512)}.get(size, (1024, 4096))
    return MLP(features, hidden, 10), (torch.randn(batch, features),)


def _resnet(size, batch):
    width, res = {"small": (8, 32), "gpu": (16, 64)}.get(size, (64, 224))
    model = _randomize_batchnorm(ResNet18(width, 10 if size == "small" else 1000))
    return model, (torch.randn(batch, 3, res, res),)


def _transformer_sizes(size):
    if size == "small":
        return dict(hidden=64, layers=2, heads=4, inter=128, vocab=128, seq=16)
    if size == "gpu":
        return dict(hidden=128, layers=2, heads=4, inter=512, vocab=2048, seq=128)
    return dict(hidden=768, layers=12, heads=12, inter=3072, vocab=32000, seq=128)


def _bert(size, batch):
    from transformers import BertConfig, BertModel
    s = _transformer_sizes(size)
    cfg = BertConfig(vocab_size=s["vocab"], hidden_size=s["hidden"],
                     num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                     intermediate_size=s["inter"], max_position_embeddings=512,
                     attn_implementation="sdpa")
    ids = torch.randint(0, s["vocab"], (batch, s["seq"]))
    return BertModel(cfg, add_pooling_layer=False), (ids,)


def _gpt2(size, batch):
    from transformers import GPT2Config, GPT2LMHeadModel
    s = _transformer_sizes(size)
    cfg = GPT2Config(vocab_size=s["vocab"], n_embd=s["hidden"], n_layer=s["layers"],
                     n_head=s["heads"], n_inner=s["inter"], n_positions=1024,
                     bos_token_id=0, eos_token_id=0,
                     # transformers' sdpa path for GPT-2 views a transposed tensor,
                     # which torch.export rejects; eager attention exports cleanly.
                     attn_implementation="eager", use_cache=False)
    ids = torch.randint(0, s["vocab"], (batch, s["seq"]))
    return GPT2LMHeadModel(cfg), (ids,)


def _llama(size, batch):
    from transformers import LlamaConfig, LlamaForCausalLM
    s = _transformer_sizes(size)
    cfg = LlamaConfig(vocab_size=s["vocab"], hidden_size=s["hidden"],
                      num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                      num_key_value_heads=s["heads"], intermediate_size=s["inter"],
                      max_position_embeddings=1024, attn_implementation="sdpa",
                      use_cache=False)
    ids = torch.randint(0, s["vocab"], (batch, s["seq"]))
    return LlamaForCausalLM(cfg), (ids,)


def _vit(size, batch):
    from transformers import ViTConfig, ViTModel
    s = _transformer_sizes(size)
    image, patch = {"small": (32, 8), "gpu": (64, 8)}.get(size, (224, 16))
    cfg = ViTConfig(hidden_size=s["hidden"], num_hidden_layers=s["layers"],
                    num_attention_heads=s["heads"], intermediate_size=s["inter"],
                    image_size=image, patch_size=patch, attn_implementation="sdpa")
    return ViTModel(cfg, add_pooling_layer=False), (torch.randn(batch, 3, image, image),)


ZOO = {m.name: m for m in [
    ZooModel("mlp", _mlp),
    ZooModel("resnet18", _resnet, tolerance=(1e-4, 1e-4)),
    ZooModel("bert", _bert),
    ZooModel("gpt2", _gpt2),
    ZooModel("llama", _llama),
    ZooModel("vit", _vit),
]}
