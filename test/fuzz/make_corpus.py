# Regenerates the seed corpora of the import and .npz fuzzers (torch 2.13, numpy).
#
#   .venv/bin/python test/fuzz/make_corpus.py
#
# writes test/fuzz/import-corpus/*.pt2: small torch.export programs that together cover many
# of the ops the importer converts (elementwise, reductions, linear algebra, convolutions and
# pooling, normalizations, indexing, data movement, creation ops, dynamic dims, several
# outputs, Python-number inputs) with tiny weights; and test/fuzz/npz-corpus/*.npz: arrays of
# every dtype thunder-run reads, 0-d and zero-size ones, .npy format versions 1 to 3, and
# np.savez's ZIP64 form. Keep both small (the ctest run loads them all).
import io
import pathlib
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
IMPORT = HERE / "import-corpus"
NPZ = HERE / "npz-corpus"


class Elementwise(torch.nn.Module):
    def forward(self, x, y):
        a = torch.relu(x) + torch.sigmoid(y) * torch.tanh(x) - y / (x.abs() + 1)
        b = torch.exp(-a).log1p() + torch.sqrt(a.abs()) + torch.rsqrt(a.abs() + 1)
        return torch.where(x > y, a, b).clamp(-2, 2) ** 2


class Activations(torch.nn.Module):
    def forward(self, x):
        return (F.gelu(x) + F.silu(x) + F.leaky_relu(x, 0.1) + F.elu(x) + F.hardtanh(x)
                + F.softplus(x) + F.hardswish(x) + F.mish(x))


class Reductions(torch.nn.Module):
    def forward(self, x):
        return (x.sum(dim=1), x.mean(dim=(0, 2), keepdim=True), x.amax(dim=-1),
                x.amin(dim=0), x.argmax(dim=1), x.var(dim=1), x.prod(dim=2))


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1), torch.log_softmax(x, dim=0), x.cumsum(dim=1)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 3, bias=False)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Matmul(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b), torch.bmm(a, b), a @ b.transpose(1, 2).transpose(1, 2)


class Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return F.max_pool2d(y, 2), F.avg_pool2d(y, 2), F.adaptive_avg_pool2d(y, 1)


class Conv1dGroups(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 4, 3, groups=2, stride=2, dilation=1)

    def forward(self, x):
        return self.conv(x)


class ConvTranspose(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.ConvTranspose2d(2, 2, 2, stride=2)

    def forward(self, x):
        return self.conv(x)


class Norms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(4)
        self.gn = torch.nn.GroupNorm(2, 4)

    def forward(self, x):
        return self.ln(x), self.gn(x.transpose(1, 2).unsqueeze(-1))


class RmsNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(4))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Embedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.emb(ids).sum(1)


class Views(torch.nn.Module):
    def forward(self, x):
        y = x.reshape(2, 6).permute(1, 0).contiguous().view(3, 4)
        return y.flatten(), y.unsqueeze(0).squeeze(0).expand(2, 3, 4), y.t()


class CatStack(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, y], dim=0), torch.stack([x, y], dim=1), torch.chunk(x, 2, dim=1)


class Split(torch.nn.Module):
    def forward(self, x):
        a, b, c = torch.split(x, [1, 2, 3], dim=1)
        return a * 2, b.sum(), c.unbind(0)


class Indexing(torch.nn.Module):
    def forward(self, x, i):
        return x[1:3, ::2], x[0], x[:, -1], x[i], torch.gather(x, 1, i.unsqueeze(1).expand(-1, 4)[:3])


class IndexSelect(torch.nn.Module):
    def forward(self, x, i):
        return torch.index_select(x, 0, i), x.masked_fill(x > 0, 0.0), torch.flip(x, [0])


class Scatter(torch.nn.Module):
    def forward(self, x, i, s):
        return x.scatter(0, i, s), x.index_add(0, i[:, 0], s), torch.scatter_add(x, 0, i, s)


class Creation(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return (torch.arange(n) + torch.zeros(n, dtype=torch.int64), torch.ones_like(x),
                torch.full((2, 3), 7.0), torch.eye(3), x.new_zeros(2))


class Compare(torch.nn.Module):
    def forward(self, x, y):
        m = (x >= y) & ~(x == 0) | (y < 1)
        return m, torch.logical_xor(m, x != y), m.any(), m.all(dim=0), torch.isnan(x)


class Integers(torch.nn.Module):
    def forward(self, a, b):
        return a // (b.abs() + 1), a % 3, a * b - a, a << 1, a & b, torch.bitwise_not(a)


class Casts(torch.nn.Module):
    def forward(self, x):
        return x.to(torch.float16), x.to(torch.bfloat16).float(), x.to(torch.int32), x.bool()


class HalfPrecision(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4, dtype=torch.bfloat16)

    def forward(self, x):
        return self.fc(x).relu().float()


class Dynamic(torch.nn.Module):
    def forward(self, x, y):
        return (x * 2 + y).sum(0), x.reshape(-1, 2), x.shape[0] * torch.ones(1)


class PadInterp(torch.nn.Module):
    def forward(self, x):
        return F.pad(x, (1, 2, 0, 1)), F.interpolate(x, scale_factor=2, mode="nearest"), \
            F.interpolate(x, size=(5, 5), mode="bilinear", align_corners=False)


class TrilTopk(torch.nn.Module):
    def forward(self, x):
        return (torch.tril(x), torch.triu(x, 1), *torch.topk(x, 2, dim=1),
                *torch.sort(x, dim=0))


class MathOps(torch.nn.Module):
    def forward(self, x):
        return (torch.sin(x) + torch.cos(x) + torch.atan2(x, x + 1) + torch.erf(x)
                + torch.floor(x) + torch.ceil(x) + torch.round(x) + torch.sign(x)
                + torch.reciprocal(x + 3) + torch.maximum(x, -x) + torch.fmod(x, 2.0))


class ScalarInput(torch.nn.Module):
    def forward(self, x, alpha: float, n: int):
        return x * alpha + n, torch.add(x, x, alpha=2)


class Constants(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(12.0).reshape(3, 4))
        self.k = torch.tensor([1.0, -1.0, 0.5, 2.0])

    def forward(self, x):
        return x @ self.table.t() + (x * self.k).sum(-1, keepdim=True)


class Block(torch.nn.Module):
    """A small transformer block: attention, residuals, norm, MLP."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(8, 24)
        self.proj = torch.nn.Linear(8, 8)
        self.ln1 = torch.nn.LayerNorm(8)
        self.ln2 = torch.nn.LayerNorm(8)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(),
                                       torch.nn.Linear(16, 8))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, 2, 4).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class Unsupported(torch.nn.Module):
    """An op the importer refuses (reported, not a crash) next to supported ones."""

    def forward(self, x):
        return torch.nonzero(x > 0).sum() + x.sum()


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def programs():
    batch = torch.export.Dim("batch", min=2, max=64)
    yield "elementwise", Elementwise(), (r(3, 4), r(3, 4)), None
    yield "activations", Activations(), (r(2, 5),), None
    yield "reductions", Reductions(), (r(2, 3, 4),), None
    yield "softmax", Softmax(), (r(3, 5),), None
    yield "mlp", Mlp(), (r(2, 4),), None
    yield "mlp_dynamic", Mlp(), (r(3, 4),), ({0: batch},)
    yield "matmul", Matmul(), (r(2, 3, 4), r(2, 4, 5)), None
    yield "conv", Conv().eval(), (r(1, 2, 6, 6),), None
    yield "conv1d_groups", Conv1dGroups(), (r(1, 4, 9),), None
    yield "conv_transpose", ConvTranspose(), (r(1, 2, 3, 3),), None
    yield "norms", Norms(), (r(2, 3, 4),), None
    yield "rms_norm", RmsNorm(), (r(2, 4),), None
    yield "attention", Attention(), (r(1, 2, 4, 8), r(1, 2, 4, 8), r(1, 2, 4, 8)), None
    yield "embedding", Embedding(), (torch.tensor([[1, 2, 3], [4, 5, 9]]),), None
    yield "views", Views(), (r(3, 4),), None
    yield "cat_stack", CatStack(), (r(2, 4), r(2, 4)), None
    yield "split", Split(), (r(2, 6),), None
    yield "indexing", Indexing(), (r(4, 4), torch.tensor([0, 2, 3])), None
    yield "index_select", IndexSelect(), (r(4, 3), torch.tensor([3, 0])), None
    yield "scatter", Scatter(), (r(3, 2), torch.tensor([[0, 1], [2, 0]]), r(2, 2)), None
    yield "creation", Creation(), (r(4),), None
    yield "compare", Compare(), (r(3, 3), r(3, 3)), None
    yield "integers", Integers(), (torch.randint(-9, 9, (4,)), torch.randint(-9, 9, (4,))), None
    yield "casts", Casts(), (r(5),), None
    yield "bfloat16", HalfPrecision(), (r(2, 4, dtype=torch.bfloat16),), None
    yield "dynamic", Dynamic(), (r(4, 2), r(4, 2)), ({0: batch}, {0: batch})
    yield "pad_interpolate", PadInterp(), (r(1, 1, 3, 3),), None
    yield "tril_topk", TrilTopk(), (r(3, 3),), None
    yield "math", MathOps(), (r(6),), None
    yield "scalar_inputs", ScalarInput(), (r(3), 0.5, 3), None
    yield "constants", Constants(), (r(2, 4),), None
    yield "block", Block().eval(), (r(1, 4, 8),), None
    yield "unsupported", Unsupported(), (r(5),), None


def make_import_corpus():
    IMPORT.mkdir(exist_ok=True)
    for name, module, args, dynamic in programs():
        try:
            ep = torch.export.export(module, args, dynamic_shapes=dynamic)
            ep = ep.run_decompositions()
            torch.export.save(ep, str(IMPORT / f"{name}.pt2"))
        except Exception as e:  # an op torch cannot export here: skip it, say so
            (IMPORT / f"{name}.pt2").unlink(missing_ok=True)
            print(f"skipped {name}: {type(e).__name__}: {str(e).splitlines()[0]}")


def npy(array, version):
    out = io.BytesIO()
    np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def make_npz_corpus():
    NPZ.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    np.savez(NPZ / "float32.npz", x=rng.standard_normal((2, 3)).astype(np.float32))
    np.savez(NPZ / "dtypes.npz", a=np.arange(4, dtype=np.float64), b=np.arange(3, dtype=np.int64),
             c=np.arange(3, dtype=np.int32), d=np.array([1, -2], dtype=np.int8),
             e=np.array([True, False]), f=np.ones(3, dtype=np.float16))
    np.savez(NPZ / "bits.npz", bf16=np.array([0x3f80, 0xc000], dtype=np.uint16),
             f8=np.array([0x38, 0x40, 0], dtype=np.uint8))
    np.savez(NPZ / "shapes.npz", scalar=np.float32(2.5), empty=np.zeros((0, 4), np.float32),
             cube=np.zeros((2, 2, 2), np.float32))
    np.savez(NPZ / "refused.npz", u4=np.arange(2, dtype=np.uint32),
             fortran=np.asfortranarray(np.ones((2, 3), np.float32)))
    np.savez_compressed(NPZ / "compressed.npz", x=np.ones(4, np.float32))
    with zipfile.ZipFile(NPZ / "versions.npz", "w") as z:
        for version in [(1, 0), (2, 0), (3, 0)]:
            z.writestr(f"v{version[0]}.npy", npy(np.arange(3, dtype=np.float32), version))
    (NPZ / "plain.npy").write_bytes(npy(np.arange(6, dtype=np.int64).reshape(2, 3), (1, 0)))


if __name__ == "__main__":
    torch.manual_seed(0)
    make_import_corpus()
    make_npz_corpus()
