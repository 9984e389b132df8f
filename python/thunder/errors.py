"""The exceptions of the thunder package: ValueErrors for models and programs that cannot be
compiled, a RuntimeError for runs that fail."""
from __future__ import annotations

from . import _C

__all__ = ["CompileError", "DecompositionRetryWarning", "ImportError", "RuntimeError",
           "UnsupportedModelError"]

#: A program cannot be imported: every unsupported op with its source lines, malformed
#: input, an unusable weight. Raised by the C++ importer (thunder._C.ImportError).
ImportError = _C.ImportError  # noqa: A001 (thunder.ImportError; builtins' is untouched)

#: A pipeline or the driver failed (thunder._C.CompileError): every diagnostic, with the
#: toolchain's output when it is the toolchain that failed.
CompileError = _C.CompileError

#: The runtime refused or failed a call (thunder._C.RuntimeError, a builtin RuntimeError):
#: its message names the input or output at fault ("input 0 ('x'): expected dtype float32,
#: got float64"); ``.status`` is the runtime's status name
#: ("THUNDER_ERROR_INVALID_ARGUMENT", "THUNDER_ERROR_LOAD", ...).
RuntimeError = _C.RuntimeError  # noqa: A001 (thunder.RuntimeError; builtins' is untouched)


def runtime_error(message: str,
                  status: str = "THUNDER_ERROR_INVALID_ARGUMENT") -> "_C.RuntimeError":
    """A thunder.RuntimeError raised from Python (a problem found before the runtime is
    called), with the status the runtime would give it."""
    error = _C.RuntimeError(message)
    error.status = status
    return error


class UnsupportedModelError(ValueError):
    """The model cannot be turned into a torch.export program: a TorchScript module that
    does not convert, or an object that is no PyTorch model."""


class DecompositionRetryWarning(UserWarning):
    """The importer refused a program as torch.export wrote it although it takes each of
    its ops (a converter refusing arguments that PyTorch's decompositions rewrite), so the
    program was decomposed and imported again: the model compiled, seconds later than it
    should have. The message has the importer's error; it is a gap worth reporting."""
