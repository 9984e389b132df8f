//===- GpuEmitter.cpp - The host program of a GPU target ------------------===//
//
// Emits one translation unit per model: a kernel (or library call) per
// unit (a fusion region, or a top-level op the fusion passes left outside
// one), a host program that computes dynamic sizes (ShapePlan), lays out the
// workspace (the memory plan's arena when the IR has one, else one slot per
// value; then per stream a library workspace and kernel scratch), and
// enqueues the units in order on the caller's stream and the schedule's
// auxiliary streams, and the thunder_model_v1 table of thunder-c/artifact.h.
// The whole run is captured into a graph and replayed (static shapes;
// THUNDER_CUDA_GRAPHS=0 turns it off). Weights are embedded with .incbin and
// copied to device memory at create(). What the vendor spells its own way
// comes from the GpuDialect table.
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/GPU/GpuDialect.h"

#include "Emitter.h"
#include "thunder/Target/Common/CustomKernels.h"
#include "thunder/Target/Common/WeightsLoader.h"
#include "thunder/Target/Common/RandomTable.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::thunder;

namespace {
#include "GPUSupportSources.inc"
} // namespace

namespace thunder::gpu {


std::string GpuEmitter::elem(Value v) { return *cppType(typeOf(v).getElementType()); }

std::string GpuEmitter::dimExpr(Value v, unsigned d) {
  const PlanDim &dim = plan.dims(v)[d];
  return dim.isDynamic() ? "sym[" + std::to_string(dim.symbol) + "]"
                         : std::to_string(dim.size) + "LL";
}

std::string GpuEmitter::kernelDim(Value v, unsigned d) {
  const PlanDim &dim = plan.dims(v)[d];
  return dim.isDynamic() ? "S.s[" + std::to_string(dim.symbol) + "]"
                         : std::to_string(dim.size) + "LL";
}

std::string GpuEmitter::numelExpr(Value v) {
  std::string e = "int64_t(1)";
  for (unsigned d = 0; d < typeOf(v).getRank(); ++d)
    e += " * " + dimExpr(v, d);
  return e;
}

std::string GpuEmitter::bytesExpr(Value v) {
  return "uint64_t(" + numelExpr(v) + ") * " +
         std::to_string(elementBytes(typeOf(v).getElementType())) + "ULL";
}

void GpuEmitter::emitShapes(llvm::raw_ostream &os) {
  llvm::StringSet<> done;
  auto emitShape = [&](Value v) {
    if (!isa<RankedTensorType>(v.getType()) || !done.insert(shape(v)).second)
      return;
    auto dimsOf = plan.dims(v);
    os << "  const int64_t " << shape(v) << "[" << std::max<size_t>(1, dimsOf.size())
       << "] = {";
    for (unsigned d = 0; d < dimsOf.size(); ++d)
      os << (d ? ", " : "") << dimExpr(v, d);
    os << (dimsOf.empty() ? "1" : "") << "};\n  (void)" << shape(v) << ";\n";
  };
  for (BlockArgument arg : func.getArguments())
    emitShape(arg);
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      emitShape(r);
  });
}

LogicalResult GpuEmitter::collectConstants() {
  bool ok = true;
  func.walk([&](ConstantOp op) {
    if (auto splat = dyn_cast<SplatElementsAttr>(op.getValue())) {
      splats.push_back({op.getResult(), 0, codegen::splatLiteral(splat)});
      return;
    }
    // Dense data goes into the blob, 256-byte aligned for the device.
    FailureOr<uint64_t> offset = codegen::appendConstant(
        op, 256, "constant_" + name(op.getResult()), *blob, blobEntries);
    if (failed(offset))
      ok = false;
    else
      blobOffsets[op.getResult()] = *offset;
  });
  // Splats follow the blob in device memory, filled at create().
  deviceBytes = (blob->size() + 255) / 256 * 256;
  for (auto &[v, offset, literal] : splats) {
    offset = deviceBytes;
    blobOffsets[v] = offset;
    deviceBytes += (typeOf(v).getNumElements() * elementBytes(typeOf(v).getElementType()) + 255) /
                   256 * 256;
  }
  return success(ok);
}

/// One slot per unit result; the memory plan's offsets when every kernel has
/// them (thunder-plan-memory), our own layout otherwise. Function results
/// computed by a unit are written straight into the caller's outputs.
LogicalResult GpuEmitter::planStorage() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  // The plan's offsets when every kernel has them and they are static (with
  // dynamic sizes the plan leaves the packing to run time: a marker offset).
  constexpr int64_t kRunTimeOffset = -9223372036854775807LL;
  plannedArena = !units.empty();
  for (Unit &u : units) {
    auto offsets = u.op->getAttrOfType<DenseI64ArrayAttr>("thunder.offsets");
    if (!offsets || llvm::is_contained(offsets.asArrayRef(), kRunTimeOffset))
      plannedArena = false;
    if (auto borrowed = u.op->getAttrOfType<DenseI64ArrayAttr>("thunder.borrowed"))
      if (llvm::any_of(borrowed.asArrayRef(), [](int64_t b) { return b >= 0; }))
        return u.op->emitError("the ")
               << dialect.displayName
               << " backend does not place tensors in borrowed output buffers yet "
                  "(thunder-plan-memory borrow-outputs)";
  }
  llvm::DenseMap<Value, int> outputOf;
  if (!plannedArena) {
    for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
      Value root = v;
      while (auto r = root.getDefiningOp<ReshapeOp>())
        root = r.getOperand();
      Operation *def = root.getDefiningOp();
      if (def && !isa<ConstantOp>(def) && !outputOf.count(root))
        outputOf[root] = k;
    }
  }
  for (Unit &u : units) {
    auto planned = u.op->getAttrOfType<DenseI64ArrayAttr>("thunder.offsets");
    for (auto [i, r] : llvm::enumerate(u.op->getResults())) {
      Slot slot{r, -1, -1};
      if (plannedArena) {
        if (planned.size() != u.op->getNumResults())
          return u.op->emitError("thunder.offsets has ")
                 << planned.size() << " entries for " << u.op->getNumResults() << " results";
        int64_t at = planned[i];
        if (at < 0) {
          slot.output = int(-1 - at);
        } else {
          if (!typeOf(r).hasStaticShape())
            return u.op->emitError("a planned offset for a result of dynamic shape");
          slot.planned = at;
          arenaBytes = std::max<int64_t>(
              arenaBytes, at + typeOf(r).getNumElements() * elementBytes(typeOf(r).getElementType()));
        }
      } else if (auto it = outputOf.find(r); it != outputOf.end()) {
        slot.output = it->second;
      }
      slots.push_back(slot);
    }
  }
  // The library workspaces the plan put in the arena (thunder.workspace):
  // each call may use kLibWorkspace bytes from its offset.
  if (plannedArena) {
    for (Unit &u : units) {
      if (u.workspace < 0)
        continue;
      auto arena = func->getAttrOfType<DictionaryAttr>("thunder.arena");
      auto planned = arena ? arena.getAs<IntegerAttr>("workspace") : IntegerAttr();
      if (!planned || planned.getInt() < dialect.libraries.workspace)
        return u.op->emitError("thunder.workspace was planned with ")
               << (planned ? planned.getInt() : 0) << " bytes; the " << dialect.displayName << " backend's library "
               << "calls need " << dialect.libraries.workspace
               << " (thunder-plan-memory library-workspace)";
      if (u.workspace % 256)
        return u.op->emitError("thunder.workspace ")
               << u.workspace << " is not 256-byte aligned (" << dialect.libraries.gemm << " needs that)";
      arenaBytes = std::max<int64_t>(arenaBytes, u.workspace + dialect.libraries.workspace);
    }
  }
  arenaBytes = (arenaBytes + 255) / 256 * 256;
  // Outputs no unit writes: arguments, constants, a value returned twice.
  llvm::DenseSet<int> written;
  for (Slot &s : slots)
    if (s.output >= 0)
      written.insert(s.output);
  for (auto [k, v] : llvm::enumerate(ret.getOperands()))
    if (!written.count(int(k)))
      outputCopies.push_back({unsigned(k), v});
  return success();
}

/// "4, 8" (a trailing 0 keeps the array non-empty).
static std::string elementSizes(TypeRange types) {
  std::string s;
  for (Type t : types)
    s += std::to_string(elementBytes(cast<RankedTensorType>(t).getElementType())) + ", ";
  return s + "0";
}

LogicalResult GpuEmitter::run(EmittedSources &out) {
  // Names: arguments, every result (inside regions too), region arguments
  // as the fusion's operands.
  for (BlockArgument arg : func.getArguments())
    names[arg] = "a" + std::to_string(arg.getArgNumber());
  bool ok = true;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value r : op->getResults()) {
      if (failed(cppType(typeOf(r).getElementType()))) {
        op->emitError("unsupported element type for the ") << dialect.displayName << " backend";
        ok = false;
      }
      names[r] = "v" + std::to_string(counter++);
    }
    if (auto fusion = dyn_cast<FusionOp>(op))
      for (auto [arg, operand] : llvm::zip(fusion.getBody().getArguments(), fusion.getInputs()))
        names[arg] = names.lookup(operand);
  });
  if (!ok || failed(collectConstants()))
    return failure();

  // Units: every top-level op that computes.
  for (Operation &op : func.getBody().front()) {
    if (isa<ConstantOp, ReshapeOp, func::ReturnOp>(op))
      continue;
    Unit u{&op, int(units.size())};
    if (auto s = op.getAttrOfType<IntegerAttr>("thunder.stream"))
      u.stream = int(s.getInt());
    if (auto w = op.getAttrOfType<DenseI64ArrayAttr>("thunder.wait"))
      u.waits.assign(w.asArrayRef().begin(), w.asArrayRef().end());
    if (auto w = op.getAttrOfType<IntegerAttr>("thunder.workspace"))
      u.workspace = w.getInt();
    if (u.stream < 0 || u.stream > 64)
      return op.emitError("thunder.stream ") << u.stream << " is out of range [0, 64]";
    numStreams = std::max(numStreams, u.stream + 1);
    std::string kernel;
    if (auto fusion = dyn_cast<FusionOp>(op))
      kernel = fusion.getKernelName().str();
    else
      kernel = op.getName().stripDialect().str() + "_" + std::to_string(u.index);
    for (char &c : kernel)
      if (!isalnum(static_cast<unsigned char>(c)))
        c = '_';
    u.name = kernel;
    units.push_back(u);
  }
  for (Unit &u : units)
    for (int64_t w : u.waits) {
      if (w < 0 || w >= u.index)
        return u.op->emitError("thunder.wait names kernel ")
               << w << ", which does not run before kernel " << u.index;
      if (!units[w].recorded) {
        units[w].recorded = true;
        units[w].event = numEvents++;
      }
    }
  // Value names of region-internal yielded values become the fusion's
  // results: the op that computes one writes it in place.
  for (Unit &u : units)
    if (auto fusion = dyn_cast<FusionOp>(u.op)) {
      auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
      llvm::DenseSet<Value> seen;
      for (auto [inner, result] : llvm::zip(yield.getValues(), fusion.getResults()))
        if (inner.getDefiningOp() && inner.getParentRegion() == &fusion.getBody() &&
            !isa<ConstantOp>(inner.getDefiningOp()) && seen.insert(inner).second)
          names[inner] = names.lookup(result);
    }
  if (failed(planStorage()))
    return failure();

  std::string device, host;
  llvm::raw_string_ostream dev(device), hst(host);
  for (Unit &u : units)
    if (failed(emitUnit(u, dev, hst)))
      return failure();

  std::string text;
  llvm::raw_string_ostream os(text);
  bool isStatic = plan.symbols().empty();
  os << "// Generated by Thunder for model '" << options.modelName
     << "' (target " << dialect.target << ", " << options.*dialect.archs
     << "). Do not edit.\n"
     << "// One kernel or library call per unit (a fusion region, or an op outside one);\n"
     << "// each is preceded by its ops and their source lines.\n"
     << "#include \"" << dialect.supportHeader << "\"\n#include \"" << dialect.libsHeader
     << "\"\n#include \"thunder-c/artifact.h\"\n\n"
     << "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
     << "#include <atomic>\n#include <memory>\n\n"
     << "using namespace " << dialect.ns << ";\n\n"
     << (options.externalWeights ? ""
                                 : "extern \"C\" const unsigned char thunder_weights_blob[];\n\n")
     << codegen::customKernelDeclarations(func->getParentOfType<ModuleOp>())
     << "namespace {\n\n"
     << "constexpr int kNumSymbols = " << plan.symbols().size() << ";\n"
     << "constexpr int kNumStreams = " << numStreams << ";\n"
     << "constexpr int kNumEvents = " << numEvents << ";\n"
     << "constexpr bool kNeedsLt = " << (needsLt ? "true" : "false") << ";\n"
     << "constexpr bool kNeedsDnn = " << (needsDnn ? "true" : "false") << ";\n"
     << "constexpr bool kStaticShapes = " << (isStatic ? "true" : "false") << ";\n"
     << dialect.spell("/// @graph@s: one per workspace and set of dynamic sizes.\n")
     << "constexpr int kRngSeed = kNumSymbols + 1, kRngOffset = kNumSymbols + 2;\n"
     // A graph would replay the random key it was captured with.
     << (codegen::usesRandom(func)
             ? dialect.spell("/// No @graph@s: a replay would draw the numbers it was captured with.\n")
             : "")
     << "constexpr bool kGraphs = " << (codegen::usesRandom(func) ? "false" : "true") << ";\n"
     << dialect.spell("/// Bytes each @gemm_lib@/@conv_lib@ call may use: in the arena where the memory\n")
     << "/// plan placed it (thunder.workspace), else per stream after the arena.\n"
     << "constexpr uint64_t kLibWorkspace = " << (needsLt || needsDnn ? dialect.libraries.workspace : 0)
     << "ULL;\n"
     << "constexpr uint64_t kStreamLibWorkspace = "
     << (streamWorkspaces ? dialect.libraries.workspace : 0) << "ULL;\n"
     << "constexpr uint64_t kBlobBytes = " << blob->size() << "ULL;\n"
     << "constexpr uint64_t kDeviceBytes = " << deviceBytes << "ULL;\n"
     << "const char *const kArchs = " << cppString(options.*dialect.archs) << ";\n"
     << "constexpr int kNumInputs = " << func.getNumArguments() << ";\n"
     << "constexpr int kNumOutputs = " << func.getNumResults() << ";\n"
     << "/// Bytes per element of each input and output.\n"
     << "constexpr uint64_t kInputBytes[] = {" << elementSizes(func.getArgumentTypes()) << "};\n"
     << "constexpr uint64_t kOutputBytes[] = {" << elementSizes(func.getResultTypes()) << "};\n\n"
     << "/// The dynamic sizes, passed to kernels by value.\n"
     << "struct Syms { int64_t s[kNumSymbols + 1]; };\n\n"
     << "inline int64_t window_size(int64_t in, int64_t k, int64_t s, int64_t lo,\n"
     << "                           int64_t hi, int64_t d, bool ceil_mode) {\n"
     << "  int64_t span = in + lo + hi - d * (k - 1) - 1;\n"
     << "  int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;\n"
     << "  if (ceil_mode && (out - 1) * s >= in + lo) --out;\n"
     << "  return out;\n}\n\n"
     << "/// A kernel of this library: whether it can run tells whether the library\n"
     << "/// holds code for the device.\n"
     << dialect.syntax.kernel << " void thunder_probe() {}\n\n";
  codegen::emitComputeSymbols(os, plan, [&](Value v, unsigned d) { return dimExpr(v, d); });

  // The workspace: the arena, then per stream a library workspace and the
  // scratch its kernels need (im2col, temporaries of regions run op by op).
  auto retOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  os << "struct Layout {\n  uint64_t off[" << slots.size() + 1 << "];\n"
     << "  uint64_t lib[kNumStreams], scratch[kNumStreams], scratch_bytes[kNumStreams];\n"
     << "  uint64_t in[" << func.getNumArguments() + 1 << "], out["
     << retOp.getNumOperands() + 1 << "];\n"
     << "  uint64_t total;\n};\n\n"
     << dialect.spell("/// `staged`: a @graph@ replays on fixed buffers, so inputs and outputs\n")
     << "/// pass through staging buffers at the end of the workspace.\n"
     << "static void layout(const int64_t *sym, Layout &L, bool staged) {\n  (void)sym;\n"
     << "  uint64_t at = 0;\n";
  if (plannedArena) {
    os << "  // The memory plan's arena (thunder-plan-memory).\n";
    for (auto [i, s] : llvm::enumerate(slots))
      if (s.output < 0)
        os << "  L.off[" << i << "] = " << s.planned << "ULL;\n";
    os << "  at = " << arenaBytes << "ULL;\n";
  } else {
    os << "  // One 256-byte aligned slot per value that crosses units.\n";
    for (auto [i, s] : llvm::enumerate(slots))
      if (s.output < 0)
        os << "  L.off[" << i << "] = at; at += (" << bytesExpr(s.value)
           << " + 255) & ~255ULL;\n";
  }
  os << "  uint64_t need[kNumStreams] = {};\n";
  for (Unit &u : units) {
    std::string scratch = unitScratch(u);
    if (scratch != "0")
      os << "  need[" << u.stream << "] = std::max<uint64_t>(need[" << u.stream
         << "], uint64_t(" << scratch << "));\n";
  }
  os << "  for (int s = 0; s < kNumStreams; ++s) {\n"
     << "    L.lib[s] = at; at += kStreamLibWorkspace;\n"
     << "    L.scratch[s] = at; L.scratch_bytes[s] = (need[s] + 255) & ~255ULL;\n"
     << "    at += L.scratch_bytes[s];\n  }\n";
  for (BlockArgument arg : func.getArguments())
    os << "  L.in[" << arg.getArgNumber() << "] = at; if (staged) at += (" << bytesExpr(arg)
       << " + 255) & ~255ULL;\n";
  for (auto [k, v] : llvm::enumerate(retOp.getOperands()))
    os << "  L.out[" << k << "] = at; if (staged) at += (" << bytesExpr(v)
       << " + 255) & ~255ULL;\n";
  os << "  L.total = at;\n}\n\n";

  os << "// Kernels.\n" << device << "\n";

  os << dialect.spell(
      "/// The model state: device weights and the runtime (streams, events,\n"
        "/// @gemm_lib@, the @graph@).\n"
        "struct State {\n  DeviceBuffer weights;\n  Runtime rt;\n};\n\n");

  os << dialect.spell(
      "/// Enqueues one run on `main` (the caller's stream, or the capture stream)\n"
        "/// reading the inputs from `in` and writing the outputs to `out` (the\n"
        "/// caller's buffers, or staging buffers in the workspace under a graph).\n"
        "static int enqueue(State &state, const thunder_tensor *inputs, const void *const *in,\n"
        "                   void *const *out, char *ws, @stream_t@ main, uint64_t seed,\n"
        "                   uint64_t offset, char *error, size_t error_size) {\n"
        "  int64_t sym[kNumSymbols + 3];\n  compute_symbols(inputs, sym);\n"
        "  sym[kRngSeed] = int64_t(seed);\n  sym[kRngOffset] = int64_t(offset);\n"
        "  Layout L;\n  layout(sym, L, state.rt.graphs);\n"
        "  Syms S;\n  for (int i = 0; i <= kNumSymbols; ++i) S.s[i] = i < kNumSymbols ? sym[i] : 0;\n"
        "  (void)S;\n"
        "  const char *W = static_cast<const char *>(state.weights.ptr);\n  (void)W;\n"
        "  Runtime &rt = state.rt;\n"
        "  int failure = 0;\n"
        "  auto ctx = [&](int s) {\n"
        "    Ctx c;\n    c.stream = rt.stream(s, main);\n    c.sms = rt.sms;\n"
        "    c.lt = rt.have_lt ? &rt.lt : nullptr;\n"
        "    c.dnn = rt.have_dnn ? &rt.dnn : nullptr;\n"
        "    c.lib_workspace = ws + L.lib[s];\n    c.lib_workspace_bytes = kLibWorkspace;\n"
        "    c.scratch = ws + L.scratch[s];\n    c.scratch_bytes = L.scratch_bytes[s];\n"
        "    c.error = &failure;\n    return c;\n  };\n  (void)ctx;\n");
  emitShapes(os);
  for (BlockArgument arg : func.getArguments())
    os << "  const " << elem(arg) << " *" << name(arg) << " = static_cast<const " << elem(arg)
       << " *>(in[" << arg.getArgNumber() << "]);\n";
  for (auto [i, s] : llvm::enumerate(slots)) {
    os << "  " << elem(s.value) << " *" << name(s.value) << " = ";
    if (s.output >= 0)
      os << "static_cast<" << elem(s.value) << " *>(out[" << s.output << "]);\n";
    else
      os << "reinterpret_cast<" << elem(s.value) << " *>(ws + L.off[" << i << "]);\n";
  }
  for (auto &[v, b] : codegen::inBlobOrder(blobOffsets, [&](Value v) { return name(v); }))
    os << "  const " << elem(v) << " *" << name(v) << " = reinterpret_cast<const " << elem(v)
       << " *>(W + " << b << ");\n";
  func.walk([&](ReshapeOp r) {
    if (r->getParentOp() == func.getOperation())
      os << "  const " << elem(r) << " *" << name(r) << " = " << name(r.getOperand()) << ";\n";
  });
  if (numStreams > 1)
    os << "  rt.fork(main);\n";
  os << "\n" << host;
  // The join first: an output copied here may come from another stream.
  if (numStreams > 1)
    os << "  rt.join(main);\n";
  os << "  // Outputs no kernel wrote.\n";
  for (auto &[k, v] : outputCopies)
    os << "  " << dialect.runtime.memcpyAsync << "(out[" << k << "], " << name(v) << ", "
       << bytesExpr(v) << ", " << dialect.runtime.deviceToDevice << ", main);\n";
  os << "  if (failure)\n    return report_library(error, error_size, failure, &rt.dnn);\n"
        "  return 0;\n}\n\n";

  codegen::emitOutputShapes(os, func, [&](Value v, unsigned d) { return dimExpr(v, d); });
  os << "uint64_t workspace_bytes(const void *state, const thunder_tensor *inputs) {\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n"
        "  Layout L;\n  layout(sym, L, static_cast<const State *>(state)->rt.graphs);\n"
        "  return L.total;\n}\n\n";
  std::string weightsFile;
  if (options.externalWeights)
    weightsFile = codegen::safetensorsHeader(options.modelName, blobEntries, &weightsHeaderBytes);
  emitEntry(os);

  out.files.push_back({dialect.source, text});
  for (const SupportFile &f : dialect.supportFiles)
    out.files.push_back({f.path, f.contents});
  // The vendor-neutral headers the dialect's include.
  out.files.push_back({"thunder_scalar.h", kThunderScalarHeader});
  out.files.push_back({"thunder_gpu.h", kThunderGpuHeader});
  out.files.push_back({"thunder_gpu_nn.h", kThunderGpuNnHeader});
  out.files.push_back({"thunder_gpu_libs.h", kThunderGpuLibsHeader});
  out.files.push_back({"thunder-c/artifact.h", kArtifactHeader});
  if (options.externalWeights) {
    out.files.push_back({options.modelName + ".safetensors", std::move(weightsFile), blob,
                         /*binary=*/true});
    out.artifacts.push_back(options.modelName + ".safetensors");
    out.compileUnits = {dialect.source};
    return codegen::addCustomKernelUnits(func->getParentOfType<ModuleOp>(), dialect.target, out);
  }
  out.files.push_back({"weights.bin", "", blob, /*binary=*/true});
  // A host-only translation unit: the assembler embeds the blob.
  // THUNDER_WEIGHTS_BIN (the blob's absolute path) comes from the link line.
  out.files.push_back({"weights.cpp",
                       "// The model's weights, embedded at link time.\n"
                       "asm(\".section .rodata\\n\\t.balign 256\\n\"\n"
                       "    \"\\t.globl thunder_weights_blob\\n\"\n"
                       "    \"\\t.type thunder_weights_blob, @object\\n\"\n"
                       "    \"thunder_weights_blob:\\n\"\n"
                       "    \"\\t.incbin \\\"\" THUNDER_WEIGHTS_BIN \"\\\"\\n\\t.byte 0\\n\\t.previous\\n\");\n"});
  out.compileUnits = {dialect.source, "weights.cpp"};
  return codegen::addCustomKernelUnits(func->getParentOfType<ModuleOp>(), dialect.target, out);
}

/// create(): the runtime (device checks, streams, the GEMM library), the
/// weights in device memory, splat constants filled; run(): through the graph.
std::string GpuEmitter::createAndRun() {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/// Copies the weights to the device and fills the splat constants.\n"
        "static int upload(State &model, const unsigned char *blob, char *error, size_t size) {\n"
        "  if (kDeviceBytes == 0)\n    return 0;\n"
        "  @error_t@ e = @malloc@(&model.weights.ptr, kDeviceBytes);\n"
        "  if (e != @success@)\n    return report(error, size, \"allocating the weights\", e);\n"
        "  if (kBlobBytes && (e = @memcpy@(model.weights.ptr, blob, kBlobBytes,\n"
        "                                    @hostToDevice@)) != @success@)\n"
        "    return report(error, size, \"copying the weights to the device\", e);\n"
        "  @stream_t@ s;\n"
        "  if ((e = @streamCreateWithFlags@(&s, @streamNonBlocking@)) != @success@)\n"
        "    return report(error, size, \"@streamCreate@\", e);\n"
        "  Ctx c;\n  c.stream = s;\n  c.sms = model.rt.sms;\n"
        "  char *W = static_cast<char *>(model.weights.ptr);\n  (void)W;\n";
  for (auto &[v, offset, literal] : splats)
    os << "  fill(c, reinterpret_cast<" << elem(v) << " *>(W + " << offset << "), "
       << typeOf(v).getNumElements() << "LL, st<" << elem(v) << ">(" << literal << "));\n";
  // A synchronous copy from pageable memory may return before the copy lands, and the
  // first run may be on a non-blocking stream: the device is idle before
  // create() returns.
  os << "  e = @streamSynchronize@(s);\n  @streamDestroy@(s);\n"
        "  if (e == @success@)\n    e = @deviceSynchronize@();\n"
        "  if (e == @success@)\n    e = @getLastError@();\n"
        "  return e == @success@ ? 0 : report(error, size, \"filling the constants\", e);\n}\n\n"
        "int create(const char *path, void **state, char *error, size_t error_size) {\n"
        "  (void)path;\n"
        "  auto st = std::make_unique<State>();\n"
        "  if (int rc = st->rt.init(kNumStreams, kNumEvents, kNeedsLt, kNeedsDnn, kGraphs,\n"
        "                           reinterpret_cast<const void *>(&thunder_probe), kArchs,\n"
        "                           error, error_size))\n    return rc;\n"
        "  if (kNeedsLt && !st->rt.have_lt) {\n"
        "    snprintf(error, error_size, \"this model's GEMMs need @gemm_lib@: %s\",\n"
        "             st->rt.lt_missing.c_str());\n    return 1;\n  }\n"
        "  if (kNeedsDnn && !st->rt.have_dnn) {\n"
        "    snprintf(error, error_size, \"this model's convolutions need @conv_lib@: %s\",\n"
        "             st->rt.dnn_missing.c_str());\n    return 1;\n  }\n";
  if (!options.externalWeights) {
    os << "  if (int rc = upload(*st, thunder_weights_blob, error, error_size))\n"
          "    return rc;\n";
  } else {
    uint64_t dataStart = 8 + weightsHeaderBytes;
    os << codegen::mapWeightsFile(dataStart + blob->size(), {"info", false})
       << llvm::formatv(R"cpp(  int rc = header == {0}ULL
               ? upload(*st, static_cast<const unsigned char *>(map) + {1}, error, error_size)
               : (snprintf(error, error_size,
                           "the weights file %s was not written for this model", path), 1);
  munmap(map, info.st_size);
  if (rc)
    return rc;
)cpp",
                        weightsHeaderBytes, dataStart);
  }
  os << "  *state = st.release();\n  return 0;\n}\n\n"
        "void destroy(void *state) { delete static_cast<State *>(state); }\n\n"
        "/// A run with the random key (seed, offset) (thunder.random).\n"
        "int run_seeded(const void *state, const thunder_tensor *inputs,\n"
        "               const thunder_tensor *outputs, void *workspace, void *stream,\n"
        "               uint64_t seed, uint64_t offset, char *error, size_t error_size) {\n"
        "  State &model = *static_cast<State *>(const_cast<void *>(state));\n"
        "  @stream_t@ caller = static_cast<@stream_t@>(stream);\n"
        "  char *ws = static_cast<char *>(workspace);\n"
        "  // Library workspaces sit at 256-byte multiples of it (@gemm_lib@'s alignment).\n"
        "  if (reinterpret_cast<uintptr_t>(ws) % 256) {\n"
        "    snprintf(error, error_size, \"the workspace is not 256-byte aligned\");\n"
        "    return 1;\n  }\n"
        "  const void *in[kNumInputs + 1];\n  void *out[kNumOutputs + 1];\n"
        "  if (!model.rt.graphs) {\n"
        "    for (int i = 0; i < kNumInputs; ++i) in[i] = inputs[i].data;\n"
        "    for (int i = 0; i < kNumOutputs; ++i) out[i] = outputs[i].data;\n"
        "    return model.rt.run(caller, {}, [&](@stream_t@ main) {\n"
        "      return enqueue(model, inputs, in, out, ws, main, seed, offset, error, error_size);\n"
        "    }, error, error_size);\n  }\n"
        "  // The graph runs on staging buffers (captured once per workspace): the\n"
        "  // inputs are copied in before it and the outputs out after it.\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n"
        "  Layout L;\n  layout(sym, L, true);\n"
        "  @error_t@ e = @success@;\n"
        "  for (int i = 0; i < kNumInputs && e == @success@; ++i) {\n"
        "    in[i] = ws + L.in[i];\n"
        "    e = @memcpyAsync@(ws + L.in[i], inputs[i].data, kInputBytes[i] * numel(inputs[i].shape, inputs[i].rank),\n"
        "                        @deviceToDevice@, caller);\n  }\n"
        "  for (int i = 0; i < kNumOutputs; ++i) out[i] = ws + L.out[i];\n"
        "  if (e != @success@)\n    return report(error, error_size, \"staging the inputs\", e);\n"
        "  // One graph per workspace and set of dynamic sizes.\n"
        "  std::vector<uintptr_t> key = {reinterpret_cast<uintptr_t>(ws)};\n"
        "  for (int i = 0; i < kNumSymbols; ++i)\n"
        "    key.push_back(uintptr_t(sym[i]));\n"
        "  if (int rc = model.rt.run(caller, key, [&](@stream_t@ main) {\n"
        "        return enqueue(model, inputs, in, out, ws, main, seed, offset, error, error_size);\n"
        "      }, error, error_size))\n    return rc;\n"
        "  for (int k = 0; k < kNumOutputs && e == @success@; ++k)\n"
        "    e = @memcpyAsync@(outputs[k].data, out[k],\n"
        "                        kOutputBytes[k] * numel(outputs[k].shape, outputs[k].rank),\n"
        "                        @deviceToDevice@, caller);\n"
        "  return e == @success@ ? 0 : report(error, error_size, \"copying the outputs\", e);\n}\n\n";
  // A plain run of a program that draws random numbers: seed 0 and the
  // library's own count of runs (the runtime calls run_seeded).
  if (codegen::usesRandom(func))
    os << "std::atomic<uint64_t> plain_runs{0};\n";
  os << "int run(const void *state, const thunder_tensor *inputs, const thunder_tensor *outputs,\n"
        "        void *workspace, void *stream, char *error, size_t error_size) {\n"
        "  return run_seeded(state, inputs, outputs, workspace, stream, 0, "
     << (codegen::usesRandom(func) ? "plain_runs.fetch_add(1)" : "0")
     << ",\n                    error, error_size);\n}\n\n";
  return dialect.spell(text);
}

void GpuEmitter::emitEntry(llvm::raw_ostream &os) {
  codegen::emitTensorDescs(os, func);
  os << createAndRun() << "} // namespace\n\n";
  codegen::emitEntryTable(os, func, options.modelName, dialect.target, dialect.deviceEnum,
                          options.externalWeights ? options.modelName + ".safetensors" : "");
  if (codegen::usesRandom(func))
    codegen::emitRandomTable(os);
}

FailureOr<EmittedSources> emitSources(func::FuncOp func, const TargetOptions &options,
                                      const GpuDialect &dialect) {
  FailureOr<ShapePlan> plan = ShapePlan::build(func);
  if (failed(plan))
    return failure();
  EmittedSources sources;
  if (failed(GpuEmitter(func, *plan, options, dialect).run(sources)))
    return failure();
  return sources;
}

} // namespace thunder::gpu
