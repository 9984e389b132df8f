//===- Tensor.h - A tensor value of the reference interpreter ---*- C++ -*-===//
//
// The values the reference interpreter computes on: the bytes of a static
// tensor (a resource blob or a dense literal, borrowed without a copy, or a
// heap blob it wrote), read and written one Element at a time. Weights of any
// size pass through it without an Attribute per element.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_REFERENCE_TENSOR_H
#define THUNDER_DIALECT_THUNDER_REFERENCE_TENSOR_H

#include "thunder/Dialect/Thunder/Reference/Element.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

#include <memory>
#include <optional>

namespace mlir::thunder::reference {

/// A tensor known at compile time: the row-major bytes of every element of a
/// static shape (i1 takes one byte per element, as in a resource blob), or
/// the bytes of one element for a splat. It either borrows the bytes of the
/// attribute it was read from (a resource blob or a dense literal, both alive
/// as long as the context) or owns a heap blob written by the interpreter.
class Tensor {
public:
  /// The value of a constant's attribute; std::nullopt when it has no bytes
  /// (a resource blob elided from the text the IR was parsed from), holds
  /// fewer bytes than its type needs, or is not a dense kind the interpreter
  /// reads (dense_resource, dense literal).
  static std::optional<Tensor> fromAttr(ElementsAttr attr);

  /// A zero-filled tensor of `type` (a static shape) that owns its bytes:
  /// one element when `splat`, otherwise every element.
  static Tensor allocate(RankedTensorType type, bool splat);

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

  /// Element `i` (element 0 of a splat, whatever `i`).
  Element get(int64_t i) const;
  /// Stores `value`, an element of this tensor's element type, as element
  /// `i`; only for a tensor from allocate().
  void set(int64_t i, const Element &value);
  /// Element `i` as a double (see Element::toDouble).
  double getDouble(int64_t i) const { return get(i).toDouble(); }
  /// Stores `value` as element `i`, rounded as Element::fromDouble does.
  void setDouble(int64_t i, double value) {
    set(i, Element::fromDouble(getElementType(), value));
  }

  /// The same bytes seen as `newType`, which has as many elements (a reshape
  /// costs no copy).
  Tensor withType(RankedTensorType newType) const;
  /// A splat expanded into every element.
  Tensor materialize() const;

  /// The attribute that holds this value: a splat stays a splat; other values
  /// become a dense literal when `literal` is set, and otherwise a
  /// `dense_resource` blob keyed `blobName` (made unique by the context). An
  /// owned blob moves into the attribute when nothing else holds it; borrowed
  /// bytes are referenced, not copied.
  ElementsAttr toAttr(StringRef blobName, bool literal) const;

private:
  Tensor() = default;
  void setElementType(Type element);

  RankedTensorType type;
  bool splat = false;
  int64_t elementBytes = 0;
  /// The element type's float semantics (null for integers) and width, read
  /// once: get() and set() run per element.
  const llvm::fltSemantics *semantics = nullptr;
  unsigned bitWidth = 0;
  /// Heap blob written by the interpreter (or unpacked i1 literal), shared by
  /// copies such as withType(); null when the bytes are borrowed.
  std::shared_ptr<AsmResourceBlob> owned;
  ArrayRef<char> bytes;
};

/// Bytes of one element of `type` in a blob (i1 is one byte).
int64_t getElementBytes(Type type);

} // namespace mlir::thunder::reference

#endif // THUNDER_DIALECT_THUNDER_REFERENCE_TENSOR_H
