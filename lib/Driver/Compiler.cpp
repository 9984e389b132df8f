//===- Compiler.cpp - From a module to libNAME.so, phase by phase ---------===//
#include "thunder/Driver/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "thunder/Dialect/Thunder/Transforms/PhaseMarker.h"
#include "thunder/Driver/UnitBuild.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Errno.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

#include <fcntl.h>
#include <unistd.h>

using namespace mlir;

namespace thunder {

llvm::Expected<Compiler> Compiler::create(CompilerOptions options) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  registerAllTargetBackends();
  std::unique_ptr<TargetBackend> backend = createTargetBackend(options.target);
  if (!backend)
    return error("unknown target '" + options.target + "'; the targets are: " +
                 llvm::join(targetBackendNames(), ", "));
  if (!isValidModelName(options.targetOptions.modelName))
    return error("the model name '" + options.targetOptions.modelName +
                 "' is not a C identifier (letters, digits, '_', not starting "
                 "with a digit)");
  if (options.startFrom && !isIRPhase(*options.startFrom))
    return error("a compile starts from an IR phase (import, graph, fusion, "
                 "plan), not '" + phaseName(*options.startFrom) + "'");
  if (options.startFrom && *options.startFrom > options.compileTo)
    return error("cannot compile from phase '" + phaseName(*options.startFrom) +
                 "' to the earlier phase '" + phaseName(options.compileTo) + "'");
  if (isIRPhase(options.compileTo) && options.compileTo > backend->emitsFrom())
    return error("the " + backend->name() + " target emits code from phase '" +
                 phaseName(backend->emitsFrom()) + "'; it has no phase '" +
                 phaseName(options.compileTo) + "' (compile to a phase up to '" +
                 phaseName(backend->emitsFrom()) + "', source or library)");
  applyTargetDefaults(*backend, options.targetOptions);
  if (llvm::Error invalid = backend->validateOptions(options.targetOptions))
    return std::move(invalid);
  return Compiler(std::move(options), std::move(backend));
}

LogicalResult Compiler::lower(ModuleOp module, std::optional<Phase> to) {
  Phase goal = to ? *to : opts.compileTo;
  if (!isIRPhase(goal))
    goal = target->emitsFrom();
  // --start-from says where the input stands: recorded on it once, after
  // which the marker (kept up to date by every pipeline) rules.
  if (opts.startFrom) {
    mlir::thunder::writePhase(module, *opts.startFrom);
    opts.startFrom.reset();
  }
  FailureOr<Phase> from = mlir::thunder::readPhase(module);
  if (failed(from))
    return failure();
  if (*from == goal)
    return success();
  if (*from > goal)
    return module.emitError() << "the module is at phase '" << phaseName(*from)
                              << "', past '" << phaseName(goal)
                              << "' where this compile stops";
  auto start = std::chrono::steady_clock::now();
  PassManager pm(module.getContext());
  target->buildPipeline(pm, *from, goal, opts.pipeline);
  LogicalResult result = pm.run(module);
  pipelineTime +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

FailureOr<EmittedSources> Compiler::emit(ModuleOp module) {
  if (failed(lower(module, target->emitsFrom())))
    return failure();
  return emitSources(*target, module, opts.targetOptions);
}

/// Writes `file` into `dir`, creating parent directories; the stream (the
/// weights) goes to disk piece by piece.
static LogicalResult writeFile(Location loc, llvm::StringRef dir,
                               const SourceFile &file) {
  std::string p = (dir + "/" + file.path).str();
  if (auto ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(p)))
    return emitError(loc) << "cannot create the directory of " << p << ": "
                          << ec.message();
  std::error_code ec;
  llvm::raw_fd_ostream os(p, ec);
  if (ec)
    return emitError(loc) << "cannot write " << p << ": " << ec.message();
  file.write(os);
  os.close();
  if (os.has_error())
    return emitError(loc) << "cannot write " << p << ": " << os.error().message();
  return success();
}

/// Moves the finished file `from` to `to` (same file system: atomic), its
/// data on disk first. A crash after the rename then never leaves an empty or
/// partial artifact under the published name, and the published file's pages
/// are clean: a model that copies its weights (a convolution filter
/// reordered for oneDNN) can hand the originals' pages back at once
/// (release_weight_pages; the kernel does not reclaim dirty pages), in the
/// process that compiled it as in any other.
static LogicalResult publish(Location loc, const llvm::Twine &from, const llvm::Twine &to) {
  std::string source = from.str(), target = to.str();
  int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  bool synced = fd >= 0 && ::fdatasync(fd) == 0;
  std::string why = synced ? "" : llvm::sys::StrError();
  if (fd >= 0)
    ::close(fd);
  if (!synced)
    return emitError(loc) << "cannot write " << target << ": " << why;
  if (auto ec = llvm::sys::fs::rename(source, target))
    return emitError(loc) << "cannot write " << target << ": " << ec.message();
  return success();
}

/// A C header with the model's signature, for C and C++ applications.
static std::string modelHeader(ModuleOp module, llvm::StringRef name) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = "THUNDER_MODEL_" + name.upper() + "_H";
  os << "/* Generated by Thunder: the signature of model '" << name << "' (lib"
     << name << ".so). */\n#ifndef " << guard << "\n#define " << guard
     << "\n\n#include \"thunder-c/artifact.h\"\n\n";
  auto func = *module.getOps<func::FuncOp>().begin();
  auto describe = [&](Type t) {
    std::string s;
    llvm::raw_string_ostream ts(s);
    ts << t;
    return s;
  };
  os << "/* Inputs, in order:\n";
  for (BlockArgument arg : func.getArguments()) {
    auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "thunder.name");
    os << " *   " << arg.getArgNumber() << ": " << (n ? n.getValue() : "") << "  "
       << describe(arg.getType()) << "\n";
  }
  os << " * Outputs, in order:\n";
  for (auto [i, t] : llvm::enumerate(func.getResultTypes()))
    os << " *   " << i << ": output_" << i << "  " << describe(t) << "\n";
  os << " */\n#define THUNDER_MODEL_" << name.upper() << "_NUM_INPUTS "
     << func.getNumArguments() << "\n#define THUNDER_MODEL_" << name.upper()
     << "_NUM_OUTPUTS " << func.getNumResults() << "\n\n#endif\n";
  return text;
}

/// Compiles the objects (in parallel, from the kernel cache where it has them)
/// and records how many there were and how many came from the cache.
static LogicalResult compileObjects(Location loc, const TargetBackend &target,
                                    const std::vector<UnitCompile> &steps,
                                    llvm::StringRef buildDir, const CompilerOptions &opts,
                                    CompileResult &result) {
  if (!steps.empty() && !llvm::sys::findProgramByName(steps.front().argv.front()))
    return emitError(loc) << "the toolchain '" << steps.front().argv.front()
                          << "' is not on PATH";
  UnitBuildResult units =
      runUnitCompiles(steps, buildDir, opts.kernelCacheDir, opts.jobs,
                      opts.usePrebuiltKernels ? defaultPrebuiltKernelDirs()
                                              : std::vector<std::string>());
  if (!units.ok)
    return emitError(loc) << "the " << target.name() << " toolchain failed " << units.error;
  result.units = steps.size();
  result.unitsCached = units.cached;
  return success();
}

/// Runs one toolchain command (the link), its output logged to
/// <buildDir>/toolchain.log, whose tail a failure reports.
static LogicalResult runToolchain(Location loc, const TargetBackend &target,
                                  const ToolchainCommand &cmd, llvm::StringRef buildDir) {
  auto program = llvm::sys::findProgramByName(cmd.argv.front());
  if (!program)
    return emitError(loc) << "the toolchain '" << cmd.argv.front() << "' is not on PATH";
  std::string log = (buildDir + "/toolchain.log").str();
  std::vector<llvm::StringRef> args(cmd.argv.begin(), cmd.argv.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string errorText;
  if (llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects, 0, 0, &errorText)) {
    auto output = llvm::MemoryBuffer::getFile(log);
    InFlightDiagnostic diag = emitError(loc)
                              << "the " << target.name() << " toolchain failed ("
                              << llvm::join(cmd.argv, " ") << ")"
                              << (errorText.empty() ? "" : ": " + errorText);
    if (output)
      diag << "\n" << (*output)->getBuffer().take_back(4000);
    return diag;
  }
  return success();
}

FailureOr<CompileResult> Compiler::compile(ModuleOp module, llvm::StringRef outputDir) {
  double before = pipelineTime;
  if (isIRPhase(opts.compileTo)) {
    if (failed(lower(module)))
      return failure();
    CompileResult result;
    result.pipelineSeconds = pipelineTime - before;
    return result;
  }
  FailureOr<EmittedSources> sources = emit(module);
  if (failed(sources))
    return failure();
  auto start = std::chrono::steady_clock::now();
  FailureOr<CompileResult> result = build(module, *sources, outputDir);
  if (succeeded(result)) {
    result->pipelineSeconds = pipelineTime - before;
    result->buildSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return result;
}

FailureOr<CompileResult> Compiler::build(ModuleOp module, const EmittedSources &sources,
                                         llvm::StringRef outputDir) {
  Location loc = module.getLoc();
  // Absolute, so that the build directory is made beside the output (not in
  // the system's temporary directory, as a relative prefix would be).
  llvm::SmallString<256> outputPath(outputDir);
  if (auto ec = llvm::sys::fs::make_absolute(outputPath))
    return emitError(loc) << "cannot resolve " << outputDir << ": " << ec.message();
  outputDir = outputPath;
  if (auto ec = llvm::sys::fs::create_directories(outputDir))
    return emitError(loc) << "cannot create " << outputDir << ": " << ec.message();
  const std::string &name = opts.targetOptions.modelName;
  CompileResult result;

  if (opts.compileTo == Phase::Source) {
    for (const SourceFile &file : sources.files) {
      if (failed(writeFile(loc, outputDir, file)))
        return failure();
      result.sources.push_back((outputDir + "/" + file.path).str());
    }
    return result;
  }

  // Build in a fresh directory inside the output directory (same file
  // system, so the final rename is atomic), removed on every path out.
  llvm::SmallString<128> buildDir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory(
          outputDir + "/.thunder-build-" + name, buildDir))
    return emitError(loc) << "cannot create a build directory in " << outputDir
                          << ": " << ec.message();
  auto cleanup = llvm::make_scope_exit([&] {
    if (!opts.keepBuildDir)
      llvm::sys::fs::remove_directories(buildDir);
  });
  for (const SourceFile &file : sources.files)
    if (failed(writeFile(loc, buildDir, file)))
      return failure();

  // The objects first (in parallel, from the kernel cache where it has them).
  std::vector<UnitCompile> steps = target->compileUnits(sources, buildDir, opts.targetOptions);
  if (failed(compileObjects(loc, *target, steps, buildDir, opts, result)))
    return failure();

  std::string libName = "lib" + name + ".so";
  std::string builtLib = (buildDir + "/" + libName).str();
  ToolchainCommand cmd = target->link(sources, buildDir, builtLib, opts.targetOptions);
  if (failed(runToolchain(loc, *target, cmd, buildDir)))
    return failure();

  // Publish: header, then the artifacts, then the library, each by rename.
  result.library = (outputDir + "/" + libName).str();
  result.header = (outputDir + "/" + name + ".h").str();
  SourceFile header{name + ".h", modelHeader(module, name), nullptr};
  if (failed(writeFile(loc, buildDir, header)))
    return failure();
  if (failed(publish(loc, buildDir + "/" + header.path, result.header)))
    return failure();
  for (const std::string &artifact : sources.artifacts) {
    std::string published = (outputDir + "/" + artifact).str();
    if (failed(publish(loc, buildDir + "/" + artifact, published)))
      return failure();
    result.artifacts.push_back(published);
  }
  if (failed(publish(loc, builtLib, result.library)))
    return failure();
  return result;
}

/// The partition index of a several-partition library (artifact.h): partition
/// i's entries are its host program's, renamed with "_p<i>"; the library's
/// ordinary entries are partition 0's.
static std::string partitionIndexSource(size_t count) {
  std::string text = "// Generated by Thunder: the partitions of this library.\n"
                     "#include \"thunder-c/artifact.h\"\n\n";
  for (size_t i = 0; i < count; ++i) {
    std::string n = std::to_string(i);
    text += "extern \"C\" const thunder_model_v1 *thunder_model_entry_v1_p" + n + "(void);\n"
            "extern \"C\" const thunder_model_weights_v1 *thunder_model_weights_entry_v1_p" +
            n + "(void);\n";
  }
  text += "\nnamespace {\nconst thunder_model_partition_v1 kPartitions[] = {\n";
  for (size_t i = 0; i < count; ++i)
    text += "    {thunder_model_entry_v1_p" + std::to_string(i) +
            ", thunder_model_weights_entry_v1_p" + std::to_string(i) + "},\n";
  text += "};\n} // namespace\n\n"
          "extern \"C\" __attribute__((visibility(\"default\")))\n"
          "const thunder_model_partition_index_v1 *thunder_model_partitions_v1(void) {\n"
          "  static const thunder_model_partition_index_v1 table = {\n"
          "      sizeof(thunder_model_partition_index_v1), " + std::to_string(count) +
          ", kPartitions};\n  return &table;\n}\n\n"
          "extern \"C\" __attribute__((visibility(\"default\")))\n"
          "const thunder_model_v1 *thunder_model_entry_v1(void) {\n"
          "  return thunder_model_entry_v1_p0();\n}\n\n"
          "extern \"C\" __attribute__((visibility(\"default\")))\n"
          "const thunder_model_weights_v1 *thunder_model_weights_entry_v1(void) {\n"
          "  return thunder_model_weights_entry_v1_p0();\n}\n";
  return text;
}

FailureOr<CompileResult> Compiler::compilePartitions(llvm::ArrayRef<ModuleOp> modules,
                                                     llvm::StringRef outputDir,
                                                     int *failedPartition) {
  int ignored;
  int &failed = failedPartition ? *failedPartition : ignored;
  failed = -1;
  if (modules.empty())
    return failure();
  ModuleOp first = modules.front();
  Location loc = first.getLoc();
  if (opts.compileTo != Phase::Library)
    return emitError(loc) << "partitions are compiled into a library only";
  const std::string &name = opts.targetOptions.modelName;
  double before = pipelineTime;
  auto start = std::chrono::steady_clock::now();

  // Each partition lowered and emitted on its own, with its names renamed.
  std::vector<EmittedSources> sources(modules.size());
  std::vector<TargetBackend::PartitionSources> parts;
  for (auto [i, module] : llvm::enumerate(modules)) {
    TargetOptions options = opts.targetOptions;
    options.modelName = name + "_p" + std::to_string(i);
    options.partitionSuffix = "_p" + std::to_string(i);
    if (mlir::failed(lower(module, target->emitsFrom()))) {
      failed = static_cast<int>(i);
      return failure();
    }
    FailureOr<EmittedSources> emitted = emitSources(*target, module, options);
    if (mlir::failed(emitted)) {
      failed = static_cast<int>(i);
      return failure();
    }
    sources[i] = std::move(*emitted);
    parts.push_back({&sources[i], "", options});
  }
  double pipelineSeconds = pipelineTime - before;

  llvm::SmallString<256> outputPath(outputDir);
  if (auto ec = llvm::sys::fs::make_absolute(outputPath))
    return emitError(loc) << "cannot resolve " << outputDir << ": " << ec.message();
  outputDir = outputPath;
  if (auto ec = llvm::sys::fs::create_directories(outputDir))
    return emitError(loc) << "cannot create " << outputDir << ": " << ec.message();
  llvm::SmallString<128> buildDir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory(
          outputDir + "/.thunder-build-" + name, buildDir))
    return emitError(loc) << "cannot create a build directory in " << outputDir << ": "
                          << ec.message();
  auto cleanup = llvm::make_scope_exit([&] {
    if (!opts.keepBuildDir)
      llvm::sys::fs::remove_directories(buildDir);
  });
  std::vector<UnitCompile> steps;
  for (size_t i = 0; i < parts.size(); ++i) {
    TargetBackend::PartitionSources &part = parts[i];
    part.buildDir = (buildDir + "/p" + std::to_string(i)).str();
    for (const SourceFile &file : part.sources->files)
      if (mlir::failed(writeFile(loc, part.buildDir, file)))
        return failure();
    llvm::append_range(steps, target->compileUnits(*part.sources, part.buildDir, part.options));
  }
  std::string libName = "lib" + name + ".so";
  std::string builtLib = (buildDir + "/" + libName).str();
  std::string indexUnit = (buildDir + "/thunder_partitions.cpp").str();
  std::string why;
  std::optional<ToolchainCommand> cmd =
      target->linkPartitions(parts, indexUnit, builtLib, why);
  if (!cmd)
    return emitError(loc) << why;
  if (mlir::failed(writeFile(loc, buildDir,
                             {"thunder_partitions.cpp", partitionIndexSource(parts.size()),
                              nullptr})))
    return failure();

  CompileResult result;
  if (mlir::failed(compileObjects(loc, *target, steps, buildDir, opts, result)) ||
      mlir::failed(runToolchain(loc, *target, *cmd, buildDir)))
    return failure();

  // Publish: partition 0's header, every partition's artifacts, then the library.
  result.library = (outputDir + "/" + libName).str();
  result.header = (outputDir + "/" + name + ".h").str();
  SourceFile header{name + ".h", modelHeader(modules.front(), name), nullptr};
  if (mlir::failed(writeFile(loc, buildDir, header)))
    return failure();
  if (mlir::failed(publish(loc, buildDir + "/" + header.path, result.header)))
    return failure();
  for (const TargetBackend::PartitionSources &part : parts)
    for (const std::string &artifact : part.sources->artifacts) {
      std::string published = (outputDir + "/" + artifact).str();
      if (mlir::failed(publish(loc, part.buildDir + "/" + artifact, published)))
        return failure();
      result.artifacts.push_back(published);
    }
  if (mlir::failed(publish(loc, builtLib, result.library)))
    return failure();
  result.pipelineSeconds = pipelineSeconds;
  result.buildSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
      pipelineSeconds;
  return result;
}

} // namespace thunder
