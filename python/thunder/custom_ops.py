"""thunder.register_kernel: kernels for the user's own operators (torch.library custom ops).

    @torch.library.custom_op("mylib::rms_norm", mutates_args=())
    def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor: ...

    thunder.register_kernel("mylib::rms_norm", cpu=CPP_SOURCE)   # or cpu=("lib.so", "sym")
    cm = thunder.compile(model)   # mylib.rms_norm.default runs the kernel, compiled in

torch.export keeps a custom op whole (`mylib.rms_norm.default`); with a registered kernel
the importer makes it a `thunder.custom_call` of the kernel's C symbol, which the
backends build into the artifact and call through the C ABI of thunder-c/custom_op.h.
A custom op without a kernel is an unsupported op (it falls back to PyTorch, or is
reported with fallback="error").
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from typing import Any, Callable

__all__ = ["CustomKernel", "import_list", "op_name", "register_kernel", "registered",
           "registered_names", "unregister_kernel"]


@dataclasses.dataclass(frozen=True)
class CustomKernel:
    """A registered kernel."""

    op: str                  #: "mylib.rms_norm.default"
    symbol: str              #: the C function
    cpu_source: str = ""     #: C++ source defining `symbol`
    cpu_library: str = ""    #: or a shared library defining it
    cuda_source: str = ""    #: CUDA source defining `symbol`


_REGISTRY: dict[str, CustomKernel] = {}


def op_name(op: Any) -> str:
    """"mylib.rms_norm.default" for "mylib::rms_norm", "mylib::rms_norm.out", an
    OpOverload, an OpOverloadPacket or a torch.library.custom_op object."""
    if not isinstance(op, str):
        name = getattr(op, "_qualname", None)  # a CustomOpDef
        if name is None:
            import torch
            if isinstance(op, torch._ops.OpOverloadPacket):
                op = op.default
            name = str(op) if isinstance(op, torch._ops.OpOverload) else None
        if name is None:
            raise TypeError(f"cannot name the op {op!r}: pass 'namespace::name'")
        op = name
    if "::" not in op:
        return op
    namespace, rest = op.split("::", 1)
    name, _, overload = rest.partition(".")
    return f"{namespace}.{name}.{overload or 'default'}"


def _default_symbol(name: str) -> str:
    if name.endswith(".default"):
        name = name[:-len(".default")]
    symbol = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return symbol if symbol and not symbol[0].isdigit() else f"k_{symbol}"


def register_kernel(op: Any, cpu: str | tuple[str, str] | None = None, *,
                    cuda: str | None = None, shape: Callable | None = None,
                    symbol: str | None = None) -> CustomKernel:
    """Registers a kernel for the custom op `op` ("mylib::op", or the op object).

    cpu: C++ source defining ``extern "C" int SYMBOL(THUNDER_CUSTOM_KERNEL_PARAMS)``
      (include "thunder-c/custom_op.h"; the ABI is documented there), compiled into the
      artifact; or (path of a shared library, symbol), loaded by the artifact when the op
      first runs.
    cuda: CUDA source defining SYMBOL the same way (device pointers, launched on the
      stream it is given), compiled into the cuda target's artifact.
    shape: the op's result shape rule, a function like a meta kernel (it takes the op's
      arguments as fake tensors and returns empty tensors of the results' shapes and
      dtypes). It is registered as the op's fake kernel when the op has none; otherwise
      the op's own is used. torch.export records the shapes it gives.
    symbol: the C function's name (default: the op's name, "mylib_op"; with cpu=(library,
      symbol), that symbol).

    Registering an op again replaces its kernel. Returns the registration.
    """
    name = op_name(op)
    library = ""
    source = ""
    if isinstance(cpu, tuple):
        if len(cpu) != 2:
            raise ValueError("cpu=(shared library path, symbol) takes two items")
        library, library_symbol = os.path.abspath(os.fspath(cpu[0])), cpu[1]
        if symbol is not None and symbol != library_symbol:
            raise ValueError(f"symbol={symbol!r} differs from the library's symbol "
                             f"{library_symbol!r}")
        symbol = library_symbol
        if not os.path.exists(library):
            raise FileNotFoundError(f"the kernel library {library} does not exist")
    elif cpu is not None:
        source = str(cpu)
    if not source and not library and not cuda:
        raise ValueError(f"register_kernel({name!r}) needs cpu= or cuda=")
    symbol = symbol or _default_symbol(name)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", symbol):
        raise ValueError(f"symbol {symbol!r} is not a C identifier")
    if shape is not None:
        _register_shape(op if not isinstance(op, str) else name, name, shape)
    kernel = CustomKernel(name, symbol, source, library, cuda or "")
    _REGISTRY[name] = kernel
    return kernel


def _register_shape(op: Any, name: str, shape: Callable) -> None:
    import torch

    namespace, opname, _ = name.split(".", 2)
    qualname = f"{namespace}::{opname}"
    try:
        torch.library.register_fake(qualname, shape)
    except RuntimeError:
        pass  # the op has a fake kernel already: torch.export uses that one


def unregister_kernel(op: Any) -> None:
    """Removes the kernel of `op` (its calls fall back to PyTorch again)."""
    _REGISTRY.pop(op_name(op), None)


def registered() -> dict[str, CustomKernel]:
    """Op name -> registered kernel."""
    return dict(_REGISTRY)


def registered_names() -> set[str]:
    """The op names ("mylib.op.default") that have a registered kernel."""
    return set(_REGISTRY)


def import_list() -> list[dict]:
    """The registrations as the importer takes them (thunder._C.import_program's
    custom_kernels)."""
    return [dataclasses.asdict(kernel) for kernel in _REGISTRY.values()]


def digest() -> str:
    """A hash of every registration (sources, libraries with their modification time),
    for the compile cache's key; "" when none is registered."""
    if not _REGISTRY:
        return ""
    h = hashlib.sha256()
    for name in sorted(_REGISTRY):
        kernel = _REGISTRY[name]
        h.update(repr(dataclasses.astuple(kernel)).encode())
        if kernel.cpu_library and os.path.exists(kernel.cpu_library):
            stat = os.stat(kernel.cpu_library)
            h.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()
