//===- ShapePlan.h - Run-time sizes of dynamic dims -------------*- C++ -*-===//
//
// A compiled function must know, at run time, the size of every `?` dim of
// every tensor it computes. ShapePlan works that out at compile time: dims
// that must be equal (the dims of an elementwise op's operands and result, a
// transpose's permuted dims, a matmul's batch dims...) are unified into one
// symbol, and each symbol gets one definition evaluable at run time: a dim of
// a function argument, or a formula over earlier sizes (a reshape's element
// count divided by its static dims, a concatenation's sum, a window's output
// size). Backends emit the definitions as code, in `symbols` order.
//
// It relies on torch.export's guarantee that a dynamic dim is never 1 at run
// time where it is broadcast (0/1 specialization), so a `?` broadcast into a
// `?` is the same size.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_SHAPEPLAN_H
#define THUNDER_TARGET_SHAPEPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <vector>

namespace thunder {

/// One dim of a value: a static size, or symbol `symbol` (>= 0).
struct PlanDim {
  int64_t size = 0;
  int symbol = -1;
  bool isDynamic() const { return symbol >= 0; }
};

/// How a symbol's run-time size is computed.
struct SymbolDef {
  enum class Kind {
    ArgDim,        ///< dim `dim` of function argument `arg`
    NumelQuotient, ///< numel(value) / divisor (a reshape's one dynamic dim)
    Sum,           ///< sum of dims `terms` + constant (concat, pad)
    Window,        ///< window output size of dim `dim` of `value`
    Slice,         ///< ceil((end' - start) / step), at least 0, where end' is
                   ///< `end` clamped to dim `dim` of `value` (negative: from it)
  };
  Kind kind;
  unsigned arg = 0;
  mlir::Value value;
  unsigned dim = 0;
  int64_t divisor = 1;
  std::vector<std::pair<mlir::Value, unsigned>> terms;
  int64_t constant = 0;
  /// Window parameters.
  int64_t kernel = 1, stride = 1, padLo = 0, padHi = 0, dilation = 1;
  bool ceilMode = false;
  /// Slice parameters (`end` as in thunder.slice).
  int64_t start = 0, step = 1, end = std::numeric_limits<int64_t>::max();
};

class ShapePlan {
public:
  /// Plans `func`; reports an error at the op whose dynamic dims cannot be
  /// resolved and fails.
  static mlir::FailureOr<ShapePlan> build(mlir::func::FuncOp func);

  /// The dims of `value` (a ranked tensor of `func`).
  llvm::ArrayRef<PlanDim> dims(mlir::Value value) const;

  /// Symbol definitions, in an order where each only refers to earlier ones.
  const std::vector<SymbolDef> &symbols() const { return defs; }

  /// Whether any value has a dynamic dim.
  bool isDynamic() const { return !defs.empty(); }

private:
  friend class ShapePlanBuilder;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<PlanDim, 4>> valueDims;
  std::vector<SymbolDef> defs;
};

} // namespace thunder

#endif // THUNDER_TARGET_SHAPEPLAN_H
