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
