//===- CPUBackend.cpp - C++ code generation for the CPU -------------------===//
//
// Emits the C++ of a model: a unit per distinct kernel (KernelUnits.cpp:
// loops from EmitFusion.cpp, calls into the shipped thunder_cpu.h from
// EmitKernels.cpp), and model.cpp, a host program that computes dynamic
// sizes (ShapePlan), lays out the workspace and calls the kernels in order,
// with the thunder_model_v1 table of thunder-c/artifact.h. Weights are
// embedded with the assembler's .incbin, so large models do not go through
// the C++ compiler. The build compiles the units apart (compileUnits: in
// parallel, cached by content, kernels at the requested -O, the host at -O1)
// and links them (link).
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/CPU/CPUBackend.h"

#include "Emitter.h"
#include "thunder/Dialect/Thunder/IR/CustomOps.h"
#include "thunder/Target/Common/CustomKernels.h"
#include "thunder/Target/Common/WeightsLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Target/ShapePlan.h"
#include "thunder/Target/Common/RandomTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <set>

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
  // Dense data (a small literal or a resource blob) goes into the blob;
  // weights only GEMMs read, in the GEMM's packed layout.
  if (auto it = packedWeights.find(op.getResult()); it != packedWeights.end())
    return emitPackedConstant(op, it->second);
  // A weight the caller gives at load: a table entry without bytes.
  if (isProvided(op)) {
    auto resource = cast<DenseResourceElementsAttr>(op.getValue());
    providedEntries[op.getResult()] = blobEntries.size();
    blobEntries.push_back(codegen::absentEntry(resource.getRawHandle().getKey(),
                                               cast<RankedTensorType>(op.getType())));
    return success();
  }
  FailureOr<uint64_t> offset = codegen::appendConstant(
      op, 64, "constant_" + name(op.getResult()), *blob, blobEntries);
  if (failed(offset))
    return failure();
  blobOffsets[op.getResult()] = *offset;
  return success();
}

bool Emitter::isProvided(ConstantOp op) const {
  if (options.externalWeights)
    return false;
  auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue());
  if (!resource)
    return false;
  auto it = options.providedWeights.find(resource.getRawHandle().getKey().str());
  if (it == options.providedWeights.end())
    return false;
  // The same dtype and shape: a constant that a fold re-typed over the
  // weight's bytes is the library's own.
  auto type = cast<RankedTensorType>(op.getType());
  return it->second.first == codegen::dtypeCode(type.getElementType()) &&
         llvm::equal(it->second.second, type.getShape());
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

/// The instruction sets of a multi-architecture build (`--cpu=x86-64-v3,x86-64-v4`),
/// lowest first whatever order they were given in (the x86-64 levels by level, any
/// other -march after them as given); one element for a plain -march. Lowest first
/// matters twice: the library requires the first one's features, and its objects are
/// linked first, so the copies of shared library code the linker keeps (std::
/// templates) are the lowest level's, which every variant can run.
static SmallVector<std::string> cpuVariants(llvm::StringRef cpu) {
  SmallVector<llvm::StringRef> parts;
  cpu.split(parts, ',', -1, false);
  SmallVector<std::string> result;
  for (llvm::StringRef p : parts)
    result.push_back(p.trim().str());
  auto level = [](llvm::StringRef arch) {
    if (arch == "x86-64")
      return 1;
    if (arch.consume_front("x86-64-v") && arch.size() == 1 && arch[0] >= '2' && arch[0] <= '4')
      return arch[0] - '0';
    return 9;
  };
  llvm::stable_sort(result, [&](const std::string &a, const std::string &b) {
    return level(a) < level(b);
  });
  return result;
}

/// A variant's symbol suffix: "x86-64-v4" -> "v4" (any other -march: its
/// letters and digits).
static std::string variantTag(llvm::StringRef arch) {
  if (arch.consume_front("x86-64-"))
    return arch.str();
  std::string tag;
  for (char c : arch)
    if (llvm::isAlnum(c))
      tag += c;
  return tag;
}

/// The namespaces of the support headers, renamed per variant in a
/// multi-architecture build: their inline functions are compiled once per
/// instruction set and must not be merged across variants. A support header
/// with a namespace of its own adds it here.
static constexpr llvm::StringLiteral kVariantNamespaces[] = {
    "thunder_cpu", "thunder_math", "thunder_scalar", "thunder_gemm", "thunder_arena"};

/// The CPU features each x86-64 level needs (GCC's names; the runtime's check).
static std::string levelFeatures(llvm::StringRef arch) {
  std::string v2 = "sse3 ssse3 sse4.1 sse4.2 popcnt";
  std::string v3 = v2 + " avx avx2 fma f16c bmi bmi2 lzcnt movbe";
  if (arch == "x86-64-v2")
    return v2;
  if (arch == "x86-64-v3")
    return v3;
  if (arch == "x86-64-v4")
    return v3 + " avx512f avx512dq avx512cd avx512bw avx512vl";
  return "";
}

/// The exported entries of a multi-architecture library: model.cpp is
/// compiled once per instruction set with its names renamed per variant
/// (compileUnits), and this unit, compiled for baseline x86-64, picks the
/// highest variant the machine runs, once, at the first call; the model's
/// table and its weights table come from the same variant.
/// THUNDER_CPU_ISA=<arch> caps the choice (to test a lower path on a newer
/// machine).
static std::string dispatchSource(llvm::ArrayRef<std::string> variants, bool random) {
  std::string text =
      "// Generated by Thunder: picks the model's code for this machine (cpuid).\n"
      "#include \"thunder-c/artifact.h\"\n\n#include <cstdlib>\n#include <cstring>\n\n";
  for (const std::string &v : variants)
    text += "extern \"C\" const thunder_model_v1 *thunder_model_entry_v1_" + variantTag(v) +
            "();\nextern \"C\" const thunder_model_weights_v1 *thunder_model_weights_entry_v1_" +
            variantTag(v) + "();\n";
  text += "\n/// What the lowest variant needs: the runtime refuses the library below it.\n"
          "extern \"C\" __attribute__((visibility(\"default\"))) const char "
          "thunder_model_isa_v1[] = \"" + levelFeatures(variants.front()) + "\";\n\n";
  text += "namespace {\nbool supports(const char *arch) {\n"
          "  __builtin_cpu_init();\n";
  for (const std::string &v : variants) {
    std::string cond, features = levelFeatures(v);
    for (llvm::StringRef f : llvm::split(features, ' '))
      if (!f.empty() && f != "lzcnt" && f != "f16c" && f != "movbe" && f != "bmi")
        cond += std::string(cond.empty() ? "" : " &&\n         ") +
                "__builtin_cpu_supports(\"" + f.str() + "\")";
    text += "  if (!std::strcmp(arch, \"" + v + "\"))\n    return " +
            (cond.empty() ? std::string("false") : cond) + ";\n";
  }
  text += "  return false;\n}\n\n"
          "/// The variant this machine runs: the highest it supports, up to THUNDER_CPU_ISA.\n"
          "int variant() {\n"
          "  static const int chosen = [] {\n"
          "    const char *cap = std::getenv(\"THUNDER_CPU_ISA\");\n"
          "    int best = 0;\n";
  for (auto [i, v] : llvm::enumerate(llvm::ArrayRef(variants).drop_front()))
    text += "    if (cap && !std::strcmp(cap, \"" + variants[i] +
            "\"))\n      return best;\n    if (!supports(\"" + v +
            "\"))\n      return best;\n    best = " + std::to_string(i + 1) + ";\n";
  text += "    return best;\n  }();\n  return chosen;\n}\n} // namespace\n\n";
  SmallVector<std::pair<llvm::StringRef, llvm::StringRef>> entries = {
      {"thunder_model_entry_v1", "thunder_model_v1"},
      {"thunder_model_weights_entry_v1", "thunder_model_weights_v1"}};
  if (random) {
    // Each variant's random table (the entry's name with "_random").
    for (const std::string &v : variants)
      text += "extern \"C\" const thunder_model_random_v1 *thunder_model_entry_v1_" +
              variantTag(v) + "_random();\n";
    entries.push_back({"thunder_model_entry_v1_random", "thunder_model_random_v1"});
  }
  for (auto [entry, type] : entries) {
    text += ("extern \"C\" __attribute__((visibility(\"default\"))) const " + type + " *\n" +
             entry + "() {\n  switch (variant()) {\n")
                .str();
    for (auto [i, v] : llvm::enumerate(variants))
      text += "  case " + std::to_string(i) + ": return " +
              (entry.ends_with("_random")
                   ? "thunder_model_entry_v1_" + variantTag(v) + "_random"
                   : entry.str() + "_" + variantTag(v)) +
              "();\n";
    text += "  }\n  return nullptr;\n}\n\n";
  }
  return text;
}

/// The GEMM and convolution drivers' units in a library's sources
/// (thunder_cpu_gemm.cpp, thunder_cpu_conv.cpp).
/// The libraries a CPU library links after its objects, only where the
/// kernels call them (--as-needed): a model without oneDNN convolutions or
/// float64 GEMMs does not load oneDNN or OpenBLAS, whose start-up (OpenBLAS
/// starts its thread pool as it loads) and pages a served model would
/// otherwise pay for.
static constexpr const char *kRuntimeLibraries[] = {
    "-Wl,--as-needed", "-ldnnl", "-lopenblas", "-Wl,--no-as-needed", "-Wl,--no-undefined"};
static constexpr const char *kGemmUnit = "kernels/thunder_cpu_gemm.cpp";
static constexpr const char *kConvUnit = "kernels/thunder_cpu_conv.cpp";
/// The arena packer of a model with dynamic shapes (thunder_arena_packing.h),
/// compiled once and cached like the drivers.
static constexpr const char *kArenaUnit = "kernels/thunder_arena_packing.cpp";
static constexpr const char *kArenaUnitSource =
    "// Generated by Thunder: the arena packer that a model with dynamic shapes runs\n"
    "// once per set of sizes, compiled once and cached like a kernel. Do not edit.\n"
    "#define THUNDER_ARENA_ENTRY\n"
    "#include \"thunder_arena_packing.h\"\n";

/// The headers every compiled CPU model needs, written next to its source.
static void addSupportFiles(EmittedSources &out) {
  out.files.push_back({"thunder_cpu.h", kThunderCpuHeader});
  out.files.push_back({"thunder_cpu_base.h", kThunderCpuBaseHeader});
  out.files.push_back({"thunder_cpu_host.h", kThunderCpuHostHeader});
  out.files.push_back({"thunder_cpu_conv.h", kThunderCpuConvHeader});
  out.files.push_back({"thunder_cpu_pool.h", kThunderCpuPoolHeader});
  out.files.push_back({"thunder_cpu_gemm.h", kThunderCpuGemmHeader});
  out.files.push_back({"thunder_cpu_gemm_api.h", kThunderCpuGemmApiHeader});
  out.files.push_back({"thunder_cpu_gemm_dot.h", kThunderCpuGemmDotHeader});
  out.files.push_back({"thunder_cpu_gemm_pack.h", kThunderCpuGemmPackHeader});
  out.files.push_back({"thunder_cpu_conv_api.h", kThunderCpuConvApiHeader});
  out.files.push_back({"thunder_cpu_math.h", kThunderCpuMathHeader});
  out.files.push_back({"thunder_cpu_attention.h", kThunderCpuAttentionHeader});
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
  findPackedWeights();
  findChannelsLast();
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
     << "// One call per kernel, in launch order; each names its ops and source lines.\n"
     << "// The kernels are in kernels/, one unit each.\n"
     // The host unit calls kernels in units of their own: it needs the lean
     // host header, not thunder_cpu.h's templates.
     << "#include \"thunder_cpu_host.h\"\n#include \"thunder-c/artifact.h\"\n\n"
     << "#include <atomic>\n#include <cstdio>\n"
     << (dynamicArena ? "#include <mutex>\n#define THUNDER_ARENA_APART\n"
                        "#include \"thunder_arena_packing.h\"\n"
                      : "")
     << "\n"
     << "using namespace thunder_cpu;\n\n"
     << "#include <sys/mman.h>\n"
     << (options.externalWeights
             ? "#include <fcntl.h>\n#include <sys/stat.h>\n#include <unistd.h>\n\n"
             : "extern \"C\" const unsigned char thunder_weights_blob[];\n\n")
     << codegen::customKernelDeclarations(func->getParentOfType<ModuleOp>());
  // The kernels' declarations go here once they are all emitted.
  size_t declarationsAt = text.size();
  os << "namespace {\n\n"
     << "constexpr int kNumSymbols = " << plan.symbols().size() << ";\n"
     << "/// Where run_model keeps the run's random key in sym[] (thunder.random).\n"
     << "constexpr int kRngSeed = kNumSymbols + 1, kRngOffset = kNumSymbols + 2;\n\n"
     << "inline int64_t window_size(int64_t in, int64_t k, int64_t s, int64_t lo,\n"
     << "                           int64_t hi, int64_t d, bool ceil_mode) {\n"
     << "  int64_t span = in + lo + hi - d * (k - 1) - 1;\n"
     << "  int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;\n"
     << "  if (ceil_mode && (out - 1) * s >= in + lo) --out;\n"
     << "  return out;\n}\n\n";
  codegen::emitComputeSymbols(os, plan, [&](Value v, unsigned d) { return dimExpr(v, d); });

  emitLayout(os);

  os << "int run_model(const unsigned char *const *weights, const thunder_tensor *inputs,\n"
        "              const thunder_tensor *outputs, void *workspace, uint64_t seed,\n"
        "              uint64_t offset) {\n"
        "  (void)weights;\n"
        "  int64_t sym[kNumSymbols + 3];\n  compute_symbols(inputs, sym);\n"
        "  sym[kRngSeed] = int64_t(seed);\n  sym[kRngOffset] = int64_t(offset);\n"
        "  uint64_t offsets[" << numOffsets() << "];\n"
        "  layout(sym, offsets);\n"
        "  char *ws = static_cast<char *>(workspace);\n  (void)ws;\n";
  emitShapes(os);
  for (BlockArgument arg : func.getArguments())
    os << "  const " << elem(arg) << " *" << name(arg) << " = static_cast<const "
       << elem(arg) << " *>(inputs[" << arg.getArgNumber() << "].data);\n";
  emitPlacements(os);
  // Each weight through its own pointer (kWeights' order): the library's copy, or the
  // caller's memory when the model was created with create_with.
  for (auto &[index, v] : weightsInTableOrder())
    os << "  const " << elem(v) << " *" << name(v) << " = reinterpret_cast<const "
       << elem(v) << " *>(weights[" << index << "]);\n";
  for (auto r : func.getBody().front().getOps<ReshapeOp>())
    os << "  const " << elem(r) << " *" << name(r) << " = " << name(r.getOperand())
       << ";\n";
  for (auto &[v, literal] : splats)
    os << "  std::fill(" << name(v) << ", " << name(v) << " + (" << numelExpr(v)
       << "), st<" << elem(v) << ">(" << literal << "));\n";
  os << "\n";

  for (auto fusion : func.getBody().front().getOps<FusionOp>()) {
    // A custom kernel is called from the host program itself: it returns a
    // status the host passes on, and its symbol is the user's, declared here.
    bool custom = fusion.walk([](CustomCallOp) { return WalkResult::interrupt(); })
                      .wasInterrupted();
    if (failed(custom ? emitFusion(fusion, os) : emitKernelCall(fusion, os)))
      return failure();
  }
  {
    std::string declarations;
    llvm::raw_string_ostream dos(declarations);
    emitKernelDeclarations(dos);
    text.insert(declarationsAt, declarations);
  }

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
  if (SmallVector<std::string> variants = cpuVariants(options.cpu); variants.size() > 1)
    out.files.push_back(
        {"thunder_dispatch.cpp", dispatchSource(variants, codegen::usesRandom(func))});
  if (options.externalWeights) {
    out.files.push_back({options.modelName + ".safetensors", std::move(weightsFile), blob,
                         /*binary=*/true});
    out.artifacts.push_back(options.modelName + ".safetensors");
    return finishUnits(out, {"model.cpp"});
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
  return finishUnits(out, {"model.cpp", "weights.S"});
}

LogicalResult Emitter::finishUnits(EmittedSources &out, std::vector<std::string> units) {
  addSupportFiles(out);
  out.compileUnits = std::move(units);
  addKernelUnits(out);
  // The GEMM driver, compiled once for the library (thunder_cpu_gemm.cpp):
  // matmuls and convolutions reach it (EmitGemm's kernels, thunder_cpu's
  // matmul and gemm, the convolutions' GEMM paths). Under kernels/, so that
  // it is built like a kernel and cached by content: its text never changes,
  // so one object per support-header version and flags serves every model.
  // The convolution and pooling driver likewise (thunder_cpu_conv.cpp),
  // which calls the GEMM driver.
  bool gemm = false, conv = false;
  func.walk([&](Operation *op) {
    gemm |= isa<MatmulOp>(op);
    conv |= isa<ConvolutionOp, MaxPoolOp, AvgPoolOp>(op);
  });
  gemm |= conv;
  if (gemm) {
    out.files.push_back({kGemmUnit, kThunderCpuGemmSource});
    out.compileUnits.push_back(kGemmUnit);
  }
  if (conv) {
    out.files.push_back({kConvUnit, kThunderCpuConvSource});
    out.compileUnits.push_back(kConvUnit);
  }
  if (dynamicArena) {
    out.files.push_back({kArenaUnit, kArenaUnitSource});
    out.compileUnits.push_back(kArenaUnit);
  }
  return codegen::addCustomKernelUnits(func->getParentOfType<ModuleOp>(), "cpu", out);
}

std::vector<std::pair<unsigned, Value>> Emitter::weightsInTableOrder() {
  std::vector<std::tuple<unsigned, std::string, Value>> sorted;
  for (auto &[v, offset] : blobOffsets)
    sorted.emplace_back(weightIndex(offset), name(v), v);
  for (auto &[v, index] : providedEntries)
    sorted.emplace_back(index, name(v), v);
  llvm::sort(sorted, [](const auto &a, const auto &b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::pair<unsigned, Value>> out;
  for (auto &[index, n, v] : sorted)
    out.emplace_back(index, v);
  return out;
}

unsigned Emitter::weightIndex(uint64_t offset) const {
  for (auto [i, entry] : llvm::enumerate(blobEntries))
    if (entry.embedded && entry.begin == offset)
      return i;
  llvm_unreachable("a blob offset without its entry");
}

/// kWeights: every weight in the blob (thunder_model_weights_v1), with the
/// dtype and shape of the constant it holds.
void Emitter::emitWeightsTable(llvm::raw_ostream &os) {
  std::vector<std::pair<int, SmallVector<int64_t>>> types(blobEntries.size(), {-1, {}});
  for (auto &[index, v] : weightsInTableOrder()) {
    auto type = cast<RankedTensorType>(v.getType());
    types[index] = {codegen::dtypeCode(type.getElementType()),
                    SmallVector<int64_t>(type.getShape())};
  }
  os << "constexpr int kNumWeights = " << blobEntries.size() << ";\n";
  for (auto [i, entry] : llvm::enumerate(blobEntries))
    os << "const int64_t kWeightShape" << i << "[] = "
       << codegen::i64List(types[i].second) << ";\n";
  os << "const thunder_program_weight_v1 kWeights[kNumWeights + 1] = {";
  for (auto [i, entry] : llvm::enumerate(blobEntries)) {
    uint64_t bytes = entry.end - entry.begin;
    os << "\n    {" << codegen::cppString(entry.name) << ", " << types[i].first << ", "
       << types[i].second.size() << ", kWeightShape" << i << ", "
       << (entry.embedded ? std::to_string(entry.begin) + "ULL" : "THUNDER_WEIGHT_NOT_EMBEDDED")
       << ", " << bytes << "ULL},";
  }
  os << "\n    {}};\n\n";
}

/// The model state: a pointer per weight, into the embedded blob or the
/// memory-mapped weights file (checked to be the one this library was
/// compiled with), or the caller's memory for the weights given to
/// create_with (thunder_model_weights_v1).
std::string Emitter::createAndRun() {
  std::string text = llvm::formatv(R"cpp(struct State {{
  void *map = nullptr;
  size_t size = 0;
  const unsigned char *base = nullptr;
  const unsigned char *weights[kNumWeights + 1] = {{};
  bool provided = false; // some weights are the caller's memory
};
// base: the weights' file-backed memory ({0} bytes), which kernels may
// release once they hold their own copy (thunder_cpu::FileBackedWeights).
int create_state(const unsigned char *base, void *map, size_t size,
                 const void *const *provided, void **state, char *error,
                 size_t error_size) {{
  for (int i = 0; i < kNumWeights; ++i)
    if (kWeights[i].offset == THUNDER_WEIGHT_NOT_EMBEDDED && !(provided && provided[i])) {{
      snprintf(error, error_size,
               "weight '%s' is not in this library: it was compiled to read it from the "
               "caller's memory (thunder.compile reads the module's tensors in place); "
               "load it with thunder_model_load_with_weights and a provider that gives it",
               kWeights[i].name);
      if (map)
        munmap(map, size);
      return 1;
    }
  auto *s = new State;
  s->map = map;
  s->size = size;
  s->base = base;
  for (int i = 0; i < kNumWeights; ++i) {{
    s->weights[i] = provided && provided[i]
                        ? static_cast<const unsigned char *>(provided[i])
                        : base + kWeights[i].offset;
    s->provided = s->provided || (provided && provided[i]);
  }
  thunder_cpu::FileBackedWeights::get().add(base, {0}ULL);
  // Kernels' copies of the caller's memory may be of other values than it
  // holds now (a model loaded again after its tensors changed in place).
  if (s->provided)
    ++thunder_cpu::caller_weights_epoch();
  *state = s;
  return 0;
}
void destroy(void *state) {{
  auto *s = static_cast<State *>(state);
  thunder_cpu::FileBackedWeights::get().remove(s->base);
  // Kernels' copies of the caller's weights are stale from now on.
  if (s->provided)
    ++thunder_cpu::caller_weights_epoch();
  if (s->map)
    munmap(s->map, s->size);
  delete s;
}
)cpp",
                                    blob->size())
                         .str();
  // A program that draws random numbers takes the model's key from the
  // runtime (thunder_model_random_v1); a plain run (a runtime that does not
  // know the table) draws with seed 0 and counts its own runs.
  if (codegen::usesRandom(func))
    text += R"cpp(int run_seeded(const void *state, const thunder_tensor *inputs,
               const thunder_tensor *outputs, void *workspace, void *, uint64_t seed,
               uint64_t offset, char *, size_t) {
  return run_model(static_cast<const State *>(state)->weights, inputs, outputs, workspace,
                   seed, offset);
}
std::atomic<uint64_t> plain_runs{0};
int run(const void *state, const thunder_tensor *inputs,
        const thunder_tensor *outputs, void *workspace, void *, char *, size_t) {
  return run_model(static_cast<const State *>(state)->weights, inputs, outputs, workspace,
                   0, plain_runs.fetch_add(1));
}
)cpp";
  else
    text += R"cpp(int run(const void *state, const thunder_tensor *inputs,
        const thunder_tensor *outputs, void *workspace, void *, char *, size_t) {
  return run_model(static_cast<const State *>(state)->weights, inputs, outputs, workspace,
                   0, 0);
}
)cpp";
  if (!options.externalWeights)
    return text + R"cpp(int create_with(const char *, const void *const *provided, void **state,
                char *error, size_t error_size) {
  thunder_cpu_init();
  return create_state(thunder_weights_blob, nullptr, 0, provided, state, error, error_size);
}
int create(const char *path, void **state, char *error, size_t error_size) {
  return create_with(path, nullptr, state, error, error_size);
}

)cpp";
  uint64_t dataStart = 8 + weightsHeaderBytes;
  return text +
         "int create_with(const char *path, const void *const *provided, void **state,\n"
         "                char *error, size_t error_size) {\n"
         "  thunder_cpu_init();\n" +
         codegen::mapWeightsFile(dataStart + blob->size(), {"st", true}) +
         llvm::formatv(R"cpp(  if (header != {0}ULL) {{
    munmap(map, st.st_size);
    snprintf(error, error_size,
             "the weights file %s was not written for this model", path);
    return 1;
  }
  return create_state(static_cast<const unsigned char *>(map) + {1}, map,
                      size_t(st.st_size), provided, state, error, error_size);
}
int create(const char *path, void **state, char *error, size_t error_size) {{
  return create_with(path, nullptr, state, error, error_size);
}

)cpp",
                       weightsHeaderBytes, dataStart)
             .str();
}

void Emitter::emitEntry(llvm::raw_ostream &os) {
  codegen::emitTensorDescs(os, func);
  emitWeightsTable(os);
  os << createAndRun() << "} // namespace\n\n";
  codegen::emitEntryTable(os, func, options.modelName, "cpu", "THUNDER_DEVICE_CPU",
                          options.externalWeights ? options.modelName + ".safetensors" : "");
  if (codegen::usesRandom(func))
    codegen::emitRandomTable(os);
  os << "\nextern \"C\" __attribute__((visibility(\"default\")))\n"
        "const thunder_model_weights_v1 *thunder_model_weights_entry_v1(void) {\n"
        "  static const thunder_model_weights_v1 table = {\n"
        "      sizeof(thunder_model_weights_v1), kNumWeights, kWeights, create_with};\n"
        "  return &table;\n}\n";
}

} // namespace thunder::cpu

namespace thunder {

llvm::StringRef CPUBackend::name() const { return "cpu"; }

void registerCPUTargetBackend() {
  registerTargetBackend("cpu",
                        "C++ with OpenMP loops and Thunder's own GEMMs, built by the system c++",
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

namespace {

/// The sanitizers a THUNDER_SANITIZE build (CMakeLists.txt; tools/dev.sh
/// test --sanitize) compiles and links each model library with, the same as
/// its own: the kernels and the runtime calls they make are checked too, and
/// an instrumented library needs the sanitizer runtimes the process has.
std::vector<std::string> sanitizerFlags() {
#ifdef THUNDER_SANITIZE
  std::vector<std::string> flags = {"-fsanitize=" THUNDER_SANITIZE, "-fno-omit-frame-pointer"};
  if (llvm::StringRef(THUNDER_SANITIZE).contains("undefined"))
    flags.push_back("-fno-sanitize-recover=undefined");
  return flags;
#else
  return {};
#endif
}

/// The flags every unit of a model is compiled for `arch` with, but the
/// optimization level. In a multi-architecture build (several --cpu), each
/// unit is compiled once per instruction set with the support headers'
/// namespaces and the model's entry renamed, so the variants' inline
/// functions and kernels stay apart.
std::vector<std::string> unitFlags(const TargetOptions &options, llvm::StringRef arch,
                                   bool multi) {
  std::vector<std::string> flags = {
      "-std=c++17", "-march=" + arch.str(), "-DTHUNDER_CPU_ARCH=\"" + options.cpu + "\"",
      // Nothing reads errno or the floating-point exception flags: without
      // them sqrt and floor vectorize, and the selects of thunder_cpu_math.h
      // become blends (GCC does not if-convert operations that may trap).
      // Neither changes a value.
      "-fno-math-errno", "-fno-trapping-math", "-fopenmp", "-fPIC", "-fvisibility=hidden"};
  llvm::append_range(flags, sanitizerFlags());
  if (multi) {
    std::string tag = cpu::variantTag(arch);
    flags.insert(flags.end(),
                 {"-DTHUNDER_CPU_ISA_DEFINED",
                  "-Dthunder_model_entry_v1=thunder_model_entry_v1_" + tag,
                  "-Dthunder_model_weights_entry_v1=thunder_model_weights_entry_v1_" + tag});
    for (llvm::StringRef ns : cpu::kVariantNamespaces)
      flags.push_back(("-D" + ns + "=" + ns + "_" + tag).str());
  }
  return flags;
}

/// The renames of one partition of a several-partition library
/// (TargetOptions::partitionSuffix), for its host program and weights: its
/// entries and its weights' symbol. The kernels keep their names (a kernel's
/// name is its code's digest: partitions that share a kernel link one copy).
std::vector<std::string> partitionFlags(const TargetOptions &options) {
  if (options.partitionSuffix.empty())
    return {};
  std::vector<std::string> flags;
  for (llvm::StringRef symbol :
       {"thunder_model_entry_v1", "thunder_model_weights_entry_v1", "thunder_weights_blob"})
    flags.push_back(("-D" + symbol + "=" + symbol + options.partitionSuffix).str());
  return flags;
}

/// What tells a variant's objects apart ("" in a one-architecture build).
std::string variantSuffix(const TargetOptions &options, llvm::StringRef arch) {
  return cpu::cpuVariants(options.cpu).size() > 1 ? "." + cpu::variantTag(arch) : "";
}

/// Where a C++ unit's object is built.
std::string objectPath(llvm::StringRef buildDir, llvm::StringRef unit,
                       llvm::StringRef suffix) {
  std::string flat = unit.str();
  std::replace(flat.begin(), flat.end(), '/', '_');
  return (buildDir + "/obj/" + flat + suffix + ".o").str();
}

bool isKernelUnit(llvm::StringRef unit) { return unit.starts_with("kernels/"); }

/// What -march=native compiles for on this machine, for the keys of the
/// kernel cache: the host CPU's name and its features, which GCC reads from
/// the same CPUID to resolve native. A cache directory shared between
/// machines (a network home, a container image) then never hands one machine
/// another's native code.
const std::string &nativeIdentity() {
  static const std::string identity = [] {
    std::string text = llvm::sys::getHostCPUName().str();
    std::vector<std::string> features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.second)
        features.push_back(feature.first().str());
    llvm::sort(features);
    llvm::SHA256 hash;
    hash.update(llvm::join(features, ","));
    return text + "/" + llvm::toHex(hash.final(), true).substr(0, 16);
  }();
  return identity;
}

/// A user's custom kernel (codegen::addCustomKernelUnits): compiled once,
/// for the lowest instruction set, with its names as the user wrote them.
bool isCustomUnit(llvm::StringRef unit) { return unit.starts_with("custom_"); }

} // namespace

std::vector<UnitCompile> CPUBackend::compileUnits(const EmittedSources &sources,
                                                  llvm::StringRef buildDir,
                                                  const TargetOptions &options) const {
  std::string dir = buildDir.str();
  // Kernels at the requested level; the host program (a straight line of
  // calls, run once per inference) at -O1 at most: it is most of the code.
  int kernelLevel = options.optLevel, hostLevel = std::min(options.optLevel, 1);
#ifdef THUNDER_SANITIZE
  // Instrumented kernels at -O1, as the sanitized build's own code: -O3 under
  // ASan and UBSan makes each model's build several times slower and finds
  // nothing more (what is checked is each access, not how it was scheduled).
  kernelLevel = std::min(kernelLevel, 1);
#endif
  SmallVector<std::string> variants = cpu::cpuVariants(options.cpu);
  bool multi = variants.size() > 1;
  if (!multi)
    variants = {options.cpu};
  // The headers the kernel units include first, precompiled for them when
  // enough units do to pay for it: thunder_cpu.h (the library's templates;
  // measured on GPT-2's units at -O2, writing it takes 1.5 s and saves each
  // user 0.35 s) and thunder_cpu_base.h (every generated loop, GEMM,
  // convolution and pooling: 0.5 s to write, and a unit then compiles in
  // 0.08 s instead of 0.22 s). Both are the same for every model, so the
  // kernel cache (and the build's prebuilt objects) usually has them.
  struct Precompiled {
    const char *header;
    size_t minUsers;
    std::set<std::string> users;
  };
  Precompiled precompiled[] = {{"thunder_cpu.h", 5, {}}, {"thunder_cpu_base.h", 4, {}}};
  for (const SourceFile &file : sources.files)
    if (isKernelUnit(file.path))
      for (Precompiled &p : precompiled)
        if (llvm::StringRef(file.contents).contains("#include \"" + std::string(p.header) + "\""))
          p.users.insert(file.path);
  auto usesPch = [&](const Precompiled &p) { return p.users.size() >= p.minUsers; };
  // The longest compiles first: the drivers, the host program, then the
  // kernels (the scheduler takes steps in this order).
  auto rank = [](const std::string &unit) {
    return unit == cpu::kGemmUnit || unit == cpu::kConvUnit || unit == cpu::kArenaUnit ? 0
           : isKernelUnit(unit)                                                       ? 2
                                                                                      : 1;
  };
  std::vector<std::string> units = sources.compileUnits;
  llvm::stable_sort(units, [&](const std::string &a, const std::string &b) {
    return rank(a) < rank(b);
  });
  std::vector<UnitCompile> steps;
  for (const std::string &arch : variants) {
    std::vector<std::string> flags = unitFlags(options, arch, multi);
    std::string suffix = variantSuffix(options, arch);
    // What every object depends on besides its own text: the flags and the
    // support headers.
    std::string common = llvm::join(flags, " ");
    // -march=native names a different CPU on each machine.
    std::string native = arch == "native" ? " native=" + nativeIdentity() : "";
    for (const SourceFile &file : sources.files)
      if (llvm::StringRef(file.path).ends_with(".h"))
        common += "\n" + file.path + "\n" + file.contents;
    llvm::SHA256 commonHash;
    commonHash.update(common);
    std::string commonDigest = llvm::toHex(commonHash.final(), true);

    // The headers precompiled for the kernels (beside no copy of the
    // header: GCC looks for NAME.gch in each include directory before NAME),
    // one per variant: a precompiled header serves only its own flags.
    std::string pchDir = dir + "/pch" + (multi ? "/" + cpu::variantTag(arch) : "");
    for (const Precompiled &p : precompiled) {
      if (!usesPch(p))
        continue;
      UnitCompile step;
      step.object = pchDir + "/" + p.header + ".gch";
      step.argv = {"c++"};
      llvm::append_range(step.argv, flags);
      step.argv.insert(step.argv.end(), {"-O" + std::to_string(kernelLevel), "-x",
                                         "c++-header", dir + "/" + p.header, "-o",
                                         step.object});
      step.key = "pch " + std::string(p.header) + " -O" + std::to_string(kernelLevel) + " " +
                 commonDigest + native;
      step.optional = true;
      steps.push_back(step);
    }
    for (const std::string &unit : units) {
      if (!llvm::StringRef(unit).ends_with(".cpp"))
        continue;
      bool custom = isCustomUnit(unit);
      if (custom && arch != variants.front())
        continue;
      bool kernel = isKernelUnit(unit) || custom;
      // (The arena packer, a kernels/ unit for its caching, runs once per set
      // of sizes: host code.)
      int level = kernel && unit != cpu::kArenaUnit ? kernelLevel : hostLevel;
      UnitCompile step;
      step.object = objectPath(buildDir, unit, custom ? "" : suffix);
      step.argv = {"c++"};
      llvm::append_range(step.argv, custom ? unitFlags(options, arch, false) : flags);
      // (A kernels/ unit names none of a partition's symbols: one object
      // serves every partition, and the prebuilt one serves them.)
      std::vector<std::string> renames = kernel ? std::vector<std::string>()
                                                : partitionFlags(options);
      llvm::append_range(step.argv, renames);
      step.argv.push_back("-O" + std::to_string(level));
      const Precompiled *pch = llvm::find_if(precompiled, [&](const Precompiled &p) {
        return usesPch(p) && p.users.count(unit);
      });
      bool pchUser = pch != std::end(precompiled);
      if (pchUser)
        step.argv.push_back("-I" + pchDir);
      step.argv.insert(step.argv.end(),
                       {"-I" + dir, "-c", dir + "/" + unit, "-o", step.object});
      if (pchUser)
        step.after.push_back(pchDir + "/" + pch->header + ".gch");
      for (const SourceFile &file : sources.files)
        if (file.path == unit) {
          llvm::SHA256 hash;
          hash.update(file.contents);
          step.key = "unit -O" + std::to_string(level) + " " + commonDigest + " " +
                     llvm::toHex(hash.final(), true) + native;
          if (!renames.empty())
            step.key += " " + llvm::join(renames, " ");
        }
      steps.push_back(step);
    }
  }
  // A partition's embedded weights, assembled with their symbol renamed (an
  // ordinary library assembles weights.S in its link command).
  if (!options.partitionSuffix.empty() && llvm::is_contained(sources.compileUnits, "weights.S")) {
    UnitCompile step;
    step.object = objectPath(buildDir, "weights.S", "");
    step.argv = {"c++", "-fPIC", "-Wa,-I," + dir};
    llvm::append_range(step.argv, partitionFlags(options));
    step.argv.insert(step.argv.end(), {"-c", dir + "/weights.S", "-o", step.object});
    steps.push_back(step); // no key: the weights are not worth a cache entry
  }
  return steps;
}

ToolchainCommand CPUBackend::link(const EmittedSources &sources,
                                  llvm::StringRef buildDir,
                                  llvm::StringRef output,
                                  const TargetOptions &options) const {
  // The C++ units are objects by now (compileUnits); the weights' assembly
  // is assembled here.
  ToolchainCommand cmd;
  std::string dir = buildDir.str();
  cmd.argv = {"c++", "-fopenmp", "-fPIC", "-shared", "-fvisibility=hidden",
              // .incbin "weights.bin" is looked up in the build directory.
              "-Wa,-I," + dir};
  llvm::append_range(cmd.argv, sanitizerFlags());
  SmallVector<std::string> variants = cpu::cpuVariants(options.cpu);
  if (variants.size() > 1) {
    // The dispatcher, for baseline x86-64, picks a variant at load.
    cmd.argv.insert(cmd.argv.end(), {"-std=c++17", "-O2", "-march=x86-64", "-I" + dir,
                                     dir + "/thunder_dispatch.cpp"});
  } else {
    variants = {options.cpu};
  }
  // The lowest variant's objects come first, so the C++ library's template
  // instances that several variants hold (the linker keeps the first) run
  // anywhere the library may run.
  for (const std::string &arch : variants)
    for (const std::string &unit : sources.compileUnits)
      if (llvm::StringRef(unit).ends_with(".cpp") && !isCustomUnit(unit))
        cmd.argv.push_back(objectPath(buildDir, unit, variantSuffix(options, arch)));
  for (const std::string &unit : sources.compileUnits)
    if (isCustomUnit(unit) && llvm::StringRef(unit).ends_with(".cpp"))
      cmd.argv.push_back(objectPath(buildDir, unit, ""));
  for (const std::string &unit : sources.compileUnits)
    if (!llvm::StringRef(unit).ends_with(".cpp"))
      cmd.argv.push_back(dir + "/" + unit);
  cmd.argv.push_back("-o");
  cmd.argv.push_back(output.str());
  llvm::append_range(cmd.argv, cpu::kRuntimeLibraries);
  return cmd;
}

std::optional<ToolchainCommand>
CPUBackend::linkPartitions(llvm::ArrayRef<PartitionSources> partitions,
                           llvm::StringRef indexUnit, llvm::StringRef output,
                           std::string &why) const {
  if (partitions.empty()) {
    why = "no partition to link";
    return std::nullopt;
  }
  for (const PartitionSources &p : partitions)
    if (cpu::cpuVariants(p.options.cpu).size() > 1) {
      why = "a library for several CPU architectures (--cpu=" + p.options.cpu +
            ") holds one partition";
      return std::nullopt;
    }
  ToolchainCommand cmd;
  cmd.argv = {"c++", "-fopenmp", "-fPIC", "-shared", "-fvisibility=hidden", "-std=c++17",
              "-O2", "-I" + partitions.front().buildDir, indexUnit.str()};
  // Each partition's host program and weights; a kernel (or custom kernel) unit
  // that several partitions have is the same code under the same name: linked once.
  std::set<std::string> shared;
  for (const PartitionSources &p : partitions) {
    for (const std::string &unit : p.sources->compileUnits) {
      llvm::StringRef u(unit);
      if (u.ends_with(".cpp")) {
        if ((isKernelUnit(u) || isCustomUnit(u)) && !shared.insert(unit).second)
          continue;
        cmd.argv.push_back(objectPath(p.buildDir, unit, ""));
      } else if (unit == "weights.S") {
        cmd.argv.push_back(objectPath(p.buildDir, unit, ""));
      } else {
        cmd.argv.push_back(p.buildDir + "/" + unit);
      }
    }
  }
  cmd.argv.insert(cmd.argv.end(), {"-o", output.str()});
  llvm::append_range(cmd.argv, cpu::kRuntimeLibraries);
  return cmd;
}

} // namespace thunder
