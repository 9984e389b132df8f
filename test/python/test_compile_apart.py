"""thunder.compile in a process of its own (thunder/apart.py): the caller imports none of
what torch.export imports lazily; the library the fork built loads with the module's own
tensors, tied ones included; export errors, unsupported ops (partitioned in process),
progress and a compile process that dies reach the caller as they would in process; other
threads, or THUNDER_COMPILE_IN_PROCESS=1, keep the compile in process."""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import threading
import warnings

import pytest
import torch

import thunder
from conftest import BUILD_DIR, TEST_DIR, assert_close_tree
from thunder import compiled as compiled_module
from zoo import ZOO

#: Compiles the small MLP; prints the modules the compile imported into this process.
MODULES = r"""
import json, sys, torch, thunder
from zoo import ZOO
model, inputs = ZOO["mlp"].build(size="small", batch=2)
before = set(sys.modules)
compiled = thunder.compile(model, inputs, cache_dir=sys.argv[1], progress=False)
new_modules = sorted(set(sys.modules) - before)
torch.testing.assert_close(compiled(*inputs), model(*inputs))
print(json.dumps({"new_modules": new_modules,
                  "process_peak_mb": compiled.compiles[0].process_peak_mb}))
"""


def _run(tmp_path, **env) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "modules.py"
    script.write_text(MODULES)
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BUILD_DIR / "python"),
                                                               str(TEST_DIR)]), **env)
    result = subprocess.run([sys.executable, str(script), str(tmp_path / "cache")],
                            capture_output=True, text=True, timeout=300, env=environment)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_caller_imports_nothing_the_export_does(tmp_path):
    apart = _run(tmp_path / "apart")
    in_process = _run(tmp_path / "in_process", THUNDER_COMPILE_IN_PROCESS="1")
    assert apart["process_peak_mb"] > 0 and in_process["process_peak_mb"] is None
    # In process, torch.export's lazily imported modules stay (hundreds; docs/performance.md).
    assert len(in_process["new_modules"]) > 100, in_process["new_modules"]
    assert len(apart["new_modules"]) < 0.1 * len(in_process["new_modules"]), apart["new_modules"]


class TiedHead(torch.nn.Module):
    """A token table tied to the output projection (one tensor under two names), a
    buffer, and a tensor attribute that is neither (torch.export lifts it as a constant)."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 16)
        self.head = torch.nn.Linear(16, 50, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("scale", torch.tensor(0.5))
        self.offset = torch.randn(16)

    def forward(self, ids):
        return self.head((self.embed(ids) + self.offset) * self.scale)


@pytest.mark.parametrize("changed", ["embed.weight", "offset"])
def test_the_module_tensors_are_read_in_place(cache_dir, changed):
    model, ids = TiedHead().eval(), torch.randint(0, 50, (3, 7))
    compiled = thunder.compile(model, (ids,), cache_dir=cache_dir, progress=False)
    assert compiled.compiles[0].process_peak_mb is not None
    assert_close_tree(compiled(ids), model(ids), 1e-5, 1e-5)
    # Every weight, the tied table, the buffer and the plain attribute, is the module's
    # own tensor, read in place: the library holds no copy.
    assert compiled._entries[0].model.reads_every_weight_in_place
    # So changing one is refused, not ignored.
    with torch.no_grad():
        functools.reduce(getattr, changed.split("."), model).mul_(2)
    with pytest.raises(thunder.RuntimeError, match="changed in place"):
        compiled(ids)


def test_an_error_in_the_fork_is_raised_here(cache_dir):
    """An exception that pickles as itself comes back as it is, with the fork's traceback
    in a note, and the compile is not repeated here (the forward ran only in the fork)."""
    calls = []

    class Refuses(torch.nn.Module):
        def forward(self, x):
            calls.append(os.getpid())
            raise ValueError("this model refuses to be traced")

    with pytest.raises(ValueError, match="refuses to be traced") as error:
        thunder.compile(Refuses(), (torch.randn(3),), cache_dir=cache_dir, progress=False)
    assert calls == []  # not here: in the fork
    assert any("compile process" in note for note in getattr(error.value, "__notes__", []))


def test_warnings_in_the_fork_are_issued_here(cache_dir):
    class Warns(torch.nn.Module):
        def forward(self, x):
            warnings.warn("a warning from forward", UserWarning)
            return x * 2

    with pytest.warns(UserWarning, match="a warning from forward"):
        compiled = thunder.compile(Warns(), (torch.randn(3),), cache_dir=cache_dir,
                                   progress=False)
    assert compiled.compiles[0].process_peak_mb is not None


def test_an_export_error_is_raised_as_in_process(cache_dir):
    class DataDependent(torch.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x - 1

    x = torch.randn(4)
    errors = []
    for env in ({}, {"THUNDER_COMPILE_IN_PROCESS": "1"}):
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            with pytest.raises(Exception) as error:
                thunder.compile(DataDependent(), (x,), cache_dir=cache_dir, progress=False)
            errors.append(error.value)
    assert type(errors[0]) is type(errors[1])
    assert str(errors[0]).splitlines()[0] == str(errors[1]).splitlines()[0]


def test_unsupported_ops_are_partitioned_in_process(cache_dir):
    class WithFft(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(torch.tanh(x)).abs() + 1.0

    model, x = WithFft(), torch.randn(4, 16)
    compiled = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                               fallback="eager")
    assert_close_tree(compiled(x), model(x), 1e-5, 1e-5)
    assert "eager group" in compiled.report()


def test_progress_comes_from_the_compile_process(cache_dir, capfd, monkeypatch):
    monkeypatch.setattr(compiled_module, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.delenv("THUNDER_QUIET", raising=False)
    model, inputs = ZOO["mlp"].build(size="small", batch=3)
    compiled = thunder.compile(model, inputs, cache_dir=cache_dir, progress=True, name="prog")
    assert compiled.compiles[0].process_peak_mb is not None
    line = capfd.readouterr().err
    assert "thunder: compiling 'prog' for cpu ... exported" in line, line
    assert line.rstrip().endswith("s)"), line


def test_a_compile_process_that_dies_is_a_compile_error(cache_dir, monkeypatch):
    caller = os.getpid()

    def die(*args, **kwargs):
        assert os.getpid() != caller, "compiled in process"
        os.kill(os.getpid(), signal.SIGKILL)  # the forked compile process

    monkeypatch.setattr(compiled_module.CompiledModule, "_build", die)
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    with pytest.raises(thunder.CompileError, match="killed by signal SIGKILL"):
        thunder.compile(model, inputs, cache_dir=cache_dir, progress=False)


def test_other_threads_keep_the_compile_in_process(cache_dir):
    stop = threading.Event()
    waiter = threading.Thread(target=stop.wait, daemon=True)
    waiter.start()
    try:
        model, inputs = ZOO["mlp"].build(size="small", batch=4)
        compiled = thunder.compile(model, inputs, cache_dir=cache_dir, progress=False)
    finally:
        stop.set()
        waiter.join()
    assert compiled.compiles[0].process_peak_mb is None
    assert_close_tree(compiled(*inputs), model(*inputs), 1e-5, 1e-5)
