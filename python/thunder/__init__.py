"""Thunder: an ahead-of-time deep-learning compiler on MLIR.

    import thunder, torch
    cm = thunder.compile(model)                # a callable that behaves like model
    y = cm(x)                                  # compiled on the first call, cached on disk
    m = thunder.load("out/")                   # a library thunder-compile or compile built

    program = thunder.export(model, (x,))      # torch.export + the C++ importer
    print(program)                             # the thunder dialect, weights elided
    print(thunder.examine(model, x))           # which ops are supported, where they are
    print(cm.report())                         # compiled partitions, what fell back
    thunder.register_kernel("mylib::op", cpu=CPP_SOURCE)   # a kernel for a custom op

thunder.export takes an nn.Module, an FX GraphModule, a TorchScript module or a
torch.export.ExportedProgram; thunder.load_pt2 reads a .pt2 archive written by
torch.export.save. Both go through the same C++ importer (thunder._C) that
thunder-compile runs.

Errors: thunder.UnsupportedModelError when a model cannot be captured;
thunder.ImportError (thunder._C.ImportError, a ValueError) when a program cannot be
imported, with every problem and its source line; thunder.CompileError when a pipeline or
the toolchain fails; thunder.RuntimeError (a RuntimeError) when the runtime refuses a call,
naming the input that does not fit.
"""
from __future__ import annotations

__version__ = "0.1.0"

import os as _os

# Compiled CPU models run OpenMP loops between OpenBLAS GEMMs, which have
# threads of their own. OpenMP workers that spin while idle (libgomp's default)
# starve OpenBLAS's threads: on a 2-core machine a GPT-2-sized model ran 2.5x
# slower with spinning than with sleeping workers. The models' libgomp reads
# this when the first model is loaded; an explicit setting is kept.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# But a worker that goes to sleep the moment a loop ends is woken (a futex
# call, a reschedule) for the next loop, tens of microseconds later: a model
# runs hundreds of loops. So workers spin for about 0.1 ms first (libgomp
# counts ~100000 spins per ms) and only then sleep, which is long enough for
# the gaps between one run's kernels and too short to starve another pool
# (2 vCPUs of a Zen 4, thunder-run: MobileNet 6.3 ms against 9.4 sleeping at
# once, ResNet-18 17.2 against 19.0; docs/performance.md). An explicit
# GOMP_SPINCOUNT is kept; it overrides OMP_WAIT_POLICY's spin.
_os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from . import _C
from .errors import (CompileError, DecompositionRetryWarning, ImportError,  # noqa: A004
                     RuntimeError, UnsupportedModelError)
from .examine import ExamineReport, OpReport, examine
from .program import ImportedProgram, export, load_pt2
from .compiled import CompiledModule, CompileRecord, compile  # noqa: A004
from .runtime import Model, load
from .cache import default_cache_dir
from .custom_ops import register_kernel, unregister_kernel


def supported_ops() -> list[str]:
    """Every ATen op the importer converts ("aten.add.Tensor"), sorted."""
    return _C.supported_ops()


# ImportError, RuntimeError and compile are thunder.X but not in __all__: a star import
# would shadow the builtins.
__all__ = [
    "CompileError",
    "CompileRecord",
    "CompiledModule",
    "DecompositionRetryWarning",
    "ExamineReport",
    "ImportedProgram",
    "Model",
    "OpReport",
    "UnsupportedModelError",
    "default_cache_dir",
    "examine",
    "export",
    "load",
    "load_pt2",
    "register_kernel",
    "supported_ops",
    "unregister_kernel",
]
