//===- ConstantEvaluator.h - Thunder ops evaluated at compile time -*- C++ -*-===//
//
// Private to lib/Dialect/Thunder/Transforms: the values of constant tensors
// (resource blobs, dense literals, splats) and an evaluator that computes a
// thunder op over them, used by thunder-fold-weights. Unlike the folders in
// lib/Dialect/Thunder/IR, it works on raw bytes, so it handles weights of any
// size without materializing an Attribute per element.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_CONSTANTEVALUATOR_H
#define THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_CONSTANTEVALUATOR_H

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::thunder {

/// A tensor known at compile time: the row-major bytes of every element of a
/// static shape (i1 takes one byte per element, as in a resource blob), or
/// the bytes of one element for a splat. It either borrows the bytes of the
/// attribute it was read from (a resource blob or a dense literal, both alive
/// as long as the context) or owns a heap blob written by the evaluator.
class ConstantTensor {
public:
  /// The value of a constant's attribute; std::nullopt when it has no bytes
  /// (a resource blob elided from the text the IR was parsed from), holds
  /// fewer bytes than its type needs, or is not a dense kind the evaluator
  /// reads (dense_resource, dense literal).
  static std::optional<ConstantTensor> fromAttr(ElementsAttr attr);

  /// A zero-filled tensor of `type` (a static shape) that owns its bytes:
  /// one element when `splat`, otherwise every element.
  static ConstantTensor allocate(RankedTensorType type, bool splat);

  RankedTensorType getType() const { return type; }
  Type getElementType() const { return type.getElementType(); }
  bool isSplat() const { return splat; }
  /// Elements of the shape (a splat of 4x4 has 16).
  int64_t getNumElements() const { return type.getNumElements(); }
  /// Elements actually stored (1 for a splat).
  int64_t getNumStored() const { return splat ? 1 : getNumElements(); }
  /// Bytes of one element.
  int64_t getElementBytes() const { return elementBytes; }
  ArrayRef<char> getBytes() const { return bytes; }
  /// The bytes to write; only for a tensor from allocate().
  MutableArrayRef<char> getMutableBytes();

  /// Element `i` of a floating-point tensor as a double (element 0 for a
  /// splat, whatever `i`).
  double getFloat(int64_t i) const;
  /// Element `i` of an integer tensor, sign-extended (i1 is 0 or 1).
  int64_t getInt(int64_t i) const;
  /// Stores `value` as element `i`, rounding to nearest even. f16 and bf16
  /// round through f32 first, as PyTorch computes them in f32.
  void setFloat(int64_t i, double value);
  /// Stores `value` as element `i`, wrapping to the width (i1 is value != 0).
  void setInt(int64_t i, int64_t value);

  /// The same bytes seen as `newType`, which has as many elements (a reshape
  /// costs no copy).
  ConstantTensor withType(RankedTensorType newType) const;
  /// A splat expanded into every element.
  ConstantTensor materialize() const;

  /// The attribute that holds this value: a splat stays a splat; other values
  /// become a dense literal when `literal` is set, and otherwise a
  /// `dense_resource` blob keyed `blobName` (made unique by the context). An
  /// owned blob moves into the attribute when nothing else holds it; borrowed
  /// bytes are referenced, not copied.
  ElementsAttr toAttr(StringRef blobName, bool literal) const;

private:
  ConstantTensor() = default;

  RankedTensorType type;
  bool splat = false;
  int64_t elementBytes = 0;
  /// How elements are read and written (an ElementKind in the .cpp).
  unsigned kind = 0;
  /// Heap blob written by the evaluator (or unpacked i1 literal), shared by
  /// copies such as withType(); null when the bytes are borrowed.
  std::shared_ptr<AsmResourceBlob> owned;
  ArrayRef<char> bytes;
};

/// Bytes of one element of `type` in a blob (i1 is one byte).
int64_t getElementBytes(Type type);

/// Whether the evaluator computes `op` (over any known operand values):
/// views and data movement, gathers (gather, index_select, embedding),
/// elementwise arithmetic, conversions, comparisons and reductions.
bool isEvaluable(Operation *op);

/// Computes the single result of `op` from its operands' values (one per
/// operand, in order). Fails when `op` is not evaluable, its result type is
/// not static, or a value has no compile-time meaning (integer division by
/// zero, a float converted to an integer out of its range, an index out of
/// range), or it would round a value into an f8 type (f8 values are only
/// moved, never computed).
FailureOr<ConstantTensor> evaluate(Operation *op,
                                   ArrayRef<const ConstantTensor *> operands);

} // namespace mlir::thunder

#endif // THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_CONSTANTEVALUATOR_H
