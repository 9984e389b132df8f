//===- CPUBackend.cpp - C++ code generation for the CPU -------------------===//
//
// Emits one C++ translation unit per model: a kernel per op (elementwise ops
// as loops written out here, structured ops as calls into the shipped
// thunder_cpu.h), a host program that computes dynamic sizes (ShapePlan),
// lays out the workspace and runs the kernels in order, and the
// thunder_model_v1 table of thunder-c/artifact.h. Weights are embedded with
// the assembler's .incbin, so large models do not go through the C++
// compiler. Until the fusion passes land, each op is its own kernel.
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/CPU/CPUBackend.h"

#include "Emitter.h"
#include "thunder/Target/Common/CustomKernels.h"
#include "thunder/Target/Common/WeightsLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Target/ShapePlan.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::thunder;
using ::thunder::EmittedSources;
using ::thunder::PlanDim;
using ::thunder::ShapePlan;
using ::thunder::SymbolDef;
using ::thunder::TargetOptions;
using ::thunder::ToolchainCommand;

namespace {
#include "CPUSupportSources.inc"
} // namespace

namespace thunder::cpu {

LogicalResult Emitter::emitConstant(ConstantOp op, llvm::raw_ostream &os) {
  if (auto splat = dyn_cast<SplatElementsAttr>(op.getValue())) {
    splats.push_back({op.getResult(), codegen::splatLiteral(splat)});
    return success();
  }
  // Dense data (a small literal or a resource blob) goes into the blob.
  FailureOr<uint64_t> offset = codegen::appendConstant(
      op, 64, "constant_" + name(op.getResult()), *blob, blobEntries);
  if (failed(offset))
    return failure();
  blobOffsets[op.getResult()] = *offset;
  return success();
}

/// The shape array of every input and of every value outside kernels.
void Emitter::emitShapes(llvm::raw_ostream &os) {
  auto emitShape = [&](Value v) {
    auto dimsOf = plan.dims(v);
    os << "  const int64_t " << shape(v) << "[" << std::max<size_t>(1, dimsOf.size())
       << "] = {";
    for (auto [i, d] : llvm::enumerate(dimsOf))
      os << (i ? ", " : "")
         << (d.isDynamic() ? "sym[" + std::to_string(d.symbol) + "]"
                           : std::to_string(d.size) + "LL");
    os << (dimsOf.empty() ? "1" : "") << "};\n";
  };
  for (BlockArgument arg : func.getArguments())
    emitShape(arg);
  // Values inside kernels share the arrays of the values outside.
  for (Operation &op : func.getBody().front())
    for (Value r : op.getResults())
      if (isa<RankedTensorType>(r.getType()))
        emitShape(r);
}


//===----------------------------------------------------------------------===//
// The memory plan (thunder-plan-memory)
//===----------------------------------------------------------------------===//

namespace {
constexpr int64_t kRuntimeOffset = -9223372036854775807LL;
} // namespace

LogicalResult Emitter::readMemoryPlan() {
  auto arena = func->getAttrOfType<DictionaryAttr>("thunder.arena");
  if (!arena)
    return func.emitError("the CPU backend needs the memory plan "
                          "(thunder.arena); run thunder-plan-memory first");
  dynamicArena = arena.get("dynamic") != nullptr;
  if (auto bytes = arena.getAs<IntegerAttr>("bytes"))
    arenaBytes = bytes.getInt();
  // Arena tensors packed at run time, in schedule order, by value.
  llvm::DenseMap<Value, int64_t> runtimeIndex;
  auto viewed = [](Value v) {
    while (auto r = dyn_cast_or_null<ReshapeOp>(v.getDefiningOp()))
      v = r.getOperand();
    return v;
  };
  for (auto fusion : func.getBody().front().getOps<FusionOp>()) {
    auto offsets = fusion->getAttrOfType<DenseI64ArrayAttr>("thunder.offsets");
    auto live = fusion->getAttrOfType<DenseI64ArrayAttr>("thunder.live");
    auto inplace = fusion->getAttrOfType<DenseI64ArrayAttr>("thunder.inplace");
    auto borrowed = fusion->getAttrOfType<DenseI64ArrayAttr>("thunder.borrowed");
    if (!offsets || offsets.size() != fusion.getNumResults())
      return fusion.emitError("a kernel without its memory plan "
                              "(thunder.offsets); run thunder-plan-memory first");
    for (auto [i, result] : llvm::enumerate(fusion.getResults())) {
      Placement p;
      p.value = result;
      int64_t offset = offsets[i];
      if (offset == kRuntimeOffset) {
        if (!live || !inplace)
          return fusion.emitError("a run-time arena needs thunder.live and "
                                  "thunder.inplace");
        p.kind = Placement::Runtime;
        p.index = runtimeIndex.size();
        RuntimeTensor t{result, live[2 * i], live[2 * i + 1], -1};
        if (int64_t operand = inplace[i]; operand >= 0) {
          auto it = runtimeIndex.find(viewed(fusion.getInputs()[operand]));
          if (it != runtimeIndex.end())
            t.reuses = it->second;
        }
        runtimeIndex[result] = p.index;
        runtimeTensors.push_back(t);
      } else if (offset < 0) {
        p.kind = Placement::Output;
        p.output = -1 - offset;
      } else if (borrowed && borrowed[i] >= 0) {
        p.kind = Placement::Borrowed;
        p.output = borrowed[i];
        p.offset = offset;
      } else {
        p.kind = Placement::Arena;
        p.offset = offset;
      }
      placements.push_back(p);
    }
  }
  return success();
}

void Emitter::emitLayout(llvm::raw_ostream &os) {
  // The arena first, then a 64-byte aligned slot per splat constant (filled
  // at the start of each run) that a library kernel reads from memory.
  os << "/// Workspace offsets (run-time arena tensors, then splat constants);\n"
        "/// returns the total bytes.\n"
        "static uint64_t layout(const int64_t *sym, uint64_t *offsets) {\n"
        "  (void)sym; (void)offsets;\n";
  if (!dynamicArena) {
    os << "  uint64_t at = " << arenaBytes << "ULL;\n";
  } else {
    os << "  // The arena's plan for these sizes (thunder::arena::packTensors,\n"
          "  // what the compiler does for static shapes), remembered per size.\n"
          "  static std::mutex mutex;\n"
          "  static std::vector<int64_t> lastSym;\n"
          "  static std::vector<uint64_t> lastOffsets;\n"
          "  static uint64_t lastTotal = 0;\n"
          "  std::vector<int64_t> key(sym, sym + kNumSymbols);\n"
          "  std::lock_guard<std::mutex> lock(mutex);\n"
          "  if (lastOffsets.empty() || key != lastSym) {\n"
          "    std::vector<thunder::arena::Tensor> tensors(" << runtimeTensors.size() << ");\n";
    for (auto [i, t] : llvm::enumerate(runtimeTensors))
      os << "    tensors[" << i << "] = {uint64_t((" << numelExpr(t.value) << ") * "
         << elementBytes(typeOf(t.value).getElementType()) << "), " << t.first
         << ", " << t.last << ", " << t.reuses << "};\n";
    os << "    lastOffsets = thunder::arena::packTensors(tensors, 64, &lastTotal);\n"
          "    lastSym = key;\n  }\n"
          "  std::copy(lastOffsets.begin(), lastOffsets.end(), offsets);\n"
          "  uint64_t at = lastTotal;\n";
  }
  size_t base = runtimeTensors.size();
  for (auto [i, splat] : llvm::enumerate(splats)) {
    Value v = splat.first;
    os << "  at = (at + 63) & ~63ULL; offsets[" << base + i << "] = at; at += ("
       << numelExpr(v) << ") * " << elementBytes(typeOf(v).getElementType())
       << "ULL;\n";
  }
  os << "  return at;\n}\n\n";
}

void Emitter::emitPlacements(llvm::raw_ostream &os) {
  for (const Placement &p : placements) {
    Value v = p.value;
    std::string type = elem(v);
    os << "  " << type << " *" << name(v) << " = ";
    switch (p.kind) {
    case Placement::Arena:
      os << "reinterpret_cast<" << type << " *>(ws + " << p.offset << ");\n";
      break;
    case Placement::Runtime:
      os << "reinterpret_cast<" << type << " *>(ws + offsets[" << p.index << "]);\n";
      break;
    case Placement::Output:
      os << "static_cast<" << type << " *>(outputs[" << p.output << "].data);\n";
      break;
    case Placement::Borrowed:
      os << "reinterpret_cast<" << type << " *>(static_cast<char *>(outputs["
         << p.output << "].data) + " << p.offset << ");\n";
      break;
    }
  }
  size_t base = runtimeTensors.size();
  for (auto [i, splat] : llvm::enumerate(splats))
    os << "  " << elem(splat.first) << " *" << name(splat.first) << " = reinterpret_cast<"
       << elem(splat.first) << " *>(ws + offsets[" << base + i << "]);\n";
}

/// The headers every compiled CPU model needs, written next to its source.
static void addSupportFiles(EmittedSources &out) {
  out.files.push_back({"thunder_cpu.h", kThunderCpuHeader});
  out.files.push_back({"thunder_cpu_conv.h", kThunderCpuConvHeader});
  out.files.push_back({"thunder_scalar.h", kThunderScalarHeader});
  out.files.push_back({"thunder_arena_packing.h", kArenaPackingHeader});
  out.files.push_back({"thunder-c/artifact.h", kArtifactHeader});
}

LogicalResult Emitter::run(EmittedSources &out) {
  // Names and storage.
  for (BlockArgument arg : func.getArguments())
    names[arg] = "a" + std::to_string(arg.getArgNumber());
  unsigned counter = 0;
  bool ok = true;
  for (Operation &top : func.getBody().front().without_terminator()) {
    Operation *op = &top;
    if (!isa<FusionOp, ConstantOp, ReshapeOp>(op)) {
      op->emitError("the CPU backend expects kernels (thunder.fusion), "
                    "constants and views at the top level; run the kernel "
                    "pipeline (thunder-kernel-pipeline) first");
      ok = false;
      continue;
    }
    for (Value result : op->getResults()) {
      names[result] = "v" + std::to_string(counter++);
      if (failed(cppType(typeOf(result).getElementType()))) {
        op->emitError("unsupported element type");
        ok = false;
        continue;
      }
      if (auto c = dyn_cast<ConstantOp>(op))
        ok &= succeeded(emitConstant(c, llvm::nulls()));
    }
  }
  // Element types inside kernels.
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType());
          type && failed(cppType(type.getElementType()))) {
        op->emitError("unsupported element type");
        ok = false;
      }
  });
  if (!ok || failed(readMemoryPlan()))
    return failure();

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by Thunder for model '" << options.modelName
     << "' (target cpu). Do not edit.\n"
     << "// One block per kernel, in launch order; each names its ops and source lines.\n"
     << "#include \"thunder_cpu.h\"\n#include \"thunder-c/artifact.h\"\n\n"
     << "#include <cstdio>\n"
     << (dynamicArena ? "#include <mutex>\n#include \"thunder_arena_packing.h\"\n" : "")
     << "\n"
     << "using namespace thunder_cpu;\n\n"
     << (options.externalWeights
             ? "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n"
               "#include <unistd.h>\n\n"
             : "extern \"C\" const unsigned char thunder_weights_blob[];\n\n")
     << codegen::customKernelDeclarations(func->getParentOfType<ModuleOp>())
     << "namespace {\n\n"
     << "constexpr int kNumSymbols = " << plan.symbols().size() << ";\n\n"
     << "inline int64_t window_size(int64_t in, int64_t k, int64_t s, int64_t lo,\n"
     << "                           int64_t hi, int64_t d, bool ceil_mode) {\n"
     << "  int64_t span = in + lo + hi - d * (k - 1) - 1;\n"
     << "  int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;\n"
     << "  if (ceil_mode && (out - 1) * s >= in + lo) --out;\n"
     << "  return out;\n}\n\n";
  codegen::emitComputeSymbols(os, plan, [&](Value v, unsigned d) { return dimExpr(v, d); });

  emitLayout(os);

  os << "int run_model(const unsigned char *weights, const thunder_tensor *inputs,\n"
        "              const thunder_tensor *outputs, void *workspace) {\n"
        "  (void)weights;\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n"
        "  uint64_t offsets[" << numOffsets() << "];\n"
        "  layout(sym, offsets);\n"
        "  char *ws = static_cast<char *>(workspace);\n  (void)ws;\n";
  emitShapes(os);
  for (BlockArgument arg : func.getArguments())
    os << "  const " << elem(arg) << " *" << name(arg) << " = static_cast<const "
       << elem(arg) << " *>(inputs[" << arg.getArgNumber() << "].data);\n";
  emitPlacements(os);
  for (auto &[v, b] : codegen::inBlobOrder(blobOffsets, [&](Value v) { return name(v); }))
    os << "  const " << elem(v) << " *" << name(v) << " = reinterpret_cast<const "
       << elem(v) << " *>(weights + " << b << ");\n";
  for (auto r : func.getBody().front().getOps<ReshapeOp>())
    os << "  const " << elem(r) << " *" << name(r) << " = " << name(r.getOperand())
       << ";\n";
  for (auto &[v, literal] : splats)
    os << "  std::fill(" << name(v) << ", " << name(v) << " + (" << numelExpr(v)
       << "), st<" << elem(v) << ">(" << literal << "));\n";
  os << "\n";

  for (auto fusion : func.getBody().front().getOps<FusionOp>())
    if (failed(emitFusion(fusion, os)))
      return failure();

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  os << "  // Results.\n";
  // Kernels wrote their results into the caller's buffers (the memory
  // plan); what was not written there (an input, a weight, a value returned
  // twice) is copied.
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    os << "  if (static_cast<const void *>(" << name(v) << ") != outputs[" << i
       << "].data)\n    std::memcpy(outputs[" << i << "].data, " << name(v)
       << ", (" << numelExpr(v) << ") * "
       << elementBytes(typeOf(v).getElementType()) << "ULL);\n";
  os << "  return 0;\n}\n\n";

  // Output shapes and workspace size from the inputs.
  codegen::emitOutputShapes(os, func, [&](Value v, unsigned d) { return dimExpr(v, d); });
  os << "uint64_t workspace_bytes(const void *, const thunder_tensor *inputs) {\n"
        "  int64_t sym[kNumSymbols + 1];\n  compute_symbols(inputs, sym);\n"
        "  uint64_t offsets[" << numOffsets() << "];\n"
        "  return layout(sym, offsets);\n}\n\n";
  // The weights file first: the entry's create() checks its exact size.
  std::string weightsFile;
  if (options.externalWeights)
    weightsFile = codegen::safetensorsHeader(options.modelName, blobEntries, &weightsHeaderBytes);
  emitEntry(os);

  out.files.push_back({"model.cpp", text});
  if (options.externalWeights) {
    out.files.push_back({options.modelName + ".safetensors", std::move(weightsFile), blob,
                         /*binary=*/true});
    out.artifacts.push_back(options.modelName + ".safetensors");
    addSupportFiles(out);
    out.compileUnits = {"model.cpp"};
    return codegen::addCustomKernelUnits(func->getParentOfType<ModuleOp>(), "cpu", out);
  }
  out.files.push_back({"weights.bin", "", blob, /*binary=*/true});
  out.files.push_back(
      {"weights.S", "# The model's weights, embedded at link time.\n"
                    "\t.section .rodata\n\t.balign 64\n"
                    "\t.globl thunder_weights_blob\n"
                    "\t.type thunder_weights_blob, @object\n"
                    "thunder_weights_blob:\n"
                    "\t.incbin \"weights.bin\"\n\t.byte 0\n"
                    "\t.section .note.GNU-stack,\"\",@progbits\n"});
  addSupportFiles(out);
  out.compileUnits = {"model.cpp", "weights.S"};
  return codegen::addCustomKernelUnits(func->getParentOfType<ModuleOp>(), "cpu", out);
}

/// The model state: the embedded blob, or the memory-mapped weights file
/// (checked to be the one this library was compiled with).
std::string Emitter::createAndRun() {
  if (!options.externalWeights)
    return "int create(const char *, void **state, char *, size_t) {\n"
           "  thunder_cpu_init();\n"
           "  *state = const_cast<unsigned char *>(thunder_weights_blob);\n"
           "  return 0;\n}\n"
           "void destroy(void *) {}\n"
           "int run(const void *state, const thunder_tensor *inputs,\n"
           "        const thunder_tensor *outputs, void *workspace, void *,\n"
           "        char *, size_t) {\n"
           "  return run_model(static_cast<const unsigned char *>(state), inputs,\n"
           "                   outputs, workspace);\n}\n\n";
  uint64_t dataStart = 8 + weightsHeaderBytes;
  return "struct Weights { void *map; size_t size; };\n"
         "int create(const char *path, void **state, char *error, size_t error_size) {\n"
         "  thunder_cpu_init();\n" +
         codegen::mapWeightsFile(dataStart + blob->size(), {"st", true}) +
         llvm::formatv(R"cpp(  if (header != {0}ULL) {{
    munmap(map, st.st_size);
    snprintf(error, error_size,
             "the weights file %s was not written for this model", path);
    return 1;
  }
  *state = new Weights{{map, size_t(st.st_size)};
  return 0;
}
void destroy(void *state) {{
  auto *w = static_cast<Weights *>(state);
  munmap(w->map, w->size);
  delete w;
}
int run(const void *state, const thunder_tensor *inputs,
        const thunder_tensor *outputs, void *workspace, void *, char *, size_t) {{
  const auto *w = static_cast<const Weights *>(state);
  return run_model(static_cast<const unsigned char *>(w->map) + {1}, inputs,
                   outputs, workspace);
}

)cpp",
                       weightsHeaderBytes, dataStart)
             .str();
}

void Emitter::emitEntry(llvm::raw_ostream &os) {
  codegen::emitTensorDescs(os, func);
  os << createAndRun() << "} // namespace\n\n";
  codegen::emitEntryTable(os, func, options.modelName, "cpu", "THUNDER_DEVICE_CPU",
                          options.externalWeights ? options.modelName + ".safetensors" : "");
}

} // namespace thunder::cpu

namespace thunder {

llvm::StringRef CPUBackend::name() const { return "cpu"; }

void registerCPUTargetBackend() {
  registerTargetBackend("cpu", "C++ with OpenMP loops and oneDNN/OpenBLAS GEMMs, built by the system c++",
                        [] { return std::make_unique<CPUBackend>(); });
}

PlanNeeds CPUBackend::planNeeds() const {
  PlanNeeds needs;
  needs.readsBorrowed = true;
  return needs;
}

FailureOr<EmittedSources> CPUBackend::emit(ModuleOp module,
                                           const TargetOptions &options) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expects one function to compile, found ")
           << funcs.size();
  FailureOr<ShapePlan> plan = ShapePlan::build(funcs.front());
  if (failed(plan))
    return failure();
  EmittedSources sources;
  if (failed(cpu::Emitter(funcs.front(), *plan, options).run(sources)))
    return failure();
  return sources;
}

ToolchainCommand CPUBackend::link(const EmittedSources &sources,
                                  llvm::StringRef buildDir,
                                  llvm::StringRef output,
                                  const TargetOptions &options) const {
  ToolchainCommand cmd;
  std::string dir = buildDir.str();
  cmd.argv = {"c++", "-std=c++17", "-O" + std::to_string(options.optLevel),
              "-march=" + options.cpu, "-DTHUNDER_CPU_ARCH=\"" + options.cpu + "\"",
              "-fopenmp", "-fPIC", "-shared",
              "-fvisibility=hidden", "-I" + dir,
              // .incbin "weights.bin" is looked up in the build directory.
              "-Wa,-I," + dir};
  for (const std::string &unit : sources.compileUnits)
    cmd.argv.push_back(dir + "/" + unit);
  cmd.argv.insert(cmd.argv.end(),
                  {"-o", output.str(), "-ldnnl", "-lopenblas", "-Wl,--no-undefined"});
  return cmd;
}

} // namespace thunder
