"""Random ops (torch.rand, randn, randint, randperm and the _like forms): thunder.random.

The numbers come from Thunder's counter-based generator (Philox4x32-10 keyed by the
model's seed and its count of runs), never eager PyTorch's, so the checks are about
distributions and reproducibility: shapes and dtypes, moments and Kolmogorov-Smirnov
distances on enough samples with fixed seeds (deterministic, so never flaky), two calls
drawing different numbers, torch.manual_seed making a CompiledModule reproducible,
randperm giving permutations, zero-size and dynamic shapes, the C runtime's seed (through
thunder-compile and thunder-run --seed), and the GPU code generator drawing the same
numbers as the CPU (the generated CUDA/HIP run on the CPU through tools/gpu_emu).
"""
from __future__ import annotations

import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

import thunder
from thunder import runtime

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Draws(torch.nn.Module):
    """One of each random op, the shapes from the input where PyTorch takes them."""

    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        u = torch.rand(x.shape[0], 4, dtype=self.dtype)
        n = torch.randn(3, 5, dtype=self.dtype)
        ul = torch.rand_like(x)
        nl = torch.randn_like(x)
        return u, n, ul, nl


class Big(torch.nn.Module):
    """Enough samples for the statistics: 2^17 of each distribution."""

    def forward(self, x):
        return (torch.rand(256, 512) + x, torch.randn(256, 512) + x,
                torch.randint(3, 10, (256, 512)))


class Perm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return torch.randperm(self.n) + x


def _ks_uniform(sample: np.ndarray) -> float:
    """The Kolmogorov-Smirnov distance of `sample` from U[0, 1)."""
    s = np.sort(sample.astype(np.float64).ravel())
    n = s.size
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - s), np.max(s - (i - 1) / n)))


def _ks_normal(sample: np.ndarray) -> float:
    s = np.sort(sample.astype(np.float64).ravel())
    n = s.size
    cdf = 0.5 * (1 + np.vectorize(math.erf)(s / math.sqrt(2)))
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - cdf), np.max(cdf - (i - 1) / n)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_shapes_dtypes_and_ranges(dtype):
    cm = thunder.compile(Draws(dtype))
    x = torch.zeros(6, 7, dtype=dtype)
    u, n, ul, nl = cm(x)
    assert (u.shape, n.shape, ul.shape, nl.shape) == ((6, 4), (3, 5), (6, 7), (6, 7))
    assert {t.dtype for t in (u, n, ul, nl)} == {dtype}
    for t in (u, ul):
        assert bool(((t >= 0) & (t < 1)).all()), t
    for t in (n, nl):
        assert bool(torch.isfinite(t).all())


def test_statistics():
    torch.manual_seed(1234)
    cm = thunder.compile(Big())
    u, n, r = cm(torch.zeros(()))
    u, n, r = u.numpy(), n.numpy(), r.numpy()
    count = u.size
    # 2^17 samples: the mean's standard error is 0.29/362 = 8e-4 for U[0, 1) and 2.8e-3 for
    # N(0, 1); the bounds are 6 sigma or more, and the seed is fixed.
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.std() - math.sqrt(1 / 12)) < 0.005
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02
    # KS: the 0.1% critical value is 1.95 / sqrt(n) = 0.0054.
    assert _ks_uniform(u) < 1.95 / math.sqrt(count)
    assert _ks_normal(n) < 1.95 / math.sqrt(count)
    # The tails of the normal: P(|z| > 3) = 0.0027.
    assert abs(np.mean(np.abs(n) > 3) - 0.0027) < 0.0008
    # randint(3, 10): every value of [3, 10) equally often (chi-square, 6 dof, 0.1%: 22.5).
    assert r.dtype == np.int64 and r.min() == 3 and r.max() == 9
    counts = np.bincount(r.ravel() - 3, minlength=7)
    expected = count / 7
    assert float(np.sum((counts - expected) ** 2 / expected)) < 22.5
    # Neighbouring elements are uncorrelated (a counter-based generator's weak spot would
    # be adjacent counters).
    flat = u.ravel().astype(np.float64)
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 0.02


def test_two_calls_differ_and_streams_are_independent():
    cm = thunder.compile(Draws())
    x = torch.zeros(4, 4)
    a, b = cm(x), cm(x)
    for s, t in zip(a, b):
        assert not torch.equal(s, t)
    # rand(x.shape[0], 4) and rand_like(x) are two draws of one run: different streams.
    u, _, ul, _ = a
    assert not torch.equal(u, ul)


def test_manual_seed_reproduces_calls():
    cm = thunder.compile(Draws())
    x = torch.zeros(5, 3)
    torch.manual_seed(0)
    first = [cm(x) for _ in range(2)]
    torch.manual_seed(0)
    again = [cm(x) for _ in range(2)]
    for call, repeat in zip(first, again):
        for s, t in zip(call, repeat):
            assert torch.equal(s, t)
    assert not torch.equal(first[0][0], first[1][0])
    torch.manual_seed(1)
    other = cm(x)
    assert not torch.equal(first[0][0], other[0])


def test_manual_seed_through_the_general_path():
    # out= takes the general path (no fast path): it seeds from torch too.
    cm = thunder.compile(Draws())
    x = torch.zeros(2, 3)
    outs = [torch.empty(2, 4), torch.empty(3, 5), torch.empty(2, 3), torch.empty(2, 3)]
    torch.manual_seed(7)
    cm(x, out=outs)
    kept = [o.clone() for o in outs]
    torch.manual_seed(7)
    again = cm(x)
    for s, t in zip(kept, again):
        assert torch.equal(s, t)


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_randperm_is_a_permutation(n):
    cm = thunder.compile(Perm(n))
    p = cm(torch.zeros((), dtype=torch.int64))
    assert p.dtype == torch.int64 and p.shape == (n,)
    assert sorted(p.tolist()) == list(range(n))
    if n == 1000:
        q = cm(torch.zeros((), dtype=torch.int64))
        assert sorted(q.tolist()) == list(range(n))
        assert not torch.equal(p, q)  # (1/1000! to fail)
        # A random permutation moves about n - 1 elements.
        assert int((p != torch.arange(n)).sum()) > n // 2


def test_zero_size():
    class Empty(torch.nn.Module):
        def forward(self, x):
            return torch.rand(0, 3) + 1, torch.randn(x.shape[0], 0), torch.randperm(0) + 1

    cm = thunder.compile(Empty())
    u, n, p = cm(torch.zeros(4, 2))
    assert u.shape == (0, 3) and n.shape == (4, 0) and p.shape == (0,)


def test_dynamic_batch():
    class Noisy(torch.nn.Module):
        def forward(self, x):
            return x + torch.rand(x.shape[0], 4)

    batch = torch.export.Dim("batch", min=2, max=1024)
    cm = thunder.compile(Noisy(), dynamic_shapes={"x": {0: batch}})
    for b in (3, 17, 300, 2):
        y = cm(torch.zeros(b, 4))
        assert y.shape == (b, 4)
        assert bool(((y >= 0) & (y < 1)).all())
    torch.manual_seed(3)
    a = cm(torch.zeros(300, 4))
    torch.manual_seed(3)
    b = cm(torch.zeros(300, 4))
    assert torch.equal(a, b)
    # Element i is a function of (seed, offset, stream, i): the first rows of a smaller
    # batch drawn with the same key are the larger one's.
    torch.manual_seed(3)
    c = cm(torch.zeros(5, 4))
    assert torch.equal(c, a[:5])
    assert len(cm._entries) == 1  # one dynamic program for every batch


def test_eager_numbers_differ_documented():
    # Thunder's numbers are its own generator's: not eager PyTorch's for the same seed.
    cm = thunder.compile(Draws())
    x = torch.zeros(3, 3)
    torch.manual_seed(0)
    ours = cm(x)[0]
    torch.manual_seed(0)
    eager = Draws()(x)[0]
    assert not torch.equal(ours, eager)


def _native_run(native, tensors, dtypes, seed=None):
    """One run through the C runtime (no seeding from torch), after set_seed(seed)."""
    views, keep = runtime._input_views(native, tensors)
    shapes = native.output_shapes(views)
    outputs = [torch.empty(shape, dtype=dtype) for shape, dtype in zip(shapes, dtypes)]
    if seed is not None:
        native.set_seed(seed)
    native.run(views, [(o.data_ptr(), desc.dtype, list(o.shape))
                       for o, desc in zip(outputs, native.outputs)])
    del keep
    return outputs


def _native(cm, *args):
    cm(*args)  # compiled on the first call
    return cm._entries[-1].model.native


def test_runtime_seed_api():
    """thunder_model_set_seed: the k-th run after it draws from (seed, k)."""
    x = torch.zeros(4, 4)
    native = _native(thunder.compile(Draws()), x)
    assert native.uses_random
    dtypes = [torch.float32] * 4
    a0 = _native_run(native, [x], dtypes, seed=11)
    a1 = _native_run(native, [x], dtypes)
    b0 = _native_run(native, [x], dtypes, seed=11)
    b1 = _native_run(native, [x], dtypes)
    c0 = _native_run(native, [x], dtypes, seed=12)
    for s, t in zip(a0 + a1, b0 + b1):
        assert torch.equal(s, t)
    assert not torch.equal(a0[0], a1[0]) and not torch.equal(a0[0], c0[0])
    # A program without random ops says so (and takes no seed from torch).
    plain = _native(thunder.compile(torch.nn.ReLU()), x)
    assert not plain.uses_random


def test_cli_seed(tmp_path, build_dir):
    """thunder-compile a .pt2 with random ops, then thunder-run --seed: a seed repeats its
    numbers, another seed draws others."""
    ep = torch.export.export(Draws(), (torch.zeros(4, 4),)).run_decompositions()
    pt2 = tmp_path / "draws.pt2"
    torch.export.save(ep, str(pt2))
    out = tmp_path / "out"
    subprocess.run([str(build_dir / "bin" / "thunder-compile"), str(pt2), "--target=cpu",
                    "-o", str(out)], check=True, capture_output=True, text=True)
    library = next(out.glob("lib*.so"))
    inputs = tmp_path / "in.npz"
    np.savez(inputs, np.zeros((4, 4), dtype=np.float32))

    def run(seed, name):
        save = tmp_path / f"{name}.npz"
        r = subprocess.run([str(build_dir / "bin" / "thunder-run"), str(library), "--inputs",
                            str(inputs), "--seed", str(seed), "--save", str(save)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert f"random numbers: seed {seed}" in r.stdout
        with np.load(save) as z:
            return [z[k] for k in sorted(z.files)]

    a, b, c = run(5, "a"), run(5, "b"), run(6, "c")
    for s, t in zip(a, b):
        assert np.array_equal(s, t)
    assert not np.array_equal(a[0], c[0])
    # Python's runtime draws the same numbers from the same key: the first run after
    # set_seed(5).
    model = runtime.load(str(library))
    ours = _native_run(model.native, [torch.zeros(4, 4)], [torch.float32] * 4, seed=5)
    for s, t in zip(a, ours):
        assert np.array_equal(s, t.numpy())


_M32 = 0xFFFFFFFF


def _philox(c, k):
    """Philox4x32-10 in Python (the spec's reference)."""
    c0, c1, c2, c3 = c
    k0, k1 = k
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & _M32, p1 & _M32, \
            ((p0 >> 32) ^ c3 ^ k1) & _M32, p0 & _M32
        k0, k1 = (k0 + 0x9E3779B9) & _M32, (k1 + 0xBB67AE85) & _M32
    return c0, c1, c2, c3


# Random123's known-answer vectors (kat_vectors: philox4x32_10).
_KAT = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
        ((_M32,) * 4, (_M32, _M32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
        ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
         (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]


def test_philox_known_answers(tmp_path):
    """thunder_scalar.h's philox4x32_10 (every target's) and the Python reference give
    Random123's known answers."""
    for counter, key, expected in _KAT:
        assert _philox(counter, key) == expected
    source = tmp_path / "kat.cpp"
    source.write_text(
        '#include "thunder_scalar.h"\n#include <cstdio>\n'
        "int main() {\n"
        + "".join(
            "  { auto r = thunder_scalar::philox4x32_10(%s); "
            'std::printf("%%08x %%08x %%08x %%08x\\n", r.w[0], r.w[1], r.w[2], r.w[3]); }\n'
            % ", ".join(f"{v}u" for v in counter + key) for counter, key, _ in _KAT)
        + "}\n")
    exe = tmp_path / "kat"
    subprocess.run(["c++", "-std=c++17", "-I", str(ROOT / "lib/Target/Common/Support"),
                    str(source), "-o", str(exe)], check=True)
    lines = subprocess.run([str(exe)], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    for line, (_, _, expected) in zip(lines, _KAT):
        assert line == " ".join(f"{w:08x}" for w in expected)


def test_numbers_follow_the_spec():
    """Element i of draw `stream` in the k-th run after set_seed(seed) is the spec's
    (docs/dialect.md, thunder.random): f32 uniform = (word 0 >> 8) / 2^24 of Philox over
    the counter (i, stream, k) and the key seed (k's high word xor'ed into the key's)."""
    x = torch.zeros(3, 3)
    native = _native(thunder.compile(Draws()), x)
    seed = 0x0123456789ABCDEF
    for k in range(2):
        outs = _native_run(native, [x], [torch.float32] * 4, seed=seed if k == 0 else None)
        for stream, index in ((0, 0), (2, 2)):  # rand(x.shape[0], 4), rand_like(x)
            flat = outs[index].ravel().tolist()
            for i, value in enumerate(flat):
                w = _philox((i & _M32, i >> 32, stream, k & _M32),
                            (seed & _M32, (seed >> 32) ^ (k >> 32)))
                assert value == (w[0] >> 8) / 2**24, (k, stream, i)


def test_list_ops(build_dir):
    r = subprocess.run([str(build_dir / "bin" / "thunder-compile"), "--list-ops"],
                       capture_output=True, text=True, check=True)
    for op in ("aten.rand.default", "aten.randn.default", "aten.randperm.default",
               "aten.rand_like.default", "aten.randn_like.default", "aten.randint.low"):
        assert op in r.stdout


@pytest.mark.parametrize("flavour", ["cuda", "hip"])
def test_gpu_draws_the_cpu_numbers(tmp_path, flavour):
    """The GPU code generator's kernels (run on the CPU through tools/gpu_emu) draw the
    CPU's numbers for the same key: the emulator's plain run uses seed 0 and offset 0, as
    the first run after set_seed(0) does."""
    sys.path.insert(0, str(ROOT / "tools" / "gpu_emu"))
    import gpu_emu

    class Gpu(torch.nn.Module):
        def forward(self, x):
            return (torch.rand(37, 5) + x, torch.randn(37, 5) + x,
                    torch.rand(9, dtype=torch.float64) + x.double(), torch.randperm(50))

    x = torch.zeros(())
    program = thunder.export(Gpu(), (x,))
    program.module.compile(str(tmp_path / "src"), target=flavour, name="gpu_rand",
                           source_only=True)
    source = (tmp_path / "src" / ("model.cu" if flavour == "cuda" else "model.hip")).read_text()
    assert "draw_random(" in source and "kGraphs = false" in source
    exe = gpu_emu.build(tmp_path / "src", flavour, tmp_path / "emu")
    outs, _ = gpu_emu.run(exe, [x.numpy()], [np.float32, np.float32, np.float64, np.int64],
                          tmp_path / "run")
    native = _native(thunder.compile(Gpu()), x)
    expected = _native_run(native, [x], [torch.float32, torch.float32, torch.float64,
                                         torch.int64], seed=0)
    assert np.array_equal(outs[0], expected[0].numpy())
    assert np.allclose(outs[1], expected[1].numpy(), rtol=1e-5, atol=1e-5)
    assert np.array_equal(outs[2], expected[2].numpy())
    assert np.array_equal(outs[3], expected[3].numpy())
