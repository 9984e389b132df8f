"""The exceptions of the thunder package (all ValueErrors)."""
from __future__ import annotations

from . import _C

__all__ = ["CompileError", "ImportError", "UnsupportedModelError"]

#: A program cannot be imported: every unsupported op with its source lines, malformed
#: input, an unusable weight. Raised by the C++ importer (thunder._C.ImportError).
ImportError = _C.ImportError  # noqa: A001 (thunder.ImportError; builtins' is untouched)

#: A pipeline failed on imported IR (thunder._C.CompileError).
CompileError = _C.CompileError


class UnsupportedModelError(ValueError):
    """The model cannot be turned into a torch.export program: a TorchScript module that
    does not convert, or an object that is no PyTorch model."""
