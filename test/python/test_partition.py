"""Fallback partitions (python/thunder/partition.py): a model with ops Thunder does not
support compiles around them, matches eager, and the report says what fell back where."""
from __future__ import annotations

import pytest
import torch

import thunder
from conftest import assert_close_tree
from thunder import capture, partition


# Custom ops without a Thunder kernel: the importer refuses them today, and no importer
# work will ever add them.
@torch.library.custom_op("thunder_test::mystery", mutates_args=())
def mystery(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * 2 + 1


@mystery.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("thunder_test::enigma", mutates_args=())
def enigma(x: torch.Tensor) -> torch.Tensor:
    return x.abs().sqrt()


@enigma.register_fake
def _(x):
    return torch.empty_like(x)


class MiddleOp(torch.nn.Module):
    """linear -> an unsupported op -> linear."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.a(x))
        h = mystery(h)  # the op that falls back
        return self.b(h)


class TwoIndependent(torch.nn.Module):
    """Two unsupported ops on parallel branches: one eager group, two partitions."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16)
        self.c = torch.nn.Linear(16, 4)

    def forward(self, x):
        u = mystery(x)                 # depends on the input only
        v = enigma(self.a(x))          # depends on a compiled op
        w = torch.tanh(self.b(x))      # supported, independent of both
        return self.c(u + v + w)


def inputs(batch=3):
    torch.manual_seed(0)
    return (torch.randn(batch, 16),)


def eager(model, args):
    with torch.no_grad():
        return model(*args)


def test_middle_op_matches_eager(cache_dir):
    model = MiddleOp().eval()
    args = inputs()
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    assert_close_tree(compiled(*args), eager(model, args), 1e-4, 1e-5)
    [entry] = compiled._entries
    assert isinstance(entry, partition.FallbackEntry)
    kinds = [step.kind for step in entry.plan.steps]
    assert kinds == ["compiled", "eager", "compiled"], kinds
    assert len(compiled.artifacts) == 1  # the first partition's library
    # Another call with the same shapes reuses the partitions.
    args2 = (torch.randn(3, 16),)
    assert_close_tree(compiled(*args2), eager(model, args2), 1e-4, 1e-5)
    assert len(compiled.compiles) == 1


def test_report_lists_op_and_source_line(cache_dir):
    model = MiddleOp().eval()
    compiled = thunder.compile(model, inputs(), cache_dir=cache_dir, progress=False)
    text = compiled.report()
    assert "2 compiled partitions, 1 eager group" in text, text
    assert "thunder_test.mystery.default (1 use) at" in text, text
    line = next(i for i, text_line in enumerate(open(__file__), 1)
                if "h = mystery(h)" in text_line)
    assert f"{__file__}:{line}" in text, text
    plan = compiled._entries[0].plan
    assert 0.5 < plan.compiled_flop_fraction < 1.0
    [op] = plan.fallback_ops
    assert op.name == "thunder_test.mystery.default" and \
        op.source_lines == (f"{__file__}:{line}",)


def test_independent_ops_share_one_eager_group(cache_dir):
    model = TwoIndependent().eval()
    args = inputs()
    ep = capture.capture(model, args)
    plan = partition.plan(ep)
    assert [s.compiled for s in plan.steps] == [True, False, True], str(plan)
    eager_ops = plan.steps[1].ops
    assert eager_ops == {"thunder_test.mystery.default": 1,
                         "thunder_test.enigma.default": 1}, eager_ops
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
    assert_close_tree(compiled(*args), eager(model, args), 1e-4, 1e-5)


def test_plan_is_minimal_on_a_chain():
    """Unsupported ops in sequence need an eager group each; supported ops between
    them one partition each, and no more."""

    class Chain(torch.nn.Module):
        def forward(self, x):
            return enigma(mystery(x + 1) * 2) - 3

    ep = capture.capture(Chain(), inputs())
    kinds = [s.kind for s in partition.plan(ep).steps]
    assert kinds == ["compiled", "eager", "compiled", "eager", "compiled"], kinds


def test_fallback_error_raises_with_the_list(cache_dir):
    model = TwoIndependent().eval()
    compiled = thunder.compile(model, cache_dir=cache_dir, progress=False, fallback="error")
    with pytest.raises(thunder.ImportError) as info:
        compiled(*inputs())
    message = str(info.value)
    assert "thunder_test.mystery.default" in message and \
        "thunder_test.enigma.default" in message, message
    with pytest.raises(ValueError, match="fallback"):
        thunder.compile(model, fallback="maybe")


def test_op_refused_for_its_operand_types_falls_back(cache_dir):
    """amax on bool maps to an op whose verifier refuses i1 (today): it runs in PyTorch,
    and the rest of the model is compiled."""

    class BoolAmax(torch.nn.Module):
        def forward(self, x):
            return (x > 0).amax(0), torch.tanh(x) * 2

    args = inputs()
    compiled = thunder.compile(BoolAmax(), args, cache_dir=cache_dir, progress=False)
    assert_close_tree(compiled(*args), eager(BoolAmax(), args), 1e-4, 1e-5)
    entry = compiled._entries[0]
    if isinstance(entry, partition.FallbackEntry):  # unless the importer learnt it
        assert "aten.amax.default" in compiled.report()


def test_refused_ops_are_parsed():
    message = ("m.py:3:0: error: unsupported op thunder_test.mystery.default (1 use) at m.py:3\n"
               "m.py:4:0: error: unsupported: aten.add.Tensor on operands of type "
               "tensor<2xi1>, tensor<2xi1> (it maps to thunder.add, which refuses them: ...)\n"
               "error: Model: 1 op is not supported by Thunder: thunder_test.mystery.default")
    assert partition.refused_ops(message) == {"thunder_test.mystery.default",
                                              "aten.add.Tensor"}


def test_supported_model_report(cache_dir):
    model = torch.nn.Linear(16, 4).eval()
    compiled = thunder.compile(model, inputs(), cache_dir=cache_dir, progress=False)
    assert "1 compiled partition, 0 eager groups, 100.0% of FLOPs compiled" in \
        compiled.report()


def test_examine_shows_partitions():
    report = thunder.examine(MiddleOp().eval(), *inputs())
    assert not report.ok
    assert report.partitions is not None
    assert report.partitions.summary()["partitions"] == 2
    text = str(report.partitions)
    assert "2 compiled partitions, 1 eager group" in text, text
    assert "thunder_test.mystery.default" in text


class ThreeParts(torch.nn.Module):
    """Three compiled partitions around two unsupported ops; `scale` and `shift` are
    read by two partitions each."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.scale = torch.nn.Parameter(torch.randn(16))
        self.shift = torch.nn.Parameter(torch.randn(16))
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = torch.tanh(x * self.scale + self.shift)
        h = mystery(h)
        h = self.fc(h) * self.scale
        h = enigma(h)
        return h + self.shift


def _libraries(root) -> list:
    import pathlib
    return sorted(p for p in pathlib.Path(root).rglob("lib*.so") if "kernels" not in p.parts)


def test_partitions_are_one_library(tmp_path):
    model = ThreeParts().eval()
    args = inputs()
    compiled = thunder.compile(model, cache_dir=tmp_path, progress=False)
    assert_close_tree(compiled(*args), eager(model, args), 1e-4, 1e-5)
    [entry] = compiled._entries
    assert [s.kind for s in entry.plan.steps] == \
        ["compiled", "eager", "compiled", "eager", "compiled"]
    assert entry.layout == "one library"
    # Exactly one library file, holding the three partitions, opened once.
    [library] = _libraries(tmp_path)
    parts = entry.compiled_modules
    assert len(parts) == 3
    assert {part.model.path for part in parts} == {str(library)}
    assert [part.model.native.partition for part in parts] == [0, 1, 2]
    assert {part.model.native.num_partitions for part in parts} == {3}
    assert [part.model.name for part in parts] == [f"{compiled._name}_p{i}" for i in range(3)]
    assert compiled.artifacts == [str(library)]
    report = compiled.report()
    assert "3 compiled partitions, 2 eager groups" in report, report
    assert "thunder_test.mystery.default" in report and "thunder_test.enigma.default" in report
    # The weights are the module's own tensors, read in place by every partition that
    # reads them (no copy): scale and shift in the first, the fc's bias and scale in the
    # second (its weight is packed), shift in the third.
    assert [part.model.provided_weights for part in parts] == [2, 2, 1]
    # Another call, other values: the same partitions.
    args2 = (torch.randn(3, 16),)
    assert_close_tree(compiled(*args2), eager(model, args2), 1e-4, 1e-5)
    assert len(compiled.compiles) == 1


class RandomParts(torch.nn.Module):
    """Random draws in two partitions of one library (cumprod runs in PyTorch)."""

    def forward(self, x):
        a = x + torch.rand(x.shape)
        b = torch.cumprod(a, -1)
        return b * 2 + torch.randn_like(b)


def test_partitions_draw_random_numbers_from_their_own_tables(tmp_path):
    # Each partition finds its own random table (its entry renamed "_p<i>"), so every
    # partition takes its seed from torch's generator: reproducible under manual_seed.
    model = RandomParts()
    x = torch.randn(3, 8)
    compiled = thunder.compile(model, x, cache_dir=tmp_path, progress=False, dynamic=False)
    [entry] = compiled._entries
    assert entry.layout == "one library"
    parts = entry.compiled_modules
    assert len(parts) == 2
    assert all(part.model.native.uses_random for part in parts)
    torch.manual_seed(0)
    first = compiled(x)
    torch.manual_seed(0)
    again = compiled(x)
    torch.manual_seed(1)
    other = compiled(x)
    assert torch.equal(first, again)
    assert not torch.equal(first, other)


def test_partitions_library_from_the_cache(tmp_path):
    model = ThreeParts().eval()
    args = inputs()
    first = thunder.compile(model, args, cache_dir=tmp_path, progress=False)
    again = thunder.compile(model, args, cache_dir=tmp_path, progress=False)
    assert first.compiles[0].source == "compiled"
    assert again.compiles[0].source == "cache"
    assert again.compiles[0].path == first.compiles[0].path
    assert len(_libraries(tmp_path)) == 1
    assert_close_tree(again(*args), eager(model, args), 1e-4, 1e-5)


def test_partition_index_through_the_runtime(tmp_path):
    """thunder_model_load_partition: each partition of the library; an index past its
    count, or a partition of an ordinary library, is refused."""
    from thunder import _C, runtime

    model = ThreeParts().eval()
    compiled = thunder.compile(model, inputs(), cache_dir=tmp_path, progress=False)
    [library] = _libraries(tmp_path)
    # A tool that knows nothing of partitions gets partition 0, which reads the
    # module's tensors in place and holds no copy of them: alone, it names one.
    with pytest.raises(thunder.RuntimeError,
                       match=f"'{compiled._name}_p0' .* is not in this library"):
        _C.LoadedModel(str(library))
    entry = compiled._entries[0]
    for i, part in enumerate(entry.compiled_modules):
        assert part.model.native.partition == i and part.model.native.num_partitions == 3
        assert part.model.provided_weights > 0  # the module's tensors, not a copy
    assert entry.compiled_modules[0].model.native.name == f"{compiled._name}_p0"
    x = entry._example_inputs([inputs()[0]])
    second = entry.plan.steps[2]
    expected = entry.compiled_modules[1](*x[second.index])
    assert_close_tree(tuple(runtime.run(entry.compiled_modules[1].model.native,
                                        x[second.index])), tuple(expected))
    with pytest.raises(thunder.RuntimeError, match="holds 3 partitions"):
        runtime.Model(library, partition=3)
    linear = thunder.compile(torch.nn.Linear(16, 4).eval(), inputs(), cache_dir=tmp_path,
                             progress=False)
    ordinary = linear.artifacts[0]
    assert linear._entries[0].model.native.num_partitions == 1
    with pytest.raises(thunder.RuntimeError, match="holds one model"):
        runtime.Model(ordinary, partition=1)


def test_a_partition_that_fails_to_build_runs_in_pytorch(tmp_path, monkeypatch):
    """The one-library build fails because of partition 1 (as the driver reports it):
    that partition runs in PyTorch, the report says why, the others are built again."""
    from thunder import _C

    real = _C.compile_partitions
    calls = []

    def failing(modules, *args, **kwargs):
        calls.append(len(modules))
        if len(modules) == 3:
            raise _C.CompileError("partition 1: compiling the 3 partitions failed\n"
                                  "GraphModule:0: error: refused for the test")
        return real(modules, *args, **kwargs)

    monkeypatch.setattr(_C, "compile_partitions", failing)
    model = ThreeParts().eval()
    args = inputs()
    compiled = thunder.compile(model, cache_dir=tmp_path, progress=False)
    assert_close_tree(compiled(*args), eager(model, args), 1e-4, 1e-5)
    assert calls == [3, 2]
    entry = compiled._entries[0]
    assert [s.kind for s in entry.plan.steps] == \
        ["compiled", "eager", "eager", "eager", "compiled"]
    assert [part.model.native.partition for part in entry.compiled_modules] == [0, 1]
    assert len(_libraries(tmp_path)) == 1
    report = compiled.report()
    assert "[demoted: CompileError: compiling the 3 partitions failed]" in report, report
    assert "2 compiled partitions, 3 eager groups" in report, report
