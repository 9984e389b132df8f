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


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expansion, 3x3 depthwise (strided), 1x1 projection, each
    with batch norm (ReLU6 after the first two), residual when the shape is kept."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden),
                       nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), nn.ReLU6(),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        out = self.block(x)
        return x + out if self.residual else out


class MobileNet(nn.Module):
    """MobileNetV2's structure (depthwise-separable, inverted residuals) with a width
    multiplier."""

    # (expansion, channels, repeats, first stride), as in the paper.
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, width: float = 1.0, classes: int = 1000):
        super().__init__()
        c = lambda n: max(8, int(n * width + 4) // 8 * 8)  # noqa: E731
        cin = c(32)
        layers = [nn.Conv2d(3, cin, 3, 2, 1, bias=False), nn.BatchNorm2d(cin), nn.ReLU6()]
        for t, ch, n, s in self.SETTINGS:
            for i in range(n):
                layers.append(InvertedResidual(cin, c(ch), s if i == 0 else 1, t))
                cin = c(ch)
        last = c(1280)
        layers += [nn.Conv2d(cin, last, 1, bias=False), nn.BatchNorm2d(last), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(last, classes)

    def forward(self, x):
        x = self.features(x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class ConvNeXtBlock(nn.Module):
    """ConvNeXt's block: 7x7 depthwise, channels-last LayerNorm, 4x MLP with GELU, layer
    scale, residual."""

    def __init__(self, dim: int):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.rand(dim) * 0.5 + 0.25)

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(nn.functional.gelu(self.fc1(self.norm(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    """ConvNeXt's structure (patchify stem, stages of ConvNeXt blocks, LayerNorm + 2x2
    strided downsampling) with configurable dims and depths."""

    def __init__(self, dims=(96, 192, 384, 768), depths=(1, 1, 3, 1), classes: int = 1000):
        super().__init__()
        self.stem = nn.Conv2d(3, dims[0], 4, 4)
        self.stem_norm = nn.LayerNorm(dims[0], eps=1e-6)
        self.stages = nn.ModuleList()
        self.downs = nn.ModuleList()
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            self.stages.append(nn.Sequential(*[ConvNeXtBlock(dim) for _ in range(depth)]))
            if i + 1 < len(dims):
                self.downs.append(nn.ModuleList([nn.LayerNorm(dim, eps=1e-6),
                                                 nn.Conv2d(dim, dims[i + 1], 2, 2)]))
        self.head_norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.fc = nn.Linear(dims[-1], classes)

    @staticmethod
    def _channels_norm(norm, x):
        return norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    def forward(self, x):
        x = self._channels_norm(self.stem_norm, self.stem(x))
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i < len(self.downs):
                norm, conv = self.downs[i]
                x = conv(self._channels_norm(norm, x))
        return self.fc(self.head_norm(x.mean((2, 3))))


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


class SequenceMasks(nn.Module):
    """What a language model computes from its sequence length, on a dynamic one: a
    position buffer sliced to the length (a symbolic end, with a start and a step too),
    a packed-sequence check (diff of the position ids, cumsum), a mask that indexes
    every dim of a [batch, seq] matrix (transformers' masking utilities), indices
    counted from the end of the dynamic dim, and the length itself in arithmetic."""

    def __init__(self):
        super().__init__()
        self.register_buffer("positions", torch.arange(64).unsqueeze(0) * 1.5)

    def forward(self, ids, h):
        n = ids.size(1)
        positions = self.positions[:, :n] + self.positions[:, 2:n + 2]
        odd = self.positions[:, 1:2 * n:2]
        pid = torch.arange(n).unsqueeze(0).expand(ids.size(0), -1)
        packed = torch.diff(pid, dim=-1, prepend=pid[:, :1] - 1).cumsum(-1)
        q, k = torch.arange(n).view(1, n, 1), torch.arange(n).view(1, 1, n)
        rows = torch.arange(ids.size(0)).view(-1, 1, 1)
        mask = (ids[rows, k] >= ids[rows, q]) | (k >= n - 3)  # the last 3 positions
        # Negative indices count from the run-time length: -1 - k reverses the sequence,
        # k - n is the sequence again (the length a symbolic size, as a tensor operand).
        from_end = ids[rows, -1 - k] * 10 + ids[:, -1 - torch.arange(n)].unsqueeze(1)
        from_end = from_end + ids[rows, k - n]
        relative = (q - k).float() / (n + 1) + n * 0.5 + torch.arange(n, 2 * n)
        return (positions * 2, odd + 1, packed, torch.diff(h, n=2, dim=1), mask, from_end,
                relative, h.sum() / h.numel())

    @staticmethod
    def inputs(seq: int = 7, generator: torch.Generator | None = None):
        return (torch.randint(0, 9, (2, seq), generator=generator),
                torch.randn(2, seq, 3, generator=generator))

    @staticmethod
    def dynamic_shapes():
        """The sequence dynamic; diff with n=2 needs at least 4 positions."""
        seq = torch.export.Dim("seq", min=4, max=30)
        return ({1: seq}, {1: seq})


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

    def dynamic_sequence(self, inputs: tuple, max_length: int = 512):
        """dynamic_shapes for torch.export with dim 1 of the token ids (the sequence
        length of the transformers) dynamic in [2, max_length]."""
        seq = torch.export.Dim("seq", min=2, max=max_length)
        return tuple({1: seq} for _ in inputs)


# Sizes: "small" for tests, "large" for benchmarks, "gpu" for the prepared GPU check
# (tools/gpucheck: small enough that every artifact travels in a few tens of MB).


def _mlp(size, batch):
    features, hidden = {"small": (32, 64), "gpu": (256, 512)}.get(size, (1024, 4096))
    return MLP(features, hidden, 10), (torch.randn(batch, features),)


def _resnet(size, batch):
    width, res = {"small": (8, 32), "gpu": (16, 64)}.get(size, (64, 224))
    model = _randomize_batchnorm(ResNet18(width, 10 if size == "small" else 1000))
    return model, (torch.randn(batch, 3, res, res),)


def _mobilenet(size, batch):
    width, res = {"small": (0.25, 32), "gpu": (0.5, 64)}.get(size, (1.0, 224))
    model = _randomize_batchnorm(MobileNet(width, 10 if size == "small" else 1000))
    return model, (torch.randn(batch, 3, res, res),)


def _convnext(size, batch):
    dims, depths, res = {"small": ((8, 16), (1, 1), 32),
                         "gpu": ((32, 64, 128), (1, 1, 1), 64)}.get(
        size, ((96, 192, 384, 768), (1, 1, 3, 1), 224))
    model = ConvNeXt(dims, depths, 10 if size == "small" else 1000)
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

#: Convolutional models outside ZOO (the tests that walk ZOO for every backend stay as
#: they are): a depthwise-separable network and ConvNeXt blocks, for the CPU tests and
#: the benchmark (`tools/dev.sh bench --cases mobilenet:1`).
CONV_ZOO = {m.name: m for m in [
    ZooModel("mobilenet", _mobilenet),
    ZooModel("convnext", _convnext),
]}
