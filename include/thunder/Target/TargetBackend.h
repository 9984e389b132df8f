//===- TargetBackend.h - The interface every code generator implements -*- C++ -*-===//
//
// DESIGN.md decision 7: a target backend emits the source of a planned
// module (kernels and the host program implementing thunder-c/artifact.h),
// names its toolchain and flags, and describes its device. lib/Driver turns
// the sources into libNAME.so.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_TARGETBACKEND_H
#define THUNDER_TARGET_TARGETBACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace thunder {

/// Options every backend understands.
struct TargetOptions {
  std::string modelName = "model";
  /// CPU: the -march value ("native", "x86-64-v3", ...).
  std::string cpu = "native";
  /// CUDA: the GPU architectures to build code for, comma-separated; the
  /// library holds one cubin per entry (sm_90a: Hopper's own instructions).
  std::string cudaArch = "sm_80,sm_90a";
  /// Optimization level passed to the toolchain.
  int optLevel = 2;
  /// Write the weights to NAME.safetensors beside the library (memory-mapped
  /// at load) instead of embedding them in it.
  bool externalWeights = false;
};

/// A file the backend produced, relative to the build directory.
struct SourceFile {
  std::string path;
  std::string contents;
};

/// What the backend emitted for a module.
struct EmittedSources {
  std::vector<SourceFile> files;
  /// Files among `files` to compile and link (the rest are headers/data).
  std::vector<std::string> compileUnits;
  /// Files among `files` that ship beside the library (external weights).
  std::vector<std::string> artifacts;
};

/// What a backend's code needs from the memory plan (thunder-plan-memory's
/// options, set by whoever runs the kernel pipeline for this target).
struct PlanNeeds {
  /// The backend places tensors in output buffers (thunder.borrowed).
  bool readsBorrowed = false;
  /// Bytes of workspace each gemm/conv kernel's library call gets in the
  /// arena (thunder.workspace); 0: the backend needs none.
  int64_t libraryWorkspace = 0;
};

/// A command line to run in the build directory.
struct ToolchainCommand {
  std::vector<std::string> argv;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// "cpu", "cuda", ...
  virtual llvm::StringRef name() const = 0;
  /// What the memory plan must provide for this backend's code.
  virtual PlanNeeds planNeeds() const { return {}; }

  /// Emits kernels and the host program for `module` (after the target's
  /// pipeline). Reports errors as diagnostics on the offending ops.
  virtual mlir::FailureOr<EmittedSources>
  emit(mlir::ModuleOp module, const TargetOptions &options) = 0;

  /// The command that compiles and links `sources`, written to `buildDir`,
  /// into `output` (a shared library). Paths in it are absolute.
  virtual ToolchainCommand link(const EmittedSources &sources,
                                llvm::StringRef buildDir, llvm::StringRef output,
                                const TargetOptions &options) const = 0;
};

} // namespace thunder

#endif // THUNDER_TARGET_TARGETBACKEND_H
