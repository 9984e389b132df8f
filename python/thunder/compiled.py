"""thunder.compile: a callable that behaves like the model, compiled ahead of time.

    cm = thunder.compile(model)
    y = cm(x)          # compiles on the first call (or finds it in the cache), then runs

Each distinct input signature is captured with torch.export, looked up in the on-disk cache
(thunder/cache.py) and compiled only when it is not there; the library is loaded by
Thunder's runtime, which runs it on the tensors' own memory. Outputs come back in the
model's own pytree structure (a tensor, tuples, dicts, transformers' ModelOutput...).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import sys
import threading
import time
import warnings
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import (ConstantArgument, OutputKind,
                                          TensorArgument)
from torch.utils import _pytree as pytree

from . import _C, apart, capture, custom_ops, partition, runtime
from .cache import (Cache, host_cpu_digest, key as cache_key, program_digest,
                    provided_digest, weights_digest)
from .errors import UnsupportedModelError, runtime_error
from .program import import_captured

__all__ = ["CompileRecord", "CompiledModule", "compile"]

#: Compiles for different signatures after which a CompiledModule warns (once) that the
#: model is being recompiled a lot.
RECOMPILE_WARNING = 8

#: A compile that runs longer than this shows its progress on stderr.
PROGRESS_DELAY_S = 1.0


@dataclasses.dataclass
class CompileRecord:
    """How one input signature of a CompiledModule got its compiled model."""

    signature: str  #: "(x: float32[s77, 32])"; a dynamic dim shows its symbol
    key: str        #: the cache key
    path: str       #: the cache entry's directory (libNAME.so, NAME.h, entry.json)
    source: str     #: "compiled" (this compile ran the toolchain) or "cache"
    seconds: dict = dataclasses.field(default_factory=dict)
    """Wall time per phase: export, key, decompose, import, graph, build, load, total
    (decompose to build only when it was compiled here)."""
    process_peak_mb: float | None = None
    """When it compiled in a process of its own (thunder/apart.py): the most resident
    memory (MiB) that process had beyond the pages it started with, which it shared with
    the caller; so the compile's peak is about the caller's resident size then plus this.
    None when it compiled in the calling process."""


# ---------------------------------------------------------------------------------------
# Progress on stderr
# ---------------------------------------------------------------------------------------

class _Progress(apart.Phases):
    """One stderr line for a compile that takes a while:

        thunder: compiling 'GPT2LMHeadModel' for cpu ... exported 1.6s, imported 0.1s,
        graph 0.0s, built 3.1s, done (4.9s)

    Nothing is printed when the compile finishes within PROGRESS_DELAY_S (a timer starts
    the line), when disabled, or with THUNDER_QUIET=1."""

    def __init__(self, label: str, enabled: bool):
        self.label = label
        self.start = time.monotonic()
        self.pieces: list[str] = []
        self.shown = self.done = False
        self.lock = threading.Lock()
        self.timer = None
        if enabled and os.environ.get("THUNDER_QUIET", "") in ("", "0"):
            self.timer = threading.Timer(PROGRESS_DELAY_S, self._show)
            self.timer.daemon = True
            self.timer.start()

    def _write(self, text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()

    def _show(self) -> None:
        with self.lock:
            if self.done:
                return
            self.shown = True
            self._write(f"thunder: {self.label} ..." +
                        ",".join(f" {piece}" for piece in self.pieces))

    def add(self, piece: str) -> None:
        with self.lock:
            if self.shown:
                self._write(("," if self.pieces else "") + f" {piece}")
            self.pieces.append(piece)

    def finish(self, outcome: str) -> None:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            self.done = True
            if self.shown:
                total = time.monotonic() - self.start
                self._write(("," if self.pieces else "") + f" {outcome} ({total:.1f}s)\n")


# ---------------------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------------------

def _flatten(args: tuple, kwargs: dict, in_spec=None) -> tuple[list, Any]:
    """The leaves of (args, kwargs) and their spec; kwargs are put in in_spec's order
    (a call may name them in any order) when their names agree."""
    if in_spec is not None and kwargs:
        from torch.export._tree_utils import reorder_kwargs
        try:
            kwargs = reorder_kwargs(kwargs, in_spec)
        except (AssertionError, ValueError, KeyError):
            pass  # other names: the specs differ, which the caller sees
    return pytree.tree_flatten((args, kwargs))


def _call_text(spec) -> str:
    """"2 positional arguments and keyword arguments bias, mask" for the spec of
    (args, kwargs)."""
    try:
        args_spec, kwargs_spec = spec.child(0), spec.child(1)
        count, names = args_spec.num_children, list(kwargs_spec.context or [])
    except (AttributeError, ValueError, TypeError):
        return " ".join(str(spec).split())
    text = f"{count} positional argument{'' if count == 1 else 's'}"
    if names:
        text += f" and keyword argument{'' if len(names) == 1 else 's'} {', '.join(names)}"
    return text


def _structure(flat: list, spec) -> tuple:
    """What a call must share with an earlier one for their shapes to be compared: the
    pytree, and each leaf's kind, dtype and rank (or value for Python numbers)."""
    leaves = []
    for value in flat:
        if isinstance(value, torch.Tensor):
            leaves.append(("tensor", value.dtype, value.dim()))
        else:
            leaves.append(("value", type(value).__name__, repr(value)))
    return (str(spec), tuple(leaves))


def _signature_text(ep: ExportedProgram) -> str:
    """"(x: float32[s77, 32], n=4)": the exported program's user inputs, dynamic dims by
    their symbol, with the symbols' ranges."""
    placeholders = {node.name: node for node in ep.graph.nodes if node.op == "placeholder"}
    parts = []
    for arg in capture.user_inputs(ep):
        if isinstance(arg, TensorArgument):
            value = placeholders[arg.name].meta.get("val")
            dtype = capture._DTYPE_NAMES.get(value.dtype, str(value.dtype))
            dims = ", ".join(str(d) for d in value.shape)  # a SymInt prints its symbol
            parts.append(f"{arg.name}: {dtype}[{dims}]")
        elif isinstance(arg, ConstantArgument):
            parts.append(f"{arg.name}={arg.value!r}")
        else:
            parts.append(f"{getattr(arg, 'name', '?')}: {type(arg).__name__}")
    ranges = []
    for symbol, bounds in sorted(ep.range_constraints.items(), key=lambda kv: str(kv[0])):
        upper = "inf" if "oo" in str(bounds.upper) else bounds.upper
        ranges.append(f"{symbol} in [{bounds.lower}, {upper}]")
    text = f"({', '.join(parts)})"
    return f"{text} with {', '.join(ranges)}" if ranges else text


def _takes_keyword(model: Any, name: str) -> bool:
    """Whether the model's forward takes an argument called `name` (or **kwargs)."""
    import inspect
    try:
        function = model.forward if isinstance(model, torch.nn.Module) else model
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return name in parameters or any(p.kind == p.VAR_KEYWORD for p in parameters.values())


def _sanitize(name: str) -> str:
    """A C identifier from a class name (the artifact is lib<name>.so)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return name if name and not name[0].isdigit() else f"model_{name}"


def _compiler_fingerprint() -> dict:
    """What identifies the compiler: the package version, and the native module's size and
    modification time (a rebuilt compiler may generate other code under the same version)."""
    from . import __version__
    stat = os.stat(_C.__file__)
    return {"thunder": __version__, "native": [stat.st_size, stat.st_mtime_ns],
            "runtime": _C.runtime_version(), "torch": torch.__version__}


# ---------------------------------------------------------------------------------------
# One compiled signature
# ---------------------------------------------------------------------------------------

@dataclasses.dataclass
class _Face:
    """What calls see of an exported program: its input and output pytree specs, each
    user input as (name, is a tensor, the constant torch.export baked in), each user
    output as (is a tensor, constant). Picklable: a compile in a process of its own
    sends it back (thunder/apart.py)."""

    in_spec: Any
    out_spec: Any
    inputs: list
    outputs: list

    @staticmethod
    def of(ep: ExportedProgram) -> "_Face":
        inputs = []
        for arg in capture.user_inputs(ep):
            if isinstance(arg, TensorArgument):
                inputs.append((arg.name, True, None))
            elif isinstance(arg, ConstantArgument):
                inputs.append((arg.name, False, arg.value))
            else:
                raise UnsupportedModelError(
                    f"input '{getattr(arg, 'name', '?')}' is a {type(arg).__name__}; Thunder "
                    f"compiles tensor inputs (Python numbers are baked in)")
        outputs = [(False, spec.arg.value) if isinstance(spec.arg, ConstantArgument)
                   else (True, None)
                   for spec in ep.graph_signature.output_specs
                   if spec.kind == OutputKind.USER_OUTPUT]
        return _Face(ep.call_spec.in_spec, ep.call_spec.out_spec, inputs, outputs)


class _Entry:
    """A compiled model for one input signature: how the call's pytree leaves map to the
    runtime's inputs, and its outputs back to the model's output pytree."""

    def __init__(self, face: _Face, model: runtime.Model, record: CompileRecord):
        self.model = model
        self.record = record
        self.in_spec = face.in_spec
        self.out_spec = face.out_spec
        names = [desc.name for desc in model.inputs]
        # (name, runtime input index or None, constant value)
        self.leaves: list[tuple[str, int | None, Any]] = []
        for name, is_tensor, constant in face.inputs:
            if not is_tensor:
                self.leaves.append((name, None, constant))
                continue
            if name not in names:
                raise UnsupportedModelError(
                    f"input '{name}' of the exported program is not an input of the "
                    f"compiled model (its inputs: {', '.join(names)})")
            self.leaves.append((name, names.index(name), None))
        self.tensor_positions = [i for i, leaf in enumerate(self.leaves) if leaf[1] is not None]
        if [self.leaves[i][1] for i in self.tensor_positions] != list(range(len(names))):
            raise UnsupportedModelError(
                f"the exported program's tensor inputs "
                f"({', '.join(self.leaves[i][0] for i in self.tensor_positions)}) do not "
                f"match the compiled model's ({', '.join(names)})")
        # Each user output: True for the next runtime output, else (False, constant).
        self.out_leaves: list[tuple[bool, Any]] = list(face.outputs)
        if sum(tensor for tensor, _ in self.out_leaves) != len(model.outputs):
            raise UnsupportedModelError(
                f"the compiled model has {len(model.outputs)} outputs, but the program "
                f"returns {sum(t for t, _ in self.out_leaves)} tensors")
        # Per runtime input: (dtype, shape, min, max, symbols), for matching calls.
        self.descs = [(runtime._TORCH_DTYPES[d.dtype], d.shape, d.min, d.max, d.symbols)
                      for d in model.inputs]
        self.out_dtypes = [runtime._TORCH_DTYPES[d.dtype] for d in model.outputs]
        self.device_type = runtime._torch_device_type(model.native.device)
        self.build = _output_builder(self.out_leaves, self.out_spec)
        # The model returns its one output tensor itself (not in a container).
        self.returns_one_tensor = self.out_spec.is_leaf() and len(self.out_leaves) == 1 \
            and self.out_leaves[0][0]

    def mismatch(self, flat: list, spec) -> tuple[str, str] | None:
        """Why a call with these leaves cannot run on this entry, as (kind, message): kind
        "structure" (other arguments), "value" (another Python value) or "tensor" (a dtype,
        rank, size or device the runtime would refuse); None when it can run."""
        if spec != self.in_spec:
            got, compiled = _call_text(spec), _call_text(self.in_spec)
            if got == compiled:  # same counts and names, other containers inside
                got, compiled = (" ".join(str(s).split()) for s in (spec, self.in_spec))
            return ("structure", f"it takes {compiled}, got {got}")
        symbols: dict[str, int] = {}
        tensor_problem = None
        for (name, index, constant), value in zip(self.leaves, flat):
            if index is None:
                same = type(value) is type(constant) and (
                    value == constant or (value != value and constant != constant))
                if not same:
                    return ("value", f"argument '{name}' was {constant!r} when the model was "
                                     f"compiled (torch.export bakes Python values in), got "
                                     f"{value!r}")
                continue
            if not isinstance(value, torch.Tensor):
                return ("structure", f"argument '{name}' is a {type(value).__name__}, not a "
                                     f"tensor")
            if tensor_problem is None:
                tensor_problem = self._tensor_mismatch(index, name, value, symbols)
        return None if tensor_problem is None else ("tensor", tensor_problem)

    def _tensor_mismatch(self, index: int, name: str, value: torch.Tensor,
                         symbols: dict[str, int]) -> str | None:
        dtype, shape, lo, hi, syms = self.descs[index]
        who = f"input {index} ('{name}')"
        if value.dtype != dtype:
            return f"{who}: dtype {value.dtype} differs from the compiled {dtype}"
        if value.dim() != len(shape):
            return f"{who}: rank {value.dim()} differs from the compiled {len(shape)}"
        for d, size in enumerate(value.shape):
            if shape[d] >= 0:
                if size != shape[d]:
                    return f"{who}: dim {d} is {size}, compiled for {shape[d]}"
                continue
            if size < lo[d] or (hi[d] >= 0 and size > hi[d]):
                return f"{who}: dim {d} is {size}, outside [{lo[d]}, {hi[d]}]"
            if syms[d] and symbols.setdefault(syms[d], size) != size:
                return (f"{who}: dim {d} is {size}, but it shares symbol {syms[d]} with a "
                        f"dim of size {symbols[syms[d]]}")
        if value.device.type != runtime._torch_device_type(self.model.native.device):
            return f"{who} is on {value.device}"
        return None

    def run(self, flat: list, out=None):
        tensors = [flat[i] for i in self.tensor_positions]
        if out is None:
            return self.build(runtime.run(self.model.native, tensors, self.model.output_pool))
        # Caller-provided outputs: the runtime writes into them (the general path: an
        # input that is not contiguous, a CUDA model).
        native = self.model.native
        views, keep_alive = runtime._input_views(native, tensors)
        outputs = _check_out(self, out, native.output_shapes(views))
        stream = 0
        if self.device_type == "cuda" and outputs:
            stream = torch.cuda.current_stream(outputs[0].device).cuda_stream
        if native.uses_random:
            runtime.seed_from_torch(native)
        native.run(views, [(o.data_ptr(), d.dtype, list(o.shape))
                           for o, d in zip(outputs, native.outputs)], stream)
        del keep_alive
        return self.build(outputs)


def _output_builder(out_leaves: list, out_spec):
    """A function from the runtime's outputs to the model's output pytree; the common
    cases (one tensor, a tuple of tensors) without pytree's machinery."""
    if all(tensor for tensor, _ in out_leaves):
        if out_spec.is_leaf() and len(out_leaves) == 1:
            return lambda outputs: outputs[0]
        if out_spec.type is tuple and all(out_spec.child(i).is_leaf()
                                          for i in range(out_spec.num_children)):
            return tuple
        return lambda outputs: pytree.tree_unflatten(list(outputs), out_spec)

    def build(outputs):
        it = iter(outputs)
        return pytree.tree_unflatten(
            [next(it) if tensor else constant for tensor, constant in out_leaves], out_spec)
    return build


def _check_out(entry: "_Entry", out, shapes: list) -> list:
    """The caller's `out=` tensors (a tensor, or a sequence or pytree of them in the
    model's output order), checked against what the run writes: the runtime checks
    dtypes and shapes too, but sees neither devices nor strides."""
    outputs = pytree.tree_leaves(out)
    if len(outputs) != len(shapes):
        raise runtime_error(f"out= has {len(outputs)} tensors; the model returns "
                            f"{len(shapes)}", "THUNDER_ERROR_INVALID_ARGUMENT")
    for i, (tensor, shape, dtype) in enumerate(zip(outputs, shapes, entry.out_dtypes)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"out= tensor {i} is a {type(tensor).__name__}")
        problem = None
        if tensor.dtype != dtype:
            problem = f"dtype {tensor.dtype}, the output's is {dtype}"
        elif list(tensor.shape) != list(shape):
            problem = f"shape {list(tensor.shape)}, the output's is {list(shape)}"
        elif tensor.device.type != entry.device_type:
            problem = f"on {tensor.device}, the model runs on {entry.device_type}"
        elif not tensor.is_contiguous():
            problem = "not contiguous (the runtime writes row-major memory)"
        if problem:
            raise runtime_error(f"out= tensor {i}: {problem}", "THUNDER_ERROR_INVALID_ARGUMENT")
    return outputs


def _fast_call(entry: _Entry, order: list[int], tensors: list) -> _C.FastCall:
    """The fast path of one exact call signature (which tensors, in which order, with
    which dtypes, shapes and device; every one contiguous): the runtime's Signature
    prepared once, the outputs' shapes, dtypes and allocators known, the flattening done.
    A call then costs one call into thunder._C (python/FastPath.cpp): the key, the
    weights' versions, the data pointers, an allocation per output and the run, which
    the runtime validates."""
    native = entry.model.native
    signature = native.prepare(
        [(0, capture._DTYPE_NAMES.get(t.dtype, str(t.dtype)), list(t.shape)) for t in tensors])
    shapes = [tuple(shape) for shape in signature.output_shapes]
    one = len(shapes) == 1 and entry.returns_one_tensor
    return _C.FastCall(
        signature, order,
        [_allocator(entry.model.output_pool, i, shape, dtype)
         for i, (shape, dtype) in enumerate(zip(shapes, entry.out_dtypes))],
        None if one else entry.build,
        # A program that draws random numbers takes a seed from torch's generator per call.
        functools.partial(runtime.seed_from_torch, native) if native.uses_random else None,
        entry, signature.output_shapes)


def _run_fast(call: _C.FastCall, values: tuple, out):
    """`call` on the call's tensors, into new outputs or the caller's `out=` (checked)."""
    return call(values, None if out is None else
                _check_out(call.entry, out, call.output_shapes))


#: Outputs up to this many bytes are allocated like a template tensor the fast path
#: keeps (torch.empty_like: about half the Python cost of torch.empty(shape, dtype=));
#: larger ones, whose run dwarfs that, by shape, not to hold a template's memory.
TEMPLATE_BYTES = 1 << 16


def _allocator(pool: runtime.OutputPool, index: int, shape: tuple,
               dtype: torch.dtype) -> tuple:
    """(function, argument) whose call returns an uninitialized contiguous CPU tensor of
    shape and dtype for output `index` (on the CPU whatever torch's default device: each
    takes the device of a template, or makes CPU tensors): new, or from `pool` for the
    sizes it keeps (OutputPool.pools)."""
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    if nbytes <= TEMPLATE_BYTES:
        return torch.empty_like, torch.empty(shape, dtype=dtype, device="cpu")
    if runtime.OutputPool.pools(nbytes):
        return pool.take, (index, tuple(shape), count, dtype)
    return torch.empty(0, dtype=dtype, device="cpu").new_empty, shape


#: Fast-path signatures a CompiledModule remembers; past this the table starts over
#: (a model called with ever-new sizes pays the slow path once per size).
FAST_PATH_LIMIT = 256


@dataclasses.dataclass
class _Built:
    """A signature's library, built or found in the cache, and what loading it takes."""

    entry_dir: str
    key: str
    in_place_key: str | None
    source: str          #: "compiled" or "cache"
    signature: str
    seconds: dict
    face: _Face
    #: The weights to load it with: the tensors (compiled in this process), or None
    #: and, per weight, its attribute path in the module with the data pointer, shape
    #: and dtype it had there (compiled apart: module_names; _module_tensors).
    tensors: dict | None
    module_names: dict


def _module_tensors(model: Any, names: dict) -> dict | None:
    """The tensors a library built apart reads, found in this process's module by their
    attribute paths: None unless each is where the fork found it (the same memory, shape
    and dtype; a forward that assigns tensor attributes could have moved one)."""
    weights = {}
    for name, (fqn, pointer, shape, dtype) in names.items():
        try:
            tensor = functools.reduce(getattr, fqn.split("."), model)
        except AttributeError:
            return None
        if (not isinstance(tensor, torch.Tensor) or tensor.data_ptr() != pointer
                or tuple(tensor.shape) != shape or str(tensor.dtype) != dtype):
            return None
        weights[name] = tensor
    return weights


def _module_names(model: Any, weights: dict) -> dict:
    """For each of the program's weights that is a tensor of `model` itself (a parameter,
    a buffer, a tensor attribute), its attribute path there ("transformer.h.0.ln_1.weight";
    a tied weight under one of its names)."""
    if not isinstance(model, torch.nn.Module):
        return {}
    own = {}
    for fqn, tensor in (*model.named_parameters(remove_duplicate=False),
                        *model.named_buffers(remove_duplicate=False)):
        own.setdefault(id(tensor), fqn)
    names = {}
    for name, tensor in weights.items():
        if id(tensor) in own:
            names[name] = own[id(tensor)]
            continue
        try:  # a plain tensor attribute, which torch.export lifts as a constant
            value = functools.reduce(getattr, name.split("."), model)
        except AttributeError:
            continue
        if value is tensor:
            names[name] = name
    return names


# ---------------------------------------------------------------------------------------
# The compiled module
# ---------------------------------------------------------------------------------------

class CompiledModule:
    """A model compiled by Thunder: call it like the model.

    Each call is matched against the signatures compiled so far (dtypes, ranks, static
    sizes, dynamic dims within their ranges, Python values); a call that matches none is
    compiled (or found in the cache) when recompiling is allowed, and otherwise rejected by
    the runtime with a message naming the input. See thunder.compile for the policy.
    The compiled code reads the module's weights in place where it can (zero-copy) and
    holds derived copies of others: a call after a weight was changed in place raises
    thunder.RuntimeError (call thunder.compile again for the new weights).
    """

    def __init__(self, model: Any, *, target: str, dynamic: bool | None,
                 dynamic_shapes: Any, cache_dir, cpu: str, external_weights: bool,
                 progress: bool, name: str | None, recompile: bool, opt_level: int,
                 cuda_arch: str = "sm_80,sm_90a", fuse: bool = True, arch: str = "",
                 keep_module: bool = True, fallback: str = "error",
                 pack_weights: bool = False):
        if fallback not in partition.FALLBACK_MODES:
            raise ValueError(f"fallback must be one of {partition.FALLBACK_MODES}, got "
                             f"{fallback!r}")
        self._fallback = fallback
        self._model = model
        self._keep_module = keep_module
        # The ids of the weights a compiled signature was built from; self._fast watches
        # their version counters (by weak reference, so that keep_module=False frees
        # what the library does not read), and a weight changed in place since is
        # refused (_check_weights).
        self._tracked: set[int] = set()
        self._fuse = fuse
        # The device architectures: arch when given, else cuda_arch for the CUDA target,
        # else the target's default ("").
        self._arch = arch or (cuda_arch if target == "cuda" else "")
        self._target = target
        self._dynamic = dynamic
        self._dynamic_shapes = dynamic_shapes
        self._cache = Cache(cache_dir)
        self._cpu = cpu
        self._external_weights = external_weights
        # Packed GEMM weights are a second copy beside the module's tensors, which the
        # library otherwise reads in place: off unless asked for (compile's docstring).
        self._pack_weights = pack_weights
        self._progress = progress
        self._name = name or _sanitize(capture.source_name(model))
        self._recompile = recompile
        self._opt_level = opt_level
        self._entries: list[_Entry] = []
        self._history: dict[tuple, list[list[int]]] = {}  # structure -> shapes compiled
        self._lock = threading.RLock()
        self._warned = False
        # `out=` is the caller's output tensors unless the model takes an `out` itself.
        self._out_kw = not _takes_keyword(model, "out")
        # The prepared runs of the call signatures seen (FastPath.cpp); it watches the
        # weights too, and misses once one changed (then _check_weights says which).
        self._fast = _C.FastPath(torch.Tensor, self._out_kw)
        #: One CompileRecord per compiled signature, in order.
        self.compiles: list[CompileRecord] = []

    # -- public --------------------------------------------------------------------------

    @property
    def model(self):
        """The model that was compiled."""
        return self._model

    @property
    def cache_dir(self) -> str:
        return str(self._cache.root)

    @property
    def artifacts(self) -> list[str]:
        """The compiled libraries (libNAME.so), one per signature. On the cpu target they
        read the module's tensors in place and hold no copy of them: load one with
        thunder.load(path, weights=model.state_dict()); thunder-compile and
        thunder.export(...).compile(...) build libraries that stand alone."""
        return [entry.model.path for entry in self._entries]

    @property
    def device_description(self) -> str | None:
        """What the compiled model runs on, as the runtime found it when loading the first
        compiled signature ("CUDA device 0: NVIDIA H200 (sm_90)"); None before the first
        compile."""
        entries = self._entries
        return entries[0].model.device_description if entries else None

    def report(self) -> str:
        """Per compiled signature: its compiled partitions and eager groups, the ops that
        fell back to PyTorch with their source lines, the fraction of FLOPs compiled."""
        return partition.report(self)

    def _match(self, args: tuple, kwargs: dict):
        """(entry, leaves) of the first compiled signature the call fits, else None."""
        for entry in self._entries:  # a snapshot is enough: entries are only appended
            flat, spec = _flatten(args, kwargs, entry.in_spec)
            if entry.mismatch(flat, spec) is None:
                return entry, flat
        return None

    def _check_weights(self) -> None:
        """Refuses a call after a weight was changed in place since it was compiled: the
        library reads some weights from the module's own memory (zero-copy) and holds
        derived copies of others (folded, packed), so it would compute with a mix."""
        name = self._fast.changed_weight()
        if name is not None:
            raise runtime_error(
                f"weight '{name}' of '{self._name}' was changed in place after it was "
                f"compiled; a CompiledModule computes with the weights it was compiled "
                f"from: call thunder.compile on the model again for the new weights",
                "THUNDER_ERROR_INVALID_ARGUMENT")

    #: A call: the fast path (FastPath.cpp: a signature seen before, found by its
    #: tensors' metadata), else _call.
    __call__ = _C.compiled_module_call

    def _call(self, args: tuple, kwargs: dict):
        """A call the fast path missed: a new signature, values it does not take, out=
        tensors, or a weight changed in place."""
        self._check_weights()
        out = kwargs.pop("out", None) if self._out_kw and "out" in kwargs else None
        fast = self._fast.key(args, kwargs)
        if fast is not None:
            call = self._fast.get(fast[1])
            if call is not None:
                return _run_fast(call, fast[0], out)
        match = self._match(args, kwargs)
        if match is None:
            with self._lock:
                match = self._match(args, kwargs)  # compiled by another thread meanwhile?
                if match is None:
                    match = self._no_match(args, kwargs)
        entry, flat = match
        # (A partitioned program, FallbackEntry, has no fast path: it runs step by step.)
        if fast is not None and getattr(entry, "device_type", None) == "cpu":
            call = self._remember(entry, flat, fast)
            if call is not None:
                return _run_fast(call, fast[0], out)
        return entry.run(flat, out)

    def _remember(self, entry: _Entry, flat: list, fast: tuple):
        """The fast path for this call's signature, now that the general path matched it
        to `entry`; None when the call is not one the fast path can repeat."""
        values, key = fast
        order: list[int] = []
        for position in entry.tensor_positions:  # each runtime input: which call value
            leaf = flat[position]  # (one tensor passed twice maps to both its places)
            index = next((i for i, v in enumerate(values) if v is leaf and i not in order),
                         None)
            if index is None:
                return None
            order.append(index)
        if len(self._fast) >= FAST_PATH_LIMIT:
            self._fast.clear()
        try:
            call = _fast_call(entry, order, [values[i] for i in order])
        except _C.RuntimeError:
            return None  # the runtime refuses these inputs: the general path says why
        self._fast.add(key, call)
        return call

    def _no_match(self, args: tuple, kwargs: dict):
        """A call that fits no compiled signature: compiled, or (without recompiling)
        handed to the runtime to say which input does not fit."""
        if self._entries and not self._recompile:
            entry = self._entries[0]
            flat, spec = _flatten(args, kwargs, entry.in_spec)
            kind, reason = entry.mismatch(flat, spec)
            if kind == "tensor":
                return entry, flat  # the runtime refuses it, naming the input
            raise runtime_error(f"model '{self._name}' was compiled for "
                                f"{entry.record.signature}: {reason} (compile with "
                                f"recompile=True to compile other signatures)")
        if self._model is None:
            raise runtime_error(
                f"model '{self._name}' was compiled with keep_module=False, which released "
                f"the module after its first signature; this call needs another "
                f"({_call_text(_flatten(args, kwargs)[1])})")
        entry = self._compile(args, kwargs)
        flat, spec = _flatten(args, kwargs, entry.in_spec)
        problem = entry.mismatch(flat, spec)
        if problem is not None:  # torch.export and the call disagree: said plainly
            raise UnsupportedModelError(f"the model compiled for this call does not accept "
                                        f"it: {problem[1]}")
        return entry, flat

    def __getattr__(self, name: str):
        # Attributes of the model (config, ...), as the model would answer them.
        if name.startswith("_") or self._model is None:
            raise AttributeError(name)
        return getattr(self._model, name)

    def __repr__(self) -> str:
        signatures = "; ".join(record.signature for record in self.compiles) or "none yet"
        device = self.device_description
        return (f"<thunder.CompiledModule '{self._name}' for {self._target}, compiled: "
                f"{signatures}" + (f", on {device}" if device else "") + ">")

    # -- compiling -----------------------------------------------------------------------

    def _compile_now(self, args: tuple, kwargs: dict) -> None:
        with self._lock:
            self._compile(args, kwargs)

    def _dynamic_spec(self, args: tuple, kwargs: dict, flat: list, spec) -> tuple[Any, Any]:
        """The dynamic_shapes to export with, and a fallback to retry with when torch.export
        refuses the first (None: no retry)."""
        if self._dynamic_shapes is not None:
            return self._dynamic_shapes, None
        if self._dynamic is False or isinstance(self._model, ExportedProgram):
            return None, None
        if self._target == "tpu" and self._dynamic is None:
            return None, None  # XLA compiles for shapes: the tpu target is static by default
        tensors = [value for value in flat if isinstance(value, torch.Tensor)]
        marked: dict[int, set[int]] = {}  # id(tensor) -> dims
        if self._dynamic is True:
            for tensor in tensors:
                marked[id(tensor)] = {d for d, size in enumerate(tensor.shape) if size >= 2}
        else:
            # Dim 0 is the batch, and a dim whose size changed since an earlier compile of
            # the same structure is dynamic from now on (torch.compile's automatic dynamic).
            for tensor in tensors:
                if tensor.dim() >= 1 and tensor.shape[0] >= 2:
                    marked.setdefault(id(tensor), set()).add(0)
            shapes = [list(value.shape) for value in flat if isinstance(value, torch.Tensor)]
            for earlier in self._history.get(_structure(flat, spec), []):
                for tensor, now, before in zip(tensors, shapes, earlier):
                    for d, (a, b) in enumerate(zip(now, before)):
                        if a != b and a >= 2:
                            marked.setdefault(id(tensor), set()).add(d)
        if not any(marked.values()):
            return None, None
        if isinstance(self._model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
            return None, None  # the TorchScript converter takes no dynamic shapes

        named: dict[tuple[int, int], Any] = {}

        def spec_for(use_auto: bool):
            def one(value):
                if not isinstance(value, torch.Tensor) or not marked.get(id(value)):
                    return None
                dims = {}
                for d in sorted(marked[id(value)]):
                    if use_auto:
                        dims[d] = torch.export.Dim.AUTO
                    else:
                        # One named dim per (position, size): batch dims of equal size are
                        # taken to be one batch; min=1 makes a batch of 1 run too, which
                        # Dim.AUTO (0/1 specialization) would leave out.
                        group = (d, int(value.shape[d]))
                        if group not in named:
                            named[group] = torch.export.Dim(
                                f"thunder_d{d}_{value.shape[d]}", min=1)
                        dims[d] = named[group]
                return dims
            from torch.export.dynamic_shapes import _combine_args
            combined = _combine_args(self._model, args, kwargs)
            return {arg: pytree.tree_map(one, value) for arg, value in combined.items()}

        return spec_for(False), spec_for(True)

    def _export(self, args, kwargs, flat, spec) -> ExportedProgram:
        """The model captured for this call, not decomposed yet."""
        first, fallback = self._dynamic_spec(args, kwargs, flat, spec)
        try:
            return capture.export_program(self._model, args, kwargs, first)
        except Exception:
            if fallback is None:
                raise
        # The model ties or specializes a dim that was named dynamic (two batch dims that
        # must differ, a size it computes with): let torch.export decide per dim.
        return capture.export_program(self._model, args, kwargs, fallback)

    def _compile(self, args: tuple, kwargs: dict) -> _Entry:
        # Asked before the progress line's timer starts a thread of its own.
        apart_ok = apart.unavailable(self._target, self._model) is None
        progress = _Progress(f"compiling '{self._name}' for {self._target}", self._progress)
        outcome = "failed"
        try:
            try:
                entry = self._compile_with(args, kwargs, progress, apart_ok)
            except _C.ImportError as error:  # unsupported ops: partitioned (fallback=eager)
                entry = partition.fallback_entry(self, args, kwargs, error)
            outcome = "found in the cache" if entry.record.source == "cache" else "done"
        finally:
            progress.finish(outcome)
        if not self._keep_module:
            # The library holds what it needs (the module's tensors it reads in place are
            # kept alive by the loaded model): the rest is the caller's to free.
            self._model = None
        return entry

    def _program_weights(self, ep: ExportedProgram, module_only: bool) -> tuple[dict, dict]:
        """The program's weights by name (torch.export's FQNs), watched for the mutation
        check; for the cpu target, also what the library is offered to read in place of
        its own copies (zero-copy, docs/runtime.md). module_only: only the module's own
        tensors, which the caller of a compile apart has too (a constant torch.export
        made is then embedded), with each one's attribute path in the module (else {})."""
        weights = {name: value for name, value in (*ep.state_dict.items(),
                                                   *ep.constants.items())
                   if isinstance(value, torch.Tensor)}
        if not module_only:
            return weights, {}
        names = _module_names(self._model, weights)
        return {name: value for name, value in weights.items() if name in names}, names

    def _watch(self, weights: dict) -> None:
        """Remembers the weights a signature was compiled from, for the mutation check."""
        for name, tensor in weights.items():
            if id(tensor) in self._tracked:
                continue
            try:
                self._fast.watch(name, tensor)
            except RuntimeError:
                continue  # an inference tensor: it cannot be changed in place either
            self._tracked.add(id(tensor))

    def _compile_with(self, args: tuple, kwargs: dict, progress: _Progress,
                      apart_ok: bool) -> _Entry:
        """The library for this call, built or found in the cache (in a process of its
        own where that is possible, thunder/apart.py), loaded with the module's tensors."""
        start = time.monotonic()
        # The runtime reads row-major memory: export with row-major examples, so that
        # torch.export does not trace layout-specific code (as_strided for a channels-last
        # input) that the compiled model would not be given.
        args, kwargs = pytree.tree_map(
            lambda v: v.contiguous() if isinstance(v, torch.Tensor) else v, (args, kwargs))
        flat, spec = _flatten(args, kwargs)
        for attempt in range(3):
            built, peak_mb = None, None
            if apart_ok:
                try:
                    built, peak_mb = apart.run(
                        lambda relay: self._build(args, kwargs, flat, spec, relay, True),
                        progress)
                except apart.RetryInProcess:
                    apart_ok = False
            if built is None:
                built = self._build(args, kwargs, flat, spec, progress, False)
            weights = built.tensors
            if weights is None:  # built apart: the same tensors, found in this process
                weights = _module_tensors(self._model, built.module_names)
                if weights is None:  # the module changed during the export: in process
                    apart_ok = False
                    continue
            mark = time.monotonic()
            try:
                model = runtime.Model(built.entry_dir,
                                      weights if self._target == "cpu" else {})
            except _C.RuntimeError as error:
                self._cache.discard(built.key)  # no entry that does not load stays behind
                if built.source != "cache" or attempt == 2:
                    raise
                warnings.warn(f"thunder: discarding the cache entry {built.entry_dir}, "
                              f"which does not load ({error}); compiling again", stacklevel=4)
                continue
            break
        built.seconds["load"] = time.monotonic() - mark
        self._watch(weights)
        if (built.in_place_key and built.key != built.in_place_key
                and model.reads_every_weight_in_place
                and self._cache.lookup(built.in_place_key) is None):
            # (Also for an entry found by its weights' key: one compiled before aliases.)
            self._cache.alias(built.in_place_key, built.key)
        built.seconds["total"] = time.monotonic() - start
        record = CompileRecord(signature=built.signature, key=built.key,
                               path=str(built.entry_dir), source=built.source,
                               seconds=built.seconds, process_peak_mb=peak_mb)
        entry = _Entry(built.face, model, record)
        self._entries.append(entry)
        self.compiles.append(record)
        self._history.setdefault(_structure(flat, spec), []).append(
            [list(value.shape) for value in flat if isinstance(value, torch.Tensor)])
        if len(self._entries) == RECOMPILE_WARNING and not self._warned:
            self._warned = True
            warnings.warn(
                f"thunder: '{self._name}' has been compiled for {RECOMPILE_WARNING} input "
                f"signatures; if sizes vary, compile with dynamic=True or dynamic_shapes=...",
                stacklevel=4)
        return entry

    def _build(self, args: tuple, kwargs: dict, flat: list, spec, progress,
               apart_: bool) -> "_Built":
        """Exports the call, then finds its library in the cache or builds and publishes
        it. apart_: this runs in a process of its own, whose caller loads the library."""
        seconds: dict[str, float] = {}
        start = time.monotonic()
        ep = self._export(args, kwargs, flat, spec)
        seconds["export"] = time.monotonic() - start
        progress.phase("exported", seconds["export"])

        # The key is made from the program before decomposition, which a cache hit then
        # skips (it is most of torch.export's time).
        mark = time.monotonic()
        face = _Face.of(ep)
        ep_json = capture.program_json(ep)  # imported as it is when not decomposed
        views, _ = capture.weight_views(ep, to_host=self._target != "cpu")
        signature = _signature_text(ep)
        options = {"cpu": self._cpu, "external_weights": self._external_weights,
                   "opt_level": self._opt_level, "name": self._name}
        if self._target == "cpu":
            options["pack_weights"] = self._pack_weights
        if not self._fuse:
            options["fuse"] = False
        if self._target == "cuda":
            options["cuda_arch"] = self._arch
        elif self._arch:
            options["arch"] = self._arch
        if self._cpu == "native":
            options["host_cpu"] = host_cpu_digest()
        if custom_ops.digest():
            options["custom_kernels"] = custom_ops.digest()  # sources are not in the program
        # The module's tensors the library reads in place are not embedded in it (it is
        # loaded with them, always): which ones is part of what it was compiled for.
        weights, names = self._program_weights(ep, module_only=apart_)
        offered = weights if self._target == "cpu" and not self._external_weights else {}
        provided = runtime.offered_weights(offered) if offered else {}
        if provided:
            options["provided_weights"] = provided_digest(provided)
        parts = {"compiler": _compiler_fingerprint(), "program": program_digest(ep_json),
                 "signature": [str(spec), signature, str(ep.call_spec.out_spec)],
                 "target": self._target, "options": options}
        # A library that reads every weight it uses from the module's tensors, in place,
        # holds no value of any: it serves any values of those tensors (their names,
        # dtypes and shapes are in the program and in provided_weights), so such an
        # entry is also found under a key without the weights' bytes, which a later
        # compile looks up first and need not hash them for (GPT-2: 500 MB, 1.8 s).
        in_place_key = cache_key({**parts, "weights": "read in place"}) if provided else None
        # Otherwise the weights are hashed (with external weights too: the weights file
        # is written by the compile, after constant folding, at offsets the library has
        # baked in), so an entry is only valid for the weights it was compiled from; a
        # build is always published under this key (the in-place key only ever names
        # an entry through an alias).
        key = in_place_key
        entry_dir = self._cache.lookup(in_place_key) if in_place_key else None
        if entry_dir is None:
            key = cache_key({**parts, "weights": weights_digest(views)})
            entry_dir = self._cache.lookup(key)
        seconds["key"] = time.monotonic() - mark

        source = "cache"
        if entry_dir is None:
            def build(directory) -> dict:
                module, _ = import_captured(ep, self._model, to_host=self._target != "cpu",
                                            seconds=seconds, ep_json=ep_json)
                if seconds["decompose"] >= 0.05:
                    progress.phase("decomposed", seconds["decompose"])
                progress.phase("imported", seconds["import"])
                result = module.compile(str(directory), target=self._target,
                                        name=self._name, cpu=self._cpu,
                                        external_weights=self._external_weights,
                                        opt_level=self._opt_level,
                                        arch=self._arch, fuse=self._fuse,
                                        kernel_cache=str(self._cache.kernels),
                                        pack_weights=self._pack_weights,
                                        provided_weights=provided)
                seconds["graph"] = result["seconds"]["graph"]
                seconds["build"] = result["seconds"]["build"]
                progress.phase("built", seconds["graph"] + seconds["build"])
                return {"signature": signature, "spec": str(spec), "name": self._name,
                        "target": self._target, "options": options,
                        "compiler": _compiler_fingerprint(), "created": time.time(),
                        "library": os.path.basename(result["library"]),
                        "kernels": {"units": result.get("units", 0),
                                    "cached": result.get("units_cached", 0)},
                        "seconds": dict(seconds)}

            entry_dir, built = self._cache.publish(
                key, build, on_wait=lambda: progress.add("waiting for another process"))
            source = "compiled" if built else "cache"
        return _Built(entry_dir=str(entry_dir), key=key, in_place_key=in_place_key,
                      source=source, signature=signature, seconds=seconds, face=face,
                      tensors=None if apart_ else weights,
                      module_names={name: (fqn, weights[name].data_ptr(),
                                           tuple(weights[name].shape), str(weights[name].dtype))
                                    for name, fqn in names.items()})


def compile(model: Any, example_inputs: Any = None, target: str = "cpu", *,  # noqa: A001
            dynamic: bool | None = None, dynamic_shapes: Any = None,
            example_kwargs: dict | None = None, cache_dir: str | os.PathLike | None = None,
            cpu: str = "native", external_weights: bool = False, progress: bool = True,
            name: str | None = None, recompile: bool | None = None,
            opt_level: int = 2, cuda_arch: str = "sm_80,sm_90a",
            fuse: bool = True, arch: str = "", keep_module: bool = True,
            fallback: str = "eager", pack_weights: bool = False) -> CompiledModule:
    """Compiles `model` ahead of time and returns a callable that behaves like it: the same
    outputs in the same pytree structure, computed by the compiled library.

        cm = thunder.compile(model)            # compiles on the first call
        logits = cm(input_ids)

        cm = thunder.compile(model, (x,))      # compiles now, for inputs like x

    model: an nn.Module (in eval mode), an FX GraphModule, a TorchScript module or a
    torch.export.ExportedProgram (compiled at once with its own shapes).

    example_inputs / example_kwargs: compile now for inputs like these. Calls must then fit
    that compile (anything else raises thunder.RuntimeError naming the input) unless
    recompile=True. Without them the model is compiled on the first call and again for
    each new input signature (recompile defaults to True).

    Which dims are dynamic (one compile serves every size in the dim's range):
      dynamic=None (default): dim 0 of every tensor input (the batch) when its size is at
        least 2, as one torch.export.Dim(min=1) per distinct size, so batch 1 runs too;
        plus every dim whose size differs from an earlier compile of the same structure.
        Where the model does not allow that, torch.export's Dim.AUTO decides per dim.
      dynamic=True: every dim of size >= 2 is Dim.AUTO (dynamic unless the model
        specializes it; sizes 0 and 1 are always static).
      dynamic=False: all static; each new shape compiles again (when recompiling).
      dynamic_shapes=...: given to torch.export as it is (then `dynamic` is not used).
    Python numbers, bools and None among the inputs are baked in by torch.export: a call
    with another value is another signature.

    Where it compiles: for the cpu target, torch.export and the compiler run in a fork of
    this process (thunder/apart.py), which publishes the library into the cache; this
    process only loads it, so it holds none of what a compile leaves resident (the modules
    torch.export imports, the compiler's code: 40-70 MiB, docs/performance.md). In this
    process instead: a program with unsupported ops (partitioned), the cuda, hip and tpu
    targets, a model that is not an nn.Module (an ExportedProgram, TorchScript), CUDA
    already initialized, other systems than Linux, a call from a thread other than the
    main one or while other Python threads run, and THUNDER_COMPILE_IN_PROCESS=1.
    CompileRecord.process_peak_mb is what the forked compile added at its peak.

    cache_dir: the on-disk cache (default $THUNDER_CACHE_DIR, else ~/.cache/thunder). A
    signature compiled before (same program, input signature, weights, target, options and
    compiler) is loaded from it without compiling; the lookup still runs torch.export.
    cpu: -march of the generated code. external_weights: the weights go to NAME.safetensors
    beside the library instead of into it. progress: compiles longer than a second print a
    line to stderr (THUNDER_QUIET=1 silences it too). name: the artifact's name (default:
    the model's class name). fuse=False: one kernel per op (the unfused baseline, for
    comparisons); see thunder.report.fusion_report for what fusion did.

    target="cuda": the library holds GPU code for every architecture in cuda_arch
    (sm_80 = A100, sm_90a = H100/H200); the model (on the CPU or the GPU) is called with
    CUDA tensors and runs on torch.cuda.current_stream(). target="hip": AMD GPUs, code
    for every architecture in arch (default gfx90a,gfx942,gfx950), called with the "cuda"
    tensors of PyTorch's ROCm builds (docs/hip.md). arch, when given, is the device
    architectures for any GPU target (cuda_arch is the CUDA target's older name for it).

    target="tpu": the program in StableHLO, compiled by XLA when the library loads and run
    through the PJRT plugin named by $THUNDER_PJRT_PLUGIN (default: libtpu's), with host
    tensors in and out. Static shapes: dynamic defaults to False (docs/tpu.md).

    Weights (docs/user-guide.md): a cpu model reads the module's parameters and buffers
    in place (zero-copy) wherever the compiled code uses them unchanged, so the process
    holds them once; the CompiledModule keeps those tensors alive. A weight changed in
    place after compiling (an optimizer step, load_state_dict, `with torch.no_grad():
    w.mul_(2)`) makes the next call raise thunder.RuntimeError: compile again.
    keep_module=False: the CompiledModule lets go of the module after its first compile
    (it can then not compile other signatures), keeping only the tensors the library
    reads; drop your own reference too and the weights it does not read are freed.
    pack_weights=True (cpu): fp32 weights that only feed matrix products (and a token
    table tied to the LM head) are stored in the GEMM's packed layout, as thunder-compile
    does by default: faster GEMMs at 8 to ~256 rows (docs/performance.md), at the cost of
    a packed copy beside the module's tensors. The default (False) reads them in place:
    no second copy.

    Calls: `cm(x, out=y)` writes the outputs into the caller's tensors (one tensor, or a
    sequence in the model's output order, contiguous, with the outputs' dtypes and
    shapes) unless the model's forward takes an argument named `out` itself. A call
    whose arguments are contiguous CPU tensors (positional or keyword) takes a fast path
    after its first call with those dtypes and shapes: no flattening, no Python checks,
    one runtime call that validates in C++ with the GIL released.

    fallback="eager" (default): a program with ops Thunder does not support is split
    around them (python/thunder/partition.py): the supported parts are compiled
    partitions, the others run in PyTorch between them; cm.report() lists the partitions,
    the ops that fell back with their source lines and the fraction of FLOPs compiled.
    fallback="error": such a program raises thunder.ImportError with every unsupported op.

    Raises thunder.UnsupportedModelError (capture), thunder.ImportError (unsupported ops,
    all at once, with source lines, with fallback="error") and thunder.CompileError (the
    toolchain's output).
    """
    if dynamic is not None and dynamic_shapes is not None:
        raise ValueError("give dynamic or dynamic_shapes, not both")
    if example_inputs is not None and not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    eager = example_inputs is not None or example_kwargs is not None or \
        isinstance(model, ExportedProgram)
    if recompile is None:
        recompile = not eager
    compiled = CompiledModule(model, target=target, dynamic=dynamic,
                              dynamic_shapes=dynamic_shapes, cache_dir=cache_dir, cpu=cpu,
                              external_weights=external_weights, progress=progress, name=name,
                              recompile=recompile, opt_level=opt_level,
                              cuda_arch=cuda_arch, fuse=fuse, arch=arch,
                              keep_module=keep_module, fallback=fallback,
                              pack_weights=pack_weights)
    if eager:
        args = tuple(example_inputs or ())
        kwargs = dict(example_kwargs or {})
        if isinstance(model, ExportedProgram) and not args and not kwargs and \
                model.example_inputs is not None:
            args, kwargs = model.example_inputs
        compiled._compile_now(args, kwargs)
    return compiled
