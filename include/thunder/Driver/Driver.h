//===- Driver.h - From an imported module to libNAME.so ---------*- C++ -*-===//
//
// Runs the target's pipeline, asks its backend for sources, and runs the
// toolchain to link the shared library. Output is written atomically: a
// failed compile leaves nothing behind, and a successful one replaces the
// previous artifact in one rename.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DRIVER_DRIVER_H
#define THUNDER_DRIVER_DRIVER_H

#include "mlir/IR/BuiltinOps.h"
#include "thunder/Target/TargetBackend.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace thunder {

/// The backend for `name` ("cpu"), or null when Thunder has none.
std::unique_ptr<TargetBackend> createTargetBackend(llvm::StringRef name);

/// The names of every backend.
std::vector<std::string> targetBackendNames();

struct CompileOptions {
  std::string target = "cpu";
  TargetOptions targetOptions;
  /// Stop after writing the generated sources (no toolchain run).
  bool sourceOnly = false;
  /// Keep the build directory (sources, toolchain output) for inspection.
  bool keepBuildDir = false;
};

/// What a compile produced.
struct CompileResult {
  std::string library; ///< path of libNAME.so (empty for sourceOnly)
  std::string header;  ///< path of NAME.h
  std::vector<std::string> artifacts; ///< files beside it (NAME.safetensors)
};

/// Compiles `module` (imported, graph pipeline applied) into `outputDir`:
/// libNAME.so and NAME.h, or the sources with `sourceOnly`. Reports problems
/// as MLIR diagnostics (toolchain output included) and fails without
/// touching `outputDir`'s previous contents.
mlir::FailureOr<CompileResult> compileModule(mlir::ModuleOp module,
                                             llvm::StringRef outputDir,
                                             const CompileOptions &options);

} // namespace thunder

#endif // THUNDER_DRIVER_DRIVER_H
