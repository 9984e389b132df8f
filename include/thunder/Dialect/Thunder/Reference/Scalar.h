//===- Scalar.h - PyTorch's scalar semantics of each thunder op -*- C++ -*-===//
//
// One function per elementwise op of the thunder dialect, on single elements:
// the definition the tensor ops of the reference interpreter map over every
// element, and that the generated kernels and their support headers
// (thunder_cpu.h, thunder_cuda.cuh) are checked against: the CPU ones by
// test/python/test_reference_oracle.py.
//
// The rules, PyTorch's (type promotion is the importer's, so the operands of
// a binary op share one element type):
// - A float op computes in PyTorch's opmath type (f32 for f32 and narrower,
//   f64 for f64) and rounds its result to nearest even into the element
//   type. Ops IEEE defines exactly (+ - * /, sqrt, fmod, floor, comparisons)
//   are computed exactly so; transcendental ones (exp, tanh, erf, pow...)
//   in double, rounded once: PyTorch's own kernels (Sleef, libm) differ by
//   an ulp between vector widths, so a test compares those within a few ulp.
// - Integers wrap at their width. i1 is bool: an arithmetic op computes on 0
//   and 1 and stores `!= 0` (True + True is True).
// - A value PyTorch leaves undefined or raises on is a failure, never a
//   guess: integer division or remainder by zero, the quotient INT_MIN / -1
//   that traps in the i32 and i64 kernels, a float converted to an integer
//   type it does not fit (NaN included), a float-only op on an integer.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_REFERENCE_SCALAR_H
#define THUNDER_DIALECT_THUNDER_REFERENCE_SCALAR_H

#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"
#include "thunder/Dialect/Thunder/Reference/Element.h"

#include "mlir/Support/LogicalResult.h"

#include <optional>

namespace mlir::thunder::reference {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// `-x`; wraps for integers (-INT_MIN is INT_MIN).
FailureOr<Element> negate(const Element &x);
/// `|x|`; wraps for integers (|INT_MIN| is INT_MIN).
FailureOr<Element> abs(const Element &x);
/// `x < 0 ? 0 : x`: NaN and -0.0 pass through, as torch.relu.
FailureOr<Element> relu(const Element &x);
FailureOr<Element> exp(const Element &x);
FailureOr<Element> log(const Element &x);
FailureOr<Element> log1p(const Element &x);
/// Correctly rounded square root (sqrt(-0.0) is -0.0, of a negative NaN).
FailureOr<Element> sqrt(const Element &x);
/// `1 / sqrt(x)`, two roundings as PyTorch's kernels compute it.
FailureOr<Element> rsqrt(const Element &x);
/// `1 / x`, correctly rounded.
FailureOr<Element> reciprocal(const Element &x);
FailureOr<Element> tanh(const Element &x);
/// `1 / (1 + e^-x)`.
FailureOr<Element> sigmoid(const Element &x);
FailureOr<Element> erf(const Element &x);
FailureOr<Element> sin(const Element &x);
FailureOr<Element> cos(const Element &x);
/// Round toward -inf; the identity on integers.
FailureOr<Element> floor(const Element &x);
/// Round toward +inf; the identity on integers.
FailureOr<Element> ceil(const Element &x);
/// `x * sigmoid(x)`.
FailureOr<Element> silu(const Element &x);
/// `x / 2 * (1 + erf(x / sqrt 2))`, or with `Tanh` the approximation
/// `x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))`.
FailureOr<Element> gelu(const Element &x, GeluApproximation approximation);
/// `!x` on bools.
FailureOr<Element> logicalNot(const Element &x);

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

FailureOr<Element> add(const Element &lhs, const Element &rhs);
FailureOr<Element> subtract(const Element &lhs, const Element &rhs);
FailureOr<Element> multiply(const Element &lhs, const Element &rhs);
/// torch.div: true division (floats only), `Trunc` rounds the quotient
/// toward zero, `Floor` toward -inf exactly as c10's div_floor_floating
/// (from fmod, so 5 // 0.1 is 49 as in Python, not floor(5 / 0.1) = 50).
/// Integers fail on division by zero and on INT_MIN / -1 in i32 and i64.
FailureOr<Element> divide(const Element &lhs, const Element &rhs,
                          RoundingMode mode);
/// torch.maximum: NaN if either is NaN; of +0.0 and -0.0 the second operand
/// (PyTorch's vectorized kernel; its scalar tail returns the first).
FailureOr<Element> maximum(const Element &lhs, const Element &rhs);
/// torch.minimum: as maximum.
FailureOr<Element> minimum(const Element &lhs, const Element &rhs);
/// torch.remainder (Python's %): the sign of the divisor; a float remainder
/// by zero is NaN, an integer one fails.
FailureOr<Element> remainder(const Element &lhs, const Element &rhs);
/// torch.pow. Integers: by squaring, wrapping; a negative exponent gives 0
/// except for the bases 1 and -1.
FailureOr<Element> power(const Element &lhs, const Element &rhs);
FailureOr<Element> logicalAnd(const Element &lhs, const Element &rhs);
FailureOr<Element> logicalOr(const Element &lhs, const Element &rhs);
FailureOr<Element> logicalXor(const Element &lhs, const Element &rhs);

//===----------------------------------------------------------------------===//
// Compare, select, clamp, convert
//===----------------------------------------------------------------------===//

/// The i1 result of comparing: IEEE for floats (NaN is unordered: only NE
/// holds), signed for integers, false < true for bools.
Element compare(ComparisonDirection direction, const Element &lhs,
                const Element &rhs);
/// `condition != 0 ? onTrue : onFalse`.
Element select(const Element &condition, const Element &onTrue,
               const Element &onFalse);
/// torch.clamp: `min(max(x, lo), hi)` with either bound absent; a NaN stays
/// NaN. The bounds round to the element's compute type first.
FailureOr<Element> clamp(const Element &x, std::optional<double> lo,
                         std::optional<double> hi);
/// Tensor.to(type): floats round to nearest even (to f16, bf16 and f8
/// through f32, so f64 -> f16 rounds twice, as PyTorch does); a float to an
/// integer truncates toward zero and fails when it does not fit (or is NaN);
/// anything to bool is `!= 0`; integers wrap.
FailureOr<Element> convert(const Element &x, Type to);

} // namespace mlir::thunder::reference

#endif // THUNDER_DIALECT_THUNDER_REFERENCE_SCALAR_H
