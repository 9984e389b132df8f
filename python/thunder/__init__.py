"""Thunder: an ahead-of-time deep-learning compiler on MLIR.

    import thunder, torch
    program = thunder.export(model, (x,))      # torch.export + the C++ importer
    print(program)                             # the thunder dialect, weights elided
    print(thunder.examine(model, x))           # which ops are supported, where they are

thunder.export takes an nn.Module, an FX GraphModule, a TorchScript module or a
torch.export.ExportedProgram; thunder.load_pt2 reads a .pt2 archive written by
torch.export.save. Both go through the same C++ importer (thunder._C) that
thunder-compile runs.

Errors: thunder.UnsupportedModelError when a model cannot be captured;
thunder.ImportError (thunder._C.ImportError, a ValueError) when a program cannot be
imported, with every problem and its source line; thunder.CompileError when a pipeline
fails.
"""
from __future__ import annotations

from . import _C
from .errors import CompileError, ImportError, UnsupportedModelError  # noqa: A004
from .examine import ExamineReport, OpReport, examine
from .program import ImportedProgram, export, load_pt2

__version__ = "0.1.0"


def supported_ops() -> list[str]:
    """Every ATen op the importer converts ("aten.add.Tensor"), sorted."""
    return _C.supported_ops()


# ImportError is thunder.ImportError but not in __all__: a star import would shadow the
# builtin.
__all__ = [
    "CompileError",
    "ExamineReport",
    "ImportedProgram",
    "OpReport",
    "UnsupportedModelError",
    "examine",
    "export",
    "load_pt2",
    "supported_ops",
]
