//===- FusedBody.h - Per-element C code of a fusion region ------*- C++ -*-===//
//
// DESIGN.md decision 7: the backends that emit C-family source (CPU C++,
// CUDA, HIP) share this generator for the body of pointwise, reduction and
// epilogue kernels. Each backend writes the loops (OpenMP, a grid-stride
// loop, a block per row) and asks here for the statements that compute a
// region value at an index; views (broadcast, expand, transpose, slice,
// reshape) become index arithmetic, so a fused kernel reads each input
// where it lies and writes nothing in between.
//
// Generated code uses a small vocabulary that every target's support header
// defines: compute_t<T> (the arithmetic type of storage type T: float for
// f16/bf16/f8), cv(x) (storage to compute), st<T>(x) (compute to storage),
// relu, sigmoid, silu, gelu, gelu_tanh, maximum, minimum (NaN-propagating),
// power, div_floor, div_trunc, py_remainder, and std:: math.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_COMMON_FUSEDBODY_H
#define THUNDER_TARGET_COMMON_FUSEDBODY_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <string>

namespace thunder::codegen {

/// The C expression of an elementwise op over compute-typed operands
/// `operands` (names or expressions), where `C` is the compute type of its
/// (first non-condition) operand; failure when `op` is not elementwise.
mlir::FailureOr<std::string>
elementwiseExpr(mlir::Operation *op, llvm::StringRef C,
                llvm::ArrayRef<std::string> operands);

/// A C literal of a double (with infinities and NaN).
std::string doubleLiteral(double v);

/// Where a value is read: one C index expression per dim and, when known,
/// the flat row-major position (the kernel's loop counter for values read in
/// loop order). Either may be empty; the other is derived when needed.
struct Index {
  llvm::SmallVector<std::string, 4> dims;
  std::string flat;
};

/// What a kernel template tells the generator.
struct BodyContext {
  /// The C expression of the size of dim `d` of a region value (static
  /// sizes as literals, dynamic ones from the backend's ShapePlan).
  std::function<std::string(mlir::Value, unsigned)> dim;
  /// The C expression reading region input `argument` (its block argument
  /// number) at element `offset`, in its storage type.
  std::function<std::string(unsigned argument, const std::string &offset)> load;
  /// The C storage type of an element type ("float", "bf16", "bool", ...).
  std::function<std::string(mlir::Type)> storageType;
  /// A reduction kernel's inner loop variable: values whose index does not
  /// mention it are the same for the whole row and go to the per-row code.
  /// Empty for pointwise kernels.
  std::string innerVar;
};

/// Emits statements that compute region values per element, memoized per
/// index, into two sinks: per-row statements (values the same for a whole
/// row of a reduction kernel) and per-element statements.
class BodyEmitter {
public:
  explicit BodyEmitter(BodyContext context) : ctx(std::move(context)) {}

  /// The name of a compute-typed temporary holding `value` at `index`,
  /// emitting what computes it. Fails (with a diagnostic at the op) for an
  /// op the generator cannot compute per element.
  mlir::FailureOr<std::string> emit(mlir::Value value, const Index &index);

  /// Makes every read of `value` (a reduction's result) the C variable
  /// `name`: the accumulator of the row a reduction kernel is on.
  void bind(mlir::Value value, std::string name) { bound[value] = std::move(name); }

  /// Makes `value` (computed by a library call before the kernel runs) read
  /// from memory through the C pointer `pointer`, like a region input.
  void bindMemory(mlir::Value value, std::string pointer) {
    inMemory[value] = std::move(pointer);
  }

  /// Takes the per-element statements emitted so far, and forgets the
  /// per-element memo (a new loop recomputes what it needs).
  std::string takeElementCode();
  /// Takes the per-row statements emitted so far (the memo is kept: the row
  /// values stay in scope for the rest of the row).
  std::string takeRowCode();

  /// The compute type of an element type: "compute_t<float>".
  std::string computeType(mlir::Type element);

  /// The index of each dim of a value of `shape` (C size expressions) at the
  /// flat row-major position `flat`.
  static llvm::SmallVector<std::string, 4>
  delinearize(const std::string &flat, llvm::ArrayRef<std::string> shape);
  /// The flat row-major position of `index` in a value of `shape`.
  static std::string linearize(llvm::ArrayRef<std::string> index,
                               llvm::ArrayRef<std::string> shape);

  /// The sizes of `value`'s dims as C expressions.
  llvm::SmallVector<std::string, 4> shapeOf(mlir::Value value);

private:
  mlir::FailureOr<Index> operandIndex(mlir::Operation *op, const Index &index);
  std::string fresh() { return "t" + std::to_string(counter++); }

  BodyContext ctx;
  llvm::DenseMap<mlir::Value, std::string> bound, inMemory;
  llvm::StringMap<std::string> rowMemo, elementMemo;
  std::string rowCode, elementCode;
  unsigned counter = 0;
};

} // namespace thunder::codegen

#endif // THUNDER_TARGET_COMMON_FUSEDBODY_H
