//===- Reports.h - What the kernel pipelines did, for people ----*- C++ -*-===//
//
// Text reports on a module after the kernel pipelines, printed by
// `thunder-compile --report=...` and returned by the Python binding.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_TRANSFORMS_REPORTS_H
#define THUNDER_DIALECT_THUNDER_TRANSFORMS_REPORTS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace thunder {

/// Every kernel (kind, name, ops with their source lines) in launch order,
/// and for each edge between two kernels the reason they were not fused.
std::string formatFusionReport(mlir::ModuleOp module);

/// The memory plan: arena bytes, the lower bound (most bytes live at once),
/// the naive sum (every tensor its own buffer), and a table of every planned
/// tensor: producer kernel, bytes, offset, first and last use. Needs the
/// plan phase (thunder-plan-memory) to have run.
std::string formatMemoryReport(mlir::ModuleOp module);

} // namespace thunder

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_REPORTS_H
