"""ImportedProgram: a model imported into the thunder dialect, and the ways to get one."""
from __future__ import annotations

import os
from typing import Any

from . import _C

__all__ = ["ImportedProgram", "export", "import_captured", "import_exported", "load_pt2"]


class ImportedProgram:
    """A model imported into the thunder dialect (the `import` phase).

    ``str(program)`` is the MLIR text, with weight blobs elided. The weights are views of
    the model's tensors (or of the mapped .pt2 file), which this object keeps alive.
    """

    def __init__(self, module: _C.Module, exported_program: Any = None):
        self._module = module
        self._exported_program = exported_program

    @property
    def module(self) -> _C.Module:
        """The native module (thunder._C.Module)."""
        return self._module

    @property
    def exported_program(self):
        """The torch.export program that was imported; None for a .pt2 file."""
        return self._exported_program

    @property
    def mlir(self) -> str:
        """The module as MLIR text, weight blobs over 64 bytes elided."""
        return self._module.to_string()

    @property
    def ops(self) -> dict[str, int]:
        """Op name -> count over the module (func.func and func.return included)."""
        return self._module.op_histogram()

    @property
    def input_types(self) -> list[str]:
        """The argument types of the model's function, as MLIR text."""
        return self._module.input_types()

    @property
    def output_types(self) -> list[str]:
        """The result types of the model's function, as MLIR text."""
        return self._module.output_types()

    def to_string(self, print_weights: bool = False, locations: bool = False) -> str:
        """The MLIR text; `print_weights` prints the weights' bytes, `locations` the
        source locations (the user's file and line of each op)."""
        return self._module.to_string(print_weights=print_weights, locations=locations)

    def verify(self) -> bool:
        """Whether the module passes MLIR's verifier."""
        return self._module.verify()

    def run_graph_pipeline(self, decompose_composites: bool = False) -> "ImportedProgram":
        """Runs the graph-level pipeline in place (what ``thunder-compile
        --compile-to=graph`` runs) and returns self. Raises thunder._C.CompileError."""
        self._module.run_graph_pipeline(decompose_composites=decompose_composites)
        return self

    def __str__(self) -> str:
        return self.mlir

    def __repr__(self) -> str:
        count = sum(n for name, n in self.ops.items()
                    if name not in ("func.func", "func.return"))
        inputs = ", ".join(self.input_types)
        return f"<thunder.ImportedProgram ({inputs}) with {count} ops>"


def export(model: Any, args: Any = (), kwargs: dict | None = None,
           dynamic_shapes: Any = None) -> ImportedProgram:
    """Captures `model` with torch.export and imports it into the thunder dialect.

    model: an nn.Module, an FX GraphModule, a torch.jit.ScriptModule or a
    torch.export.ExportedProgram. args / kwargs: example inputs (a single tensor is taken
    as a 1-tuple); dynamic_shapes: as torch.export.export takes it.

    The weights are not copied (unless a tensor is not contiguous): the program points at
    the model's tensors and keeps them alive. Raises thunder.UnsupportedModelError when the
    model cannot be captured and thunder._C.ImportError (a ValueError) when it cannot be
    imported, naming every unsupported op with its source lines.
    """
    from . import capture

    ep = capture.export_program(model, args, kwargs, dynamic_shapes)
    module, imported = import_captured(ep, model)
    return ImportedProgram(module, imported)


def import_captured(ep: Any, model: Any, to_host: bool = False,
                    seconds: dict | None = None,
                    ep_json: bytes | None = None) -> tuple[_C.Module, Any]:
    """`ep` decomposed where the importer needs it (capture.decompose) and imported:
    the module and the program it was imported from.

    A program imported as torch.export wrote it (every call one the importer converts,
    so not decomposed) whose import fails anyway, a converter refusing arguments that
    the decomposition would have rewritten, is decomposed and imported again: such a
    gap costs compile time, not the model. The ImportError raised names the program it
    was raised for as `thunder_program` (what fallback partitions split). `seconds`, when
    given, gets the wall time of "decompose" and "import"; `ep_json`, when given, is
    capture.program_json(ep), which the caller had already made (for a cache key)."""
    import time

    from . import capture

    def attempt(always: bool) -> tuple[_C.Module, Any]:
        mark = time.monotonic()
        program = capture.decompose(ep, always=always)
        if seconds is not None:
            seconds["decompose"] = seconds.get("decompose", 0.0) + time.monotonic() - mark
        mark = time.monotonic()
        raw = ep_json if program is ep and ep_json is not None else capture.program_json(program)
        text = capture.tensor_outputs_only(raw)
        views, keep_alive = capture.weight_views(program, to_host=to_host)
        try:
            module = import_exported(program, text, views, keep_alive, model)
        except _C.ImportError as error:
            error.thunder_program = program
            raise
        finally:
            if seconds is not None:
                seconds["import"] = seconds.get("import", 0.0) + time.monotonic() - mark
        return module, program

    try:
        return attempt(always=False)
    except _C.ImportError as error:
        # Not the conversion's (a weight the views refused: no program named), decomposed
        # already, or nothing to decompose: nothing else to try.
        if getattr(error, "thunder_program", None) is not ep or not capture.decomposable(ep):
            raise
        refusal = str(error)
    result = attempt(always=True)
    import warnings

    from .errors import DecompositionRetryWarning

    warnings.warn(f"thunder: the importer refused the program as torch.export wrote it, "
                  f"and took it after PyTorch's decompositions:\n{refusal}",
                  DecompositionRetryWarning, stacklevel=3)
    return result


def import_exported(ep: Any, program_json: bytes, views: dict, keep_alive: list,
                    model: Any) -> _C.Module:
    """The C++ import of a captured program (its JSON and weight views, from
    thunder.capture); an import failure of a model left in training mode says so."""
    from . import capture, custom_ops

    try:
        module = _C.import_program(program_json, views, capture.source_name(model),
                                   custom_kernels=custom_ops.import_list())
    except _C.ImportError as error:
        hint = capture.training_mode_hint(model)
        if hint is None:
            raise
        raise _C.ImportError(f"{error}\n{hint}") from None
    # The module's constants point into these tensors: they live as long as it does.
    module._keep_alive = keep_alive
    return module


def load_pt2(path: str | os.PathLike) -> ImportedProgram:
    """Imports a .pt2 archive written by torch.export.save (after run_decompositions).
    The weights stay in the memory-mapped file. Raises thunder._C.ImportError."""
    from . import custom_ops

    return ImportedProgram(_C.import_pt2(os.fspath(path),
                                         custom_kernels=custom_ops.import_list()))
