//===- Scalar.cpp - PyTorch's scalar semantics of each thunder op ---------===//
//
// Each function widens its operands to the compute type, computes, and rounds
// into the element type; the rules are in the header. Exact IEEE operations
// go through APFloat so that no host rounding mode or excess precision can
// leak in; transcendental functions go through the host's double libm.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Scalar.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;
using llvm::APFloat;
using llvm::APInt;

static constexpr APFloat::roundingMode kNearest = APFloat::rmNearestTiesToEven;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// `x`'s value in its compute semantics (exact: a widening). Read from the
/// value's semantics rather than its Type, as it runs per element.
static APFloat widen(const Element &x) {
  const llvm::fltSemantics &semantics = x.getFloat().getSemantics();
  return roundTo(x.getFloat(), &semantics == &APFloat::IEEEdouble()
                                   ? semantics
                                   : APFloat::IEEEsingle());
}

/// A value computed in the compute semantics of `like`'s type, rounded into
/// that type.
static Element narrow(const Element &like, const APFloat &computed) {
  return Element(like.getType(), roundTo(computed, like.getFloat().getSemantics()));
}

static bool isNegative(const APFloat &value) {
  return value.isNegative() && !value.isZero() && !value.isNaN();
}

/// A float op computed in double by the host's libm, rounded once to the
/// compute type and then to the element type.
template <typename Fn>
static FailureOr<Element> viaDouble(const Element &x, Fn fn) {
  if (!x.isFloat())
    return failure();
  return Element::fromDouble(x.getType(), fn(x.toDouble()));
}

/// An exact float op on the compute-type values of both operands.
template <typename Fn>
static Element floatBinary(const Element &lhs, const Element &rhs, Fn fn) {
  APFloat a = widen(lhs);
  fn(a, widen(rhs));
  return narrow(lhs, a);
}

/// An integer op on the operands' values; fn returns std::nullopt for a value
/// with no definition. Bools compute on 0 and 1 in 64 bits and store != 0.
template <typename Fn>
static FailureOr<Element> intBinary(const Element &lhs, const Element &rhs,
                                    Fn fn) {
  if (lhs.isBool()) {
    std::optional<APInt> value = fn(lhs.getInt().zext(64), rhs.getInt().zext(64));
    if (!value)
      return failure();
    return Element(lhs.getType(), APInt(1, !value->isZero()));
  }
  std::optional<APInt> value = fn(lhs.getInt(), rhs.getInt());
  if (!value)
    return failure();
  return Element(lhs.getType(), *value);
}

/// Whether `a / b` or `a % b` has no value in PyTorch: a zero divisor, or
/// INT_MIN / -1, which traps in the i32 and i64 kernels (i8 and i16 compute
/// in int, where the quotient exists and then wraps).
static bool isUndefinedDivision(const APInt &a, const APInt &b) {
  if (b.isZero())
    return true;
  return a.getBitWidth() >= 32 && a.isMinSignedValue() && b.isAllOnes();
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

FailureOr<Element> reference::negate(const Element &x) {
  if (x.isFloat())
    return Element(x.getType(), -x.getFloat());
  if (x.isBool())
    return x; // -True is True: -1 != 0
  return Element(x.getType(), -x.getInt());
}

FailureOr<Element> reference::abs(const Element &x) {
  if (x.isFloat())
    return Element(x.getType(), llvm::abs(x.getFloat()));
  if (x.isBool())
    return x;
  return Element(x.getType(), x.getInt().abs());
}

FailureOr<Element> reference::relu(const Element &x) {
  if (x.isFloat())
    return isNegative(x.getFloat())
               ? Element(x.getType(), APFloat::getZero(x.getFloat().getSemantics()))
               : x;
  if (!x.isBool() && x.getInt().isNegative())
    return Element(x.getType(), APInt::getZero(x.getInt().getBitWidth()));
  return x;
}

FailureOr<Element> reference::exp(const Element &x) {
  return viaDouble(x, [](double v) { return std::exp(v); });
}

FailureOr<Element> reference::log(const Element &x) {
  return viaDouble(x, [](double v) { return std::log(v); });
}

FailureOr<Element> reference::log1p(const Element &x) {
  return viaDouble(x, [](double v) { return std::log1p(v); });
}

FailureOr<Element> reference::sqrt(const Element &x) {
  // Exact: a double square root rounded to f32 is f32's (53 >= 2 * 24 + 2).
  return viaDouble(x, [](double v) { return std::sqrt(v); });
}

FailureOr<Element> reference::rsqrt(const Element &x) {
  if (!x.isFloat())
    return failure();
  // The root rounds to the compute type, then the quotient does: PyTorch's
  // kernels divide by a square root they computed in opmath.
  const llvm::fltSemantics &semantics = getComputeSemantics(x.getType());
  APFloat root = roundTo(APFloat(std::sqrt(x.toDouble())), semantics);
  APFloat one(semantics, 1);
  one.divide(root, kNearest);
  return narrow(x, one);
}

FailureOr<Element> reference::reciprocal(const Element &x) {
  if (!x.isFloat())
    return failure();
  APFloat one(getComputeSemantics(x.getType()), 1);
  one.divide(widen(x), kNearest);
  return narrow(x, one);
}

FailureOr<Element> reference::tanh(const Element &x) {
  return viaDouble(x, [](double v) { return std::tanh(v); });
}

FailureOr<Element> reference::sigmoid(const Element &x) {
  return viaDouble(x, [](double v) { return 1 / (1 + std::exp(-v)); });
}

FailureOr<Element> reference::erf(const Element &x) {
  return viaDouble(x, [](double v) { return std::erf(v); });
}

FailureOr<Element> reference::sin(const Element &x) {
  return viaDouble(x, [](double v) { return std::sin(v); });
}

FailureOr<Element> reference::cos(const Element &x) {
  return viaDouble(x, [](double v) { return std::cos(v); });
}

FailureOr<Element> reference::floor(const Element &x) {
  if (!x.isFloat())
    return x;
  APFloat value = x.getFloat();
  value.roundToIntegral(APFloat::rmTowardNegative);
  return Element(x.getType(), value);
}

FailureOr<Element> reference::ceil(const Element &x) {
  if (!x.isFloat())
    return x;
  APFloat value = x.getFloat();
  value.roundToIntegral(APFloat::rmTowardPositive);
  return Element(x.getType(), value);
}

FailureOr<Element> reference::silu(const Element &x) {
  return viaDouble(x, [](double v) { return v / (1 + std::exp(-v)); });
}

FailureOr<Element> reference::gelu(const Element &x,
                                   GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh)
    return viaDouble(x, [](double v) {
      const double k = 0.79788456080286535588; // sqrt(2 / pi)
      return 0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v)));
    });
  return viaDouble(x, [](double v) {
    return 0.5 * v * (1 + std::erf(v * 0.70710678118654752440));
  });
}

FailureOr<Element> reference::logicalNot(const Element &x) {
  return Element(IntegerType::get(x.getType().getContext(), 1),
                 APInt(1, !x.isNonZero()));
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

FailureOr<Element> reference::add(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat())
    return floatBinary(lhs, rhs,
                       [](APFloat &a, const APFloat &b) { a.add(b, kNearest); });
  return intBinary(lhs, rhs, [](const APInt &a, const APInt &b) {
    return std::optional<APInt>(a + b);
  });
}

FailureOr<Element> reference::subtract(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat())
    return floatBinary(lhs, rhs, [](APFloat &a, const APFloat &b) {
      a.subtract(b, kNearest);
    });
  return intBinary(lhs, rhs, [](const APInt &a, const APInt &b) {
    return std::optional<APInt>(a - b);
  });
}

FailureOr<Element> reference::multiply(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat())
    return floatBinary(lhs, rhs, [](APFloat &a, const APFloat &b) {
      a.multiply(b, kNearest);
    });
  return intBinary(lhs, rhs, [](const APInt &a, const APInt &b) {
    return std::optional<APInt>(a * b);
  });
}

/// c10::div_floor_floating, in the compute semantics: the quotient of the
/// exact a - fmod(a, b), so that it agrees with the remainder.
static void floorDivide(APFloat &a, const APFloat &b) {
  const llvm::fltSemantics &semantics = a.getSemantics();
  if (b.isZero()) {
    a.divide(b, kNearest);
    return;
  }
  APFloat mod = a;
  mod.mod(b);
  APFloat div = a;
  div.subtract(mod, kNearest);
  div.divide(b, kNearest);
  if (!mod.isZero() && isNegative(b) != isNegative(mod))
    div.subtract(APFloat(semantics, 1), kNearest);
  if (div.isZero()) {
    APFloat quotient = a;
    quotient.divide(b, kNearest);
    a = APFloat::getZero(semantics, quotient.isNegative());
    return;
  }
  APFloat floored = div;
  floored.roundToIntegral(APFloat::rmTowardNegative);
  APFloat fraction = div;
  fraction.subtract(floored, kNearest);
  APFloat half(semantics, "0.5");
  if (fraction.compare(half) == APFloat::cmpGreaterThan)
    floored.add(APFloat(semantics, 1), kNearest);
  a = floored;
}

FailureOr<Element> reference::divide(const Element &lhs, const Element &rhs,
                                     RoundingMode mode) {
  if (lhs.isFloat())
    return floatBinary(lhs, rhs, [mode](APFloat &a, const APFloat &b) {
      if (mode == RoundingMode::Floor)
        return floorDivide(a, b);
      a.divide(b, kNearest);
      if (mode == RoundingMode::Trunc)
        a.roundToIntegral(APFloat::rmTowardZero);
    });
  if (mode == RoundingMode::None)
    return failure(); // div_c1: true division of integers is not an op
  return intBinary(lhs, rhs,
                   [mode](const APInt &a, const APInt &b) -> std::optional<APInt> {
                     if (isUndefinedDivision(a, b))
                       return std::nullopt;
                     APInt q = a.sdiv(b);
                     if (mode == RoundingMode::Floor) {
                       APInt r = a.srem(b);
                       if (!r.isZero() && r.isNegative() != b.isNegative())
                         q -= 1;
                     }
                     return q;
                   });
}

FailureOr<Element> reference::maximum(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat()) {
    const APFloat &a = lhs.getFloat(), &b = rhs.getFloat();
    if (a.isNaN() || b.isNaN())
      return Element(lhs.getType(), APFloat::getNaN(a.getSemantics()));
    return a.compare(b) == APFloat::cmpGreaterThan ? lhs : rhs;
  }
  bool greater = lhs.isBool() ? lhs.getInt().ugt(rhs.getInt())
                              : lhs.getInt().sgt(rhs.getInt());
  return greater ? lhs : rhs;
}

FailureOr<Element> reference::minimum(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat()) {
    const APFloat &a = lhs.getFloat(), &b = rhs.getFloat();
    if (a.isNaN() || b.isNaN())
      return Element(lhs.getType(), APFloat::getNaN(a.getSemantics()));
    return a.compare(b) == APFloat::cmpLessThan ? lhs : rhs;
  }
  bool less = lhs.isBool() ? lhs.getInt().ult(rhs.getInt())
                           : lhs.getInt().slt(rhs.getInt());
  return less ? lhs : rhs;
}

FailureOr<Element> reference::remainder(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat())
    return floatBinary(lhs, rhs, [](APFloat &a, const APFloat &b) {
      a.mod(b);
      if (!a.isZero() && isNegative(b) != isNegative(a))
        a.add(b, kNearest);
    });
  return intBinary(lhs, rhs, [](const APInt &a, const APInt &b) -> std::optional<APInt> {
    if (isUndefinedDivision(a, b))
      return std::nullopt;
    APInt r = a.srem(b);
    if (!r.isZero() && r.isNegative() != b.isNegative())
      r += b;
    return r;
  });
}

FailureOr<Element> reference::power(const Element &lhs, const Element &rhs) {
  if (lhs.isFloat())
    return Element::fromDouble(lhs.getType(),
                               std::pow(lhs.toDouble(), rhs.toDouble()));
  return intBinary(lhs, rhs, [](APInt base, APInt exponent) -> std::optional<APInt> {
    unsigned width = base.getBitWidth();
    if (exponent.isNegative()) {
      if (base.isOne())
        return base;
      if (base.isAllOnes())
        return exponent[0] ? base : APInt(width, 1);
      return APInt::getZero(width);
    }
    APInt result(width, 1);
    for (; !exponent.isZero(); exponent.lshrInPlace(1)) {
      if (exponent[0])
        result *= base;
      base *= base;
    }
    return result;
  });
}

static Element makeBool(const Element &like, bool value) {
  return Element(IntegerType::get(like.getType().getContext(), 1),
                 APInt(1, value));
}

FailureOr<Element> reference::logicalAnd(const Element &lhs, const Element &rhs) {
  return makeBool(lhs, lhs.isNonZero() && rhs.isNonZero());
}

FailureOr<Element> reference::logicalOr(const Element &lhs, const Element &rhs) {
  return makeBool(lhs, lhs.isNonZero() || rhs.isNonZero());
}

FailureOr<Element> reference::logicalXor(const Element &lhs, const Element &rhs) {
  return makeBool(lhs, lhs.isNonZero() != rhs.isNonZero());
}

//===----------------------------------------------------------------------===//
// Compare, select, clamp, convert
//===----------------------------------------------------------------------===//

Element reference::compare(ComparisonDirection direction, const Element &lhs,
                           const Element &rhs) {
  bool less, equal, unordered = false;
  if (lhs.isFloat()) {
    APFloat::cmpResult c = lhs.getFloat().compare(rhs.getFloat());
    less = c == APFloat::cmpLessThan;
    equal = c == APFloat::cmpEqual;
    unordered = c == APFloat::cmpUnordered;
  } else {
    const APInt &a = lhs.getInt(), &b = rhs.getInt();
    less = lhs.isBool() ? a.ult(b) : a.slt(b);
    equal = a == b;
  }
  bool greater = !less && !equal && !unordered;
  switch (direction) {
  case ComparisonDirection::EQ:
    return makeBool(lhs, equal);
  case ComparisonDirection::NE:
    return makeBool(lhs, !equal);
  case ComparisonDirection::LT:
    return makeBool(lhs, less);
  case ComparisonDirection::LE:
    return makeBool(lhs, less || equal);
  case ComparisonDirection::GT:
    return makeBool(lhs, greater);
  case ComparisonDirection::GE:
    return makeBool(lhs, greater || equal);
  }
  return makeBool(lhs, false);
}

Element reference::select(const Element &condition, const Element &onTrue,
                          const Element &onFalse) {
  return condition.isNonZero() ? onTrue : onFalse;
}

FailureOr<Element> reference::clamp(const Element &x, std::optional<double> lo,
                                    std::optional<double> hi) {
  if (x.isFloat()) {
    const llvm::fltSemantics &semantics = getComputeSemantics(x.getType());
    APFloat value = widen(x);
    if (value.isNaN())
      return x;
    if (lo) {
      APFloat bound = roundTo(APFloat(*lo), semantics);
      if (value.compare(bound) == APFloat::cmpLessThan)
        value = bound;
    }
    if (hi) {
      APFloat bound = roundTo(APFloat(*hi), semantics);
      if (value.compare(bound) == APFloat::cmpGreaterThan)
        value = bound;
    }
    return narrow(x, value);
  }
  int64_t value = x.toInt();
  if (lo && value < static_cast<int64_t>(*lo))
    value = static_cast<int64_t>(*lo);
  if (hi && value > static_cast<int64_t>(*hi))
    value = static_cast<int64_t>(*hi);
  return Element::fromInt(x.getType(), value);
}

FailureOr<Element> reference::convert(const Element &x, Type to) {
  if (to.isInteger(1))
    return Element(to, APInt(1, x.isNonZero()));
  auto toFloat = dyn_cast<FloatType>(to);
  if (x.isFloat() && toFloat) {
    APFloat value = x.getFloat();
    if (!to.isF64())
      value = roundTo(value, APFloat::IEEEsingle());
    return Element(to, roundTo(value, toFloat.getFloatSemantics()));
  }
  if (x.isFloat()) {
    llvm::APSInt result(to.getIntOrFloatBitWidth(), /*isUnsigned=*/false);
    bool isExact;
    if (x.getFloat().convertToInteger(result, APFloat::rmTowardZero, &isExact) &
        APFloat::opInvalidOp)
      return failure(); // NaN, or out of the integer type's range
    return Element(to, static_cast<APInt>(result));
  }
  if (toFloat)
    return Element::fromInt(to, x.toInt());
  unsigned width = to.getIntOrFloatBitWidth();
  return Element(to, x.isBool() ? x.getInt().zext(width)
                                : x.getInt().sextOrTrunc(width));
}
