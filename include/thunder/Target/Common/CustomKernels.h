//===- CustomKernels.h - User kernels of thunder.custom_call -----*- C++ -*-===//
//
// What every backend does for the custom kernels a module calls: read their
// sources from the module's `thunder.custom_kernels` attribute (the importer
// puts them there), emit the call of one `thunder.custom_call` against the C
// ABI of include/thunder-c/custom_op.h, and add the kernels' translation
// units to the artifact's sources.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_CUSTOMKERNELS_H
#define THUNDER_TARGET_COMMON_CUSTOMKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::thunder {
class CustomCallOp;
} // namespace mlir::thunder

namespace thunder {
struct EmittedSources;
} // namespace thunder

namespace thunder::codegen {

/// One registered kernel as the module records it.
struct CustomKernelSource {
  std::string symbol;     ///< the C function
  std::string op;         ///< "mylib.rms_norm.default"
  std::string cpuSource;  ///< C++ defining `symbol`, or empty
  std::string cpuLibrary; ///< a shared library defining `symbol`, or empty
  std::string cudaSource; ///< CUDA defining `symbol`, or empty
};

/// The kernels of the module's `thunder.custom_kernels` attribute.
std::vector<CustomKernelSource> customKernels(mlir::ModuleOp module);

/// The C declarations of the kernels the module calls, for the model's source.
std::string customKernelDeclarations(mlir::ModuleOp module);

/// The text of include/thunder-c/custom_op.h (generated sources include it).
llvm::StringRef customOpHeader();

/// Emits the call of `call` at `indent`: descriptors of its inputs and
/// results, then `symbol(...)`, running `onFailure` (C++ that may read the
/// kernel's non-zero `status`) when it fails. `name` is a value's data
/// pointer and `shape` its shape array (C++ expressions); `stream` the
/// stream argument.
void emitCustomCall(llvm::raw_ostream &os, mlir::thunder::CustomCallOp call,
                    llvm::function_ref<std::string(mlir::Value)> name,
                    llvm::function_ref<std::string(mlir::Value)> shape,
                    llvm::StringRef stream, llvm::StringRef onFailure,
                    llvm::StringRef indent);

/// Adds thunder-c/custom_op.h and one translation unit per kernel the module
/// calls for `device` ("cpu": its C++ source, or a trampoline that loads
/// its shared library; "cuda": its CUDA source) to `out`; fails naming the
/// op when a kernel has nothing for that device.
mlir::LogicalResult addCustomKernelUnits(mlir::ModuleOp module, llvm::StringRef device,
                                         EmittedSources &out);

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_CUSTOMKERNELS_H
