//===- Importer.h - torch.export programs into the thunder dialect -*- C++ -*-===//
//
// The one import path (docs/import.md): an ExportedProgram, read from a .pt2
// archive or handed over in memory by the Python binding, becomes a module
// with one func.func in the `thunder` dialect. User inputs are arguments,
// parameters/buffers/constants are `thunder.constant`s of `dense_resource`
// blobs that point at the weights' memory (no copy), and each op carries the
// user's source line from the export's stack trace as its location.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_IMPORT_IMPORTER_H
#define THUNDER_IMPORT_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "thunder/Support/TypePromotion.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace thunder {
class Pt2Archive;
} // namespace thunder

namespace thunder::import {

/// The bytes of one weight, owned by the caller for as long as the module
/// lives: row-major contiguous data of `sizes`.
struct WeightData {
  DType dtype;
  std::vector<int64_t> sizes;
  llvm::ArrayRef<char> bytes;
};

/// Weights by fully qualified name (parameters, buffers and constants).
using WeightMap = llvm::StringMap<WeightData>;

/// A kernel the user registered for a custom op (thunder.register_kernel,
/// `thunder-compile --custom-ops`): a node calling `op` imports as a
/// `thunder.custom_call` of `symbol`, and the module records the sources in
/// its `thunder.custom_kernels` attribute for the backends to build.
struct CustomKernel {
  std::string op;         ///< "mylib.rms_norm.default"
  std::string symbol;     ///< the C function (include/thunder-c/custom_op.h)
  std::string cpuSource;  ///< C++ source defining `symbol`, or empty
  std::string cpuLibrary; ///< a shared library defining `symbol`, or empty
  std::string cudaSource; ///< CUDA source defining `symbol`, or empty
};

struct ImportOptions {
  /// The name of the generated function.
  std::string functionName = "main";
  /// Names the program in messages ("model.pt2").
  std::string sourceName = "<program>";
  /// Kernels of custom ops, which the importer takes besides the ATen ops.
  std::vector<CustomKernel> customKernels;
};

/// The name of the module attribute that holds the custom kernels' sources:
/// symbol -> {op, cpu_source, cpu_library, cuda_source}.
inline constexpr llvm::StringLiteral kCustomKernelsAttr = "thunder.custom_kernels";

/// Imports an ExportedProgram's JSON with its weights. On failure, returns
/// null after reporting every problem as an MLIR diagnostic: all unsupported
/// ops at once (with counts and source lines), then conversion errors.
mlir::OwningOpRef<mlir::ModuleOp>
importExportedProgram(mlir::MLIRContext &context, llvm::StringRef json,
                      const WeightMap &weights, const ImportOptions &options);

/// Reads the model, weights and constants of a .pt2 archive and imports it.
/// The archive must outlive the module: weights point into its mapping.
mlir::OwningOpRef<mlir::ModuleOp>
importPt2Archive(mlir::MLIRContext &context, const Pt2Archive &archive,
                 const ImportOptions &options);

/// Whether the importer converts the ATen op ("aten.add.Tensor").
bool isSupportedOp(llvm::StringRef op);

/// Every op the importer converts, sorted.
std::vector<std::string> supportedOps();

/// Why `op` cannot be supported (data-dependent shapes, random numbers,
/// complex numbers, training-only), or "" for an op that is merely not done.
std::string unsupportedReason(llvm::StringRef op);

/// Every op with a reason in unsupportedReason, with that reason, sorted.
std::vector<std::pair<std::string, std::string>> unsupportedOpReasons();

/// A report on a program without importing it (thunder.examine,
/// `thunder-compile --examine`).
struct ExamineReport {
  struct Op {
    std::string name;                     ///< "aten.add.Tensor"
    int64_t count = 0;
    bool supported = false;
    std::vector<std::string> sourceLines; ///< "model.py:12", unique, in order
  };
  std::vector<Op> ops; ///< by count, most frequent first
  int64_t numNodes = 0;
  int64_t numUnsupported() const;
};

/// Examines the program JSON; fails only on malformed input.
llvm::Expected<ExamineReport> examineExportedProgram(llvm::StringRef json,
                                                     llvm::StringRef sourceName);

/// The report as text: a summary line, the unsupported ops with their source
/// lines, then the op histogram.
std::string formatExamineReport(const ExamineReport &report);

/// The dialects an imported module uses (for a context's registry).
void registerImportDialects(mlir::DialectRegistry &registry);

} // namespace thunder::import

#endif // THUNDER_IMPORT_IMPORTER_H
