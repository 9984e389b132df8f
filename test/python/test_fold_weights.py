"""thunder-fold-weights on real models. On the graph IR of every zoo model, and of a forward
that transposes, slices, casts, concatenates and scales its weights, it leaves no op that
reads only weights; ResNet-18's batch norms fold into its convolutions; and through
thunder-compile, whose fusion phase runs it first, nothing that reads only weights is left
to run per inference and the libraries still match eager.
"""
from __future__ import annotations

import collections
import pathlib
import re
import subprocess

import pytest
import torch
from torch import nn

import thunder
from thunder import capture
from zoo import ZOO


class WeightOps(nn.Module):
    """A forward that transforms its weights before using them: a per-row scale through a
    broadcast, a transpose and a bf16 round trip (which rounds, so the compile-time
    conversion must round as PyTorch does), a bias concatenated from arithmetic on another
    weight, and a conv kernel permuted, sliced and scaled."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.w = nn.Parameter(torch.randn(32, 16, generator=gen))
        self.scale = nn.Parameter(torch.rand(32, generator=gen) + 0.5)
        self.b = nn.Parameter(torch.randn(8, generator=gen))
        self.register_buffer("k", torch.randn(4, 3, 3, 3, generator=gen))

    def forward(self, x, img):
        w = (self.w * self.scale[:, None]).t()
        w = w.to(torch.bfloat16).to(torch.float32)
        bias = torch.cat([self.b, -self.b, self.b * 2, torch.sqrt(self.b.abs())])
        k = self.k.permute(0, 1, 3, 2)[:, :, :, 1:] * 0.5
        return x @ w + bias, nn.functional.conv2d(img, k)


def _weight_ops():
    gen = torch.Generator().manual_seed(1)
    return WeightOps().eval(), (torch.randn(2, 16, generator=gen),
                                torch.randn(2, 3, 8, 8, generator=gen))


def _zoo(name):
    return lambda: ZOO[name].build(size="small", batch=2)


MODELS = {"weight_ops": _weight_ops, **{name: _zoo(name) for name in ZOO}}
# The models whose fusion-phase IR is checked and whose libraries are compared with eager
# here (the zoo's libraries are compared in test_compile.py, through the same CLI).
COMPILED = ["resnet18", "weight_ops"]

# A function-level line of printed IR (four spaces in): an optional result, the op.
_TOP_LEVEL = re.compile(r"^    (?:(%[\w]+)(?::\d+)? = )?([a-z_]+\.[a-z_]+)(.*)$")
_OPERAND = re.compile(r"%([\w]+)(?:#\d+)?")


def weight_only_ops(ir: str) -> list[str]:
    """The function-level ops (kernels after fusion) whose operands are all constants: work
    that depends only on weights and would run on every inference."""
    constants, found = set(), []
    for line in ir.splitlines():
        match = _TOP_LEVEL.match(line)
        if not match:
            continue
        result, op, rest = match.groups()
        if op == "thunder.constant":
            constants.add(result[1:])
            continue
        operands = _OPERAND.findall(rest)
        # A broadcast that grows a weight stays an op by design: a fused kernel reads
        # the small weight in place (unfused, it is a kernel of its own).
        if op in ("thunder.broadcast", "thunder.expand"):
            continue
        # Unfused, such a broadcast is a kernel of views alone ("pointwise_<n>").
        if op == "thunder.fusion" and re.match(r' pointwise "pointwise_\d+"', rest):
            continue
        if op != "func.return" and operands and all(o in constants for o in operands):
            found.append(line.strip())
    return found


def op_counts(ir: str) -> collections.Counter:
    """Ops at every level (inside kernels too)."""
    return collections.Counter(re.findall(r"= (thunder\.[a-z_]+)", ir))


class Exported:
    """A model exported to a .pt2 archive, and thunder-compile run on it."""

    def __init__(self, name: str, directory: pathlib.Path, thunder_compile: pathlib.Path):
        self.name = name
        self.model, self.inputs = MODELS[name]()
        self.archive = directory / f"{name}.pt2"
        self.thunder_compile = thunder_compile
        torch.export.save(capture.capture(self.model, self.inputs), self.archive)

    def compile(self, *flags: str) -> str:
        """thunder-compile's standard output; fails the test when it fails."""
        result = subprocess.run([str(self.thunder_compile), str(self.archive), *flags],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def ir(self, phase: str, *flags: str) -> str:
        return self.compile(f"--compile-to={phase}", *flags)


_exported: dict[str, Exported] = {}


def export(name: str, tmp_path_factory, thunder_compile) -> Exported:
    """Each model exported once per test session."""
    if name not in _exported:
        _exported[name] = Exported(name, tmp_path_factory.mktemp(name), thunder_compile)
    return _exported[name]


@pytest.fixture(params=COMPILED)
def exported(request, tmp_path_factory, thunder_compile) -> Exported:
    return export(request.param, tmp_path_factory, thunder_compile)


@pytest.fixture(scope="session")
def thunder_opt(build_dir) -> pathlib.Path:
    path = build_dir / "bin" / "thunder-opt"
    assert path.is_file(), f"{path} does not exist: build it with tools/dev.sh build"
    return path


@pytest.mark.parametrize("name", sorted(MODELS))
def test_graph_folds_every_weight_only_op(name, tmp_path_factory, thunder_compile,
                                          thunder_opt):
    """On the graph IR (weights printed in full), thunder-fold-weights alone leaves no op
    that reads only weights: transposes, casts and slices of weights, BERT's position
    embeddings looked up by a constant index, biases broadcast for a static batch."""
    model = export(name, tmp_path_factory, thunder_compile)
    graph = model.ir("graph", "--print-weights")
    result = subprocess.run([str(thunder_opt), "-thunder-fold-weights",
                             "-mlir-elide-resource-strings-if-larger=64"],
                            input=graph, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    leftover = weight_only_ops(result.stdout)
    assert leftover == [], leftover


def test_batch_norms_fold_into_convolutions(tmp_path_factory, thunder_compile):
    """Every batch norm of ResNet-18 follows a convolution and folds into it: none is left
    (with --fusion=false, composites stay whole, so one left would show), and each
    convolution now has a bias."""
    resnet = export("resnet18", tmp_path_factory, thunder_compile)
    graph = op_counts(resnet.ir("graph"))
    assert graph["thunder.batch_norm"] == 20 and graph["thunder.convolution"] == 20, graph
    folded_ir = resnet.ir("fusion", "--fusion=false")
    folded = op_counts(folded_ir)
    assert folded["thunder.batch_norm"] == 0, folded
    assert folded["thunder.convolution"] == 20, folded
    convolutions = [line for line in folded_ir.splitlines() if "thunder.convolution" in line]
    assert all(re.search(r"thunder\.convolution %\w+, %\w+, %\w+ ", line)
               for line in convolutions), convolutions
    assert "conv1.weight.bn_folded" in folded_ir and "conv1.bias.bn_folded" in folded_ir


def test_no_kernel_reads_only_weights(exported):
    """Before folding the graph has work that reads only weights; after the fusion phase
    (fused, and unfused) none is left. (Not yet the transformers': their layer norms,
    decomposed after thunder-fold-weights ran, broadcast their weights in ops of their own
    until the fusion passes take those into kernels.)"""
    if exported.name == "weight_ops":
        assert weight_only_ops(exported.ir("graph")), "the model transforms its weights"
    for flags in ((), ("--fusion=false",)):
        leftover = weight_only_ops(exported.ir("fusion", *flags))
        assert leftover == [], leftover


def test_library_matches_eager(exported, tmp_path):
    """The library thunder-compile builds from the folded IR gives eager's results (folding
    a batch norm changes the rounding of each convolution a little; the bf16 round trip
    must round as PyTorch does, or results differ by ~1e-2)."""
    exported.compile("-o", str(tmp_path / "out"))
    outputs = thunder.load(tmp_path / "out").run(*exported.inputs)
    with torch.no_grad():
        expected = exported.model(*exported.inputs)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(outputs) == len(expected)
    for actual, reference in zip(outputs, expected):
        torch.testing.assert_close(actual, reference, rtol=1e-4, atol=1e-5)


def _resident_bytes_of(path: pathlib.Path) -> int:
    """The process's resident bytes in the mappings of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in pathlib.Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            inside = len(fields) >= 6 and fields[5] == str(path)
        elif inside and fields[0] == "Rss:":
            total += int(fields[1]) * 1024
    return total


def _pageout_supported() -> bool:
    import ctypes
    import mmap
    libc = ctypes.CDLL(None, use_errno=True)
    page = mmap.mmap(-1, mmap.PAGESIZE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    supported = libc.madvise(address, mmap.PAGESIZE, 21) == 0  # MADV_PAGEOUT
    del address
    page.close()
    return supported


class ConvBlocks(nn.Module):
    """Two 3x3 convolutions with batch norm: filters folded at compile time (so the library
    holds them, not the module), then reordered into oneDNN's layout at the first run."""

    def __init__(self, channels=192):
        super().__init__()
        layers = []
        for _ in range(2):
            layers += [nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                       nn.BatchNorm2d(channels), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        gen = torch.Generator().manual_seed(0)
        for module in self.body:
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.copy_(torch.randn(channels, generator=gen) * 0.1)
                module.running_var.copy_(torch.rand(channels, generator=gen) + 0.5)

    def forward(self, x):
        return self.body(x)


@pytest.mark.skipif(not _pageout_supported(), reason="the kernel has no MADV_PAGEOUT")
def test_reordered_filters_release_the_librarys_copy(tmp_path):
    # Once a folded filter is reordered into oneDNN's layout, the library's plain copy
    # (file-backed: the embedded blob) is handed back: the model keeps one copy of each
    # filter, not two. The values still come out right on every later call.
    torch.manual_seed(0)
    model = ConvBlocks().eval()
    x = torch.randn(1, 192, 14, 14)
    compiled = thunder.compile(model, (x,), cache_dir=tmp_path, progress=False,
                              name="convblocks")
    library = pathlib.Path(compiled.compiles[0].path) / "libconvblocks.so"
    filter_bytes = 2 * 192 * 192 * 9 * 4
    with torch.no_grad():
        expected = model(x)
        for _ in range(3):
            torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=1e-4)
    resident = _resident_bytes_of(library.resolve())
    assert 0 < resident < filter_bytes / 4, (resident, filter_bytes)
