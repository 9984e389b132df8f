"""thunder.compile's on-disk cache: a fresh process finds what another compiled (without
running the toolchain), a killed compile leaves nothing that loads, a broken entry is
replaced, concurrent compiles of one key publish once, and the key follows the weights."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
import torch

import thunder
from conftest import BUILD_DIR, TEST_DIR, assert_close_tree
from thunder.cache import Cache
from zoo import ZOO

#: Compiles a zoo model (default policy) and runs it once at batch 2; prints one JSON line.
SCRIPT = r"""
import json, sys, time
start = time.monotonic()
import torch, thunder
from zoo import ZOO
cache_dir, name = sys.argv[1], sys.argv[2]
model, inputs = ZOO[name].build(size="small", batch=2)
ready = time.monotonic()
compiled = thunder.compile(model, cache_dir=cache_dir, progress=False)
output = compiled(*inputs)
done = time.monotonic()
record = compiled.compiles[0]
print(json.dumps({"source": record.source, "seconds": record.seconds, "path": record.path,
                  "first_call": done - ready, "startup": ready - start,
                  "output": [leaf.tolist() for leaf in torch.utils._pytree.tree_leaves(output)]}))
"""


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("script") / "compile_zoo.py"
    path.write_text(SCRIPT)
    return path


def environment(**changes) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BUILD_DIR / "python"),
                                                       str(TEST_DIR)]))
    env.pop("THUNDER_CACHE_DIR", None)
    env.update(changes)
    return env


def run_script(script, cache, name="mlp", **env) -> dict:
    result = subprocess.run([sys.executable, str(script), str(cache), name],
                            capture_output=True, text=True, timeout=300, env=environment(**env))
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_fresh_process_hits_the_cache(script, tmp_path):
    cache = tmp_path / "cache"
    first = run_script(script, cache)
    assert first["source"] == "compiled" and "build" in first["seconds"]
    # No toolchain on PATH: a compile would fail, so this one cannot have compiled.
    no_tools = tmp_path / "empty-bin"
    no_tools.mkdir()
    second = run_script(script, cache, PATH=str(no_tools))
    assert second["source"] == "cache", second
    assert "build" not in second["seconds"] and "import" not in second["seconds"]
    assert second["path"] == first["path"]
    assert second["output"] == first["output"]  # the same library: the same bits
    model, inputs = ZOO["mlp"].build(size="small", batch=2)
    torch.testing.assert_close(torch.tensor(second["output"][0]), model(*inputs).detach())
    print(f"\nmlp first call: compile {first['first_call']:.2f}s "
          f"({', '.join(f'{k} {v:.2f}s' for k, v in first['seconds'].items())}); "
          f"cache hit {second['first_call']:.2f}s "
          f"({', '.join(f'{k} {v:.2f}s' for k, v in second['seconds'].items())})")

    # An entry that does not load (a truncated library) is replaced, not used.
    library = next(p for p in (cache / "entries").glob("*/lib*.so"))
    library.write_bytes(library.read_bytes()[:100])
    third = run_script(script, cache)
    assert third["source"] == "compiled"
    assert third["output"] == first["output"]
    assert library.stat().st_size > 100


def test_killed_compile_leaves_no_entry(script, tmp_path):
    cache = tmp_path / "cache"
    process = subprocess.Popen([sys.executable, str(script), str(cache), "resnet18"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment(), start_new_session=True)
    try:
        # Killed while the toolchain runs: a log exists once a compiler has started
        # (obj/UNIT.o.log per unit, toolchain.log for the link).
        deadline = time.monotonic() + 120
        while not list(cache.glob("tmp/*.build.*/.thunder-build-*/**/*.log")):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the toolchain never started"
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGKILL)  # the process and its toolchain
    finally:
        process.wait()
    assert list((cache / "entries").iterdir()) == []
    [leftover] = (cache / "tmp").glob("*.build.*")
    assert_whole_objects(cache / "kernels")

    model, inputs = ZOO["resnet18"].build(size="small", batch=2)
    compiled = thunder.compile(model, cache_dir=cache, progress=False)
    assert_close_tree(compiled(*inputs), model(*inputs).detach(), *ZOO["resnet18"].tolerance)
    assert compiled.compiles[0].source == "compiled"
    assert not leftover.exists()  # its process is gone: cleaned up
    assert len(list((cache / "entries").iterdir())) == 1
    assert_whole_objects(cache / "kernels")


def assert_whole_objects(kernels) -> None:
    """Every file in the kernel cache is a whole ELF object (its section headers, the
    last thing the compiler writes, are within the file) or precompiled header, and no
    partial copy is left."""
    import struct
    for path in kernels.glob("*/*"):
        assert ".tmp." not in path.name, path
        data = path.read_bytes()
        if path.suffix == ".gch":
            assert data[:4] == b"gpch", path
            continue
        assert path.suffix == ".o" and data[:4] == b"\x7fELF", path
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        assert shoff + shentsize * shnum <= len(data), path


def test_kernel_cache_survives_a_killed_compile_midway(script, tmp_path):
    # Killed once some kernels are in the cache and others are not: the next compile
    # takes the whole objects and compiles the rest.
    cache = tmp_path / "cache"
    process = subprocess.Popen([sys.executable, str(script), str(cache), "gpt2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment(), start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not list(cache.glob("kernels/*/*.o")):
            if process.poll() is not None:
                break  # finished before it could be killed: still a valid check below
            assert time.monotonic() < deadline, "no kernel was ever compiled"
            time.sleep(0.005)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    assert_whole_objects(cache / "kernels")
    model, inputs = ZOO["gpt2"].build(size="small", batch=2)
    compiled = thunder.compile(model, cache_dir=cache, progress=False)
    assert_close_tree(compiled(*inputs), model(*inputs), *ZOO["gpt2"].tolerance)
    assert_whole_objects(cache / "kernels")


class TwoLayers(torch.nn.Module):
    def __init__(self, classes: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, classes)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)) * 2.0)


def _kernels(compiled):
    entry = json.loads((pathlib.Path(compiled.compiles[0].path) / "entry.json").read_text())
    return entry["kernels"]


def test_kernels_are_reused_across_models(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    x = torch.randn(4, 16)
    kernels = _kernels
    # Without the drivers built with Thunder (share/thunder/kernels): a first
    # compile compiles every unit.
    monkeypatch.setenv("THUNDER_PREBUILT_KERNELS", "")

    torch.manual_seed(0)
    first_model = TwoLayers(10).eval()
    # Packed weights (derived copies) make each entry hold its weights' values (a
    # library that reads every weight in place serves any: see
    # test_a_library_reading_its_weights_in_place_serves_new_values).
    first = thunder.compile(first_model, (x,), cache_dir=cache, progress=False, dynamic=False,
                            pack_weights=True)
    cold = kernels(first)
    assert cold["units"] > 0 and cold["cached"] == 0
    # The same model with other weights: another entry, every object from the cache.
    torch.manual_seed(1)
    same_model = TwoLayers(10).eval()
    same = thunder.compile(same_model, (x,), cache_dir=cache, progress=False, dynamic=False,
                           pack_weights=True)
    assert same.compiles[0].source == "compiled"
    assert kernels(same)["cached"] == kernels(same)["units"]
    torch.testing.assert_close(same(x), same_model(x).detach())
    # Another model that shares its first layer: that kernel comes from the cache.
    other_model = TwoLayers(12).eval()
    other = thunder.compile(other_model, (x,), cache_dir=cache, progress=False, dynamic=False,
                            pack_weights=True)
    assert 0 < kernels(other)["cached"] < kernels(other)["units"]
    torch.testing.assert_close(other(x), other_model(x).detach())
    torch.testing.assert_close(first(x), first_model(x).detach())


def test_a_first_compile_takes_the_drivers_built_with_thunder(tmp_path, monkeypatch):
    """The build compiles the CPU backend's GEMM and convolution drivers for this machine
    into build/share/thunder/kernels (tools/thunder-compile/CMakeLists.txt); a compile
    with an empty cache links them from there instead of compiling them, and does not
    write there. Their objects are keyed like any unit's: with other flags (another
    -march) they are compiled."""
    prebuilt = BUILD_DIR / "share" / "thunder" / "kernels"
    assert prebuilt.is_dir(), "the build did not prebuild the drivers"
    before = sorted(p.name for p in prebuilt.rglob("*.o"))
    monkeypatch.delenv("THUNDER_PREBUILT_KERNELS", raising=False)
    x = torch.randn(4, 16)
    model = TwoLayers(10).eval()
    compiled = thunder.compile(model, (x,), cache_dir=tmp_path / "a", progress=False,
                               dynamic=False)
    # The GEMM driver, not the model's own kernels.
    assert _kernels(compiled)["cached"] == 1
    torch.testing.assert_close(compiled(x), model(x).detach())
    assert sorted(p.name for p in prebuilt.rglob("*.o")) == before
    # Another -march: nothing prebuilt fits.
    other = thunder.compile(model, (x,), cache_dir=tmp_path / "b", progress=False,
                            dynamic=False, cpu="x86-64-v3")
    assert _kernels(other)["cached"] == 0
    torch.testing.assert_close(other(x), model(x).detach())


def test_concurrent_compiles_publish_once(script, tmp_path):
    cache = tmp_path / "cache"
    processes = [subprocess.Popen([sys.executable, str(script), str(cache), "mlp"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=environment()) for _ in range(2)]
    results = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr[-4000:]
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    # One compiled; the other waited for its lock and loaded its entry.
    assert sorted(r["source"] for r in results) == ["cache", "compiled"]
    assert results[0]["output"] == results[1]["output"]
    assert results[0]["path"] == results[1]["path"]
    # One entry (beside it, its alias: the MLP reads every weight in place).
    assert len([p for p in (cache / "entries").iterdir() if not p.is_symlink()]) == 1


# ---------------------------------------------------------------------------------------
# The cache directory itself (no compiles)
# ---------------------------------------------------------------------------------------

def test_publish_loses_a_race_gracefully(tmp_path):
    cache = Cache(tmp_path)
    key = "ab" * 32

    def build(directory):
        (directory / "libx.so").write_text("mine")
        # Meanwhile another process (without working locks) publishes the same key.
        winner = cache.entry_dir(key)
        winner.mkdir(parents=True)
        (winner / "libx.so").write_text("theirs")
        (winner / Cache.ENTRY_FILE).write_text("{}")
        return {}

    entry, built = cache.publish(key, build)
    assert (entry, built) == (cache.entry_dir(key), False)
    assert (entry / "libx.so").read_text() == "theirs"
    assert list(cache.tmp.iterdir()) == []  # the loser's directory is gone


def test_failed_build_leaves_nothing(tmp_path):
    cache = Cache(tmp_path)

    def build(directory):
        (directory / "half").write_text("...")
        raise thunder.CompileError("toolchain failed")

    with pytest.raises(thunder.CompileError):
        cache.publish("cd" * 32, build)
    assert cache.lookup("cd" * 32) is None
    assert list(cache.tmp.iterdir()) == [] and list(cache.entries.iterdir()) == []


def test_clean_stale_removes_dead_processes_only(tmp_path):
    import socket

    cache = Cache(tmp_path)
    cache.tmp.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    mine = cache.tmp / f"{'a' * 64}.build.{host}.{os.getpid()}.0001"
    gone = cache.tmp / f"{'b' * 64}.build.{host}.{dead.pid}.0002"
    foreign = cache.tmp / f"{'c' * 64}.build.other.host.example.{dead.pid}.0003"
    for directory in (mine, gone, foreign):
        (directory / ".thunder-build-x").mkdir(parents=True)
    assert cache.clean_stale() == [gone.name]
    assert mine.exists() and foreign.exists() and not gone.exists()
    old = time.time() - 2 * 24 * 3600
    os.utime(foreign, (old, old))
    assert cache.clean_stale() == [foreign.name]


def test_cache_dir_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("THUNDER_CACHE_DIR", str(tmp_path / "env-cache"))
    assert thunder.default_cache_dir() == tmp_path / "env-cache"
    assert Cache().root == (tmp_path / "env-cache").resolve()
    monkeypatch.delenv("THUNDER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert thunder.default_cache_dir() == tmp_path / "xdg" / "thunder"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(thunder.default_cache_dir()).endswith(os.path.join(".cache", "thunder"))


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(5))

    def forward(self, x):
        return x * self.w


class FoldedScale(Scale):
    """Its library holds a value derived from w (w * 2 + 1, folded at compile time)."""

    def forward(self, x):
        return x * (self.w * 2.0 + 1.0)


def test_key_follows_the_weights(cache_dir):
    model = FoldedScale()
    x = torch.randn(3, 5)
    first = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    assert not first._entries[0].model.reads_every_weight_in_place
    again = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    assert again.compiles[0].source == "cache"
    assert again.compiles[0].key == first.compiles[0].key
    with torch.no_grad():
        model.w.add_(1.0)
    changed = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    assert changed.compiles[0].source == "compiled"
    assert changed.compiles[0].key != first.compiles[0].key
    torch.testing.assert_close(changed(x), model(x).detach())
    # The first one was compiled from the old weights: it refuses to run with a mix
    # (test_call_path.py has the mutation rule's tests).
    with pytest.raises(thunder.RuntimeError, match="changed in place after it was compiled"):
        first(x)
    # Other options are other keys.
    other = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False, opt_level=1)
    assert other.compiles[0].source == "compiled"


def test_a_library_reading_its_weights_in_place_serves_new_values(tmp_path, monkeypatch):
    """A library that reads every weight from the module's tensors holds none of their
    values: thunder.compile finds it again for other values of those weights (a changed
    parameter, another instance of the model) without hashing them, and it computes with
    the new values."""
    import thunder.compiled as compiled_module
    cache = tmp_path / "cache"
    model = Scale()
    x = torch.randn(3, 5)
    first = thunder.compile(model, (x,), cache_dir=cache, progress=False)
    assert first.compiles[0].source == "compiled"
    assert first._entries[0].model.reads_every_weight_in_place

    def no_hashing(views):
        raise AssertionError("the weights were hashed")

    monkeypatch.setattr(compiled_module, "weights_digest", no_hashing)
    with torch.no_grad():
        model.w.add_(1.0)
    changed = thunder.compile(model, (x,), cache_dir=cache, progress=False)
    assert changed.compiles[0].source == "cache"
    assert changed.compiles[0].path == first.compiles[0].path
    torch.testing.assert_close(changed(x), model(x).detach())
    other_model = Scale()
    other = thunder.compile(other_model, (x,), cache_dir=cache, progress=False)
    assert other.compiles[0].source == "cache"
    torch.testing.assert_close(other(x), other_model(x).detach())

    # The alias goes with its entry: discarded, the next compile builds it again.
    monkeypatch.undo()
    Cache(cache).discard(changed.compiles[0].key)
    assert list((cache / "entries").iterdir()) == []
    again = thunder.compile(model, (x,), cache_dir=cache, progress=False)
    assert again.compiles[0].source == "compiled"
    torch.testing.assert_close(again(x), model(x).detach())


class Conv3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def test_a_library_loaded_again_after_an_in_place_change_runs_on_the_new_filters(tmp_path):
    """oneDNN keeps its reordered copy of a filter by the filter's address. The module's
    filter, changed in place and compiled again, is the same library loaded again over the
    same memory, which now holds other values: the copy is made again (the runtime's
    caller_weights_epoch), even while the first model is alive."""
    cache = tmp_path / "cache"
    model = Conv3().eval()
    x = torch.randn(1, 4, 10, 10)
    first = thunder.compile(model, (x,), cache_dir=cache, progress=False)
    torch.testing.assert_close(first(x), model(x).detach())  # the copy is made
    assert first._entries[0].model.reads_every_weight_in_place
    with torch.no_grad():
        model.conv.weight.mul_(-2.0)
    again = thunder.compile(model, (x,), cache_dir=cache, progress=False)
    assert again.compiles[0].source == "cache"
    torch.testing.assert_close(again(x), model(x).detach())
