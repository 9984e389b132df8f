//===- Compiler.h - From a module to libNAME.so, phase by phase -*- C++ -*-===//
//
// DESIGN.md decisions 6 and 7: one Compiler sequences the phases for the CLI
// and the Python binding alike. It validates the options (the target exists,
// the phases are in order, the model name is a C identifier), reads the phase
// a module is at from its marker, asks the target's backend for the pipeline
// from there, and then for the sources and the toolchain. Output is written
// atomically: a failed compile leaves nothing behind, and a successful one
// replaces the previous artifact in one rename.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DRIVER_COMPILER_H
#define THUNDER_DRIVER_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "thunder/Target/TargetBackend.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace thunder {

struct CompilerOptions {
  /// The backend, by its registered name.
  std::string target = "cpu";
  /// Stop after this phase: an IR phase leaves the module there; Source
  /// writes the sources; Library links libNAME.so.
  Phase compileTo = Phase::Library;
  /// The phase the input module is at; by default its thunder.phase marker
  /// says (none: just imported). The first lower() records it on the module.
  std::optional<Phase> startFrom;
  PipelineOptions pipeline;
  TargetOptions targetOptions;
  /// Keep the build directory (sources, toolchain log) for inspection.
  bool keepBuildDir = false;
  /// Where compiled kernel objects are kept by content (shared between
  /// compiles and processes; "": compile every object).
  std::string kernelCacheDir;
  /// Also take objects from the caches built with Thunder
  /// (defaultPrebuiltKernelDirs, UnitBuild.h), read only.
  bool usePrebuiltKernels = true;
  /// Compiler processes run at once (0: the machine's cores).
  unsigned jobs = 0;
};

/// What a compile produced.
struct CompileResult {
  std::string library; ///< path of libNAME.so (empty unless Library)
  std::string header;  ///< path of NAME.h (empty unless Library)
  std::vector<std::string> artifacts; ///< files beside it (NAME.safetensors)
  std::vector<std::string> sources;   ///< Source: the files written
  double pipelineSeconds = 0; ///< the passes
  double buildSeconds = 0;    ///< code generation and the toolchain
  unsigned units = 0;         ///< objects the build needed (UnitCompile steps)
  unsigned unitsCached = 0;   ///< of which taken from the kernel cache
};

class Compiler {
public:
  /// A compiler for `options`, or an error that says which option is wrong
  /// (an unknown target lists the known ones).
  static llvm::Expected<Compiler> create(CompilerOptions options);

  const CompilerOptions &options() const { return opts; }
  TargetBackend &backend() const { return *target; }

  /// Runs the target's pipeline on `module` from the phase it is at up to
  /// `to` (by default compileTo, or the phase the backend emits from when
  /// compileTo is Source or Library). Nothing to do when the module is
  /// there already; an error when it is past it.
  mlir::LogicalResult lower(mlir::ModuleOp module, std::optional<Phase> to = {});

  /// The sources of `module` (lowered first where it is not yet at the
  /// backend's phase).
  mlir::FailureOr<EmittedSources> emit(mlir::ModuleOp module);

  /// Lowers `module`, then for Source writes the sources into `outputDir`,
  /// for Library builds libNAME.so and NAME.h there. Reports problems as
  /// MLIR diagnostics (toolchain output included); a failure leaves
  /// `outputDir`'s previous contents as they were.
  mlir::FailureOr<CompileResult> compile(mlir::ModuleOp module,
                                         llvm::StringRef outputDir);

  /// Lowers each of `modules` (the partitions of one model, each a module of its
  /// own) and builds them into ONE libNAME.so in `outputDir`: partition i is a
  /// model named NAME_p<i>, reachable through the library's partition index
  /// (THUNDER_MODEL_PARTITIONS_SYMBOL in thunder-c/artifact.h); the library's
  /// ordinary entry is partition 0's. Kernels the partitions share are linked
  /// once. compileTo must be Library. When the failure is one partition's (its
  /// pipeline or its code generation), `failedPartition` (when given) is set to
  /// its index, else to -1; a target that cannot link partitions together
  /// (TargetBackend::linkPartitions) fails before any work, with -1.
  mlir::FailureOr<CompileResult> compilePartitions(llvm::ArrayRef<mlir::ModuleOp> modules,
                                                   llvm::StringRef outputDir,
                                                   int *failedPartition = nullptr);

private:
  Compiler(CompilerOptions options, std::unique_ptr<TargetBackend> backend)
      : opts(std::move(options)), target(std::move(backend)) {}

  mlir::FailureOr<CompileResult> build(mlir::ModuleOp module,
                                       const EmittedSources &sources,
                                       llvm::StringRef outputDir);

  CompilerOptions opts;
  std::shared_ptr<TargetBackend> target;
  /// Seconds in lower() so far (CompileResult reports each compile's share).
  double pipelineTime = 0;
};

} // namespace thunder

#endif // THUNDER_DRIVER_COMPILER_H
