"""Capture: any PyTorch model form -> a decomposed ExportedProgram -> JSON + weight views.

This is the Python half of the one import path (DESIGN decision 1): the program is
serialized to the same JSON that ``torch.export.save`` writes into a ``.pt2`` archive, and
the C++ importer reads it; the weights are not serialized at all but handed over as views
of the live tensors.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from . import _C
from .errors import UnsupportedModelError

__all__ = ["capture", "decomposable", "decompose", "decomposition_table", "export_program", "program_json",
           "source_name",
           "tensor_outputs_only", "training_mode_hint", "weight_views"]


# torch dtype -> the name the C++ side takes (thunder::dtypeName).
_DTYPE_NAMES = {
    torch.bool: "bool",
    torch.int8: "int8",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.float8_e4m3fn: "float8_e4m3fn",
    torch.float8_e5m2: "float8_e5m2",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
}


def decomposition_table() -> dict:
    """torch.export's default decompositions (to the core ATen opset), except
    scaled_dot_product_attention, which the importer takes whole as one composite op so
    that a backend can emit a fused attention kernel for it."""
    table = torch.export.default_decompositions()
    # torch 2.13's CustomDecompTable is a dict subclass that materializes entries lazily;
    # pop() goes through its own bookkeeping, so the op is really gone afterwards.
    table.pop(torch.ops.aten.scaled_dot_product_attention.default, None)
    return table


def source_name(model: Any) -> str:
    """How messages name a program captured from `model`: its class name (a TorchScript
    module's original one)."""
    if isinstance(model, torch.jit.ScriptModule):
        return model.original_name
    return type(model).__name__


def training_mode_hint(model: Any) -> str | None:
    """A note for an import failure of a model whose batch norms or dropouts are left in
    training mode: they export as training ops that an inference compiler does not take."""
    if not isinstance(model, torch.nn.Module):
        return None
    training = (torch.nn.modules.batchnorm._NormBase, torch.nn.modules.dropout._DropoutNd)
    names = sorted({type(m).__name__ for m in model.modules()
                    if m.training and isinstance(m, training)})
    if not names:
        return None
    return (f"note: the model's {', '.join(names)} modules are in training mode; call "
            f"model.eval() before exporting (Thunder compiles inference)")


def _as_tuple(args: Any) -> tuple:
    if args is None:
        return ()
    if isinstance(args, tuple):
        return args
    if isinstance(args, list):
        return tuple(args)
    return (args,)


def _from_torchscript(model, args: tuple, kwargs: dict | None) -> ExportedProgram:
    # TS2EPConverter replays the TorchScript graph with FX; it covers common modules but
    # not every TorchScript construct, so its failures are reported as the user's to fix.
    from torch._export.converter import TS2EPConverter

    try:
        return TS2EPConverter(model, args, kwargs).convert()
    except Exception as error:  # the converter raises anything from anywhere
        raise UnsupportedModelError(
            f"TorchScript conversion failed: torch._export.converter.TS2EPConverter could "
            f"not convert this {type(model).__name__} to an ExportedProgram "
            f"({type(error).__name__}: {error}). Pass the original nn.Module or a "
            f"torch.export program (torch.export.export(model, args)) instead.") from error


def _serialized_name(target: Any) -> str | None:
    """The name the program JSON gives a call's target ("aten.add.Tensor",
    "_operator.mul"), as the importer's table keys it; None for a target it cannot
    name (a higher-order op such as wrap_with_set_grad_enabled)."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return None
    module, name = getattr(target, "__module__", None), getattr(target, "__name__", None)
    return f"{module}.{name}" if module and name else None


def _importable(target: Any, supported: set[str]) -> bool:
    """Whether the importer converts this call as it is (a functional op it takes)."""
    if target is operator.getitem:  # the JSON folds it into its producer's outputs
        return True
    if isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable:
        return False
    return _serialized_name(target) in supported


def _decomposed_by(target: Any, table: dict) -> bool:
    """Whether run_decompositions with `table` rewrites calls of `target`: an op outside
    the core ATen opset that the table has. (Core ops such as aten.sym_size.int have
    table entries too but stay after run_decompositions.)"""
    return (isinstance(target, torch._ops.OpOverload) and target in table
            and torch.Tag.core not in target.tags)


def user_inputs(ep: ExportedProgram) -> list:
    """The arguments of the exported program's user inputs (no weights), in order."""
    return [spec.arg for spec in ep.graph_signature.input_specs
            if spec.kind == InputKind.USER_INPUT]


def decomposable(ep: ExportedProgram, table: dict | None = None) -> bool:
    """Whether run_decompositions would change `ep`: a TRAINING-dialect program, or one
    calling an op outside the core ATen opset that the table (decomposition_table())
    decomposes."""
    table = decomposition_table() if table is None else table
    if getattr(ep.verifier, "dialect", "ATEN") != "ATEN":
        return True
    return any(node.op == "call_function" and _decomposed_by(node.target, table)
               for node in ep.graph.nodes)


def _needs_decomposition(ep: ExportedProgram, table: dict | None = None) -> bool:
    """Whether `ep` must go through run_decompositions before the importer takes it.

    Not when the importer converts every call as it is: run_decompositions retraces
    the whole model through functionalization and symbolic shapes (seconds for a
    transformer, more with a dynamic batch), and the importer takes the common
    composites itself (linear, layer_norm, conv2d, batch_norm, matmul, softmax, dropout,
    ...). A TRAINING-dialect program (torch.export.export's own output) with any other
    call is decomposed; an ATEN-dialect one only when it calls an op outside the core
    ATen opset that the table decomposes (an op nothing decomposes is left for the
    importer to report)."""
    supported = set(_C.supported_ops())
    training = getattr(ep.verifier, "dialect", "ATEN") != "ATEN"
    for node in ep.graph.nodes:
        target = node.target
        if node.op != "call_function" or _importable(target, supported):
            continue
        if training:
            return True
        if table is None:
            table = decomposition_table()  # built only when needed: ~0.1 s
        if _decomposed_by(target, table):
            return True
    return False


def capture(model: Any, args: Any = (), kwargs: dict | None = None,
            dynamic_shapes: Any = None) -> ExportedProgram:
    """`model` as an inference ExportedProgram decomposed to the ops the importer takes.

    model: an nn.Module (FX GraphModules included), a torch.jit.ScriptModule (converted
    with TS2EPConverter) or a torch.export.ExportedProgram (used as it is; args are not
    needed; decomposed if it is not yet).
    """
    return decompose(export_program(model, args, kwargs, dynamic_shapes))


def export_program(model: Any, args: Any = (), kwargs: dict | None = None,
                   dynamic_shapes: Any = None) -> ExportedProgram:
    """`model` as an ExportedProgram, not decomposed yet (capture's first half).

    The program is a function of the model and the decomposition a function of the
    program, so thunder.compile keys its cache on this one and decomposes only on a miss.
    """
    args = _as_tuple(args)
    if isinstance(model, ExportedProgram):
        if dynamic_shapes is not None:
            raise ValueError("dynamic_shapes cannot be applied to an ExportedProgram: its "
                             "shapes were fixed by torch.export; export it again with them")
        return model
    if isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        if dynamic_shapes is not None:
            raise UnsupportedModelError(
                "dynamic_shapes is not supported for TorchScript modules (the TorchScript "
                "converter takes none); pass the original nn.Module instead")
        return _from_torchscript(model, args, kwargs)
    if isinstance(model, torch.nn.Module):
        return torch.export.export(model, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes)
    raise UnsupportedModelError(
        f"cannot capture a {type(model).__name__}: Thunder takes an nn.Module, an FX "
        f"GraphModule, a torch.jit.ScriptModule or a torch.export.ExportedProgram")


def decompose(ep: ExportedProgram, always: bool = False) -> ExportedProgram:
    """`ep` decomposed with decomposition_table() unless it is already in a form the
    importer takes (capture's second half); `always`: whenever decomposing changes it."""
    if decomposable(ep) if always else _needs_decomposition(ep):
        with warnings.catch_warnings():
            # torch 2.13's run_decompositions deep-copies pytree specs, which trips
            # torch's own LeafSpec deprecation warning: noise for every user.
            warnings.filterwarnings("ignore", message=r".*LeafSpec.*", category=FutureWarning)
            ep = ep.run_decompositions(decomposition_table())
    return ep


def program_json(ep: ExportedProgram) -> bytes:
    """The ExportedProgram's JSON, exactly as torch.export.save writes models/model.json.

    torch 2.13's serialize() takes serialize_state_dict / serialize_constants /
    serialize_example_inputs flags (torch.export.save passes the first two as False and
    writes the tensors as raw records): with all three False nothing is pickled and no
    tensor is copied, only the graph is written.

    A program whose inputs or outputs are pytree types that torch cannot serialize (a
    model returning ``x.max(dim)``, a ``torch.return_types.max``) is written with flat
    tuples in their place: the importer reads the graph and its signature, not these
    specs, and thunder.compile rebuilds the outputs from the live program's own.
    """
    try:
        return _serialize(ep)
    except NotImplementedError as error:
        if "serializ" not in str(error):
            raise
    import dataclasses

    from torch.utils import _pytree as pytree

    def flat(spec):
        return None if spec is None else pytree.tree_structure((0,) * spec.num_leaves)

    original = ep._module_call_graph
    flattened = []
    for entry in original:
        signature = entry.signature
        if signature is not None:
            signature = dataclasses.replace(signature, in_spec=flat(signature.in_spec),
                                            out_spec=flat(signature.out_spec))
        flattened.append(dataclasses.replace(entry, signature=signature))
    ep._module_call_graph = flattened
    try:
        return _serialize(ep)
    finally:
        ep._module_call_graph = original


def _serialize(ep: ExportedProgram) -> bytes:
    from torch._export.serde.serialize import serialize

    artifact = serialize(ep, serialize_state_dict=False, serialize_constants=False,
                         serialize_example_inputs=False)
    return artifact.exported_program


# How the serialized program writes a constant (a Python value the model returns).
_CONSTANT_ARGUMENTS = ("as_none", "as_int", "as_float", "as_bool", "as_string", "as_ints",
                       "as_floats", "as_bools", "as_strings")


def tensor_outputs_only(program: bytes) -> bytes:
    """The program JSON without the user outputs that are Python constants (a model that
    returns `(x, 3)` or a None among its outputs), which the importer does not take: the
    compiled model returns the tensors, and thunder.compile puts the constants back where
    the model's output structure has them. Unchanged when there are none."""
    import json

    document = json.loads(program)
    graph_module = document["graph_module"]
    specs = graph_module["signature"]["output_specs"]
    outputs = graph_module["graph"]["outputs"]

    def constant(spec) -> bool:
        user = spec.get("user_output")
        return user is not None and any(k in user.get("arg", {}) for k in _CONSTANT_ARGUMENTS)

    keep = [i for i, spec in enumerate(specs) if not constant(spec)]
    if len(keep) == len(specs) or len(specs) != len(outputs):
        return program
    graph_module["signature"]["output_specs"] = [specs[i] for i in keep]
    graph_module["graph"]["outputs"] = [outputs[i] for i in keep]
    return json.dumps(document).encode()


def _weight_tensor(ep: ExportedProgram, spec) -> Any:
    if spec.kind == InputKind.CONSTANT_TENSOR:
        return ep.constants.get(spec.target)
    # Parameters and persistent buffers are in the state dict; non-persistent buffers
    # are kept with the constants.
    if spec.target in ep.state_dict:
        return ep.state_dict[spec.target]
    return ep.constants.get(spec.target)


def weight_views(ep: ExportedProgram, to_host: bool = False) -> tuple[dict, list]:
    """The program's parameters, buffers and tensor constants as the C++ importer takes
    them: FQN -> (data_ptr, nbytes, dtype name, sizes), and the tensors those pointers
    point into, which the caller keeps alive as long as the imported module.

    A weight is not copied unless it is not contiguous (then its contiguous copy is what
    is kept alive), or it is on a GPU and `to_host` (a model compiled for a GPU target
    may live on the GPU: its weights are read through a host copy).
    """
    views, keep_alive = {}, []
    kinds = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    for spec in ep.graph_signature.input_specs:
        if spec.kind not in kinds:
            continue  # user inputs; anything else the importer reports itself
        name = spec.target
        tensor = _weight_tensor(ep, spec)
        if not isinstance(tensor, torch.Tensor):
            raise _C.ImportError(f"weight '{name}' is a {type(tensor).__name__}, not a "
                                 f"tensor; Thunder imports tensor weights only")
        if tensor.device.type != "cpu" and to_host and isinstance(tensor, torch.Tensor) \
                and not isinstance(tensor, FakeTensor):
            tensor = tensor.detach().to("cpu")
        if tensor.device.type != "cpu":
            raise _C.ImportError(
                f"weight '{name}' is on device '{tensor.device}'; Thunder imports CPU "
                f"tensors only: move the model to the CPU (model.cpu()) before exporting")
        if tensor.layout != torch.strided:
            raise _C.ImportError(f"weight '{name}' has layout {tensor.layout}; Thunder "
                                 f"imports dense (strided) tensors only")
        dtype = _DTYPE_NAMES.get(tensor.dtype)
        if dtype is None:
            supported = ", ".join(_DTYPE_NAMES.values())
            raise _C.ImportError(f"weight '{name}' has dtype {tensor.dtype}, which Thunder "
                                 f"does not support (supported: {supported})")
        tensor = tensor.detach()
        if not tensor.is_contiguous():
            tensor = tensor.contiguous()  # the only copy: the importer reads row-major bytes
        if isinstance(tensor, FakeTensor):
            raise _C.ImportError(f"weight '{name}' is a fake tensor (the program was "
                                 f"exported under FakeTensorMode); Thunder needs the real "
                                 f"weights")
        try:
            address = tensor.data_ptr()
        except RuntimeError as error:  # fake tensors and other storage-less subclasses
            raise _C.ImportError(f"weight '{name}' has no data ({type(tensor).__name__}: "
                                 f"{error}); Thunder imports real CPU tensors only") from None
        keep_alive.append(tensor)
        views[name] = (address, tensor.numel() * tensor.element_size(), dtype,
                       list(tensor.shape))
    return views, keep_alive
