"""Fallback partitions: a model with ops Thunder does not support, compiled around them.

    cm = thunder.compile(model)              # fallback="eager" is the default
    y = cm(x)                                # compiled parts + PyTorch for the rest
    print(cm.report())                       # the partitions, what fell back and where

The decomposed program (torch.export's FX graph of core ATen ops) is split in steps that
alternate between compiled partitions (ops the importer converts, `_C.supported_ops()`
or a kernel registered with thunder.register_kernel) and eager groups (the others, run by
PyTorch). Each op is put in the earliest step of its kind that its inputs allow (as soon
as possible scheduling): the number of steps is then the number of supported/unsupported
alternations on the longest path of the graph, which is the least any partitioning that
respects the data dependences can have, and independent unsupported ops share one eager
group (and the supported ops between them one partition).

The compiled partitions are built into ONE library (libNAME.so, one cache entry): each
partition is a model of its own in it (its entry in the library's partition index,
thunder-c/artifact.h), loaded with the runtime's thunder_model_load_partition, so the
library is opened once and the kernels the partitions share are linked once. Every
partition reads its weights from the one source, the model's own tensors (zero-copy:
no second copy in the process). A partition that fails to build runs in PyTorch
(cm.report() says why), and the others are built again without it. A target that
cannot link partitions together (the GPU targets, a CPU library for several
architectures) builds each partition as its own library instead.
Partitions are compiled for the static shapes of the call (another shape compiles again).
The CLI and the C++ runtime have no PyTorch: they refuse such a model with the list of
its unsupported ops.
"""
from __future__ import annotations

import dataclasses
import operator
import os
import re
import time
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import (ConstantArgument, InputKind, OutputKind,
                                          TensorArgument)
from torch.utils import _pytree as pytree

from . import _C, capture

__all__ = ["FallbackEntry", "PartitionPlan", "Step", "node_flops", "op_name", "plan",
           "source_line"]

#: What thunder.compile's fallback= takes.
FALLBACK_MODES = ("eager", "error")


# ---------------------------------------------------------------------------------------
# Which ops are supported
# ---------------------------------------------------------------------------------------

def op_name(node: torch.fx.Node) -> str:
    """"aten.add.Tensor": how the importer (and the serialized program) names the op a
    node calls."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return getattr(target, "__name__", str(target))


def supported_names() -> set[str]:
    """The op names a compiled partition may hold: what the importer converts, and the
    custom ops that have a registered kernel."""
    names = set(_C.supported_ops())
    from . import custom_ops
    names.update(custom_ops.registered_names())
    return names


def _is_getitem(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target is operator.getitem


_FRAME = re.compile(r'File "([^"]+)", line ([0-9]+)')


def source_line(node: torch.fx.Node) -> str:
    """"model.py:12" (the full path) of the innermost user frame of the node's stack
    trace, skipping PyTorch's own modules (as the importer's diagnostics do); "" when the
    node has no stack trace."""
    trace = node.meta.get("stack_trace") or ""
    first = user = None
    for match in _FRAME.finditer(trace):
        location = f"{match.group(1)}:{match.group(2)}"
        first = first or location
        if "/torch/" not in match.group(1):
            user = location
    return user or first or ""


def node_flops(node: torch.fx.Node) -> int:
    """The floating-point operations of one node: torch's FLOP formula when it has one
    (matmuls, convolutions, attention), else one per output element."""
    from torch.utils.flop_counter import flop_registry

    def val(a):
        return a.meta.get("val") if isinstance(a, torch.fx.Node) else a

    out = node.meta.get("val")
    packet = getattr(node.target, "overloadpacket", None)
    formula = flop_registry.get(node.target) or flop_registry.get(packet)
    if formula is not None:
        try:
            args = pytree.tree_map(val, node.args)
            kwargs = pytree.tree_map(val, node.kwargs)
            return int(formula(*args, **kwargs, out_val=out))
        except Exception:  # a formula that does not take these arguments: count elements
            pass
    total = 0
    for leaf in pytree.tree_leaves(out):
        if isinstance(leaf, torch.Tensor):
            try:
                total += int(leaf.numel())
            except Exception:  # a symbolic size
                total += 1
    return total


# ---------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------

@dataclasses.dataclass
class Step:
    """One step of a partitioned program: a compiled partition or an eager group."""

    index: int
    compiled: bool
    nodes: list = dataclasses.field(default_factory=list)    #: fx nodes, in graph order
    inputs: list = dataclasses.field(default_factory=list)   #: nodes read from outside
    weights: list = dataclasses.field(default_factory=list)  #: weight placeholders read
    outputs: list = dataclasses.field(default_factory=list)  #: nodes read after it
    flops: int = 0
    #: Why a partition meant to be compiled runs eagerly instead (its compile failed).
    demoted: str | None = None

    @property
    def kind(self) -> str:
        return "compiled" if self.compiled and not self.demoted else "eager"

    @property
    def ops(self) -> dict[str, int]:
        """Op name -> count over the step (getitems not counted)."""
        counts: dict[str, int] = {}
        for node in self.nodes:
            if not _is_getitem(node):
                counts[op_name(node)] = counts.get(op_name(node), 0) + 1
        return counts


@dataclasses.dataclass
class FallbackOp:
    """An op that runs in PyTorch, with where the model calls it."""

    name: str
    count: int
    source_lines: tuple[str, ...]
    reason: str = "not supported by Thunder"


class PartitionPlan:
    """A program split into compiled partitions and eager groups; ``str(plan)`` is the
    report that ``cm.report()`` and ``thunder.examine`` print."""

    def __init__(self, ep: ExportedProgram, steps: list[Step], name: str = "model"):
        self.ep = ep
        self.steps = steps
        self.name = name

    @property
    def partitions(self) -> list[Step]:
        """The steps meant to be compiled (demoted ones included)."""
        return [step for step in self.steps if step.compiled]

    @property
    def total_flops(self) -> int:
        return sum(step.flops for step in self.steps)

    @property
    def compiled_flop_fraction(self) -> float:
        """The fraction of the program's FLOPs that compiled code runs (1.0 when nothing
        falls back; 1.0 for a program without compute)."""
        total = self.total_flops
        if total == 0:
            return 1.0 if all(step.kind == "compiled" for step in self.steps) else 0.0
        return sum(step.flops for step in self.steps if step.kind == "compiled") / total

    @property
    def fallback_ops(self) -> list[FallbackOp]:
        """The ops that run in PyTorch, in program order."""
        found: dict[tuple[str, str], list] = {}
        for step in self.steps:
            if step.kind == "compiled":
                continue
            reason = (f"its partition did not compile: {step.demoted}" if step.demoted
                      else "not supported by Thunder")
            for node in step.nodes:
                if _is_getitem(node):
                    continue
                entry = found.setdefault((op_name(node), reason), [0, []])
                entry[0] += 1
                line = source_line(node)
                if line and line not in entry[1]:
                    entry[1].append(line)
        return [FallbackOp(name, count, tuple(lines), reason)
                for (name, reason), (count, lines) in found.items()]

    def summary(self) -> dict:
        """The plan as plain data."""
        return {"partitions": sum(1 for s in self.steps if s.kind == "compiled"),
                "eager_groups": sum(1 for s in self.steps if s.kind == "eager"),
                "compiled_flop_fraction": self.compiled_flop_fraction,
                "steps": [{"index": s.index, "kind": s.kind, "ops": s.ops, "flops": s.flops,
                           "inputs": [n.name for n in s.inputs],
                           "outputs": [n.name for n in s.outputs]} for s in self.steps],
                "fallback_ops": [dataclasses.asdict(op) for op in self.fallback_ops]}

    def __str__(self) -> str:
        compiled = sum(1 for s in self.steps if s.kind == "compiled")
        eager = sum(1 for s in self.steps if s.kind == "eager")
        lines = [f"{self.name}: {compiled} compiled partition{'s' * (compiled != 1)}, "
                 f"{eager} eager group{'s' * (eager != 1)}, "
                 f"{100 * self.compiled_flop_fraction:.1f}% of FLOPs compiled"]
        for step in self.steps:
            ops = sum(step.ops.values())
            label = "compiled partition" if step.kind == "compiled" else "eager (PyTorch)"
            lines.append(f"  step {step.index}: {label}, {ops} op{'s' * (ops != 1)}, "
                         f"{step.flops} FLOPs, inputs {len(step.inputs)}, "
                         f"outputs {len(step.outputs)}"
                         + (f" [demoted: {step.demoted}]" if step.demoted else ""))
        fallback = self.fallback_ops
        if fallback:
            lines.append("ops run by PyTorch:")
            for op in fallback:
                where = f" at {', '.join(op.source_lines)}" if op.source_lines else ""
                lines.append(f"  {op.name} ({op.count} use{'s' * (op.count != 1)}){where}"
                             + ("" if op.reason == "not supported by Thunder"
                                else f": {op.reason}"))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<thunder.PartitionPlan {self.summary()['partitions']} partitions>"


def _weight_names(ep: ExportedProgram) -> dict[str, Any]:
    """Placeholder name -> the weight tensor, for parameters, buffers and constants."""
    from .capture import _weight_tensor

    weights = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            weights[spec.arg.name] = _weight_tensor(ep, spec)
    return weights


def plan(ep: ExportedProgram, supported: set[str] | None = None,
         name: str = "model") -> PartitionPlan:
    """The partition plan of a decomposed program (see the module's doc for the
    algorithm). `supported`: the op names a partition may hold (default:
    supported_names())."""
    if supported is None:
        supported = supported_names()
    phase: dict[torch.fx.Node, int] = {}
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        preds = [phase[p] for p in node.all_input_nodes if p in phase]
        base = max(preds, default=0)
        if _is_getitem(node) and node.all_input_nodes and node.all_input_nodes[0] in phase:
            phase[node] = phase[node.all_input_nodes[0]]
            continue
        # Even phases are compiled partitions, odd ones eager groups.
        want = 0 if op_name(node) in supported else 1
        phase[node] = base if base % 2 == want else base + 1
    weights = _weight_names(ep)
    order = sorted(set(phase.values()))
    steps = {p: Step(index=i, compiled=p % 2 == 0) for i, p in enumerate(order)}
    for node in ep.graph.nodes:  # graph order is a topological order
        if node in phase:
            step = steps[phase[node]]
            step.nodes.append(node)
            step.flops += 0 if _is_getitem(node) else node_flops(node)
    output = next(node for node in ep.graph.nodes if node.op == "output")
    for p, step in steps.items():
        inside = set(step.nodes)
        for node in step.nodes:
            for source in node.all_input_nodes:
                if source in inside:
                    continue
                target = step.weights if source.name in weights and step.compiled \
                    else step.inputs
                if source not in target:
                    target.append(source)
            for user in node.users:
                if (user is output or user not in inside) and node not in step.outputs:
                    step.outputs.append(node)
    return PartitionPlan(ep, [steps[p] for p in order], name)


# ---------------------------------------------------------------------------------------
# Running a plan
# ---------------------------------------------------------------------------------------

def _partition_module(step: Step, weights: dict[str, Any]) -> torch.fx.GraphModule:
    """An FX module computing one compiled partition: its inputs as arguments, its
    weights as buffers (the model's own tensors, not copies), its outputs as a tuple."""
    root = torch.nn.Module()
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in step.inputs:
        env[node] = graph.placeholder(node.name)
    for i, node in enumerate(step.weights):
        attribute = f"w{i}_{re.sub(r'[^A-Za-z0-9_]', '_', node.name)}"
        root.register_buffer(attribute, weights[node.name])
        env[node] = graph.get_attr(attribute)
    for node in step.nodes:
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(tuple(env[node] for node in step.outputs))
    return torch.fx.GraphModule(root, graph)


class _NoLibrary:
    """The `model` of an entry whose every step runs in PyTorch."""

    path = ""
    device_description = "PyTorch (no compiled partition)"


class FallbackEntry:
    """A compiled signature whose program runs as a PartitionPlan: the compiled
    partitions through Thunder's runtime, the eager groups through PyTorch. It answers
    the same questions as compiled.py's entry (mismatch, run, record, model)."""

    def __init__(self, ep: ExportedProgram, plan_: PartitionPlan, flat: list, options: dict,
                 record_type: Any):
        start = time.monotonic()
        self.plan = plan_
        self.in_spec = ep.call_spec.in_spec
        self.out_spec = ep.call_spec.out_spec
        self._weights = _weight_names(ep)
        # Submodules and constants the graph reads with get_attr (higher-order ops).
        self._weights.update({node.name: getattr(ep.graph_module, node.target)
                              for node in ep.graph.nodes if node.op == "get_attr"})
        self._placeholders: list[tuple[str, Any]] = []  # (name, None | constant)
        for arg in capture.user_inputs(ep):
            if isinstance(arg, ConstantArgument):
                self._placeholders.append((arg.name, ("constant", arg.value)))
            else:
                self._placeholders.append((arg.name, None))
        self._shapes = [(v.dtype, tuple(v.shape)) if isinstance(v, torch.Tensor) else None
                        for v in flat]
        output = next(node for node in ep.graph.nodes if node.op == "output")
        specs = ep.graph_signature.output_specs
        self._outputs = [value for value, spec in zip(output.args[0], specs)
                         if spec.kind == OutputKind.USER_OUTPUT]
        for spec in specs:
            if spec.kind != OutputKind.USER_OUTPUT:
                raise _C.ImportError(f"a program that mutates its inputs or buffers "
                                     f"({spec.kind.name}) cannot be partitioned")
        self._compiled: dict[int, Any] = {}
        self._options = options
        #: How the partitions were built: "one library" (all of them in one libNAME.so),
        #: "one library per partition" (a target that cannot link them together), or
        #: "none" (every step runs in PyTorch).
        self.layout = "none"
        # Compile every partition now, on the example's intermediate values (PyTorch's).
        examples = self._example_inputs(flat)
        key, path, source = self._build(examples)
        self.model = next((part.model for part in self.compiled_modules), _NoLibrary())
        self.record = record_type(
            signature=options["signature"] + " [partitioned]", key=key, path=path,
            source=source, seconds={"total": time.monotonic() - start})

    @property
    def compiled_modules(self) -> list:
        """The compiled partitions, in step order: each callable with the partition's
        inputs, returning its outputs as a tuple, with a `model` (the runtime's
        thunder.runtime.Model: in one library, partition i of it)."""
        return [self._compiled[s.index] for s in self.plan.steps if s.index in self._compiled]

    def mismatch(self, flat: list, spec) -> tuple[str, str] | None:
        if spec != self.in_spec:
            return ("structure", f"it takes {self.in_spec}, got {spec}")
        for (name, constant), value, shape in zip(self._placeholders, flat, self._shapes):
            if constant is not None:
                if type(value) is not type(constant[1]) or value != constant[1]:
                    return ("value", f"argument '{name}' was {constant[1]!r}, got {value!r}")
            elif not isinstance(value, torch.Tensor):
                return ("structure", f"argument '{name}' is not a tensor")
            elif (value.dtype, tuple(value.shape)) != shape:
                return ("tensor", f"input '{name}': {value.dtype}{list(value.shape)} "
                                  f"differs from the partitioned {shape[0]}{list(shape[1])}")
        return None

    def run(self, flat: list, out=None):
        result = self._run(flat)
        if out is None:
            return result
        # Caller-provided outputs (cm(x, out=y)): the results copied into them.
        leaves, spec = pytree.tree_flatten(result)
        targets = [out] if isinstance(out, torch.Tensor) else list(out)
        if len(targets) != len(leaves):
            raise ValueError(f"out= has {len(targets)} tensors, the model returns "
                             f"{len(leaves)}")
        for i, (target, value) in enumerate(zip(targets, leaves)):
            if not isinstance(target, torch.Tensor) or target.dtype != value.dtype or \
                    target.shape != value.shape:
                raise ValueError(f"out[{i}] must be a {value.dtype} tensor of shape "
                                 f"{list(value.shape)}")
            target.copy_(value)
        return pytree.tree_unflatten(targets, spec)

    def _environment(self, flat: list) -> dict[str, Any]:
        env: dict[str, Any] = dict(self._weights)
        for (name, constant), value in zip(self._placeholders, flat):
            env[name] = value if constant is None else constant[1]
        return env

    @staticmethod
    def _run_eagerly(step: Step, env: dict[str, Any]) -> None:
        def load(node):
            return env[node.name]

        for node in step.nodes:  # PyTorch runs the ops
            args = torch.fx.node.map_arg(node.args, load)
            kwargs = torch.fx.node.map_arg(node.kwargs, load)
            env[node.name] = node.target(*args, **kwargs)

    @staticmethod
    def _step_inputs(step: Step, env: dict[str, Any]) -> list:
        # The runtime reads row-major memory; an eager op may return a view.
        return [v.contiguous() if isinstance(v, torch.Tensor) else v
                for v in (env[node.name] for node in step.inputs)]

    def _example_inputs(self, flat: list) -> dict[int, list]:
        """Each compiled partition's inputs for the example call, computed by running
        the whole program in PyTorch."""
        env = self._environment(flat)
        examples = {}
        with torch.no_grad():
            for step in self.plan.steps:
                if step.compiled:
                    examples[step.index] = self._step_inputs(step, env)
                self._run_eagerly(step, env)
        return examples

    def _run(self, flat: list):
        env = self._environment(flat)
        for step in self.plan.steps:
            module = self._compiled.get(step.index) if step.kind == "compiled" else None
            if module is not None:
                results = module(*self._step_inputs(step, env))
                for node, value in zip(step.outputs, results):
                    env[node.name] = value
            else:
                self._run_eagerly(step, env)
        leaves = [env[v.name] if isinstance(v, torch.fx.Node) else v for v in self._outputs]
        return pytree.tree_unflatten(leaves, self.out_spec)

    @staticmethod
    def _demote(step: Step, error: Exception) -> None:
        text = str(error).strip()
        text = re.sub(r"^partition [0-9]+: ", "", text)
        first = text.splitlines()[0] if text else ""
        step.demoted = f"{type(error).__name__}: {first}"

    def _one_library(self) -> bool:
        """Whether the target links several partitions into one library (the C++
        driver's TargetBackend::linkPartitions): the cpu target, for one architecture."""
        return self._options["target"] == "cpu" and "," not in (self._options["cpu"] or "")

    def _build(self, examples: dict[int, list]) -> tuple[str, str, str]:
        """Builds the compiled partitions (demoting those that do not build); returns
        the record's (key, path, source)."""
        steps = [step for step in self.plan.steps if step.compiled]
        if not steps:
            return "", "", "compiled"
        if not self._one_library():
            return self._build_each(steps, examples)
        prepared: dict[int, _Prepared] = {}
        for step in steps:
            try:
                prepared[step.index] = _Prepared(step, self._weights, examples[step.index],
                                                 self._options["target"])
            except (_C.ImportError, _C.CompileError) as error:
                # An op the name check let through but the importer refused (a dtype it
                # does not take, say): the partition runs eagerly instead.
                self._demote(step, error)
        while True:
            live = [step for step in steps if not step.demoted]
            if not live:
                return "", "", "compiled"
            try:
                return self._build_library([prepared[step.index] for step in live])
            except _PartitionFailed as failure:
                self._demote(failure.step, failure.error)  # the others are built again

    def _build_library(self, parts: list[_Prepared]) -> tuple[str, str, str]:
        """The partitions in one library, from the cache or compiled; each loaded as
        partition i of it, reading the model's own tensors as its weights."""
        from . import runtime
        from .cache import (Cache, key as cache_key, program_digest, provided_digest,
                            weights_digest)
        from .compiled import _Entry, _Face, _compiler_fingerprint

        options = self._options
        cache = Cache(options["cache_dir"])
        compile_options = {"cpu": options["cpu"], "external_weights": options["external_weights"],
                           "opt_level": options["opt_level"], "name": options["name"],
                           "fuse": options["fuse"], "arch": options["arch"] or "",
                           "pack_weights": options["pack_weights"]}
        # The model's tensors the partitions read in place are not embedded (each is
        # loaded with them, always); a name two partitions offer differently stays in.
        provided: dict = {}
        if options["target"] == "cpu" and not options["external_weights"]:
            differing = set()
            for part in parts:
                for name, meta in runtime.offered_weights(part.weights).items():
                    if provided.setdefault(name, meta) != meta:
                        differing.add(name)
            for name in differing:
                del provided[name]
        if provided:
            compile_options["provided_weights"] = provided_digest(provided)
        key = cache_key({"compiler": _compiler_fingerprint(), "layout": "partitions",
                         "programs": [program_digest(p.program) for p in parts],
                         "signatures": [p.signature for p in parts],
                         "target": options["target"], "options": compile_options,
                         "weights": [weights_digest(p.views) for p in parts]})
        models = None
        source = "cache"
        entry_dir = cache.lookup(key)
        if entry_dir is not None:
            try:
                models = [p.load(entry_dir, i) for i, p in enumerate(parts)]
            except _C.RuntimeError:
                cache.discard(key)
        if models is None:
            def build(directory) -> dict:
                try:
                    result = _C.compile_partitions(
                        [p.module for p in parts], str(directory), target=options["target"],
                        name=options["name"], cpu=options["cpu"],
                        external_weights=options["external_weights"],
                        opt_level=options["opt_level"], fuse=options["fuse"],
                        arch=options["arch"] or "", kernel_cache=str(cache.kernels),
                        pack_weights=options["pack_weights"], provided_weights=provided)
                except _C.CompileError as error:
                    match = re.match(r"partition ([0-9]+): ", str(error))
                    if match and int(match.group(1)) < len(parts):
                        raise _PartitionFailed(parts[int(match.group(1))].step, error) from None
                    raise
                return {"signature": options["signature"] + " [partitioned]",
                        "name": options["name"], "target": options["target"],
                        "options": compile_options, "compiler": _compiler_fingerprint(),
                        "created": time.time(), "partitions": len(parts),
                        "library": os.path.basename(result["library"]),
                        "kernels": {"units": result.get("units", 0),
                                    "cached": result.get("units_cached", 0)},
                        "seconds": dict(result["seconds"])}

            entry_dir, built = cache.publish(key, build)
            source = "compiled" if built else "cache"
            try:
                models = [p.load(entry_dir, i) for i, p in enumerate(parts)]
            except _C.RuntimeError:
                cache.discard(key)
                raise
        for part, model in zip(parts, models):
            self._compiled[part.step.index] = _CompiledPartition(
                _Entry(_Face.of(part.ep), model, None), model)
        self.layout = "one library"
        return key, str(entry_dir), source

    def _build_each(self, steps: list[Step], examples: dict[int, list]) -> tuple[str, str, str]:
        """Each partition as its own library (a target that cannot link them
        together)."""
        for step in steps:
            self._compile_step(step, examples[step.index])
        built = [self._compiled[s.index] for s in steps if s.index in self._compiled]
        self.layout = "one library per partition" if built else "none"
        records = [part.compiled.compiles[-1] for part in built]
        sources = {record.source for record in records}
        return (",".join(record.key for record in records),
                records[0].path if records else "",
                "cache" if sources == {"cache"} else "compiled")

    def _compile_step(self, step: Step, values: list):
        from .compiled import compile as thunder_compile

        options = self._options
        module = _partition_module(step, self._weights)
        try:
            compiled = thunder_compile(
                module, tuple(values), target=options["target"], fallback="error",
                dynamic=False, cache_dir=options["cache_dir"], cpu=options["cpu"],
                external_weights=options["external_weights"], progress=False,
                name=f"{options['name']}_p{step.index}", opt_level=options["opt_level"],
                fuse=options["fuse"], arch=options["arch"],
                pack_weights=options["pack_weights"])
        except (_C.ImportError, _C.CompileError) as error:
            # An op the name check let through but the importer or a pipeline refused
            # (a dtype it does not take, say): the partition runs eagerly instead.
            self._demote(step, error)
            return None
        part = _CompiledPartition(compiled, compiled._entries[0].model)
        part.compiled = compiled
        self._compiled[step.index] = part
        return part


class _PartitionFailed(Exception):
    """The one-library build failed because of one partition."""

    def __init__(self, step: Step, error: Exception):
        super().__init__(str(error))
        self.step = step
        self.error = error


class _Prepared:
    """One partition, imported for the one-library build: its FX module exported on
    the example's values, decomposed and imported (raises _C.ImportError)."""

    def __init__(self, step: Step, weights: dict[str, Any], values: list, target: str):
        from . import capture
        from .compiled import _signature_text
        from .program import import_captured

        self.step = step
        module = _partition_module(step, weights)
        exported = capture.export_program(module, tuple(values), {}, None)
        self.module, self.ep = import_captured(exported, module, to_host=target != "cpu")
        self.signature = _signature_text(self.ep)
        # What the library's cache key is made of: the program imported, its weights.
        self.program = capture.tensor_outputs_only(capture.program_json(self.ep))
        self.views, _ = capture.weight_views(self.ep, to_host=target != "cpu")
        #: The weights by the name the library knows them by: the model's own tensors.
        self.weights = {name: value for name, value in (*self.ep.state_dict.items(),
                                                        *self.ep.constants.items())
                        if isinstance(value, torch.Tensor)}

    def load(self, entry_dir, index: int):
        from . import runtime
        return runtime.Model(entry_dir, self.weights, partition=index)


class _CompiledPartition:
    """A compiled partition: called with its inputs, returns its outputs (a tuple)."""

    def __init__(self, call: Any, model: Any):
        self._call = call
        self.model = model    #: thunder.runtime.Model
        self.compiled = None  #: its CompiledModule when built as a library of its own

    def __call__(self, *values):
        if self.compiled is not None:
            return self._call(*values)
        return self._call.run(list(values))


_REFUSED = (re.compile(r"unsupported op (\S+) \("),            # not in the importer's table
            re.compile(r"unsupported: (\S+) on operands of type"))  # refused for these types


def refused_ops(message: str) -> set[str]:
    """The op names an import error refuses: the unsupported ones, and those the
    importer maps but not for the operand types they had."""
    return {name for pattern in _REFUSED for name in pattern.findall(message)}


def fallback_entry(cm: Any, args: tuple, kwargs: dict, error: Exception):
    """The entry of a CompiledModule's call whose program has unsupported ops: its
    program partitioned and compiled (fallback="eager"), or `error` raised again
    (fallback="error", or an import error that is not about unsupported ops)."""
    from . import capture
    from .compiled import CompileRecord, _flatten, _signature_text

    if getattr(cm, "_fallback", "error") != "eager":
        raise error
    ep = getattr(error, "thunder_program", None)
    refused = refused_ops(str(error))
    if ep is None or not refused:
        raise error  # not about ops (a weight, an output): nothing to split around
    args, kwargs = pytree.tree_map(
        lambda v: v.contiguous() if isinstance(v, torch.Tensor) else v, (args, kwargs))
    if ep.range_constraints:
        # Partitions are compiled for static shapes: values crossing a partition boundary
        # carry no symbolic sizes then.
        ep = capture.decompose(capture.export_program(cm._model, args, kwargs, None),
                               always=True)
    flat, _ = _flatten(args, kwargs, ep.call_spec.in_spec)
    # An op refused for its operand types falls back wherever it is used (the error
    # names the op, not the node): conservative, and a partition that still does not
    # import runs eagerly (FallbackEntry._compile_step).
    partition_plan = plan(ep, supported_names() - refused, name=cm._name)
    options = {"target": cm._target, "cache_dir": cm._cache.root, "cpu": cm._cpu,
               "external_weights": cm._external_weights, "name": cm._name,
               "opt_level": cm._opt_level, "fuse": cm._fuse, "arch": cm._arch,
               "pack_weights": cm._pack_weights, "signature": _signature_text(ep)}
    entry = FallbackEntry(ep, partition_plan, flat, options, CompileRecord)
    cm._entries.append(entry)
    cm.compiles.append(entry.record)
    return entry


def report(cm: Any) -> str:
    """cm.report(): each compiled signature's partitions (one compiled partition for a
    signature without fallback)."""
    if not cm._entries:
        return f"{cm._name}: not compiled yet (call it, or compile with example inputs)"
    texts = []
    for entry in cm._entries:
        if isinstance(entry, FallbackEntry):
            texts.append(f"{entry.record.signature}\n{entry.plan}")
        else:
            texts.append(f"{entry.record.signature}\n{cm._name}: 1 compiled partition, "
                         f"0 eager groups, 100.0% of FLOPs compiled")
    return "\n\n".join(texts)
