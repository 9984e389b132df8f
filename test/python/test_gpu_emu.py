"""The generated GPU kernels, CUDA and HIP flavour, run on the CPU (tools/gpu_emu) against PyTorch.

Each test compiles a model with `source_only` for the cuda or hip target, builds the
generated model.cu / model.hip as host C++ over thunder_gpu_emu.h (a block's threads as
fibers with a real barrier, warp exchanges at the flavour's width: 32 lanes for CUDA, 64
for HIP) and compares every output with PyTorch in fp32. `Kinds` holds one of every kernel
kind the GPU backends generate, on small odd shapes; fused and unfused, so both the
generated reduction kernels and the support headers' softmax, norm and reduction kernels
run. Attention with wide heads, and the zoo models whole, run too; a hand-written kernel
(data/gpu_emu_lanes.cpp) checks the cross-lane primitives lane by lane. A wrong warp width (THUNDER_EMU_WARP_SIZE: a 32-lane HIP
wavefront, a 16-lane CUDA warp) must break the cross-lane kinds: the comparison can fail.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree

import thunder
from zoo import ZOO, SequenceMasks

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "gpu_emu"))
import gpu_emu  # noqa: E402

FLAVOURS = ("cuda", "hip")
WARP = {"cuda": 32, "hip": 64}
#: A warp width the flavour's kernels are not written for.
WRONG_WARP = {"cuda": 16, "hip": 32}


class Kinds(torch.nn.Module):
    """One output per kernel kind, on odd shapes (rows shorter and longer than a warp or a
    block, heads and lengths no tile divides)."""

    OUTPUTS = ["pointwise", "row_sum", "block_row_max", "column_mean", "softmax_long",
               "softmax_short", "layer_norm", "attention", "attention_causal", "transpose",
               "concat", "slice", "gather", "max_pool", "avg_pool", "softmax_columns",
               "cumsum", "argmax"]
    #: Outputs whose kernels exchange values across the lanes of a warp.
    CROSS_LANE = ["row_sum", "block_row_max", "softmax_long", "softmax_short", "layer_norm",
                  "attention", "attention_causal"]

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.w = torch.nn.Parameter(torch.randn(99, generator=g))
        self.b = torch.nn.Parameter(torch.randn(99, generator=g))
        self.register_buffer("idx", torch.tensor([4, 0, 36, 17, 17, 2, 30]))

    def forward(self, x, big, n, q, k, v, img):
        return (
            torch.tanh(x * 2.0 + 1.0) * torch.sigmoid(x),
            x.sum(-1), big.amax(-1), x.mean(0),
            torch.softmax(big, -1), torch.softmax(x, -1),
            F.layer_norm(n, (99,), self.w, self.b),
            F.scaled_dot_product_attention(q, k, v),
            F.scaled_dot_product_attention(q, k, v, is_causal=True),
            x.t().contiguous() + 0.0,
            torch.cat([x, x[:, :5] * 3.0], dim=1),
            x[1:, 3:30:2] * 1.0,
            torch.index_select(x, 1, self.idx),
            F.max_pool2d(img, 3, 2, 1), F.avg_pool2d(img, 2),
            torch.softmax(x, 0), torch.cumsum(x, 1), x.argmax(-1),
        )

    @staticmethod
    def inputs():
        g = torch.Generator().manual_seed(0)
        return tuple(torch.randn(*s, generator=g) for s in
                     [(5, 37), (3, 1501), (7, 99), (2, 3, 19, 24), (2, 3, 23, 24),
                      (2, 3, 23, 24), (2, 3, 11, 13)])


_BUILDS: dict = {}


def _emulated(tmp_path_factory, key, model, inputs, flavour, fuse=True, dynamic_shapes=None):
    """The emulation's executable for `model` compiled for `flavour`, and the generated
    source (built once per key)."""
    if (key, flavour, fuse) not in _BUILDS:
        work = tmp_path_factory.mktemp(f"{key}-{flavour}-{'fused' if fuse else 'unfused'}")
        program = thunder.export(model, inputs, dynamic_shapes=dynamic_shapes)
        program.module.compile(str(work / "src"), target=flavour, name=key, source_only=True,
                               fuse=fuse)
        source = (work / "src" / ("model.cu" if flavour == "cuda" else "model.hip")).read_text()
        exe = gpu_emu.build(work / "src", flavour, work / "emu")
        _BUILDS[(key, flavour, fuse)] = (exe, source, work)
    return _BUILDS[(key, flavour, fuse)]


def _reference(model, inputs):
    with torch.no_grad():
        return [t.numpy() for t in pytree.tree_leaves(model(*inputs))]


def _run(exe, work, inputs, expected, env=None):
    outs, report = gpu_emu.run(exe, inputs, [e.dtype for e in expected], work / "run", env=env)
    return outs, report


def _close(actual, expected) -> bool:
    return actual.shape == expected.shape and np.allclose(actual, expected, rtol=1e-4,
                                                          atol=1e-5)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_kernel_kind(tmp_path_factory, flavour, fuse):
    model, inputs = Kinds().eval(), Kinds.inputs()
    exe, source, work = _emulated(tmp_path_factory, "kinds", model, inputs, flavour, fuse)
    # The kinds of unit the generated source holds.
    kinds = set(re.findall(r"// Kernel \d+: \w+ \((\w+)\)", source))
    assert {"pointwise", "reduction" if fuse else "library", "attention",
            "data_movement"} <= kinds, kinds
    unfused = () if fuse else ("library_softmax", "library_layer_norm")
    for op in ("max_pool", "avg_pool", "cumsum", "argmax", "index_select", "concat", *unfused):
        assert re.search(rf"// Kernel \d+: \w*{op}", source), op
    expected = _reference(model, inputs)
    outs, report = _run(exe, work, inputs, expected)
    assert report.startswith(f"warp {WARP[flavour]} "), report
    assert len(outs) == len(Kinds.OUTPUTS)
    bad = [name for name, a, e in zip(Kinds.OUTPUTS, outs, expected) if not _close(a, e)]
    assert not bad, f"{flavour}: outputs differing from PyTorch: {bad}"


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_wrong_warp_width_fails(tmp_path_factory, flavour):
    """The kernels written for the flavour's width, run on warps of another width, give wrong
    reductions, softmax, norms and attention, and still right elementwise and data movement
    results: the emulation exercises the width, and the comparison catches it."""
    model, inputs = Kinds().eval(), Kinds.inputs()
    exe, _, work = _emulated(tmp_path_factory, "kinds", model, inputs, flavour)
    expected = _reference(model, inputs)
    outs, report = _run(exe, work, inputs, expected,
                        env={"THUNDER_EMU_WARP_SIZE": str(WRONG_WARP[flavour])})
    assert report.startswith(f"warp {WRONG_WARP[flavour]} "), report
    bad = {name for name, a, e in zip(Kinds.OUTPUTS, outs, expected) if not _close(a, e)}
    assert bad == set(Kinds.CROSS_LANE), bad


class _Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return (F.scaled_dot_product_attention(q, k, v, is_causal=True),
                F.scaled_dot_product_attention(q, k, v, scale=0.3))


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("e,ev", [(96, 80), (160, 136), (256, 128)], ids=["e96", "e160", "e256"])
def test_wide_head_attention(tmp_path_factory, flavour, e, ev):
    """Head dims of several elements per lane (and, on HIP, tiles of keys that no longer fit
    a wavefront's width in the LDS), more keys than queries, lengths no tile divides."""
    g = torch.Generator().manual_seed(2)
    inputs = (torch.randn(1, 2, 9, e, generator=g), torch.randn(1, 2, 70, e, generator=g),
              torch.randn(1, 2, 70, ev, generator=g))
    model = _Attention()
    exe, _, work = _emulated(tmp_path_factory, f"attention{e}", model, inputs, flavour)
    expected = _reference(model, inputs)
    outs, _ = _run(exe, work, inputs, expected)
    for a, x in zip(outs, expected):
        np.testing.assert_allclose(a, x, rtol=1e-4, atol=1e-5)


ZOO_MODELS = ["mlp", "resnet18", "bert", "gpt2", "llama", "vit"]


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("name", ZOO_MODELS)
def test_zoo_model(tmp_path_factory, name, flavour):
    model, inputs = ZOO[name].build(size="small", batch=2)
    exe, _, work = _emulated(tmp_path_factory, name, model, inputs, flavour)
    expected = _reference(model, inputs)
    outs, _ = _run(exe, work, inputs, expected)
    for a, e in zip(outs, expected):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_dynamic_batch(tmp_path_factory, flavour):
    """A model compiled for a dynamic batch runs at batches other than its example's: sizes
    passed to the kernels at run time, grids and workspaces computed from them."""
    model, inputs = ZOO["gpt2"].build(size="small", batch=2)
    exe, source, work = _emulated(tmp_path_factory, "gpt2_dynamic", model, inputs, flavour,
                                  dynamic_shapes=ZOO["gpt2"].dynamic_batch(inputs))
    assert not re.search(r"kNumSymbols = 0;", source)
    for batch in (1, 3):
        _, run_inputs = ZOO["gpt2"].build(size="small", batch=batch)
        expected = _reference(model, run_inputs)
        outs, _ = gpu_emu.run(exe, run_inputs, [e.dtype for e in expected],
                              work / f"run{batch}")
        assert outs[0].shape[0] == batch
        for a, e in zip(outs, expected):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4)


class Tails(torch.nn.Module):
    """Positions counted from the end of a dynamic dim: slices read by pointwise ops, and
    one returned as is."""

    def forward(self, x):
        return x[-3:] * 2.0, x[:, -1] + 1.0, x[-4:]


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_negative_starts_on_a_dynamic_dim(tmp_path_factory, flavour, fuse):
    """A negative start on a dynamic dim is counted from the run-time size in the GPU
    kernels' index, fused and with each slice a kernel of its own."""
    model = Tails()
    rows = torch.export.Dim("rows", min=4, max=64)
    g = torch.Generator().manual_seed(3)
    exe, _, work = _emulated(tmp_path_factory, "tails", model, (torch.randn(9, 7, generator=g),),
                             flavour, fuse, dynamic_shapes=({0: rows},))
    for n in (4, 13):
        inputs = (torch.randn(n, 7, generator=g),)
        expected = _reference(model, inputs)
        outs, _ = gpu_emu.run(exe, inputs, [e.dtype for e in expected], work / f"run{n}")
        for a, e in zip(outs, expected):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_sequence_masks_on_a_dynamic_length(tmp_path_factory, flavour, fuse):
    """A slice to a symbolic end (an iota-driven gather), diff along a dynamic dim and a
    mask indexing every dim of a dynamic matrix, in the GPU kernels at three lengths."""
    model, g = SequenceMasks(), torch.Generator().manual_seed(4)
    exe, _, work = _emulated(tmp_path_factory, "masks", model, SequenceMasks.inputs(7, g),
                             flavour, fuse, dynamic_shapes=SequenceMasks.dynamic_shapes())
    for seq in (4, 11, 30):
        inputs = SequenceMasks.inputs(seq, g)
        expected = _reference(model, inputs)
        outs, _ = gpu_emu.run(exe, inputs, [e.dtype for e in expected], work / f"run{seq}")
        for a, e in zip(outs, expected):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def _lanes(tmp_path_factory, flavour, env=None):
    """The per-thread lines of data/gpu_emu_lanes.cpp, built against the kinds' headers."""
    model, inputs = Kinds().eval(), Kinds.inputs()
    _, _, work = _emulated(tmp_path_factory, "kinds", model, inputs, flavour)
    exe = work / "lanes" / "gpu_emu_lanes"
    if not exe.exists():
        gpu_emu.build_program(ROOT / "test" / "python" / "data" / "gpu_emu_lanes.cpp",
                              work / "src", flavour, work / "lanes")
    env = dict(env or {})
    result = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                            env={**{k: v for k, v in os.environ.items()
                                    if not k.startswith("THUNDER_EMU_")}, **env})
    return [[int(f) for f in line.split()] for line in result.stdout.splitlines()]


def _lanes_expected(flavour, width):
    rows = []
    for t in range(128):
        lane = t % width
        bits = sum(1 << i for i in range(width) if i % 3 == 0)
        if flavour == "cuda":
            bits &= 0xFFFFFFFF
            last = lane if lane + 1 >= width else lane + 1
        else:
            last = 5
        rows.append([t, lane, bits & 0xFFFFFFFF, bits >> 32, width * (width - 1) // 2, 8128,
                     (t + 1) % 128 * 10, t - lane, last])
    return rows


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_cross_lane_primitives(tmp_path_factory, flavour):
    """Ballots, shuffles, readfirstlane/readlane, warp and block reductions and a
    __syncthreads over shared memory, at the flavour's width (a 64-bit ballot on HIP); and
    the prelude's warp reduction wrong at a width it is not written for."""
    assert _lanes(tmp_path_factory, flavour) == _lanes_expected(flavour, WARP[flavour])
    wrong = _lanes(tmp_path_factory, flavour, {"THUNDER_EMU_WARP_SIZE": str(WRONG_WARP[flavour])})
    assert [r[1] for r in wrong] == [t % WRONG_WARP[flavour] for t in range(128)]
    assert all(r[4] != WARP[flavour] * (WARP[flavour] - 1) // 2 for r in wrong)
    # Without the block barrier, the block reduction and the shared-memory ring go wrong.
    unsynced = _lanes(tmp_path_factory, flavour, {"THUNDER_EMU_BREAK_BARRIER": "1"})
    assert any(r[5] != 8128 for r in unsynced)
    assert any(r[6] != (r[0] + 1) % 128 * 10 for r in unsynced)


def test_launch_rewrite():
    """The one change the emulation makes to the generated sources."""
    text = ("k<<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(n, S, a0);\n"
            "softmax_rows_kernel<T, std::max<int>(1, 2)><<<g, b, smem, s>>>(x);\n"
            "thunder_probe<<<1, 1>>>();\n")
    assert gpu_emu.rewrite_launches(text) == (
        "::thunder_emu::Launch(grid_for(n, kBlock, c), kBlock, 0, c.stream)(k, n, S, a0);\n"
        "::thunder_emu::Launch(g, b, smem, s)(softmax_rows_kernel<T, std::max<int>(1, 2)>, x);\n"
        "::thunder_emu::Launch(1, 1)(thunder_probe);\n")


class EmptyDims(torch.nn.Module):
    """Zero-size dims through the GPU kernels (issue 18's audit): a GEMM whose inner dim
    is 0 is zeros (plus its bias), empty sums 0, empty products 1, empty means NaN, and
    zero rows, columns or batches give empty results."""

    OUTPUTS = ["mm_k0", "linear_k0", "bmm_k0", "sum_empty", "prod_empty", "mean_empty",
               "sum_cols_empty", "mm_m0", "bmm_b0", "softmax_rows0", "cumsum_empty",
               "layer_norm_rows0"]

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(5, 0))
        self.b = torch.nn.Parameter(torch.randn(5))

    def forward(self, a0, b0, x0, e, m0, w, bb):
        return (a0 @ b0, F.linear(x0, self.w, self.b),
                torch.bmm(a0.unsqueeze(0).expand(2, 3, 0), b0.unsqueeze(0).expand(2, 0, 4)),
                e.sum(1), e.prod(1), e.mean(1), e.transpose(0, 1).sum(0), m0 @ w,
                torch.bmm(bb, bb.transpose(1, 2)), m0.softmax(1), e.cumsum(1),
                F.layer_norm(m0, (4,)))

    @staticmethod
    def inputs():
        g = torch.Generator().manual_seed(3)
        return (torch.randn(3, 0, generator=g), torch.randn(0, 4, generator=g),
                torch.randn(2, 0, generator=g), torch.randn(3, 0, generator=g),
                torch.randn(0, 4, generator=g), torch.randn(4, 5, generator=g),
                torch.randn(0, 3, 4, generator=g))


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_empty_dims(tmp_path_factory, flavour):
    model, inputs = EmptyDims().eval(), EmptyDims.inputs()
    exe, _, work = _emulated(tmp_path_factory, "empty_dims", model, inputs, flavour)
    expected = _reference(model, inputs)
    outs, _ = _run(exe, work, inputs, expected)
    bad = [name for name, a, e in zip(EmptyDims.OUTPUTS, outs, expected)
           if not (a.shape == e.shape and np.allclose(a, e, equal_nan=True))]
    assert not bad, f"{flavour}: outputs differing from PyTorch: {bad}"


class SortScatterMath(torch.nn.Module):
    """The argsort and scatter kernels and the math functions added for Core ATen."""

    OUTPUTS = ["sort", "sort_idx", "topk", "scatter_add", "scatter_amax", "scatter_mean",
               "index_put_acc", "math", "atan2", "fmod", "bitwise"]

    def forward(self, x, g, y, n):
        s, i = torch.sort(x, stable=True, dim=1, descending=True)
        m = (torch.asin(torch.tanh(x)) + torch.acos(torch.tanh(x)) + torch.atan(x) +
             torch.sinh(x) + torch.cosh(x) + torch.asinh(x) + torch.acosh(x.abs() + 1) +
             torch.atanh(torch.tanh(x) * 0.9) + torch.expm1(x) + torch.log2(x.abs()) +
             torch.log10(x.abs()) + torch.tan(x * 0.3) + torch.round(x * 3) + torch.trunc(x * 3))
        return (s, i, torch.topk(x, 3, -1)[0], torch.scatter_add(x, 1, g, y),
                torch.scatter_reduce(x, 1, g, y, "amax", include_self=False),
                torch.scatter_reduce(x, 1, g, y, "mean"),
                x.index_put((g[0, :2] % 5,), y[0, :2, None].expand(2, 37), accumulate=True),
                m, torch.atan2(x, y.sum(1, keepdim=True)), torch.fmod(x * 5, 1.5),
                (n & 6) | (n ^ 3) | ~n)

    @staticmethod
    def inputs():
        gen = torch.Generator().manual_seed(4)
        return (torch.randn(5, 37, generator=gen), torch.randint(0, 37, (5, 9), generator=gen),
                torch.randn(5, 9, generator=gen), torch.randint(-50, 50, (5, 37), generator=gen))


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_sort_scatter_and_math(tmp_path_factory, flavour):
    model, inputs = SortScatterMath().eval(), SortScatterMath.inputs()
    exe, _, work = _emulated(tmp_path_factory, "sort_scatter_math", model, inputs, flavour)
    expected = _reference(model, inputs)
    outs, _ = _run(exe, work, inputs, expected)
    bad = [name for name, a, e in zip(SortScatterMath.OUTPUTS, outs, expected)
           if not _close(a, e)]
    assert not bad, f"{flavour}: outputs differing from PyTorch: {bad}"
