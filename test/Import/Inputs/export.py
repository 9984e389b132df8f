"""Exports small PyTorch graphs to .pt2 archives for the importer's lit tests.

    python export.py <graph> <out.pt2>

Each graph is a few lines of PyTorch that exercise one part of the importer;
the lit test next to it FileChecks the imported IR.
"""
import sys
import warnings

import torch
from torch import nn
from torch.export import Dim

warnings.filterwarnings("ignore")
torch.manual_seed(0)


class Promote(nn.Module):
    """int64 + float32 promotes; the scalar alpha scales `other`; a
    comparison promotes to its operands' common type, not the result's."""

    def forward(self, i, x):
        y = torch.add(x, i, alpha=2)
        return y, i < x


class Broadcast(nn.Module):
    def forward(self, x, b):
        return torch.relu(x * b + 1.0)


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x), approximate="tanh")


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        y = torch.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)


class ResidualBlocks(nn.Module):
    """A stem (convolution, ReLU, max pool) and two residual blocks, then average
    pooling: what ResNet's convolutions, its max pool and the final average pooling (a
    mean over the positions) hand each other can stay channels last
    (lib/Target/CPU/ChannelsLast.cpp)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.a1 = nn.Conv2d(8, 8, 3, padding=1)
        self.b1 = nn.Conv2d(8, 8, 3, padding=1)
        self.a2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.b2 = nn.Conv2d(16, 16, 3, padding=1)
        self.down = nn.Conv2d(8, 16, 1, stride=2)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.stem(x)), 2)
        y = torch.relu(self.b1(torch.relu(self.a1(x))) + x)
        z = torch.relu(self.b2(torch.relu(self.a2(y))) + self.down(y))
        return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(z, 1), 1)


class Pools(nn.Module):
    """Max and average pools between convolutions (channels last with them: with and
    without the padding in the divisor, ceil mode, dilation), and one whose output is
    returned (channels first, and so is the convolution before it)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.a = nn.Conv2d(8, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 16, 3, padding=1)
        self.c = nn.Conv2d(16, 16, 3, padding=1)
        self.d = nn.Conv2d(16, 4, 3)

    def forward(self, x):
        f = nn.functional
        x = f.max_pool2d(torch.relu(self.stem(x)), 3, 2, 1)
        y = f.avg_pool2d(torch.relu(self.a(x)), 3, 1, 1, count_include_pad=False)
        z = f.avg_pool2d(torch.relu(self.b(y)), 3, 2, 1, ceil_mode=True)
        w = f.max_pool2d(torch.relu(self.c(z)), 2, 1, dilation=2)
        return f.max_pool2d(self.d(w), 2).flatten(1)


class InvertedResiduals(nn.Module):
    """A stem and two MobileNet-style inverted residual blocks (pointwise expand,
    depthwise 3x3, pointwise project; the second strided, the first adding its input),
    then average pooling: on AVX-512 the whole chain stays channels last on oneDNN,
    elsewhere the depthwise and pointwise convolutions stay on Thunder's kernels
    channels first (lib/Target/CPU/ChannelsLast.cpp)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.expand1 = nn.Conv2d(8, 32, 1)
        self.dw1 = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.project1 = nn.Conv2d(32, 8, 1)
        self.expand2 = nn.Conv2d(8, 32, 1)
        self.dw2 = nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32)
        self.project2 = nn.Conv2d(32, 16, 1)

    def forward(self, x):
        x = torch.nn.functional.relu6(self.stem(x))
        y = self.project1(torch.nn.functional.relu6(self.dw1(
            torch.nn.functional.relu6(self.expand1(x))))) + x
        z = self.project2(torch.nn.functional.relu6(self.dw2(
            torch.nn.functional.relu6(self.expand2(y)))))
        return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(z, 1), 1)


class ConvNeXt(nn.Module):
    """A ConvNeXt stem (4x4 / 4, a LayerNorm over channels through permute(0, 2, 3, 1))
    and one block (a depthwise 7x7 convolution, the LayerNorm, an MLP on [N, H, W, C],
    added back through permute(0, 3, 1, 2)), then a downsampling LayerNorm and 2x2 / 2
    convolution and the mean over positions: the LayerNorms read channels last, the
    residual add and the permute back before each convolution write so
    (lib/Target/CPU/ChannelsLast.cpp)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 4, stride=4)
        self.stem_norm = nn.LayerNorm(8, eps=1e-6)
        self.dw = nn.Conv2d(8, 8, 7, padding=3, groups=8)
        self.norm = nn.LayerNorm(8, eps=1e-6)
        self.up = nn.Linear(8, 32)
        self.down = nn.Linear(32, 8)
        self.sample_norm = nn.LayerNorm(8, eps=1e-6)
        self.sample = nn.Conv2d(8, 16, 2, stride=2)

    def forward(self, x):
        x = self.stem_norm(self.stem(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        y = self.down(torch.nn.functional.gelu(self.up(self.norm(
            self.dw(x).permute(0, 2, 3, 1)))))
        x = x + y.permute(0, 3, 1, 2)
        x = self.sample(self.sample_norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2))
        return x.mean(dim=(2, 3))


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(16)

    def forward(self, x):
        return torch.softmax(self.ln(x), dim=-1), torch.log_softmax(x, dim=1)


class Views(nn.Module):
    def forward(self, x):
        a, b = torch.split(x, [2, 6], dim=1)
        y = torch.cat([b, a], dim=-1)
        return y[:, 1::2].transpose(0, 1).reshape(-1), x.unsqueeze(0).sum(dim=(1, 2))


class DynamicSlices(nn.Module):
    """Slices of a dynamic dim: from a start, to an end counted from the size, strided."""

    def forward(self, x):
        return x[1:] * 2, x[:-1] + 1, x[2::2] - 1


class Gathers(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, ids, table):
        return self.emb(ids), table[ids[0]], torch.argmax(table, dim=1)


class Attention(nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


class Unsupported(nn.Module):
    def forward(self, x):
        values = torch.cumprod(x, -1)
        return torch.fft.rfft(values).abs() + torch.cumprod(x * 2, -1)[..., :5]


class Item(nn.Module):
    """.item() stays on the device: a float item scales a tensor, an int item
    offsets it (a Python number: no promotion within the category), and
    Python-level arithmetic on the item is computed on 0-d tensors."""

    def forward(self, x, n):
        return x * (x.sum().item() * 2 + 1) + n.item(), x > x.max().item()


class ItemSize(nn.Module):
    """An item that sizes a tensor would have to be known on the host."""

    def forward(self, x, n):
        return x.new_zeros(n.item())


class ItemOption(nn.Module):
    """An item passed where the converter needs a constant (an op's option)."""

    def forward(self, x, y):
        return torch.nn.functional.leaky_relu(x, y.min().item())


class ItemOutput(nn.Module):
    """An item returned as a Python number would have to reach the host."""

    def forward(self, x):
        return x, x.sum().item()


class TiedEmbedding(torch.nn.Module):
    """A token table that is also the LM head (GPT-2's wte and lm_head)."""
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(64, 16)

    def forward(self, ids):
        return torch.nn.functional.linear(torch.tanh(self.table(ids)), self.table.weight)


class Random(torch.nn.Module):
    def forward(self, x):
        return (torch.rand(x.shape[0], 4), torch.randn(3, 4, dtype=torch.float64),
                torch.randperm(5), torch.rand_like(x), torch.randn_like(x),
                torch.randint(2, 10, (3,)))


GRAPHS = {
    "promote": (Promote(), (torch.randint(0, 5, (4,)), torch.randn(4)), None),
    "broadcast": (Broadcast(), (torch.randn(2, 3), torch.randn(3)), None),
    "linear_dynamic": (Linear(), (torch.randn(2, 8),),
                       ({0: Dim("batch", min=1, max=32)},)),
    # Static rows, counted over every dim but the last: 1 x 3 (the weight stays
    # [n, k]: dot products) and 2 x 2 (packed); and an empty contraction.
    "linear_3": (Linear(), (torch.randn(1, 3, 8),), None),
    "linear_4": (Linear(), (torch.randn(2, 2, 8),), None),
    "linear_k0": (nn.Sequential(nn.Linear(0, 4), nn.ReLU()), (torch.randn(2, 0),), None),
    "tied_embedding": (TiedEmbedding(), (torch.tensor([[3, 0, 63, 17, 17, 5, 40, 9]]),), None),
    "conv_block": (ConvBlock().eval(), (torch.randn(1, 3, 16, 16),), None),
    "residual_blocks": (ResidualBlocks().eval(), (torch.randn(2, 3, 16, 16),), None),
    "pools": (Pools().eval(), (torch.randn(2, 3, 23, 19),), None),
    "inverted_residuals": (InvertedResiduals().eval(), (torch.randn(2, 3, 16, 16),), None),
    "convnext": (ConvNeXt().eval(), (torch.randn(2, 3, 20, 16),), None),
    "norms": (Norms(), (torch.randn(2, 16),), None),
    "views": (Views(), (torch.randn(4, 8),), None),
    "dynamic_slices": (DynamicSlices(), (torch.randn(8, 4),),
                       ({0: Dim("batch", min=5, max=64)},)),
    "gathers": (Gathers(), (torch.tensor([[1, 2], [3, 4]]), torch.randn(5, 3)), None),
    "attention": (Attention(), tuple(torch.randn(1, 2, 4, 8) for _ in range(3)), None),
    "unsupported": (Unsupported(), (torch.randn(2, 8),), None),
    "item": (Item(), (torch.randn(4), torch.tensor([3], dtype=torch.int32)), None),
    "item_size": (ItemSize(), (torch.randn(4), torch.tensor(3)), None),
    "item_output": (ItemOutput(), (torch.randn(4),), None),
    "item_option": (ItemOption(), (torch.randn(4), torch.randn(3)), None),
    "random": (Random(), (torch.randn(2, 4),), ({0: Dim("batch", min=1, max=64)},)),
}


def main():
    # export.py NAME OUT.pt2 [PREFIX]: with PREFIX, also PREFIX.inputs.npz (the
    # example inputs by name) and PREFIX.expected.npz (eager's outputs, output_i),
    # for thunder-run --inputs ... --check ...
    name, out = sys.argv[1], sys.argv[2]
    model, args, dynamic = GRAPHS[name]
    ep = torch.export.export(model, args, dynamic_shapes=dynamic)
    table = torch.export.default_decompositions()
    table.pop(torch.ops.aten.scaled_dot_product_attention.default, None)
    torch.export.save(ep.run_decompositions(table), out)
    if len(sys.argv) > 3:
        import numpy as np
        names = [s.arg.name for s in ep.graph_signature.input_specs
                 if s.kind.name == "USER_INPUT"]
        np.savez(sys.argv[3] + ".inputs.npz", **{n: a.numpy() for n, a in zip(names, args)})
        with torch.no_grad():
            outputs = model(*args)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        np.savez(sys.argv[3] + ".expected.npz",
                 **{f"output_{i}": o.numpy() for i, o in enumerate(outputs)})


if __name__ == "__main__":
    main()
