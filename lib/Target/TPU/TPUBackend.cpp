//===- TPUBackend.cpp - StableHLO for XLA through PJRT --------------------===//
//
// The tpu target hands the graph-phase program to XLA as StableHLO: XLA fuses,
// schedules and plans memory, so nothing of Thunder's kernel pipeline runs. What this
// backend emits:
//   NAME.stablehlo.mlir  the program: @main(weights..., inputs...) -> outputs, in MLIR's
//                        generic form, with no Thunder attributes (what jax or any PJRT
//                        client compiles as it is);
//   program.S            embeds it in the library (.incbin), NUL-terminated;
//   weights.bin/.S       the weights, embedded, or NAME.safetensors beside the library;
//   model.cpp            the thunder_model_v1 table (descriptors and static output shapes;
//                        its run() refuses, since the runtime's PJRT executor runs the
//                        program) and the thunder_program_v1 table that names the program
//                        and each weight argument's bytes.
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/TPU/TPUBackend.h"

#include "thunder/Conversion/ThunderToStablehlo/ThunderToStablehlo.h"
#include "thunder/Conversion/Passes.h"
#include "thunder/Pipelines/Pipelines.h"
#include "thunder/Target/Common/ArtifactSource.h"
#include "thunder/Target/Common/WeightsBlob.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace thunder {

namespace {

#include "TPUSupportSources.inc"

/// Weights are placed at this alignment in the blob (PJRT copies them to the device at
/// load; 64 keeps host-side reads aligned for any element type).
constexpr uint64_t kWeightAlignment = 64;

/// Removes every `thunder.*` attribute (the module's phase and name, @main's weights, the
/// arguments' names and dim symbols): XLA's parser takes the program as it is, and the
/// weights' resource blobs must not be printed into it.
void stripThunderAttributes(ModuleOp module) {
  auto strip = [](Operation *op) {
    for (NamedAttribute attr : llvm::to_vector(op->getAttrs()))
      if (attr.getName().strref().starts_with("thunder."))
        op->removeAttr(attr.getName());
  };
  strip(module);
  module.walk([&](Operation *op) {
    strip(op);
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      auto keep = [](DictionaryAttr attrs) {
        SmallVector<NamedAttribute> kept;
        if (attrs)
          for (NamedAttribute attr : attrs)
            if (!attr.getName().strref().starts_with("thunder."))
              kept.push_back(attr);
        return kept;
      };
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.setArgAttrs(i, keep(func.getArgAttrDict(i)));
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        func.setResultAttrs(i, keep(func.getResultAttrDict(i)));
    }
  });
}

/// A model function's inputs and outputs must have static shapes: XLA compiles for shapes.
LogicalResult checkStaticSignature(func::FuncOp func) {
  auto dynamicIn = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return !ranked || !ranked.hasStaticShape();
  };
  bool ok = true;
  for (auto [i, t] : llvm::enumerate(func.getArgumentTypes()))
    if (dynamicIn(t)) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "thunder.name");
      func.emitError() << "the tpu target compiles static shapes (XLA specializes on "
                          "them): input "
                       << i << (name ? " ('" + name.str() + "')" : std::string())
                       << " has type " << t
                       << "; export it without dynamic dims (thunder.compile(..., "
                          "dynamic=False))";
      ok = false;
    }
  for (auto [i, t] : llvm::enumerate(func.getResultTypes()))
    if (dynamicIn(t)) {
      func.emitError() << "the tpu target compiles static shapes: output " << i
                       << " has type " << t;
      ok = false;
    }
  return success(ok);
}

std::string i64Array(llvm::ArrayRef<int64_t> dims) { return codegen::i64List(dims); }

} // namespace

llvm::StringRef TPUBackend::name() const { return "tpu"; }

std::string stablehloProgramFile(llvm::StringRef modelName) {
  return (modelName + ".stablehlo.mlir").str();
}

void registerTPUTargetBackend() {
  registerTargetBackend("tpu",
                        "StableHLO compiled by XLA at load through a PJRT plugin (libtpu on "
                        "a TPU host; XLA's CPU and CUDA plugins elsewhere)",
                        [] { return std::make_unique<TPUBackend>(); });
}

void TPUBackend::buildPipeline(OpPassManager &pm, Phase from, Phase to,
                               const PipelineOptions &options) const {
  // Compiler::create refuses phases past Graph for this target; thunder-opt's
  // --thunder-tpu-pipeline defaults to Graph too.
  if (from < Phase::Graph && to >= Phase::Graph) {
    GraphPipelineOptions graph;
    graph.decomposeComposites = true;
    buildThunderGraphPipeline(pm, graph);
    addSetPhase(pm, Phase::Graph);
  }
}

FailureOr<EmittedSources> TPUBackend::emit(ModuleOp module, const TargetOptions &options) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expects one function to compile, found ") << funcs.size();
  func::FuncOp model = funcs.front();
  if (failed(checkStaticSignature(model)))
    return failure();

  // The conversion rewrites a copy: the caller's module stays at the graph phase.
  OwningOpRef<ModuleOp> program(cast<ModuleOp>(module->clone()));
  MLIRContext *context = module.getContext();
  bool allowedUnregistered = context->allowsUnregisteredDialects();
  context->allowUnregisteredDialects(true);
  PassManager pm(context);
  pm.addPass(mlir::thunder::createThunderConvertToStablehlo());
  LogicalResult converted = pm.run(*program);
  if (failed(converted)) {
    context->allowUnregisteredDialects(allowedUnregistered);
    return failure();
  }
  auto main = *program->getOps<func::FuncOp>().begin();
  auto weights = main->getAttrOfType<ArrayAttr>(mlir::thunder::kWeightsAttrName);
  auto weightNames = main->getAttrOfType<ArrayAttr>(mlir::thunder::kWeightNamesAttrName);
  if (!weights)
    weights = ArrayAttr::get(context, {});

  // Each weight argument's bytes, in argument order.
  auto blob = std::make_shared<codegen::WeightsBlob>();
  std::vector<codegen::WeightEntry> entries;
  for (auto [i, value] : llvm::enumerate(weights)) {
    // Named by its resource key (the parameter's name), else by its argument.
    std::string name = "constant_" + std::to_string(i);
    if (weightNames && i < weightNames.size())
      if (auto given = dyn_cast<StringAttr>(weightNames[i]); given && !given.empty())
        name = given.str();
    if (failed(codegen::appendElements(value, main.getArgument(i).getLoc(), kWeightAlignment,
                                       name, *blob, entries))) {
      context->allowUnregisteredDialects(allowedUnregistered);
      return failure();
    }
  }

  stripThunderAttributes(*program);
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    program->print(os);
  }
  context->allowUnregisteredDialects(allowedUnregistered);

  // The weights file first: its header length fixes the offsets the table records.
  std::string weightsFileName, weightsHeader;
  uint64_t dataStart = 0;
  if (options.externalWeights) {
    weightsFileName = options.modelName + ".safetensors";
    int64_t headerBytes = 0;
    weightsHeader = codegen::safetensorsHeader(options.modelName, entries, &headerBytes);
    dataStart = 8 + headerBytes;
  }

  std::string source;
  llvm::raw_string_ostream os(source);
  os << "// The " << options.modelName
     << " model for the tpu target, generated by Thunder: the runtime's PJRT\n"
        "// executor compiles " << stablehloProgramFile(options.modelName)
     << " (embedded) and runs it; this file holds its tables.\n"
        "#include \"thunder-c/artifact.h\"\n\n#include <stdio.h>\n\n"
        "extern \"C\" const char thunder_program_code[];\n"
        "extern \"C\" const char thunder_program_code_end[];\n";
  if (!options.externalWeights)
    os << "extern \"C\" const unsigned char thunder_weights_blob[];\n";
  os << "\nnamespace {\n\n";
  codegen::emitTensorDescs(os, model);
  os << "int create(const char *, void **state, char *, size_t) {\n"
        "  *state = nullptr;\n  return 0;\n}\n"
        "void destroy(void *) {}\n\n"
        "int output_shapes(const void *, const thunder_tensor *, int64_t *const *shapes,\n"
        "                  char *, size_t) {\n";
  auto ret = cast<func::ReturnOp>(model.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto type = cast<RankedTensorType>(v.getType());
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      os << "  shapes[" << i << "][" << d << "] = " << size << ";\n";
  }
  os << "  return 0;\n}\n\n"
        "uint64_t workspace_bytes(const void *, const thunder_tensor *) { return 0; }\n\n"
        "int run(const void *, const thunder_tensor *, const thunder_tensor *, void *, void *,\n"
        "        char *error, size_t error_size) {\n"
        "  snprintf(error, error_size, \"model '%s' (target tpu) runs only through the Thunder \"\n"
        "           \"runtime's PJRT executor\", "
     << codegen::cppString(options.modelName) << ");\n  return 1;\n}\n\n";
  // The weight arguments.
  for (auto [i, e] : llvm::enumerate(entries))
    os << "const int64_t kWeightShape" << i << "[] = " << i64Array(e.shape) << ";\n";
  os << "const thunder_program_weight_v1 kWeights[] = {\n";
  for (auto [i, e] : llvm::enumerate(entries)) {
    auto type = cast<RankedTensorType>(cast<TypedAttr>(weights[i]).getType());
    os << "    {" << codegen::cppString(e.name) << ", " << codegen::dtypeCode(type.getElementType())
       << ", " << type.getRank() << ", kWeightShape" << i << ", " << dataStart + e.begin
       << "ULL, " << e.end - e.begin << "ULL},\n";
  }
  if (entries.empty())
    os << "    {\"\", 0, 0, nullptr, 0, 0},\n";
  os << "};\n\n} // namespace\n\n";
  codegen::emitEntryTable(os, model, options.modelName, "tpu", "THUNDER_DEVICE_CPU",
                          weightsFileName);
  os << "\nextern \"C\" __attribute__((visibility(\"default\")))\n"
        "const thunder_program_v1 *thunder_program_entry_v1(void) {\n"
        "  static const thunder_program_v1 program = {\n"
        "      sizeof(thunder_program_v1), \"stablehlo\", thunder_program_code,\n"
        "      static_cast<uint64_t>(thunder_program_code_end - thunder_program_code),\n"
        "      "
     << entries.size() << ", kWeights, "
     << (options.externalWeights ? "nullptr" : "thunder_weights_blob") << "};\n"
        "  return &program;\n}\n";

  EmittedSources out;
  std::string programFile = stablehloProgramFile(options.modelName);
  out.files.push_back({programFile, std::move(text)});
  out.files.push_back({"model.cpp", std::move(source)});
  out.files.push_back({"program.S",
                       llvm::formatv("# The StableHLO program, embedded at link time.\n"
                                     "\t.section .rodata\n"
                                     "\t.globl thunder_program_code\n"
                                     "\t.globl thunder_program_code_end\n"
                                     "thunder_program_code:\n"
                                     "\t.incbin \"{0}\"\n"
                                     "thunder_program_code_end:\n\t.byte 0\n"
                                     "\t.section .note.GNU-stack,\"\",@progbits\n",
                                     programFile)
                           .str()});
  out.files.push_back({"thunder-c/artifact.h", kArtifactHeader});
  out.compileUnits = {"model.cpp", "program.S"};
  if (options.externalWeights) {
    out.files.push_back({weightsFileName, std::move(weightsHeader), blob, /*binary=*/true});
    out.artifacts.push_back(weightsFileName);
    return out;
  }
  out.files.push_back({"weights.bin", "", blob, /*binary=*/true});
  out.files.push_back({"weights.S", "# The model's weights, embedded at link time.\n"
                                    "\t.section .rodata\n\t.balign 64\n"
                                    "\t.globl thunder_weights_blob\n"
                                    "\t.type thunder_weights_blob, @object\n"
                                    "thunder_weights_blob:\n"
                                    "\t.incbin \"weights.bin\"\n\t.byte 0\n"
                                    "\t.section .note.GNU-stack,\"\",@progbits\n"});
  out.compileUnits.push_back("weights.S");
  return out;
}

ToolchainCommand TPUBackend::link(const EmittedSources &sources, llvm::StringRef buildDir,
                                  llvm::StringRef output, const TargetOptions &options) const {
  // No kernels: the library is two tables and two blobs, built by the system compiler at
  // -O1 whatever the options say (there is nothing to optimize).
  ToolchainCommand cmd;
  std::string dir = buildDir.str();
  cmd.argv = {"c++", "-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
              "-I" + dir, "-Wa,-I," + dir};
  for (const std::string &unit : sources.compileUnits)
    cmd.argv.push_back(dir + "/" + unit);
  cmd.argv.insert(cmd.argv.end(), {"-o", output.str(), "-Wl,--no-undefined"});
  return cmd;
}

} // namespace thunder
