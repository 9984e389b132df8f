//===- Element.h - One value of a tensor element type -----------*- C++ -*-===//
//
// Part of the reference interpreter of the thunder dialect: the semantics of
// its ops as PyTorch defines them, written once and used both to fold
// constants and as the oracle the generated kernels are tested against.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_REFERENCE_ELEMENT_H
#define THUNDER_DIALECT_THUNDER_REFERENCE_ELEMENT_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <variant>

namespace mlir::thunder::reference {

/// One value of an element type: an `APFloat` in the type's own semantics
/// for a float type (f64, f32, f16, bf16, the f8 types), an `APInt` of the
/// type's width for an integer type (i1 is PyTorch's bool, 0 or 1). Holding
/// the stored value, not a wider one, keeps every rounding explicit: an op
/// widens its operands to the type PyTorch computes in (see
/// getComputeSemantics) and rounds its result back to the element type.
class Element {
public:
  /// A float element; `value` has the semantics of `type`.
  Element(Type type, llvm::APFloat value);
  /// An integer element; `value` has the width of `type`.
  Element(Type type, llvm::APInt value);

  /// `value` as an element of `type`, as PyTorch stores a value computed in
  /// double: a float type rounds to nearest even, f16, bf16 and the f8 types
  /// through f32 first (c10::Half and friends convert from float only); an
  /// integer type truncates toward zero and wraps; i1 is `value != 0`.
  static Element fromDouble(Type type, double value);
  /// `value` as an element of `type`: an integer type wraps to its width, i1
  /// is `value != 0`, a float type rounds to nearest even (through f32 for
  /// the narrow ones, as fromDouble).
  static Element fromInt(Type type, int64_t value);

  Type getType() const { return type; }
  bool isFloat() const { return std::holds_alternative<llvm::APFloat>(value); }
  /// Whether this is an i1 element (PyTorch's bool). Read from the value's
  /// width, not the Type: it is asked once or more per element.
  bool isBool() const { return !isFloat() && getInt().getBitWidth() == 1; }
  /// The value of a float element.
  const llvm::APFloat &getFloat() const { return std::get<llvm::APFloat>(value); }
  /// The value of an integer element.
  const llvm::APInt &getInt() const { return std::get<llvm::APInt>(value); }

  /// The value as a double: exact for every float type but f64's own
  /// values, which are exact too; integers convert (i64 may round).
  double toDouble() const;
  /// The value of an integer element, sign-extended (i1 zero-extended).
  int64_t toInt() const;
  /// Python's truth of the value: nonzero (a NaN is true).
  bool isNonZero() const;

  /// Same type and the same bits (so NaN equals the same NaN, -0 differs
  /// from +0): what a test of exact semantics compares.
  bool isBitwiseEqual(const Element &other) const;
  /// `f16 1.5`, `i32 -7`, `i1 true`: for test messages.
  std::string toString() const;

private:
  Type type;
  std::variant<llvm::APInt, llvm::APFloat> value;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Element &element);

/// The semantics PyTorch computes a float type in (its "opmath" type): f64
/// in itself, every narrower float type in f32.
const llvm::fltSemantics &getComputeSemantics(Type floatType);

/// `value` rounded to nearest even into `semantics`, with PyTorch's
/// saturating conversion into f8 E4M3FN (no infinity: an out-of-range value,
/// infinity included, becomes the largest finite value of its sign).
llvm::APFloat roundTo(llvm::APFloat value, const llvm::fltSemantics &semantics);

} // namespace mlir::thunder::reference

#endif // THUNDER_DIALECT_THUNDER_REFERENCE_ELEMENT_H
