//===- Reports.h - What the kernel pipelines did, for people ----*- C++ -*-===//
//
// Text reports on a module after the kernel pipelines, printed by
// `thunder-compile --report=...` and returned by the Python binding.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_TRANSFORMS_REPORTS_H
#define THUNDER_DIALECT_THUNDER_TRANSFORMS_REPORTS_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace thunder {

/// Every kernel (kind, name, ops with their source lines) in launch order,
/// and for each edge between two kernels the reason they were not fused.
std::string formatFusionReport(mlir::ModuleOp module);

/// The memory plan: arena bytes, the lower bound (most bytes live at once),
/// the naive sum (every tensor its own buffer), and a table of every planned
/// tensor: producer kernel, bytes, offset, first and last use. Needs the
/// plan phase (thunder-plan-memory) to have run.
std::string formatMemoryReport(mlir::ModuleOp module);

/// One kernel result of a planned function, as thunder-plan-memory placed it.
struct PlannedTensor {
  std::string name;   ///< "<kernel_name>#<result>"
  std::string type;   ///< the MLIR type, "tensor<4x8xf32>"
  int64_t kernel = 0; ///< the producing kernel's position in schedule order
  int64_t result = 0;
  int64_t bytes = -1;  ///< -1 when a dim is dynamic
  int64_t offset = 0;  ///< as in thunder.offsets (see `output`, `runtime`)
  int64_t output = -1; ///< the function result it is written to, or -1
  bool runtime = false; ///< offset chosen at run time (dynamic shapes)
  int64_t first = 0, last = 0; ///< live interval, in schedule positions
  int64_t inplaceOperand = -1; ///< operand whose bytes it takes, or -1
  std::string inplaceFrom;     ///< name of the tensor it takes them from
  /// The function result whose buffer holds it before that result is
  /// written (thunder.borrowed; `offset` is then into that buffer), or -1.
  int64_t inOutput = -1;
};

/// The memory plan of one function (its thunder.arena and every kernel's
/// thunder.offsets / thunder.inplace / thunder.live).
struct FunctionMemoryPlan {
  std::string function;
  int64_t kernels = 0;
  int64_t alignment = 0;
  int64_t arenaBytes = -1, lowerBound = -1, naive = -1; ///< -1 when dynamic
  int64_t borrowed = -1; ///< bytes placed in output buffers; -1: not enabled
  /// Bytes of library workspace each gemm/conv kernel has in the arena
  /// (its entries in `tensors` are named "<kernel>#workspace"); -1: none.
  int64_t workspace = -1;
  int64_t outputBytes = -1; ///< bytes written to the caller's buffers
  bool dynamic = false;
  std::vector<PlannedTensor> tensors; ///< in schedule order
};

/// The plan of every function that thunder-plan-memory planned.
std::vector<FunctionMemoryPlan> collectMemoryPlans(mlir::ModuleOp module);

} // namespace thunder

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_REPORTS_H
