"""Running compiled models on torch tensors: thunder.load and what thunder.compile runs.

A compiled model (libNAME.so) is loaded by Thunder's runtime (libThunderRuntime, the same C
API a C++ application uses) through thunder._C.LoadedModel. Tensors cross without copies:
the runtime reads the inputs' memory (a contiguous copy is made only for an input that is
not contiguous) and writes into outputs allocated here (OutputPool). The runtime
validates every input against the model's descriptors; its messages name the input.
"""
from __future__ import annotations

import math
import os
import pathlib
from typing import Any, Sequence

import torch

from . import _C
from .capture import _DTYPE_NAMES
from .errors import runtime_error

__all__ = ["Model", "find_library", "load"]

_TORCH_DTYPES = {name: dtype for dtype, name in _DTYPE_NAMES.items()}


def find_library(path: str | os.PathLike) -> str:
    """The libNAME.so that `path` names: the file itself, or the one library in a
    directory (thunder-compile's -o directory, a thunder.compile cache entry)."""
    path = pathlib.Path(path)
    if path.is_dir():
        libraries = sorted(path.glob("lib*.so"))
        if len(libraries) != 1:
            found = ", ".join(p.name for p in libraries) or "none"
            raise runtime_error(
                f"{path} must hold exactly one compiled model (lib<name>.so); found {found}",
                "THUNDER_ERROR_LOAD")
        return str(libraries[0].resolve())
    # The runtime takes a name without '/' relative to the working directory; an absolute
    # path also keeps messages unambiguous.
    return str(path.resolve())


def _torch_device_type(device: str) -> str:
    """The torch device type of a model's device: PyTorch's ROCm builds call AMD GPUs
    "cuda" too, so a HIP model takes and returns "cuda" tensors."""
    return "cuda" if device in ("cuda", "hip") else device


def _input_views(native: _C.LoadedModel, tensors: Sequence[Any]) -> tuple[list, list]:
    """(data_ptr, dtype name, shape) of each input, and the tensors those pointers point
    into (contiguous copies where needed), which must stay alive during the run.

    Only what the runtime cannot see is checked here (Python objects that are not tensors,
    tensors on another device); dtype, rank and shape are the runtime's to validate.
    """
    descs = native.inputs
    views, keep_alive = [], []
    for i, tensor in enumerate(tensors):
        who = f"input {i} ('{descs[i].name}')" if i < len(descs) else f"input {i}"
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{who}: expected a torch.Tensor, got {type(tensor).__name__}")
        if tensor.device.type != _torch_device_type(native.device):
            raise runtime_error(f"{who} is on device '{tensor.device}', but model "
                                f"'{native.name}' runs on {native.device}")
        if tensor.is_conj() or tensor.is_neg():
            tensor = tensor.resolve_conj().resolve_neg()
        if not tensor.is_contiguous():
            tensor = tensor.contiguous()  # the only copy: the runtime reads row-major memory
        keep_alive.append(tensor)
        views.append((tensor.data_ptr(), _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype)),
                      tensor.shape))
    return views, keep_alive


def _device_of(native: _C.LoadedModel, tensors: Sequence[Any]) -> torch.device:
    """Where the outputs go: the CPU, or for a CUDA or HIP model the device of its first
    tensor input (the current CUDA device when it has none)."""
    if _torch_device_type(native.device) != "cuda":
        return torch.device("cpu")
    for tensor in tensors:
        if isinstance(tensor, torch.Tensor) and tensor.device.type == "cuda":
            return tensor.device
    return torch.device("cuda", torch.cuda.current_device())


def seed_from_torch(native: _C.LoadedModel) -> None:
    """Seeds a model that draws random numbers from PyTorch's default generator, one
    draw per call (as torch.compile's generated code does), so ``torch.manual_seed(s)``
    makes the calls that follow reproducible. The numbers are Thunder's generator's
    (Philox4x32-10, docs/dialect.md), not the ones eager PyTorch would draw."""
    native.set_seed(int(torch.randint(0, 2**63 - 1, (), dtype=torch.int64)))


#: How many strong references a storage has (private torch API; without it, or without
#: _storage_id, OutputPool allocates every output anew).
_storage_use_count = getattr(torch._C, "_storage_Use_Count", None)
_storage_id = getattr(torch._C, "_storage_id", None)


class OutputPool:
    """Where a model's large CPU outputs are allocated: the storage of each output from
    MIN_BYTES to MAX_BYTES is kept, in a tensor of the pool's own, and the next call
    writes into it again when the caller has let go of it (of the result, its views,
    numpy arrays and DLPack capsules of it, its storage object: each holds the storage)
    and it has not moved (`share_memory_()`, a queue of torch.multiprocessing, or a
    `resize_` that reallocated it); otherwise that call allocates a new one, which the
    pool keeps instead.

    Why: serving Llama's 16 MiB logits from a new allocation per call grew the process
    by the logits' size on each of its first ten calls (glibc put each one above the
    heap, not in the block the last call freed), 145 MiB above the loaded model before
    it settled, where eager stays at 37 (docs/performance.md, fourteenth session).
    Beyond MAX_BYTES (glibc's largest mmap threshold) glibc maps each allocation and
    unmaps it when freed, so there is nothing to gain and an idle model would hold it.

    At most one storage per output index is held: an idle model holds its last outputs'
    memory up to MAX_BYTES each, as the heap held it before. A kept storage serves the
    same dtype and inference mode (a tensor made in torch.inference_mode cannot back a
    normal one), for any shape it fits with at most twice the bytes needed (a dynamic
    dim that shrinks), the output then a tensor of its own on it (not a view). Safe
    under threads: a slot is taken out of the pool before it is checked, so two calls
    never share one."""

    #: Smaller outputs are allocated per call: glibc's bins serve them.
    MIN_BYTES = 1 << 20
    #: Larger outputs too: glibc maps and unmaps them (DEFAULT_MMAP_THRESHOLD_MAX).
    MAX_BYTES = 32 << 20

    def __init__(self) -> None:
        #: Per output index: the pool's tensor on the kept storage, and the storage's
        #: data pointer when it was kept.
        self._slots: dict[int, tuple[torch.Tensor, int]] = {}

    @classmethod
    def pools(cls, nbytes: int) -> bool:
        """Whether an output of `nbytes` comes from the pool."""
        return (cls.MIN_BYTES <= nbytes <= cls.MAX_BYTES and _storage_use_count is not None
                and _storage_id is not None)

    def empty(self, index: int, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        """A contiguous CPU tensor for output `index`: on the kept storage, or new."""
        shape = tuple(shape)
        count = math.prod(shape)
        if not self.pools(count * dtype.itemsize):
            return torch.empty(shape, dtype=dtype, device="cpu")
        return self.take((index, shape, count, dtype))

    def take(self, spec: tuple) -> torch.Tensor:
        """Output `index` of `shape` (a tuple), `count` elements and `dtype`, a size that
        pools() takes (spec, one argument: the form thunder._C.FastCall calls, with the
        size checked once when the fast path was prepared): on the kept storage, or
        new."""
        index, shape, count, dtype = spec
        slot = self._slots.pop(index, None)
        if slot is not None and self._free(slot, count, dtype):
            kept = slot[0]
            output = torch.empty(0, dtype=dtype, device="cpu").set_(kept)
            if output.shape != shape:
                output.resize_(shape)  # within the storage: nothing moves
        else:
            output = torch.empty(shape, dtype=dtype, device="cpu")
            slot = (torch.empty(0, dtype=dtype, device="cpu").set_(output), output.data_ptr())
        self._slots[index] = slot
        return output

    @staticmethod
    def _free(slot: tuple[torch.Tensor, int], count: int, dtype: torch.dtype) -> bool:
        """Whether the kept storage may back a new output of `count` elements."""
        kept, pointer = slot
        return (kept.dtype == dtype and count <= kept.numel() <= 2 * count
                and kept.is_inference() == torch.is_inference_mode_enabled()
                and _storage_use_count(_storage_id(kept)) == 1
                and kept.data_ptr() == pointer and not kept.is_shared())


def run(native: _C.LoadedModel, tensors: Sequence[Any],
        pool: OutputPool | None = None) -> list[torch.Tensor]:
    """Runs `native` on `tensors` (in its input order) and returns its outputs, allocated
    here (a CPU model's large ones from `pool` when given). Raises thunder.RuntimeError
    with the runtime's message for inputs that do not fit the model.

    A CUDA model takes and returns CUDA tensors and runs on the current stream of their
    device (torch.cuda.current_stream()), like a PyTorch op: the outputs are ready once
    that stream is."""
    views, keep_alive = _input_views(native, tensors)
    shapes = native.output_shapes(views)
    device = _device_of(native, tensors)
    if native.uses_random:
        seed_from_torch(native)
    if pool is not None and device.type == "cpu":
        outputs = [pool.empty(i, shape, _TORCH_DTYPES[desc.dtype])
                   for i, (shape, desc) in enumerate(zip(shapes, native.outputs))]
    else:
        outputs = [torch.empty(shape, dtype=_TORCH_DTYPES[desc.dtype], device=device)
                   for shape, desc in zip(shapes, native.outputs)]
    stream = 0
    if device.type == "cuda":
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream(device).cuda_stream
            native.run(views, [(out.data_ptr(), desc.dtype, shape)
                               for out, desc, shape in zip(outputs, native.outputs, shapes)],
                       stream)
    else:
        native.run(views, [(out.data_ptr(), desc.dtype, shape)
                           for out, desc, shape in zip(outputs, native.outputs, shapes)])
    del keep_alive  # alive until here: the run read them (a device run is stream-ordered:
    # PyTorch's caching allocator reuses their memory only for work on the same stream)
    return outputs


def offerable(tensor) -> bool:
    """Whether Model offers `tensor` to a library to read in place (zero-copy): a dense,
    contiguous, non-empty CPU tensor of a dtype the runtime knows."""
    return isinstance(tensor, torch.Tensor) and tensor.device.type == "cpu" and \
        tensor.numel() > 0 and \
        tensor.layout == torch.strided and tensor.is_contiguous() and \
        tensor.dtype in _DTYPE_NAMES and not tensor.is_conj() and not tensor.is_neg()


def offered_weights(weights: dict) -> dict:
    """{name: (dtype name, shape)} of the weights Model offers: what a library compiled
    for them need not embed (Module.compile's provided_weights)."""
    return {name: (_DTYPE_NAMES[tensor.dtype], list(tensor.shape))
            for name, tensor in weights.items() if offerable(tensor)}


class Model:
    """A compiled model loaded by the runtime: ``model(*tensors)`` runs it.

    Returns a tuple of tensors, or the tensor itself when the model has one output. Inputs
    are tensors on the model's device (CPU, or CUDA for a model compiled with
    target="cuda", run on torch.cuda.current_stream()) in the model's input order
    (``model.inputs``); the runtime checks their dtypes and shapes and raises
    thunder.RuntimeError naming the input that does not fit.
    """

    def __init__(self, path: str | os.PathLike, weights: dict | None = None,
                 partition: int = -1):
        offered, tensors = {}, {}
        for name, tensor in (weights or {}).items():
            if offerable(tensor):
                tensor = tensor.detach()
                offered[name] = (tensor.data_ptr(), _DTYPE_NAMES[tensor.dtype],
                                 list(tensor.shape))
                tensors[name] = tensor
        # partition >= 0: that partition of a library holding several (the fallback
        # partitions of thunder.compile, thunder-c/runtime.h's thunder_model_load_partition).
        self._native = _C.LoadedModel(find_library(path), offered, partition)
        # The tensors whose memory the model reads: alive as long as the model. Only
        # those: an offered weight the library does not read (a filter it folded a batch
        # norm into) is the caller's to keep or free (keep_module=False).
        self._weights = [tensors[name] for name in self._native.provided_weight_names]
        self._outputs = OutputPool()

    @property
    def output_pool(self) -> OutputPool:
        """Where its large CPU outputs come from, call after call (OutputPool)."""
        return self._outputs

    @property
    def provided_weights(self) -> int:
        """How many weights the model reads from the tensors given at load (zero-copy)
        instead of its own copy."""
        return self._native.provided_weights

    @property
    def reads_every_weight_in_place(self) -> bool:
        """Whether every weight the library uses is one of the tensors given at load, read
        in place: the library then holds no value of any (embedded, derived or packed), so
        it serves any values of those tensors."""
        total = self._native.num_weights
        return total >= 0 and self._native.provided_weights == total

    @property
    def native(self) -> _C.LoadedModel:
        """The runtime's model (thunder._C.LoadedModel)."""
        return self._native

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def target(self) -> str:
        return self._native.target

    @property
    def path(self) -> str:
        """The library's path."""
        return self._native.path

    @property
    def device(self) -> str:
        """The runtime's device of its tensors: "cpu", "cuda" or "hip" (for a library with
        code for both GPU vendors, the one the runtime chose)."""
        return self._native.device

    @property
    def device_description(self) -> str:
        """What it runs on, as found at load: the device and its architecture ("CUDA device
        0: NVIDIA H200 (sm_90)", "cpu: ... (x86_64), code for x86-64-v3")."""
        return self._native.device_description

    @property
    def device_arch(self) -> str:
        """The architecture alone: "sm_90", "gfx942", or a CPU model's -march."""
        return self._native.device_arch

    @property
    def inputs(self) -> list:
        """The inputs' descriptors (thunder._C.TensorDesc: name, dtype, shape with -1 for a
        dynamic dim, min, max, symbols)."""
        return self._native.inputs

    @property
    def outputs(self) -> list:
        """The outputs' descriptors."""
        return self._native.outputs

    def run(self, *tensors: torch.Tensor) -> list[torch.Tensor]:
        """Every output, as a list."""
        return run(self._native, tensors, self._outputs)

    def __call__(self, *tensors: torch.Tensor):
        outputs = run(self._native, tensors, self._outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def __repr__(self) -> str:
        inputs = ", ".join(str(d) for d in self.inputs)
        outputs = ", ".join(str(d) for d in self.outputs)
        return (f"<thunder.Model '{self.name}' ({inputs}) -> ({outputs}) from {self.path}, "
                f"on {self.device_description}>")


def load(path: str | os.PathLike, weights: dict | None = None) -> Model:
    """Loads a compiled model without compiling anything: a libNAME.so, or a directory
    holding one (what ``thunder-compile -o DIR`` writes; with --external-weights the
    NAME.safetensors beside it is memory-mapped). weights: tensors by name (a module's
    state_dict()) that the library reads in place of its own copies, zero-copy, kept
    alive by the model; a library from thunder.compile's cache (CompiledModule.artifacts)
    holds no copy of its module's tensors and needs them. Raises thunder.RuntimeError
    (status THUNDER_ERROR_LOAD, ...) with the runtime's message.

        model = thunder.load("out/")
        logits = model(input_ids)
    """
    return Model(path, weights)
