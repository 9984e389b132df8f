//===- ThunderPython.cpp - thunder._C: the Python binding -----------------===//
//
// The one native module of the Python package (STYLE 14): thin bindings over
// the C++ importer and pipelines, so Python runs exactly what thunder-compile
// and thunder-opt run. The package (python/thunder) does the capture with
// torch.export and hands the program JSON and views of the weights to
// import_program.
//
// It also binds the driver (Module.compile: a thunder::Compiler, what
// thunder-compile runs) and the runtime's C API
// (LoadedModel over thunder-c/runtime.h), so that thunder.compile builds and
// runs a model with the same code as the CLI and a C++ application.
//
// Errors never abort: every MLIR diagnostic raised while importing, running a
// pipeline or compiling is collected as a "file:line: error: message" line
// and raised as thunder._C.ImportError or thunder._C.CompileError (both
// ValueErrors), with all problems at once; the toolchain's output is part of
// the driver's diagnostic. A failing runtime call raises
// thunder._C.RuntimeError (a RuntimeError) with the runtime's message and
// its status name in `.status`.
//
// The GIL is released around everything long: importing, pipelines, the
// toolchain, and runs.
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "Bindings.h"
#include "thunder-c/runtime.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Dialect/Thunder/Transforms/Reports.h"
#include "thunder/Driver/Compiler.h"
#include "thunder/Import/Importer.h"
#include "thunder/Import/Pt2Archive.h"
#include "thunder/Pipelines/Pipelines.h"
#include "thunder/Support/TypePromotion.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;
using namespace thunder_python;

namespace {

const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// "file:line: error: message": the location is the innermost file position
/// (the user's source line from the export's stack trace) when there is one.
void printDiagnostic(llvm::raw_ostream &os, mlir::Diagnostic &diag) {
  if (auto file = diag.getLocation()->findInstanceOf<mlir::FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ": ";
  os << severityName(diag.getSeverity()) << ": " << diag.str();
}

/// Collects every diagnostic emitted on a context while it lives, instead of
/// letting MLIR print them to stderr.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(text);
          if (!text.empty())
            os << "\n";
          printDiagnostic(os, diag);
          for (mlir::Diagnostic &note : diag.getNotes()) {
            os << "\n  ";
            printDiagnostic(os, note);
          }
          return mlir::success();
        }) {}

  /// `summary`, then every collected diagnostic on its own line.
  std::string message(const std::string &summary) const {
    return text.empty() ? summary : summary + "\n" + text;
  }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

/// A context with Thunder's dialects. Each module owns one; there is one
/// function per module, so the context's thread pool would only cost.
std::unique_ptr<mlir::MLIRContext> newContext() {
  mlir::DialectRegistry registry;
  thunder::registerThunderDialects(registry);
  thunder::import::registerImportDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

/// Weights a caller gives at load, for compile: name -> (dtype name, shape).
using ProvidedWeights =
    std::map<std::string, std::pair<std::string, std::vector<int64_t>>>;

/// An imported program: owns its context, the archive its weights point
/// into (for import_pt2) and the module. Members are destroyed in reverse
/// order: the module before the archive and the context it lives in. Tensors
/// whose memory the weights view are kept alive from Python (the class has a
/// __dict__ for that).
class Module {
public:
  Module(std::unique_ptr<mlir::MLIRContext> context,
         std::unique_ptr<thunder::Pt2Archive> archive,
         mlir::OwningOpRef<mlir::ModuleOp> module)
      : context(std::move(context)), archive(std::move(archive)),
        module(std::move(module)) {}

  std::string toString(bool printWeights, bool locations) {
    auto lock = acquire();
    mlir::OpPrintingFlags flags;
    if (!printWeights)
      flags.elideLargeResourceString(64);
    if (locations)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, flags);
    return text;
  }

  void runGraphPipeline(bool decomposeComposites) {
    thunder::CompilerOptions options;
    options.compileTo = thunder::Phase::Graph;
    options.pipeline.decomposeComposites = decomposeComposites;
    thunder::Compiler compiler = makeCompiler(options);
    std::string message;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex);
      DiagnosticCollector diagnostics(*context);
      if (mlir::failed(compiler.lower(*module)))
        message = diagnostics.message(
            "the graph pipeline failed; the module may be partly transformed");
    }
    if (!message.empty())
      throw CompileFailure(message);
  }

  /// Compiles the module into `outputDir` with a thunder::Compiler (exactly
  /// what thunder-compile runs) on a copy, so this Module stays as it is and
  /// can be compiled again with other options. Returns {"library",
  /// "header", "artifacts", "seconds": {"graph", "build"}}; library and
  /// header are None with source_only.
  py::dict compile(const std::string &outputDir, const std::string &target,
                   const std::string &name, const std::string &cpu,
                   bool externalWeights, bool sourceOnly, int optLevel,
                   bool keepBuildDir, bool decomposeComposites, bool fuse,
                   const std::string &cudaArch, const std::string &arch,
                   const std::string &kernelCache, unsigned jobs, bool packWeights,
                   const ProvidedWeights &providedWeights) {
    // arch (any target's spelling) or its older, CUDA-named alias.
    thunder::CompilerOptions options =
        libraryOptions(target, name, cpu, arch.empty() ? cudaArch : arch, optLevel,
                       externalWeights, packWeights, fuse, kernelCache, jobs, keepBuildDir,
                       providedWeights);
    options.compileTo = sourceOnly ? thunder::Phase::Source : thunder::Phase::Library;
    options.pipeline.decomposeComposites = decomposeComposites;
    thunder::Compiler compiler = makeCompiler(options);

    std::optional<thunder::CompileResult> result;
    std::string message;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex);
      DiagnosticCollector diagnostics(*context);
      // The pipelines run on a copy: this Module stays as it is.
      mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
      auto compiled = compiler.compile(*copy, outputDir);
      if (mlir::failed(compiled))
        message = diagnostics.message("compiling '" + name + "' for " + target +
                                      " into " + outputDir + " failed");
      else
        result = std::move(*compiled);
    }
    if (!result)
      throw CompileFailure(message);
    py::dict dict;
    auto pathOrNone = [](const std::string &path) -> py::object {
      return path.empty() ? py::object(py::none()) : py::str(path);
    };
    dict["library"] = pathOrNone(result->library);
    dict["header"] = pathOrNone(result->header);
    dict["artifacts"] = result->artifacts;
    py::dict seconds;
    seconds["graph"] = result->pipelineSeconds;
    seconds["build"] = result->buildSeconds;
    dict["seconds"] = seconds;
    dict["units"] = result->units;
    dict["units_cached"] = result->unitsCached;
    return dict;
  }

  /// Compiles `modules` (the partitions of one model) into ONE library in
  /// `outputDir` (thunder::Compiler::compilePartitions): partition i is a
  /// model of its own in it, loaded with LoadedModel(path, weights, i). Each
  /// module stays as it is (the pipelines run on copies). A failure that is
  /// one partition's raises CompileError whose message starts with
  /// "partition <i>: ".
  static py::dict compilePartitions(const std::vector<Module *> &modules,
                                    const std::string &outputDir, const std::string &target,
                                    const std::string &name, const std::string &cpu,
                                    bool externalWeights, int optLevel, bool keepBuildDir,
                                    bool fuse, const std::string &arch,
                                    const std::string &kernelCache, unsigned jobs,
                                    bool packWeights, const ProvidedWeights &providedWeights) {
    thunder::Compiler compiler =
        makeCompiler(libraryOptions(target, name, cpu, arch, optLevel, externalWeights,
                                    packWeights, fuse, kernelCache, jobs, keepBuildDir,
                                    providedWeights));
    for (Module *module : modules)
      if (!module)
        throw py::value_error("compile_partitions: a module is None");

    std::optional<thunder::CompileResult> result;
    std::string message;
    {
      py::gil_scoped_release release;
      // One lock per distinct module, in address order (no deadlock with another such call).
      std::vector<Module *> order(modules.begin(), modules.end());
      std::sort(order.begin(), order.end());
      order.erase(std::unique(order.begin(), order.end()), order.end());
      std::vector<std::unique_lock<std::mutex>> locks;
      for (Module *module : order)
        locks.emplace_back(module->mutex);
      std::vector<std::unique_ptr<DiagnosticCollector>> diagnostics;
      std::vector<mlir::OwningOpRef<mlir::ModuleOp>> copies;
      std::vector<mlir::ModuleOp> ops;
      for (Module *module : modules) {
        diagnostics.push_back(std::make_unique<DiagnosticCollector>(*module->context));
        copies.push_back(module->module->clone());
        ops.push_back(*copies.back());
      }
      int failed = -1;
      auto compiled = compiler.compilePartitions(ops, outputDir, &failed);
      if (mlir::failed(compiled)) {
        std::string summary = "compiling the " + std::to_string(modules.size()) +
                              " partitions of '" + name + "' for " + target + " into " +
                              outputDir + " failed";
        if (failed >= 0)
          message = "partition " + std::to_string(failed) + ": " +
                    diagnostics[failed]->message(summary);
        else {
          message = summary;
          for (auto &collected : diagnostics)
            message = collected->message(message);
        }
      } else {
        result = std::move(*compiled);
      }
      copies.clear();
      diagnostics.clear();
    }
    if (!result)
      throw CompileFailure(message);
    py::dict dict;
    dict["library"] = result->library;
    dict["header"] = result->header;
    dict["artifacts"] = result->artifacts;
    py::dict seconds;
    seconds["graph"] = result->pipelineSeconds;
    seconds["build"] = result->buildSeconds;
    dict["seconds"] = seconds;
    dict["units"] = result->units;
    dict["units_cached"] = result->unitsCached;
    return dict;
  }

  /// Runs the verifier; its messages, if any, are dropped (a bool is asked).
  bool verify() {
    auto lock = acquire();
    DiagnosticCollector diagnostics(*context);
    return mlir::succeeded(mlir::verify(*module));
  }

  std::map<std::string, int64_t> opHistogram() {
    auto lock = acquire();
    std::map<std::string, int64_t> counts;
    mlir::Operation *top = module->getOperation();
    module->walk([&](mlir::Operation *op) {
      if (op != top)
        ++counts[op->getName().getStringRef().str()];
    });
    return counts;
  }

  std::vector<std::string> inputTypes() { return typesOf(/*inputs=*/true); }
  std::vector<std::string> outputTypes() { return typesOf(/*inputs=*/false); }

  /// The address of the bytes that the constant of weight `name` reads: the
  /// caller's memory when the importer did not copy it.
  uintptr_t weightAddress(const std::string &name) {
    auto lock = acquire();
    const void *address = nullptr;
    bool found = false;
    module->walk([&](mlir::thunder::ConstantOp op) {
      auto resource =
          llvm::dyn_cast<mlir::DenseResourceElementsAttr>(op.getValue());
      if (!resource)
        return mlir::WalkResult::advance();
      // The importer names each weight's constant after its FQN; the
      // resource key is the same FQN unless MLIR had to uniquify it.
      auto nameLoc = llvm::dyn_cast<mlir::NameLoc>(op.getLoc());
      bool matches = (nameLoc && nameLoc.getName() == name) ||
                     resource.getRawHandle().getKey() == name;
      if (!matches)
        return mlir::WalkResult::advance();
      found = true;
      if (mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob())
        address = blob->getData().data();
      return mlir::WalkResult::interrupt();
    });
    if (!found)
      throw py::key_error("no weight named '" + name + "' in the module");
    if (!address)
      throw py::value_error("weight '" + name +
                            "' has no bytes (its blob was elided from the text "
                            "this module was parsed from)");
    return reinterpret_cast<uintptr_t>(address);
  }

  /// The memory plan after the graph and kernel pipelines, which run on a
  /// copy (the graph pipeline only unless run_graph_pipeline ran), so this
  /// Module stays as it is: what `thunder-compile --compile-to=plan
  /// --report=fusion,memory` shows, as data. Returns {"function",
  /// "kernels", "alignment", "arena", "lower_bound", "naive", "outputs",
  /// "dynamic", "tensors", "memory_report", "fusion_report"}; each tensor is
  /// {"name", "type", "kernel", "result", "bytes", "offset", "output",
  /// "first", "last", "inplace_from", "inplace_operand", "in_output"}, with
  /// None for what the plan leaves open (offsets and sizes packed at run
  /// time, the arena offset of an output). `borrow_outputs` plans with
  /// thunder-plan-memory's borrow-outputs (offsets of tensors with an
  /// `in_output` are into that output's buffer; "borrowed" counts them).
  py::dict memoryPlan(bool fuse, bool decomposeComposites, bool borrowOutputs) {
    thunder::CompilerOptions options;
    options.compileTo = thunder::Phase::Plan;
    options.pipeline.fuse = fuse;
    options.pipeline.decomposeComposites = decomposeComposites;
    options.pipeline.borrowOutputs = borrowOutputs;
    thunder::Compiler compiler = makeCompiler(options);
    std::vector<thunder::FunctionMemoryPlan> plans;
    std::string memoryText, fusionText, message;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex);
      DiagnosticCollector diagnostics(*context);
      mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
      if (mlir::failed(compiler.lower(*copy)))
        message = diagnostics.message("the graph and kernel pipelines failed");
      if (message.empty()) {
        plans = thunder::collectMemoryPlans(*copy);
        memoryText = thunder::formatMemoryReport(*copy);
        fusionText = thunder::formatFusionReport(*copy);
        if (plans.empty())
          message = "the kernel pipelines planned no function";
      }
    }
    if (!message.empty())
      throw CompileFailure(message);
    const thunder::FunctionMemoryPlan &plan = plans.front();
    auto orNone = [](bool known, int64_t value) -> py::object {
      return known ? py::object(py::int_(value)) : py::object(py::none());
    };
    py::list tensors;
    for (const thunder::PlannedTensor &t : plan.tensors) {
      py::dict entry;
      entry["name"] = t.name;
      entry["type"] = t.type;
      entry["kernel"] = t.kernel;
      entry["result"] = t.result;
      entry["bytes"] = orNone(t.bytes >= 0, t.bytes);
      entry["offset"] = orNone(t.output < 0 && !t.runtime, t.offset);
      entry["output"] = orNone(t.output >= 0, t.output);
      entry["first"] = t.first;
      entry["last"] = t.last;
      entry["inplace_from"] = t.inplaceFrom.empty() ? py::object(py::none())
                                                    : py::object(py::str(t.inplaceFrom));
      entry["inplace_operand"] = orNone(t.inplaceOperand >= 0, t.inplaceOperand);
      entry["in_output"] = orNone(t.inOutput >= 0, t.inOutput);
      tensors.append(entry);
    }
    py::dict result;
    result["function"] = plan.function;
    result["kernels"] = plan.kernels;
    result["alignment"] = plan.alignment;
    result["arena"] = orNone(!plan.dynamic, plan.arenaBytes);
    result["lower_bound"] = orNone(!plan.dynamic, plan.lowerBound);
    result["naive"] = orNone(!plan.dynamic, plan.naive);
    result["outputs"] = orNone(plan.outputBytes >= 0, plan.outputBytes);
    result["borrowed"] = orNone(plan.borrowed >= 0, plan.borrowed);
    result["dynamic"] = plan.dynamic;
    result["tensors"] = tensors;
    result["memory_report"] = memoryText;
    result["fusion_report"] = fusionText;
    return result;
  }

private:
  /// The options of a library build, as compile and compile_partitions take
  /// them from Python (compileTo: Phase::Library).
  static thunder::CompilerOptions
  libraryOptions(const std::string &target, const std::string &name, const std::string &cpu,
                 const std::string &arch, int optLevel, bool externalWeights,
                 bool packWeights, bool fuse, const std::string &kernelCache, unsigned jobs,
                 bool keepBuildDir, const ProvidedWeights &providedWeights) {
    thunder::CompilerOptions options;
    options.target = target;
    options.compileTo = thunder::Phase::Library;
    options.pipeline.fuse = fuse;
    options.targetOptions.modelName = name;
    options.targetOptions.cpu = cpu;
    options.targetOptions.arch = arch;
    options.targetOptions.optLevel = optLevel;
    options.targetOptions.externalWeights = externalWeights;
    options.targetOptions.packWeights = packWeights;
    for (const auto &[weight, metadata] : providedWeights) {
      const auto &[dtypeName, shape] = metadata;
      int32_t code = runtimeDtype(dtypeName);
      if (code < 0)
        throw py::value_error("provided_weights: weight '" + weight + "' has dtype " +
                              dtypeName + ", which the runtime does not know");
      options.targetOptions.providedWeights[weight] = {code, shape};
    }
    options.kernelCacheDir = kernelCache;
    options.jobs = jobs;
    options.keepBuildDir = keepBuildDir;
    return options;
  }

  /// A Compiler for `options`; a bad option (an unknown target, a model
  /// name that is not a C identifier, a malformed architecture list) raises
  /// CompileError, a ValueError.
  static thunder::Compiler makeCompiler(const thunder::CompilerOptions &options) {
    llvm::Expected<thunder::Compiler> compiler = thunder::Compiler::create(options);
    if (!compiler)
      throw CompileFailure(llvm::toString(compiler.takeError()));
    return std::move(*compiler);
  }

  /// Locks `mutex` for a call that holds the GIL, releasing the GIL while it
  /// waits for a compile on another thread.
  std::unique_lock<std::mutex> acquire() {
    std::unique_lock<std::mutex> lock(mutex, std::defer_lock);
    if (!lock.try_lock()) {
      py::gil_scoped_release release;
      lock.lock();
    }
    return lock;
  }

  std::vector<std::string> typesOf(bool inputs) {
    auto lock = acquire();
    std::vector<std::string> result;
    auto funcs = module->getOps<mlir::func::FuncOp>();
    if (funcs.empty())
      return result;
    mlir::FunctionType type = (*funcs.begin()).getFunctionType();
    for (mlir::Type t : inputs ? type.getInputs() : type.getResults()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      t.print(os);
      result.push_back(text);
    }
    return result;
  }

  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<thunder::Pt2Archive> archive;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Serializes the calls that run with the GIL released (the context is
  /// single-threaded); taken after releasing the GIL, so a waiting thread
  /// never holds it.
  std::mutex mutex;
};

/// (data_ptr, nbytes, dtype name, sizes): one weight as the package passes it.
using WeightTuple =
    std::tuple<uintptr_t, int64_t, std::string, std::vector<int64_t>>;

/// The weights as views of the caller's memory; checks what the importer
/// takes on trust (a known dtype, a byte count that matches the shape).
thunder::import::WeightMap
toWeightMap(const std::map<std::string, WeightTuple> &weights) {
  thunder::import::WeightMap map;
  for (const auto &[name, tuple] : weights) {
    const auto &[address, nbytes, dtypeName, sizes] = tuple;
    std::optional<thunder::DType> dtype = thunder::dtypeFromName(dtypeName);
    if (!dtype) {
      std::string names;
      for (int i = 0; i < thunder::kNumDTypes; ++i)
        names += std::string(i ? ", " : "") +
                 thunder::dtypeName(static_cast<thunder::DType>(i));
      throw ImportFailure("weight '" + name + "' has dtype " + dtypeName +
                          ", which Thunder does not support (supported: " +
                          names + ")");
    }
    int64_t expected = thunder::dtypeSizeInBytes(*dtype);
    for (int64_t size : sizes) {
      if (size < 0)
        throw ImportFailure("weight '" + name + "' has a negative size");
      if (size != 0 && expected > INT64_MAX / size)
        throw ImportFailure("weight '" + name + "' is too large");
      expected *= size;
    }
    if (nbytes != expected)
      throw ImportFailure("weight '" + name + "' has " + std::to_string(nbytes) +
                          " bytes, but " + dtypeName + " of its shape needs " +
                          std::to_string(expected));
    if (nbytes > 0 && address == 0)
      throw ImportFailure("weight '" + name + "' has a null data pointer");
    llvm::ArrayRef<char> bytes(reinterpret_cast<const char *>(address),
                               static_cast<size_t>(nbytes));
    map[name] = thunder::import::WeightData{*dtype, sizes, bytes};
  }
  return map;
}

/// Custom kernels as Python hands them over: dicts of op, symbol, cpu_source,
/// cpu_library and cuda_source (thunder.register_kernel).
using CustomKernelDicts = std::vector<std::map<std::string, std::string>>;

std::vector<thunder::import::CustomKernel>
toCustomKernels(const CustomKernelDicts &dicts) {
  std::vector<thunder::import::CustomKernel> kernels;
  for (const auto &dict : dicts) {
    auto get = [&](const char *key) {
      auto it = dict.find(key);
      return it == dict.end() ? std::string() : it->second;
    };
    kernels.push_back({get("op"), get("symbol"), get("cpu_source"), get("cpu_library"),
                       get("cuda_source")});
  }
  return kernels;
}

std::unique_ptr<Module>
importProgram(const std::string &json,
              const std::map<std::string, WeightTuple> &weights,
              const std::string &sourceName, const CustomKernelDicts &customKernels) {
  thunder::import::WeightMap weightMap = toWeightMap(weights);
  auto context = newContext();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string message;
  {
    DiagnosticCollector diagnostics(*context);
    thunder::import::ImportOptions options;
    options.sourceName = sourceName;
    options.customKernels = toCustomKernels(customKernels);
    {
      py::gil_scoped_release release;
      module = thunder::import::importExportedProgram(*context, json,
                                                      weightMap, options);
    }
    if (!module)
      message = diagnostics.message(sourceName + ": import failed");
  }
  if (!module)
    throw ImportFailure(message);
  return std::make_unique<Module>(std::move(context), nullptr,
                                  std::move(module));
}

std::unique_ptr<Module> importPt2(const std::string &path,
                                  const CustomKernelDicts &customKernels) {
  auto archive = thunder::Pt2Archive::open(path);
  if (!archive)
    throw ImportFailure(llvm::toString(archive.takeError()));
  auto context = newContext();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string message;
  {
    DiagnosticCollector diagnostics(*context);
    {
      py::gil_scoped_release release;
      thunder::import::ImportOptions options;
      options.customKernels = toCustomKernels(customKernels);
      module = thunder::import::importPt2Archive(*context, **archive, options);
    }
    if (!module)
      message = diagnostics.message(path + ": import failed");
  }
  if (!module)
    throw ImportFailure(message);
  return std::make_unique<Module>(std::move(context), std::move(*archive),
                                  std::move(module));
}

std::unique_ptr<Module> parseModule(const std::string &text,
                                    const std::string &sourceName) {
  auto context = newContext();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string message;
  {
    DiagnosticCollector diagnostics(*context);
    module = mlir::parseSourceString<mlir::ModuleOp>(
        text, mlir::ParserConfig(context.get()), sourceName);
    if (!module)
      message = diagnostics.message(sourceName + ": cannot parse the module");
  }
  if (!module)
    throw ImportFailure(message);
  return std::make_unique<Module>(std::move(context), nullptr,
                                  std::move(module));
}

thunder::import::ExamineReport examine(const std::string &json,
                                       const std::string &sourceName) {
  auto report = thunder::import::examineExportedProgram(json, sourceName);
  if (!report)
    throw ImportFailure(llvm::toString(report.takeError()));
  return std::move(*report);
}

py::dict reportToDict(const thunder::import::ExamineReport &report) {
  py::list ops;
  for (const auto &op : report.ops) {
    py::dict entry;
    entry["name"] = op.name;
    entry["count"] = op.count;
    entry["supported"] = op.supported;
    entry["source_lines"] = op.sourceLines;
    ops.append(entry);
  }
  py::dict result;
  result["num_nodes"] = report.numNodes;
  result["ops"] = ops;
  return result;
}

/// The inverse of reportToDict, so the text comes from the one formatter the
/// CLI uses too.
thunder::import::ExamineReport reportFromDict(const py::dict &dict) {
  thunder::import::ExamineReport report;
  report.numNodes = dict["num_nodes"].cast<int64_t>();
  for (py::handle item : dict["ops"].cast<py::list>()) {
    py::dict entry = item.cast<py::dict>();
    thunder::import::ExamineReport::Op op;
    op.name = entry["name"].cast<std::string>();
    op.count = entry["count"].cast<int64_t>();
    op.supported = entry["supported"].cast<bool>();
    op.sourceLines = entry["source_lines"].cast<std::vector<std::string>>();
    report.ops.push_back(std::move(op));
  }
  return report;
}


} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Thunder's native module: the C++ importer and pipelines "
            "(use the thunder package rather than this module directly)";

  py::register_exception<ImportFailure>(m, "ImportError", PyExc_ValueError);
  py::register_exception<CompileFailure>(m, "CompileError", PyExc_ValueError);
  // RuntimeError carries the runtime's status name, so it is made by hand
  // rather than with register_exception. The type lives as long as the
  // process (a module is never unloaded).
  runtimeErrorType = PyErr_NewExceptionWithDoc(
      "thunder._C.RuntimeError",
      "A runtime call failed: the runtime's message, naming the input or "
      "output at fault; .status is the thunder_status name "
      "(\"THUNDER_ERROR_INVALID_ARGUMENT\", ...).",
      PyExc_RuntimeError, nullptr);
  if (!runtimeErrorType)
    throw py::error_already_set();
  m.add_object("RuntimeError", py::handle(runtimeErrorType));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const RuntimeFailure &failure) {
      py::object error = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(runtimeErrorType, "s", failure.what()));
      if (!error)
        return; // the call set a Python error already
      error.attr("status") = thunder_status_name(failure.status);
      PyErr_SetObject(runtimeErrorType, error.ptr());
    }
  });

  py::class_<Module>(m, "Module", py::dynamic_attr(),
                     "An imported program: an MLIR module in the thunder "
                     "dialect with the context it lives in")
      .def("__str__",
           [](Module &self) { return self.toString(false, false); })
      .def("to_string", &Module::toString, py::arg("print_weights") = false,
           py::arg("locations") = false,
           "The module as MLIR text. Weight blobs over 64 bytes are elided "
           "unless print_weights; locations adds the source locations.")
      .def("run_graph_pipeline", &Module::runGraphPipeline,
           py::arg("decompose_composites") = false,
           "Runs the graph-level pipeline (thunder-compile "
           "--compile-to=graph) in place; raises CompileError on failure.")
      .def("memory_plan", &Module::memoryPlan, py::arg("fuse") = true,
           py::arg("decompose_composites") = false,
           py::arg("borrow_outputs") = false,
           "The memory plan after the graph and kernel pipelines (run on a "
           "copy): arena, lower_bound, naive and outputs bytes, every "
           "kernel result's bytes, offset, live interval and in-place source, "
           "and the memory and fusion reports as text. Raises CompileError.")
      .def("verify", &Module::verify, "Whether the module verifies.")
      .def("op_histogram", &Module::opHistogram,
           "Op name -> number of uses, over every op below the module.")
      .def("input_types", &Module::inputTypes,
           "The main function's argument types as MLIR text.")
      .def("output_types", &Module::outputTypes,
           "The main function's result types as MLIR text.")
      .def("weight_address", &Module::weightAddress, py::arg("name"),
           "The address of the bytes the constant of weight `name` reads "
           "(equal to the tensor's data_ptr() when it was not copied).")
      .def("compile", &Module::compile, py::arg("output_dir"),
           py::arg("target") = "cpu", py::arg("name") = "model",
           py::arg("cpu") = "native", py::arg("external_weights") = false,
           py::arg("source_only") = false, py::arg("opt_level") = 2,
           py::arg("keep_build_dir") = false,
           py::arg("decompose_composites") = false, py::arg("fuse") = true,
           py::arg("cuda_arch") = "", py::arg("arch") = "",
           py::arg("kernel_cache") = "", py::arg("jobs") = 0, py::arg("pack_weights") = true,
           py::arg("provided_weights") = ProvidedWeights(),
           "Compiles the module into output_dir as thunder-compile does (on a "
           "copy: the target's pipeline from the phase the module is at: the "
           "graph pipeline unless run_graph_pipeline ran, the "
           "kernel pipelines (fusion unless fuse=False, scheduling, memory "
           "planning), then the target's code generation and toolchain): libNAME.so and "
           "NAME.h, plus NAME.safetensors with external_weights; the sources "
           "only with source_only. Written atomically: a failure leaves "
           "output_dir as it was. arch: the device architectures, comma-separated, in the "
           "target's spelling (cuda: sm_80,sm_90a; hip: gfx90a,gfx942,gfx950), empty for the "
           "target's default; cuda_arch is its older name. Returns {'library', 'header', "
           "'artifacts', 'seconds': {'graph', 'build'}, 'units', 'units_cached'}. "
           "kernel_cache: a directory where compiled kernel objects are kept by content "
           "and reused (empty: none); jobs: compiler processes at once (0: the cores). "
           "pack_weights (cpu): fp32 weights that only feed GEMMs stored packed (fastest); "
           "False keeps them as given, so a library loaded with the module's tensors "
           "reads them in place. provided_weights (cpu, embedded weights): {name: (dtype "
           "name, shape)} of the tensors the caller gives at load (LoadedModel's weights); "
           "a constant that is one of them as it is is not embedded, and the library then "
           "loads only with it. Raises CompileError "
           "with every diagnostic, the toolchain's output included.");

  m.def("compile_partitions", &Module::compilePartitions, py::arg("modules"),
        py::arg("output_dir"), py::arg("target") = "cpu", py::arg("name") = "model",
        py::arg("cpu") = "native", py::arg("external_weights") = false,
        py::arg("opt_level") = 2, py::arg("keep_build_dir") = false, py::arg("fuse") = true,
        py::arg("arch") = "", py::arg("kernel_cache") = "", py::arg("jobs") = 0,
        py::arg("pack_weights") = true, py::arg("provided_weights") = ProvidedWeights(),
        "Compiles several Modules (the partitions of one model) into ONE libNAME.so in "
        "output_dir: partition i is the model NAME_p<i>, reachable through the library's "
        "partition index (LoadedModel(path, weights, partition=i)); its ordinary entry is "
        "partition 0's. Options as Module.compile's. Raises CompileError; when one "
        "partition failed (its pipeline or code generation), the message starts with "
        "'partition <i>: '. A target that cannot link partitions together raises "
        "CompileError before any work.");

  bindRuntime(m);
  bindFastPath(m);

  m.def("import_program", &importProgram, py::arg("json"), py::arg("weights"),
        py::arg("source_name") = "<program>",
        py::arg("custom_kernels") = CustomKernelDicts(),
        "Imports an ExportedProgram's JSON. weights maps each FQN to "
        "(data_ptr, nbytes, dtype name, sizes) of contiguous CPU memory that "
        "the caller keeps alive as long as the Module; it is not copied. "
        "custom_kernels: dicts (op, symbol, cpu_source, cpu_library, "
        "cuda_source) of the custom ops to import as thunder.custom_call.");
  m.def("import_pt2", &importPt2, py::arg("path"),
        py::arg("custom_kernels") = CustomKernelDicts(),
        "Imports a .pt2 archive written by torch.export.save; the Module "
        "keeps the mapped archive its weights point into.");
  m.def("parse_module", &parseModule, py::arg("text"),
        py::arg("source_name") = "<string>",
        "Parses MLIR text (thunder-compile's or thunder-opt's output) into a "
        "Module; the parser verifies it. Elided weight blobs stay without "
        "bytes.");
  m.def(
      "examine_program",
      [](const std::string &json, const std::string &sourceName) {
        return reportToDict(examine(json, sourceName));
      },
      py::arg("json"), py::arg("source_name") = "<program>",
      "Which ops of the program the importer supports, without importing: "
      "{'num_nodes': int, 'ops': [{'name', 'count', 'supported', "
      "'source_lines'}]}, most frequent first.");
  m.def(
      "format_examine_report",
      [](const py::dict &report) {
        return thunder::import::formatExamineReport(reportFromDict(report));
      },
      py::arg("report"), "examine_program's report as text (as the CLI prints it).");
  m.def("supported_ops", &thunder::import::supportedOps,
        "Every ATen op the importer converts, sorted.");
  m.def(
      "dtype_names",
      [] {
        std::vector<std::string> names;
        for (int i = 0; i < thunder::kNumDTypes; ++i)
          names.push_back(thunder::dtypeName(static_cast<thunder::DType>(i)));
        return names;
      },
      "The dtype names weights may have.");
}
