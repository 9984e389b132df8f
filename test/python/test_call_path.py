"""CompiledModule's call path: the per-signature fast path and its fallbacks, out= tensors,
weights read in place from the module (zero-copy) and the rule for weights changed after
compiling (refused), keep_module=False."""
from __future__ import annotations

import os

import pytest
import torch

import thunder
from thunder import compiled as compiled_module
from thunder import runtime


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x, scale=None):
        y = self.fc2(torch.relu(self.fc1(x)))
        return y if scale is None else y * scale


class Pair(torch.nn.Module):
    def forward(self, x):
        return x + 1, x * 2


def _model():
    torch.manual_seed(0)
    return TwoLayers().eval()


def test_fast_path_is_taken_and_matches(cache_dir):
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x = torch.randn(4, 8)
    torch.testing.assert_close(cm(x), model(x).detach())
    assert len(cm._fast) == 1
    values, key = cm._fast.key((x,), {})
    call = cm._fast.get(key)
    assert call is not None and values[0] is x
    # Through the fast path (one call into thunder._C, never the general path), and the
    # same prepared run.
    general = cm._call
    cm._call = lambda *_: pytest.fail("the fast path missed")
    torch.testing.assert_close(cm(x), model(x).detach())
    cm._call = general
    assert cm._fast.get(key) is call and len(cm._fast) == 1


@pytest.mark.parametrize("template_bytes", [1 << 16, 0], ids=["template", "by-shape"])
def test_fast_path_outputs_are_new_tensors(cache_dir, monkeypatch, template_bytes):
    # Small outputs are allocated like a template the fast path keeps, large ones by
    # shape (TEMPLATE_BYTES 0 sends this model's outputs that way): either way every
    # call returns tensors of its own, never the template nor an earlier call's.
    monkeypatch.setattr(compiled_module, "TEMPLATE_BYTES", template_bytes)
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x, y = torch.randn(3, 5), torch.randn(3, 5)
    cm(x)
    first = cm(x)
    second = cm(y)
    pointers = {t.data_ptr() for t in (*first, *second)}
    assert len(pointers) == 4
    for got, want in ((first, model(x)), (second, model(y))):
        for g, w in zip(got, want):
            assert g.is_contiguous() and g.dtype == w.dtype
            torch.testing.assert_close(g, w)


def test_outputs_stay_on_the_cpu_under_a_default_device(cache_dir):
    # torch.device(...) as a context changes where factory functions allocate; a CPU
    # model's outputs are CPU tensors whatever it is, first call and fast path alike.
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x = torch.randn(4, 8)
    with torch.device("meta"):
        first, fast = cm(x), cm(x)
    for y in (first, fast):
        assert y.device.type == "cpu"
        torch.testing.assert_close(y, model(x).detach())


def test_fast_path_falls_back_on_new_signatures(cache_dir):
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x = torch.randn(4, 8)
    cm(x)
    # A new size within the dynamic batch's range: same compiled signature, new fast entry.
    x6 = torch.randn(6, 8)
    torch.testing.assert_close(cm(x6), model(x6).detach())
    assert len(cm.compiles) == 1 and len(cm._fast) == 2
    # A new dtype: compiled again.
    xd = torch.randn(4, 8, dtype=torch.float64)
    torch.testing.assert_close(cm(xd.float()), model(xd.float()).detach())
    model64 = _model().double()
    cm64 = thunder.compile(model64, cache_dir=cache_dir, progress=False)
    torch.testing.assert_close(cm64(xd), model64(xd).detach())
    with pytest.raises(thunder.RuntimeError, match="dtype"):
        thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)(xd)
    # A non-contiguous input takes the general path (a contiguous copy), every time.
    xt = torch.randn(8, 4).t()
    fast_before = len(cm._fast)
    torch.testing.assert_close(cm(xt), model(xt).detach())
    torch.testing.assert_close(cm(xt), model(xt).detach())
    assert len(cm._fast) == fast_before
    # Keyword arguments: their own key; any order.
    torch.testing.assert_close(cm(x=x), model(x).detach())
    two = torch.tensor(2.0)
    torch.testing.assert_close(cm(x, scale=two), model(x, scale=two).detach())
    torch.testing.assert_close(cm(scale=two, x=x), model(x, scale=two).detach())
    torch.testing.assert_close(cm(scale=two, x=x), model(x, scale=two).detach())


def test_fast_path_refuses_what_the_runtime_refuses(cache_dir):
    model = _model()
    cm = thunder.compile(model, (torch.randn(4, 8),), cache_dir=cache_dir, progress=False)
    with pytest.raises(thunder.RuntimeError, match="input 0"):
        cm(torch.randn(4, 9))
    with pytest.raises(thunder.RuntimeError, match="input 0"):
        cm(torch.randn(4, 9))


def test_outputs_into_caller_tensors(cache_dir):
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x = torch.randn(4, 8)
    out = torch.empty(4, 4)
    assert cm(x, out=out) is out  # first call (general path), then the fast path
    assert cm(x, out=out) is out
    torch.testing.assert_close(out, model(x).detach())
    with pytest.raises(thunder.RuntimeError, match="shape"):
        cm(x, out=torch.empty(4, 5))
    with pytest.raises(thunder.RuntimeError, match="contiguous"):
        cm(x, out=torch.empty(4, 4).t())
    pair = thunder.compile(Pair(), cache_dir=cache_dir, progress=False)
    a, b = torch.empty(2, 3), torch.empty(2, 3)
    y = torch.randn(2, 3)
    result = pair(y, out=(a, b))
    assert result[0] is a and result[1] is b
    torch.testing.assert_close(a, y + 1)
    torch.testing.assert_close(b, y * 2)


def test_weights_are_read_in_place(cache_dir):
    model = _model()
    cm = thunder.compile(model, (torch.randn(4, 8),), cache_dir=cache_dir, progress=False)
    loaded = cm._entries[0].model
    # fc1/fc2 weights and biases: no copy of their own (the GEMMs read the weights as
    # nn.Linear holds them).
    assert loaded.provided_weights == 4
    for x in (torch.randn(4, 8), torch.randn(1, 8), torch.randn(33, 8)):
        torch.testing.assert_close(cm(x), model(x).detach())


def test_library_holds_no_copy_of_the_weights_it_reads_in_place(cache_dir):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU()).eval()
    x = torch.randn(4, 256)
    cm = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    torch.testing.assert_close(cm(x), model(x).detach())
    assert cm._entries[0].model.provided_weights == 2
    # 512 KiB of weights, none of them in the library.
    assert os.path.getsize(cm.artifacts[0]) < 256 * 512 * 4 // 4
    # Alone, it says what it lacks instead of reading nothing.
    with pytest.raises(thunder.RuntimeError,
                       match=r"weight '0\.(weight|bias)' is not in this library"):
        thunder.load(cm.compiles[0].path)
    # A tensor the runtime does not offer (not contiguous) is the library's own copy.
    model[0].weight = torch.nn.Parameter(torch.randn(256, 512).t(), requires_grad=False)
    again = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    torch.testing.assert_close(again(x), model(x).detach())
    assert again._entries[0].model.provided_weights == 1


def test_packed_weights_are_a_copy_the_library_holds(cache_dir):
    model = _model()
    x = torch.randn(4, 8)
    cm = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                         pack_weights=True)
    # The biases are read in place; the weights are packed for Thunder's GEMM
    # (32-column panels made at compile time), a copy the library holds.
    assert cm._entries[0].model.provided_weights == 2
    assert cm.compiles[0].source == "compiled"  # not the unpacked library's cache entry
    torch.testing.assert_close(cm(x), model(x).detach())


def test_weight_changed_after_compiling_is_refused(cache_dir):
    model = _model()
    x = torch.randn(4, 8)
    cm = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    cm(x)
    cm(x)  # the fast path too
    with torch.no_grad():
        model.fc1.weight.mul_(2)
    with pytest.raises(thunder.RuntimeError, match="'fc1.weight' .* changed in place"):
        cm(x)
    # Compiling again takes the new weights.
    again = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False)
    torch.testing.assert_close(again(x), model(x).detach())
    # load_state_dict copies in place: refused too.
    model.load_state_dict({k: v * 3 for k, v in model.state_dict().items()})
    with pytest.raises(thunder.RuntimeError, match="changed in place"):
        again(x)


def test_external_weights_are_read_in_place(tmp_path):
    model = _model()
    x = torch.randn(4, 8)
    cm = thunder.compile(model, (x,), cache_dir=tmp_path, progress=False,
                         external_weights=True)
    assert cm._entries[0].model.provided_weights == 4
    torch.testing.assert_close(cm(x), model(x).detach())
    # The library alone (deployment) reads its own copy.
    alone = thunder.load(cm.compiles[0].path)
    assert alone.provided_weights == 0
    torch.testing.assert_close(alone(x), model(x).detach())


def test_keep_module_false(cache_dir):
    model = _model()
    x = torch.randn(4, 8)
    expected = model(x).detach()
    cm = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                         keep_module=False, recompile=True)
    assert cm.model is None
    del model
    torch.testing.assert_close(cm(x), expected)
    with pytest.raises(thunder.RuntimeError, match="keep_module=False"):
        cm(torch.randn(4, 8, dtype=torch.float64))


def test_fast_path_table_is_bounded(cache_dir, monkeypatch):
    monkeypatch.setattr(compiled_module, "FAST_PATH_LIMIT", 3)
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    for batch in range(2, 9):
        x = torch.randn(batch, 8)
        torch.testing.assert_close(cm(x), model(x).detach())
    assert len(cm._fast) <= 3 and len(cm.compiles) == 1


class Sub(torch.nn.Module):
    def forward(self, a, b):
        return a - b


def test_fast_path_keeps_arguments_apart(cache_dir):
    cm = thunder.compile(Sub(), cache_dir=cache_dir, progress=False)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(cm(x, y), x - y)
    torch.testing.assert_close(cm(x, x), torch.zeros(3, 4))  # one tensor in both places
    torch.testing.assert_close(cm(y, x), y - x)
    torch.testing.assert_close(cm(b=x, a=y), y - x)
    torch.testing.assert_close(cm(b=y, a=x), x - y)


class Doubled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 4))

    def forward(self, x):
        return x @ (self.w * 2)  # folded at compile time: the library holds w * 2


def test_keep_module_false_frees_what_the_library_does_not_read(cache_dir):
    import weakref
    model = Doubled().eval()
    x = torch.randn(3, 8)
    expected = model(x).detach()
    cm = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                         keep_module=False)
    assert cm._entries[0].model.provided_weights == 0
    ref = weakref.ref(model.w)
    del model
    import gc
    gc.collect()  # torch.export's objects hold it in reference cycles
    assert ref() is None
    torch.testing.assert_close(cm(x), expected)


class PartlyFolded(torch.nn.Module):
    """fc's weights are read in place; `gain` only through exp(), computed at compile
    time into a constant of the library's own."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)
        self.gain = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        return self.fc(x) * self.gain.exp()


def test_loaded_model_keeps_only_the_weights_it_reads(cache_dir):
    # The library is offered every module tensor and reads some in place: only those are
    # kept alive with it, so keep_module=False frees the rest (ResNet-18's filters, into
    # which the batch norms were folded).
    torch.manual_seed(0)
    model = PartlyFolded().eval()
    x = torch.randn(3, 8)
    expected = model(x).detach()
    cm = thunder.compile(model, (x,), cache_dir=cache_dir, progress=False,
                         keep_module=False)
    loaded = cm._entries[0].model
    assert sorted(loaded.native.provided_weight_names) == ["fc.bias", "fc.weight"]
    kept = {t.data_ptr() for t in loaded._weights}
    assert kept == {model.fc.weight.data_ptr(), model.fc.bias.data_ptr()}
    import gc
    import weakref
    gain = weakref.ref(model.gain.untyped_storage())  # the storage, not the Parameter
    del model
    gc.collect()  # torch.export's objects hold it in reference cycles
    assert gain() is None
    torch.testing.assert_close(cm(x), expected)


class Wide(torch.nn.Module):
    """More inputs and outputs than the fast path keeps on its stack (8 values, 8
    outputs, 16 pointers)."""

    def forward(self, *xs):
        return tuple(x * (i + 1) + xs[-1] for i, x in enumerate(xs[:-1]))


def test_fast_path_many_inputs_and_outputs(cache_dir):
    cm = thunder.compile(Wide(), cache_dir=cache_dir, progress=False)
    xs = [torch.randn(2, 3) for _ in range(12)]
    for _ in range(3):  # compile, remember, fast path
        got = cm(*xs)
        assert len(got) == 11
        for g, w in zip(got, Wide()(*xs)):
            torch.testing.assert_close(g, w)
    assert len(cm._fast) == 1


def test_fast_path_takes_plain_tensors_only(cache_dir):
    # A tensor subclass (here a Parameter) may override what the fast path reads: the
    # general path takes it, with the same result.
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x = torch.randn(4, 8)
    cm(x)
    p = torch.nn.Parameter(x.clone(), requires_grad=False)
    torch.testing.assert_close(cm(p), model(x).detach())
    assert len(cm._fast) == 1


def test_fast_path_from_threads(cache_dir):
    # Runs release the GIL: calls from several threads each get their own outputs.
    import concurrent.futures
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    inputs = [torch.randn(4, 8) for _ in range(64)]
    cm(inputs[0])
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(cm, inputs))
    for x, y in zip(inputs, results):
        torch.testing.assert_close(y, model(x).detach())


def test_fast_path_table_cleared_while_threads_run(cache_dir, monkeypatch):
    # With room for one signature, two alternating shapes clear the table on nearly every
    # call, while other threads run through entries just dropped from it.
    import concurrent.futures
    monkeypatch.setattr(compiled_module, "FAST_PATH_LIMIT", 1)
    model = _model()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    inputs = [torch.randn(4 if i % 2 else 6, 8) for i in range(200)]
    cm(inputs[0])
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(cm, inputs))
    for x, y in zip(inputs, results):
        torch.testing.assert_close(y, model(x).detach())


def _pair_outputs_match(model, got, x):
    for g, w in zip(got, model(x)):
        torch.testing.assert_close(g, w)


def test_large_outputs_reuse_their_storage_once_released(cache_dir):
    # An output of OutputPool.MIN_BYTES or more is written into the storage of the last
    # call's, once the caller has let go of it (a 16 MiB output allocated per call grew
    # a serving process by its size on each of its first ten calls), and into new
    # memory while anything still holds it.
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x, y = torch.randn(512, 512), torch.randn(512, 512)
    assert x.nbytes >= runtime.OutputPool.MIN_BYTES
    first = cm(x.t().contiguous().t())  # not contiguous: the general path (_Entry.run)
    _pair_outputs_match(model, first, x)
    pointers = [t.data_ptr() for t in first]
    del first
    second = cm(y)  # the fast path, on the general path's storage
    assert [t.data_ptr() for t in second] == pointers
    assert not any(t._is_view() for t in second)
    _pair_outputs_match(model, second, y)
    third = cm(x)  # second still held
    assert not {t.data_ptr() for t in third} & set(pointers)
    _pair_outputs_match(model, third, x)
    _pair_outputs_match(model, second, y)
    holders = {"view": lambda t: t[1:], "numpy": lambda t: t.numpy(),
               "storage": lambda t: t.untyped_storage(),
               "dlpack": torch.utils.dlpack.to_dlpack}
    for kind, hold in holders.items():
        del second, third
        second = cm(y)
        held, pointer, want = hold(second[0]), second[0].data_ptr(), second[0].clone()
        del second
        third = cm(x)
        assert third[0].data_ptr() != pointer, kind
        _pair_outputs_match(model, third, x)
        if kind in ("view", "numpy"):
            assert torch.equal(torch.as_tensor(held), want[1:] if kind == "view" else want)
        second = cm(y)
        del held


def test_large_outputs_of_a_loaded_library_reuse_their_storage(cache_dir):
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x, y = torch.randn(512, 512), torch.randn(512, 512)
    cm(x)
    loaded = thunder.load(cm.artifacts[0])
    first = loaded(x)
    pointers = [t.data_ptr() for t in first]
    _pair_outputs_match(model, first, x)
    del first
    second = loaded(y)
    assert [t.data_ptr() for t in second] == pointers
    _pair_outputs_match(model, second, y)
    third = loaded(x)
    assert not {t.data_ptr() for t in third} & set(pointers)
    _pair_outputs_match(model, second, y)


def test_large_outputs_across_inference_mode(cache_dir):
    # A tensor made in inference mode cannot back a normal one, nor the reverse: the
    # pool allocates anew when the mode changed, and reuses again after.
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x, y = torch.randn(512, 512), torch.randn(512, 512)
    with torch.inference_mode():
        out = cm(x)
        assert out[0].is_inference()
        pointer = out[0].data_ptr()
        del out
        out = cm(y)
        assert out[0].data_ptr() == pointer
        del out
    out = cm(y)
    assert not out[0].is_inference() and out[0].data_ptr() != pointer
    _pair_outputs_match(model, out, y)
    pointer = out[0].data_ptr()
    del out
    out = cm(x)
    assert not out[0].is_inference() and out[0].data_ptr() == pointer
    _pair_outputs_match(model, out, x)


def test_large_outputs_moved_to_shared_memory_are_not_reused(cache_dir):
    # share_memory_() (what a torch.multiprocessing queue does) moves the storage into
    # shared memory that another process may still read after this one let go of it.
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x, y = torch.randn(512, 512), torch.randn(512, 512)
    out = cm(x)
    out[0].share_memory_()
    del out
    again = cm(y)
    assert not again[0].is_shared()
    _pair_outputs_match(model, again, y)


def test_large_outputs_of_a_shrinking_dynamic_dim(cache_dir):
    # A kept storage serves a smaller output that needs at least half of it; a larger
    # one, or one much smaller, gets new memory.
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    rows = [512, 400, 700, 300]
    inputs = [torch.randn(n, 1024) for n in rows]
    out = cm(inputs[0])
    assert len(cm._entries) == 1  # one compile, a dynamic first dim
    pointer = out[0].data_ptr()
    del out
    out = cm(inputs[1])  # 400 of 512 rows: the same storage
    assert out[0].data_ptr() == pointer and out[0].shape == (400, 1024)
    assert out[0].is_contiguous() and not out[0]._is_view()
    _pair_outputs_match(model, out, inputs[1])
    del out
    out = cm(inputs[2])  # larger
    assert out[0].data_ptr() != pointer
    _pair_outputs_match(model, out, inputs[2])
    pointer = out[0].data_ptr()
    del out
    out = cm(inputs[3])  # 300 rows against 700 kept: more than twice
    assert out[0].data_ptr() != pointer
    _pair_outputs_match(model, out, inputs[3])


def test_outputs_beyond_the_pool_are_allocated_per_call(cache_dir, monkeypatch):
    monkeypatch.setattr(runtime.OutputPool, "MAX_BYTES", (1 << 20) - 1)
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    x = torch.randn(512, 512)
    for _ in range(3):
        _pair_outputs_match(model, cm(x), x)
    assert all(not entry.model.output_pool._slots for entry in cm._entries)


def test_large_outputs_from_threads(cache_dir):
    # Calls from several threads, each checking and dropping its outputs at once: slots
    # are reused all the time, and two calls running together never share one.
    import concurrent.futures
    model = Pair()
    cm = thunder.compile(model, cache_dir=cache_dir, progress=False)
    inputs = [torch.randn(512, 512) for _ in range(8)]
    cm(inputs[0])

    def call(i):
        x = inputs[i % len(inputs)]
        got = cm(x)
        return all(torch.equal(g, w) for g, w in zip(got, (x + 1, x * 2)))

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert all(pool.map(call, range(200)))
