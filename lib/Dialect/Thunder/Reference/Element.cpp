//===- Element.cpp - One value of a tensor element type -------------------===//
//
// Elements, their conversions from host values, and the two rounding rules
// every op shares: which type a float computes in, and how a value rounds
// into a narrower one.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Element.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/SmallString.h"

using namespace mlir;
using namespace mlir::thunder::reference;
using llvm::APFloat;
using llvm::APInt;

Element::Element(Type type, APFloat value) : type(type), value(std::move(value)) {
  assert(&getFloat().getSemantics() ==
             &cast<FloatType>(type).getFloatSemantics() &&
         "a float element holds a value of its own type");
}

Element::Element(Type type, APInt value) : type(type), value(std::move(value)) {
  assert(getInt().getBitWidth() == type.getIntOrFloatBitWidth() &&
         "an integer element holds a value of its own width");
}

const llvm::fltSemantics &mlir::thunder::reference::getComputeSemantics(Type floatType) {
  return floatType.isF64() ? APFloat::IEEEdouble() : APFloat::IEEEsingle();
}

APFloat mlir::thunder::reference::roundTo(APFloat value,
                                          const llvm::fltSemantics &semantics) {
  if (&value.getSemantics() == &semantics)
    return value;
  bool wasNaN = value.isNaN(), losesInfo;
  bool negative = value.isNegative();
  value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  // PyTorch saturates into e4m3fn, whose only non-finite value is NaN;
  // APFloat rounds an overflow to that NaN.
  if (&semantics == &APFloat::Float8E4M3FN() && value.isNaN() && !wasNaN)
    return APFloat::getLargest(semantics, negative);
  return value;
}

/// `value` (in the compute semantics of `type`) rounded into `type`.
static APFloat narrow(APFloat value, Type type) {
  const llvm::fltSemantics &semantics = cast<FloatType>(type).getFloatSemantics();
  if (!type.isF64())
    value = roundTo(std::move(value), APFloat::IEEEsingle());
  return roundTo(std::move(value), semantics);
}

Element Element::fromDouble(Type type, double value) {
  if (isa<FloatType>(type))
    return Element(type, narrow(APFloat(value), type));
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return Element(type, APInt(1, value != 0));
  llvm::APSInt result(64, /*isUnsigned=*/false);
  bool isExact;
  APFloat(value).convertToInteger(result, APFloat::rmTowardZero, &isExact);
  return Element(type, result.trunc(width));
}

Element Element::fromInt(Type type, int64_t value) {
  if (isa<FloatType>(type)) {
    APFloat result(getComputeSemantics(type));
    result.convertFromAPInt(APInt(64, value, /*isSigned=*/true),
                            /*IsSigned=*/true, APFloat::rmNearestTiesToEven);
    return Element(type, narrow(std::move(result), type));
  }
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return Element(type, APInt(1, value != 0));
  return Element(type, APInt(64, value, /*isSigned=*/true).trunc(width));
}

double Element::toDouble() const {
  if (isFloat())
    return roundTo(getFloat(), APFloat::IEEEdouble()).convertToDouble();
  return static_cast<double>(toInt());
}

int64_t Element::toInt() const {
  return isBool() ? static_cast<int64_t>(getInt().getZExtValue())
                  : getInt().getSExtValue();
}

bool Element::isNonZero() const {
  return isFloat() ? !getFloat().isZero() : !getInt().isZero();
}

bool Element::isBitwiseEqual(const Element &other) const {
  if (type != other.type || isFloat() != other.isFloat())
    return false;
  if (isFloat())
    return getFloat().bitwiseIsEqual(other.getFloat());
  return getInt() == other.getInt();
}

std::string Element::toString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << *this;
  return text;
}

llvm::raw_ostream &mlir::thunder::reference::operator<<(llvm::raw_ostream &os,
                                                        const Element &element) {
  os << element.getType() << ' ';
  if (element.isBool())
    return os << (element.getInt().isZero() ? "false" : "true");
  if (!element.isFloat())
    return os << element.toInt();
  llvm::SmallString<32> digits;
  element.getFloat().toString(digits);
  return os << digits;
}
