// Shared by the reference interpreter's unit tests: an MLIR context with the
// element types, and elements built from host values or bit patterns.
#ifndef THUNDER_TEST_UNIT_DIALECT_THUNDER_REFERENCE_REFERENCETESTUTILS_H
#define THUNDER_TEST_UNIT_DIALECT_THUNDER_REFERENCE_REFERENCETESTUTILS_H

#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"
#include "thunder/Dialect/Thunder/Reference/Element.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace thunder_test {

using mlir::thunder::reference::Element;

/// A fixture with the element types of the dialect.
class ReferenceTest : public ::testing::Test {
protected:
  ReferenceTest() : builder(&context) {
    context.loadDialect<mlir::thunder::ThunderDialect>();
  }

  mlir::MLIRContext context;
  mlir::Builder builder;
  mlir::Type f64 = builder.getF64Type(), f32 = builder.getF32Type(),
             f16 = builder.getF16Type(), bf16 = builder.getBF16Type(),
             e4m3 = builder.getFloat8E4M3FNType(),
             e5m2 = builder.getFloat8E5M2Type(), i64 = builder.getI64Type(),
             i32 = builder.getI32Type(), i8 = builder.getI8Type(),
             i1 = builder.getI1Type();

  /// An f32 element with exactly the value `v`.
  Element F32(float v) { return Element(f32, llvm::APFloat(v)); }
  /// An f64 element with exactly the value `v`.
  Element F64(double v) { return Element(f64, llvm::APFloat(v)); }
  /// An element of a float `type` with the value `v`, which must be exact in
  /// it (checked: a test input must not round).
  Element exact(mlir::Type type, double v) {
    Element e = Element::fromDouble(type, v);
    EXPECT_TRUE(std::isnan(v) || e.toDouble() == v)
        << v << " is not exact in " << e.toString();
    return e;
  }
  Element Int(mlir::Type type, int64_t v) { return Element::fromInt(type, v); }
  Element Bool(bool v) { return Element::fromInt(i1, v); }

  static constexpr double inf = std::numeric_limits<double>::infinity();
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
};

/// `actual` holds a value with the bits of `expected` (so -0.0 differs from
/// +0.0 and a NaN must be a NaN of the same type: compared by isNaN, since
/// PyTorch's NaN payloads differ between its kernels).
inline ::testing::AssertionResult sameElement(
    const mlir::FailureOr<Element> &actual, const Element &expected) {
  if (mlir::failed(actual))
    return ::testing::AssertionFailure()
           << "failed, expected " << expected.toString();
  if (actual->getType() == expected.getType() && actual->isFloat() &&
      expected.isFloat() && actual->getFloat().isNaN() &&
      expected.getFloat().isNaN())
    return ::testing::AssertionSuccess();
  if (actual->isBitwiseEqual(expected))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << actual->toString() << ", expected "
         << expected.toString();
}

/// `actual` is within `ulps` units in the last place of `expected` (a value
/// of a float type): for transcendental functions, where PyTorch's kernels
/// are not correctly rounded either.
inline ::testing::AssertionResult nearElement(
    const mlir::FailureOr<Element> &actual, const Element &expected, int ulps) {
  if (mlir::failed(actual))
    return ::testing::AssertionFailure()
           << "failed, expected " << expected.toString();
  if (actual->getType() != expected.getType())
    return ::testing::AssertionFailure() << "got " << actual->toString();
  llvm::APFloat step = expected.getFloat();
  step.next(/*nextDown=*/false);
  step.subtract(expected.getFloat(), llvm::APFloat::rmNearestTiesToEven);
  double ulp = std::fabs(step.convertToDouble());
  double diff = std::fabs(actual->toDouble() - expected.toDouble());
  if (diff <= ulps * ulp)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << actual->toString() << ", expected "
         << expected.toString() << " within " << ulps << " ulp";
}

} // namespace thunder_test

#endif // THUNDER_TEST_UNIT_DIALECT_THUNDER_REFERENCE_REFERENCETESTUTILS_H
