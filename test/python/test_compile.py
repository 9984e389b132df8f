"""thunder.compile and thunder.load on the zoo: compiled from Python (dynamic batch), through
the thunder-compile CLI, and with external weights, every model matches eager."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest
import torch
from torch.utils import _pytree as pytree

import thunder
from conftest import assert_close_tree
from thunder import capture
from zoo import CONV_ZOO, ZOO, SequenceMasks



def zoo_inputs(name: str, batch: int) -> tuple:
    """Inputs of the zoo model at another batch size (the model built with them is not
    used: its weights may differ, the inputs' kinds and ranges do not)."""
    return ZOO[name].build(size="small", batch=batch)[1]


def eager(model, inputs):
    with torch.no_grad():
        return model(*inputs)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_dynamic_batch(name, cache_dir):
    """The default policy makes the batch dynamic: one compile at batch 2 serves 1 and 3."""
    model, inputs = ZOO[name].build(size="small", batch=2)
    rtol, atol = ZOO[name].tolerance
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    assert compiled.compiles == []  # nothing until the first call
    assert_close_tree(compiled(*inputs), eager(model, inputs), rtol, atol)
    [record] = compiled.compiles
    assert record.source == "compiled"
    assert "in [1, inf]" in record.signature, record.signature
    for batch in (1, 3):
        inputs = zoo_inputs(name, batch)
        assert_close_tree(compiled(*inputs), eager(model, inputs), rtol, atol)
    assert len(compiled.compiles) == 1, [r.signature for r in compiled.compiles]


@pytest.mark.parametrize("name", sorted(CONV_ZOO))
def test_conv_zoo_dynamic_batch(name, cache_dir):
    """The convolutional models outside ZOO (depthwise-separable, ConvNeXt blocks): one
    compile with a dynamic batch serves 1 and 3, through the NCHW-native depthwise and
    pointwise kernels."""
    model, inputs = CONV_ZOO[name].build(size="small", batch=2)
    rtol, atol = CONV_ZOO[name].tolerance
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    for batch in (2, 1, 3):
        inputs = CONV_ZOO[name].build(size="small", batch=batch)[1]
        assert_close_tree(compiled(*inputs), eager(model, inputs), rtol, atol)
    assert len(compiled.compiles) == 1, [r.signature for r in compiled.compiles]


class ClampEpilogues(torch.nn.Module):
    """Convolutions and a GEMM whose whole epilogue is a clamp, which their kernels apply
    to their registers before the store (thunder_cpu_gemm_api.h's EpilogueRef::clamping):
    a pointwise convolution with a folded BatchNorm (a constant filter: the packed path)
    and ReLU6, a strided depthwise one with hardtanh, a pointwise one with ReLU (no upper
    bound), a bias-free Linear over every position (enough rows for the microkernels)
    with a lower clamp only."""

    def __init__(self):
        super().__init__()
        self.pw = torch.nn.Conv2d(8, 24, 1, bias=False)
        self.bn = torch.nn.BatchNorm2d(24)
        self.dw = torch.nn.Conv2d(24, 24, 3, stride=2, padding=1, groups=24)
        self.pw2 = torch.nn.Conv2d(24, 40, 1)
        self.fc = torch.nn.Linear(40, 48, bias=False)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 2.0)
        self.eval()

    def forward(self, x):
        x = torch.nn.functional.relu6(self.bn(self.pw(x)))
        x = torch.nn.functional.hardtanh(self.dw(x), -0.5, 0.75)
        x = torch.relu(self.pw2(x))
        return self.fc(x.permute(0, 2, 3, 1)).clamp(min=-0.05)


def test_clamp_epilogues_in_registers(cache_dir, tmp_path, thunder_compile):
    """Each clamp-only epilogue is marked for the kernel's registers in the generated
    code, and the results match eager: values past both bounds (the inputs are scaled
    well beyond them), and NaN and infinities, which clamp keeps (NaN) or bounds."""
    torch.manual_seed(0)
    model = ClampEpilogues()
    x = torch.randn(2, 8, 17, 15) * 3
    x[0, 1, 2, 3] = float("nan")
    x[1, 4, 8, 8] = float("inf")
    x[1, 5, 0, 0] = -float("inf")
    archive = tmp_path / "clamps.pt2"
    torch.export.save(capture.capture(model, (x,)), archive)
    result = subprocess.run([str(thunder_compile), str(archive), "--compile-to=source",
                             "-o", str(tmp_path / "src")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    sources = "".join(p.read_text() for p in (tmp_path / "src" / "kernels").glob("*.cpp"))
    marks = re.findall(r"EpilogueRef\(epilogue\)\.clamping\(([^()]*(?:\([^()]*\)[^()]*)*)\)",
                       sources)
    assert len(marks) == 4, marks
    assert sum("__builtin_inff()" in m for m in marks) == 2, marks  # ReLU, clamp(min=)
    expected = eager(model, (x,))
    assert expected.isnan().any() and (expected == -0.05).any()
    # Static shapes, then the default policy's dynamic batch (a batched matmul of
    # its own, the pointwise convolutions image by image).
    for dynamic in ({"dynamic": False}, {}):
        compiled = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                                   **dynamic)
        torch.testing.assert_close(compiled(x), expected, rtol=1e-5, atol=1e-5,
                                   equal_nan=True)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_cli_then_load(name, tmp_path, thunder_compile):
    """A static .pt2 compiled by thunder-compile and run with thunder.load."""
    model, inputs = ZOO[name].build(size="small", batch=2)
    archive = tmp_path / f"{name}.pt2"
    torch.export.save(capture.capture(model, inputs), archive)
    result = subprocess.run([str(thunder_compile), str(archive), "-o", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    loaded = thunder.load(tmp_path / "out")
    assert loaded.name == name and loaded.target == "cpu"
    assert [d.name for d in loaded.inputs] == \
        [s.arg.name for s in capture.capture(model, inputs).graph_signature.input_specs
         if s.kind.name == "USER_INPUT"]
    outputs = loaded.run(*inputs)
    expected = [leaf for leaf in pytree.tree_leaves(eager(model, inputs))
                if isinstance(leaf, torch.Tensor)]
    assert len(outputs) == len(expected)
    rtol, atol = ZOO[name].tolerance
    for actual, reference in zip(outputs, expected):
        torch.testing.assert_close(actual, reference, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_external_weights(name, cache_dir):
    """NAME.safetensors beside the library, memory-mapped by the runtime, static batch."""
    model, inputs = ZOO[name].build(size="small", batch=2)
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, external_weights=True,
                               dynamic=False, progress=False)
    [record] = compiled.compiles
    entry = record.path
    weights = [p.name for p in pathlib.Path(entry).glob("*.safetensors")]
    assert weights == [f"{compiled.model.__class__.__name__}.safetensors"]
    assert "in [" not in record.signature  # static
    rtol, atol = ZOO[name].tolerance
    assert_close_tree(compiled(*inputs), eager(model, inputs), rtol, atol)
    # The entry loads on its own too.
    loaded = thunder.load(entry)
    expected = [leaf for leaf in pytree.tree_leaves(eager(model, inputs))
                if isinstance(leaf, torch.Tensor)]
    for actual, reference in zip(loaded.run(*inputs), expected):
        torch.testing.assert_close(actual, reference, rtol=rtol, atol=atol)


def test_external_weights_are_read_from_the_file(cache_dir, tmp_path):
    """Without its weights file the library does not load: the weights really are outside."""
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, external_weights=True,
                               dynamic=False, progress=False)
    library = compiled.artifacts[0]
    shutil.copy(library, tmp_path)
    with pytest.raises(thunder.RuntimeError, match=r"MLP\.safetensors") as error:
        thunder.load(tmp_path)
    assert error.value.status == "THUNDER_ERROR_LOAD"


def _needed(library: str) -> set[str]:
    """The shared libraries a library names (its DT_NEEDED entries)."""
    dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, text=True,
                             check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))


class _Float64Matmul(torch.nn.Module):
    def forward(self, a, b):
        return (a @ b).relu()


def test_library_links_blas_and_onednn_only_where_its_kernels_call_them(cache_dir):
    """A library needs OpenBLAS only for float64 GEMMs and oneDNN only for its
    convolutions (linked --as-needed): a transformer's or an MLP's loads neither, and
    OpenBLAS does not start its thread pool in a process that never calls it."""
    libraries = {}
    for name, (model, inputs) in {
            "mlp": ZOO["mlp"].build(size="small", batch=2),
            "resnet18": ZOO["resnet18"].build(size="small", batch=1),
            "f64": (_Float64Matmul(), (torch.randn(8, 16, dtype=torch.float64),
                                       torch.randn(16, 4, dtype=torch.float64)))}.items():
        compiled = thunder.compile(model, inputs, cache_dir=cache_dir, dynamic=False,
                                   progress=False)
        assert_close_tree(compiled(*inputs), eager(model, inputs))
        libraries[name] = {lib.split(".so")[0] for lib in _needed(compiled.artifacts[0])}
    assert not {"libopenblas", "libdnnl"} & libraries["mlp"], libraries["mlp"]
    assert "libdnnl" in libraries["resnet18"], libraries["resnet18"]
    assert "libopenblas" in libraries["f64"] and "libdnnl" not in libraries["f64"], \
        libraries["f64"]


# ---------------------------------------------------------------------------------------
# Behaving like the model: output pytrees, keyword arguments, Python values
# ---------------------------------------------------------------------------------------

class Structured(torch.nn.Module):
    """Outputs in a nested structure with Python constants among them; a keyword argument
    and a Python number that torch.export bakes in."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 4)

    def forward(self, x, n, *, bias):
        y = self.fc(x) * n + bias
        return {"y": y, "pair": (y.relu(), 3, None), "x": x}


def test_outputs_keep_the_model_structure(cache_dir):
    model = Structured().eval()
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x, bias = torch.randn(2, 6), torch.randn(4)
    assert_close_tree(compiled(x, 2, bias=bias), eager_kw(model, x, 2, bias=bias))
    assert len(compiled.compiles) == 1
    # Another batch size: no recompile; keyword arguments in any order.
    x3 = torch.randn(3, 6)
    assert_close_tree(compiled(x3, 2, bias=bias), eager_kw(model, x3, 2, bias=bias))
    assert len(compiled.compiles) == 1
    # Another Python value is another program: compiled again, and both stay usable.
    assert_close_tree(compiled(x, 5, bias=bias), eager_kw(model, x, 5, bias=bias))
    assert len(compiled.compiles) == 2
    assert "n=5" in compiled.compiles[1].signature
    assert_close_tree(compiled(x, 2, bias=bias), eager_kw(model, x, 2, bias=bias))
    assert len(compiled.compiles) == 2


def eager_kw(model, *args, **kwargs):
    with torch.no_grad():
        return model(*args, **kwargs)


class TwoInputs(torch.nn.Module):
    def forward(self, a, b):
        return (a @ b).softmax(-1)


def test_single_tensor_and_non_contiguous_inputs(cache_dir):
    model = TwoInputs()
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    a, b = torch.randn(2, 5, 3), torch.randn(7, 3).t()  # b is a transposed view
    assert not b.is_contiguous()
    result = compiled(a, b)
    assert isinstance(result, torch.Tensor)
    torch.testing.assert_close(result, model(a, b))
    loaded = thunder.load(compiled.artifacts[0])
    torch.testing.assert_close(loaded(a, b), model(a, b))  # one output: the tensor itself
    assert repr(loaded).startswith("<thunder.Model 'TwoInputs' (a: float32[")
    # What it runs on: the host CPU, and the -march the library was built for.
    assert loaded.device == "cpu"
    assert loaded.device_arch == compiled._cpu
    assert loaded.device_description.startswith("cpu")
    assert loaded.device_description.endswith(f", code for {compiled._cpu}")
    assert repr(loaded).endswith(f", on {loaded.device_description}>")
    assert compiled.device_description == loaded.device_description
    assert repr(compiled).endswith(f", on {loaded.device_description}>")


# ---------------------------------------------------------------------------------------
# Which dims are dynamic
# ---------------------------------------------------------------------------------------

class Sequence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8))

    def forward(self, x):  # [batch, seq, 8]
        # (No nn.Linear: its [b*s, 8] reshape back to [b, s, 8] with two dynamic dims is
        # not supported by the CPU backend yet; see test_reshape_to_two_dynamic_dims.)
        return torch.tanh(x).cumsum(1) * self.w


def test_default_policy_batch_then_automatic_dynamic(cache_dir):
    model = Sequence()
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    for batch, seq in [(1, 4), (4, 4), (1, 4), (7, 4), (4, 6), (2, 9), (1, 3)]:
        x = torch.randn(batch, seq, 8)
        torch.testing.assert_close(compiled(x), model(x))
    signatures = [record.signature for record in compiled.compiles]
    # Batch 1 first: static (torch.export cannot make a dim of size 1 dynamic); batch 4:
    # dynamic batch from 1 up; a new sequence length: that dim becomes dynamic too.
    assert len(signatures) == 3, signatures
    assert "[1, 4, 8]" in signatures[0]
    assert signatures[1].count("in [1, inf]") == 1 and ", 4, 8]" in signatures[1]
    assert ", 8]" in signatures[2] and ", 4, 8]" not in signatures[2]


class Projection(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):  # [batch, seq, 8] -> view [batch * seq, 8] -> mm -> view back
        return self.fc(x)


def test_reshape_to_two_dynamic_dims(cache_dir):
    """A Linear on [batch, seq, features] with both dims dynamic: the views to and from
    [batch * seq, features] are sized from torch.export's symbols."""
    model = Projection()
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False, dynamic=True)
    for batch, seq in ((2, 5), (3, 7)):
        x = torch.randn(batch, seq, 8)
        torch.testing.assert_close(compiled(x), model(x))
    assert len(compiled.compiles) == 1


def test_dynamic_false_and_true(cache_dir):
    model = Sequence()
    static = thunder.compile(model, cache_dir=cache_dir, progress=False, dynamic=False)
    for batch in (2, 3, 2):
        x = torch.randn(batch, 5, 8)
        torch.testing.assert_close(static(x), model(x))
    assert len(static.compiles) == 2
    dynamic = thunder.compile(model, cache_dir=cache_dir, progress=False, dynamic=True)
    for batch, seq in [(2, 5), (3, 9), (6, 2)]:
        x = torch.randn(batch, seq, 8)
        torch.testing.assert_close(dynamic(x), model(x))
    assert len(dynamic.compiles) == 1
    assert "x: float32[s" in dynamic.compiles[0].signature


class ChannelsNorm(torch.nn.Module):
    """ConvNeXt's LayerNorm over the channels of NCHW, and a normalization whose result
    is transposed within each row (only the reduced dims swap)."""

    def __init__(self, channels: int):
        super().__init__()
        self.norm = torch.nn.LayerNorm(channels, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        y = self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        z = x / x.abs().sum((2, 3), keepdim=True)
        return y, z.transpose(2, 3)


@pytest.mark.parametrize("hw", [8, 4], ids=["c_eq_h_eq_w", "c_ne_h"])
def test_views_across_reduction_rows(hw, cache_dir):
    """A row kernel holds one row's mean and variance at a time: the permute back to NCHW
    moves elements across rows and must stay out of it. With C = H = W both sides have the
    rows' shape, so only the permutation tells (the fusion once wrote ConvNeXt's norms
    to the wrong positions there, static and dynamic)."""
    model = ChannelsNorm(8).eval()
    x = torch.randn(2, 8, hw, hw)
    for dynamic in (False, True):
        compiled = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                                   dynamic=dynamic, name=f"channels_norm_{hw}_{dynamic}")
        for batch in (2, 3) if dynamic else (2,):
            x = torch.randn(batch, 8, hw, hw)
            assert_close_tree(compiled(x), eager(model, (x,)), 1e-5, 1e-5)


def test_dynamic_batch_norms_are_fused(tmp_path, thunder_compile):
    """At a dynamic batch, layer norm, softmax and log_softmax decompose and fuse into row
    kernels as at a static one (no composite kernel left)."""

    class Norms(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(16)

        def forward(self, x):
            h = self.norm(x)
            return torch.softmax(h, -1) + torch.log_softmax(x, -1)

    model = Norms().eval()
    x = torch.randn(4, 5, 16)
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = capture.decompose(capture.export_program(model, (x,), None, ({0: batch},)))
    torch.export.save(ep, tmp_path / "norms.pt2")
    report = subprocess.run([str(thunder_compile), str(tmp_path / "norms.pt2"),
                             "--compile-to=plan", "--report=fusion", "-o", os.devnull],
                            capture_output=True, text=True, check=True).stdout
    kernels = re.findall(r"^#\d+\s+(\S+) \((\w+)\)", report, re.M)
    assert kernels and all(kind == "reduction" for _, kind in kernels), report
    for composite in ("layer_norm", "softmax", "log_softmax"):
        assert not re.search(rf"ops:.*\b{composite}\b", report), report
    compiled = thunder.compile(model, (x,), cache_dir=tmp_path / "cache", progress=False,
                               dynamic_shapes=({0: batch},))
    for b in (1, 4, 9):
        x = torch.randn(b, 5, 16)
        assert_close_tree(compiled(x), eager(model, (x,)), 1e-5, 1e-5)


class DynamicSlices(torch.nn.Module):
    def forward(self, x):
        return (x[1:] * 2, torch.softmax(x[:, :-1], -1), (x[2::2] ** 2).sum(0),
                x[:5] - 1, x[1:].T[:, ::3])


def test_slices_of_a_dynamic_dim(cache_dir):
    """Slices of dynamic dims (from a start, to an end counted from the size, strided, to a
    fixed end that torch.export's guards keep within the size) are sized at run time."""
    model = DynamicSlices()
    compiled = thunder.compile(model, (torch.randn(7, 6),), cache_dir=cache_dir,
                               progress=False, dynamic=True, name="dynamic_slices")
    for rows, cols in ((7, 6), (9, 4), (12, 3), (6, 2)):
        x = torch.randn(rows, cols)
        assert_close_tree(compiled(x), model(x), 1e-5, 1e-5)
    assert len(compiled.compiles) == 1


class DynamicTails(torch.nn.Module):
    """Positions counted from the end of a dynamic dim: a language model's last-token
    logits (`x[:, -1]`), the last rows, a window before the end, one row from the end."""

    def forward(self, x, h):
        return (x[-3:] * 2, torch.tanh(x[:, -4:-1]) + x[:, -1:], x[-2], x[-3:].sum(0),
                h[:, -1, :] @ h[0, :4, :].T, h[:, -3:])


def test_negative_starts_on_a_dynamic_dim(cache_dir):
    """A negative start (or select index) on a dynamic dim counts from the run-time size:
    in fused kernels, in the library's slice (a slice returned as is), and in the
    result's size."""
    model = DynamicTails()
    # torch.export guards each size to hold the positions read (x[-3:]: at least 3 rows).
    rows, cols = torch.export.Dim("rows", min=3, max=64), torch.export.Dim("cols", min=4, max=64)
    seq = torch.export.Dim("seq", min=4, max=64)
    compiled = thunder.compile(model, (torch.randn(7, 6), torch.randn(2, 9, 5)),
                               cache_dir=cache_dir, progress=False, fallback="error",
                               dynamic_shapes=({0: rows, 1: cols}, {1: seq}))
    for n, c, s in ((7, 6, 9), (3, 4, 4), (12, 5, 33), (3, 64, 64)):
        x, h = torch.randn(n, c), torch.randn(2, s, 5)
        assert_close_tree(compiled(x, h), model(x, h), 1e-5, 1e-5)
    assert len(compiled.compiles) == 1


def test_sequence_masks_on_a_dynamic_length(cache_dir):
    """A slice to a symbolic end (`positions[:, :n]`, with a start and a step), diff along
    a dynamic dim, and a mask indexing every dim of a [batch, seq] matrix, at lengths
    across the range, one compile."""
    model, g = SequenceMasks(), torch.Generator().manual_seed(5)
    compiled = thunder.compile(model, SequenceMasks.inputs(7, g), cache_dir=cache_dir,
                               progress=False, fallback="error",
                               dynamic_shapes=SequenceMasks.dynamic_shapes())
    for seq in (4, 7, 13, 30):
        inputs = SequenceMasks.inputs(seq, g)
        assert_close_tree(compiled(*inputs), model(*inputs), 1e-5, 1e-5)
    assert len(compiled.compiles) == 1


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert"])
def test_language_models_at_a_dynamic_sequence_length(cache_dir, name):
    """The zoo's language models compiled once for every sequence length in [2, 512]
    (position ids sliced to the length, transformers' mask built from it) match eager at
    lengths in the range, the shortest included."""
    zoo = ZOO[name]
    model, inputs = zoo.build(size="small", batch=1)
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, progress=False,
                               fallback="error", dynamic_shapes=zoo.dynamic_sequence(inputs))
    g = torch.Generator().manual_seed(7)
    for seq in (2, 9, 16, 61):
        ids = torch.randint(0, 128, (1, seq), generator=g)
        with torch.no_grad():
            assert_close_tree(compiled(ids), model(ids), *zoo.tolerance)
    assert len(compiled.compiles) == 1


# ---------------------------------------------------------------------------------------
# Inputs the compiled model does not take
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bounded(cache_dir):
    """Compiled now for x: float32[batch in 1..8, 32]: calls must fit (no recompiling)."""
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    batch = torch.export.Dim("batch", min=1, max=8)
    return model, thunder.compile(model, inputs, cache_dir=cache_dir, progress=False,
                                  dynamic_shapes=({0: batch},))


@pytest.mark.parametrize("bad, message", [
    (torch.randn(2, 32, dtype=torch.float64), r"input 0 \('x'\): expected dtype float32, got float64"),
    (torch.randn(2, 4, 32), r"input 0 \('x'\): expected rank 2 \(shape \[\w+, 32\]\), got rank 3"),
    (torch.randn(9, 32), r"input 0 \('x'\): dim 0 \(symbol \w+\) is 9, outside its range \[1, 8\]"),
    (torch.randn(2, 31), r"input 0 \('x'\): dim 1 is 31, but the model expects 32"),
])
def test_wrong_inputs_name_the_input(bounded, bad, message):
    model, compiled = bounded
    with pytest.raises(thunder.RuntimeError, match=message) as error:
        compiled(bad)
    assert error.value.status == "THUNDER_ERROR_INVALID_ARGUMENT"
    assert isinstance(error.value, RuntimeError)
    # thunder.load's model says the same (given the module's tensors, which the cached
    # library reads in place).
    with pytest.raises(thunder.RuntimeError, match=message):
        thunder.load(compiled.artifacts[0], weights=model.state_dict())(bad)
    x = torch.randn(8, 32)
    torch.testing.assert_close(compiled(x), model(x))  # the largest batch in range runs
    assert len(compiled.compiles) == 1


def test_wrong_arguments(bounded):
    model, compiled = bounded
    with pytest.raises(thunder.RuntimeError, match=r"weight '.*' is not in this library"):
        thunder.load(compiled.artifacts[0])
    loaded = thunder.load(compiled.artifacts[0], weights=model.state_dict())
    with pytest.raises(TypeError, match=r"input 0 \('x'\): expected a torch.Tensor, got list"):
        loaded([1.0] * 32)
    with pytest.raises(thunder.RuntimeError, match=r"takes 1 input \(x\), got 2"):
        loaded(torch.randn(2, 32), torch.randn(2, 32))
    with pytest.raises(thunder.RuntimeError, match=r"input 0 \('x'\): .*complex"):
        loaded(torch.randn(2, 32, dtype=torch.complex64))
    with pytest.raises(thunder.RuntimeError,
                       match=r"'MLP' was compiled for \(x: float32\[s\d+, 32\]\) with s\d+ in "
                             r"\[1, 8\]: it takes 1 positional argument, got 2 positional "
                             r"arguments \(compile with recompile=True"):
        compiled(torch.randn(2, 32), torch.randn(2, 32))
    with pytest.raises(thunder.RuntimeError, match=r"got 1 positional argument and keyword "
                                                   r"argument mask"):
        compiled(torch.randn(2, 32), mask=None)


def test_load_errors(tmp_path):
    with pytest.raises(thunder.RuntimeError, match="exactly one compiled model") as error:
        thunder.load(tmp_path)
    assert error.value.status == "THUNDER_ERROR_LOAD"
    (tmp_path / "libbogus.so").write_text("not a library")
    with pytest.raises(thunder.RuntimeError, match="libbogus.so") as error:
        thunder.load(tmp_path)
    assert error.value.status == "THUNDER_ERROR_LOAD"


# ---------------------------------------------------------------------------------------
# Compile errors and progress
# ---------------------------------------------------------------------------------------

class Sorts(torch.nn.Module):
    def forward(self, x):
        return torch.cumprod(x, -1)


def test_unsupported_op_is_an_import_error(cache_dir):
    with pytest.raises(thunder.ImportError, match=r"unsupported op aten\.cumprod"):
        thunder.compile(Sorts(), (torch.randn(3, 4),), cache_dir=cache_dir, progress=False,
                        fallback="error")  # the default, "eager", runs cumprod in PyTorch
    assert not list((cache_dir / "tmp").glob("*.build.*"))  # nothing left behind


def test_toolchain_failure_is_a_compile_error(cache_dir):
    with pytest.raises(thunder.CompileError, match=r"(?s)toolchain failed.*-march=no-such-cpu"):
        thunder.compile(TwoInputs(), (torch.randn(2, 3), torch.randn(3, 2)),
                        cache_dir=cache_dir, cpu="no-such-cpu", progress=False)
    assert not list((cache_dir / "tmp").glob("*.build.*"))


def test_progress_line(cache_dir, monkeypatch, capsys):
    monkeypatch.setattr(thunder.compiled, "PROGRESS_DELAY_S", 0.0)
    thunder.compile(TwoInputs(), (torch.randn(4, 3), torch.randn(3, 4)), cache_dir=cache_dir)
    line = capsys.readouterr().err
    assert line.startswith("thunder: compiling 'TwoInputs' for cpu ... exported "), line
    assert ", imported " in line and ", built " in line, line
    assert re.search(r", done \(\d+\.\ds\)\n$", line) and line.count("\n") == 1, line
    # From the cache now; and silent when asked.
    thunder.compile(TwoInputs(), (torch.randn(4, 3), torch.randn(3, 4)), cache_dir=cache_dir)
    assert "found in the cache" in capsys.readouterr().err
    thunder.compile(TwoInputs(), (torch.randn(4, 3), torch.randn(3, 4)), cache_dir=cache_dir,
                    progress=False)
    monkeypatch.setenv("THUNDER_QUIET", "1")
    thunder.compile(TwoInputs(), (torch.randn(4, 3), torch.randn(3, 4)), cache_dir=cache_dir)
    assert capsys.readouterr().err == ""


def test_api_surface():
    # Not in __all__: a star import would shadow the builtins compile and RuntimeError.
    assert "compile" not in thunder.__all__ and "RuntimeError" not in thunder.__all__
    assert {"CompiledModule", "Model", "load", "default_cache_dir"} <= set(thunder.__all__)
    assert issubclass(thunder.RuntimeError, RuntimeError)
    assert thunder.RuntimeError is thunder._C.RuntimeError
    assert thunder._C.runtime_version().count(".") == 2


def test_exported_program_compiles_at_once(cache_dir):
    model = TwoInputs()
    a, b = torch.randn(2, 5, 3), torch.randn(3, 4)
    ep = torch.export.export(model, (a, b),
                             dynamic_shapes=({0: torch.export.Dim("batch", min=1)}, None))
    compiled = thunder.compile(ep, cache_dir=cache_dir, progress=False)
    assert len(compiled.compiles) == 1  # compiled now, with the program's own shapes
    for batch in (2, 1, 6):
        a = torch.randn(batch, 5, 3)
        torch.testing.assert_close(compiled(a, b), model(a, b))
    assert len(compiled.compiles) == 1
    with pytest.raises(thunder.RuntimeError, match=r"input 1 \('b'\): dim 1 is 5"):
        compiled(a, torch.randn(3, 5))
