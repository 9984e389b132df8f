//===- ReductionOps.cpp - Reference semantics of reductions ---------------===//
//
// sum, mean, max, min and prod over a set of dims. Floats accumulate in
// double and round once into the result type: a reference closer to the
// exact value than any of PyTorch's summation orders, which differ between
// its kernels, so a test compares a kernel's reduction within a tolerance.
// Integers accumulate in 64 bits, wrapping, and wrap again into the result.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Reference/Ops.h"

#include "Indexing.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::reference;

namespace {
enum class Reduction { Sum, Mean, Max, Min, Prod };

/// One accumulator per result element.
struct Accumulators {
  Reduction kind;
  bool isFloat;
  SmallVector<double> floats;
  SmallVector<uint64_t> ints; // unsigned: wrapping arithmetic is defined

  Accumulators(Reduction kind, bool isFloat, int64_t count)
      : kind(kind), isFloat(isFloat) {
    if (isFloat)
      floats.assign(count, initialFloat());
    else
      ints.assign(count, static_cast<uint64_t>(initialInt()));
  }

  double initialFloat() const {
    switch (kind) {
    case Reduction::Max:
      return -INFINITY;
    case Reduction::Min:
      return INFINITY;
    case Reduction::Prod:
      return 1.0;
    default:
      return 0.0;
    }
  }
  int64_t initialInt() const {
    switch (kind) {
    case Reduction::Max:
      return std::numeric_limits<int64_t>::min();
    case Reduction::Min:
      return std::numeric_limits<int64_t>::max();
    case Reduction::Prod:
      return 1;
    default:
      return 0;
    }
  }

  void add(int64_t out, const Element &x) {
    if (isFloat) {
      double v = x.toDouble(), &acc = floats[out];
      switch (kind) {
      case Reduction::Sum:
      case Reduction::Mean:
        acc += v;
        break;
      case Reduction::Prod:
        acc *= v;
        break;
      case Reduction::Max: // NaN wins: once acc is NaN no comparison holds
        if (std::isnan(v) || v > acc)
          acc = v;
        break;
      case Reduction::Min:
        if (std::isnan(v) || v < acc)
          acc = v;
        break;
      }
      return;
    }
    int64_t v = x.toInt();
    uint64_t &acc = ints[out];
    switch (kind) {
    case Reduction::Sum:
    case Reduction::Mean:
      acc += static_cast<uint64_t>(v);
      break;
    case Reduction::Prod:
      acc *= static_cast<uint64_t>(v);
      break;
    case Reduction::Max:
      acc = static_cast<uint64_t>(std::max(static_cast<int64_t>(acc), v));
      break;
    case Reduction::Min:
      acc = static_cast<uint64_t>(std::min(static_cast<int64_t>(acc), v));
      break;
    }
  }

  Element result(Type type, int64_t out, int64_t count) const {
    if (!isFloat)
      return Element::fromInt(type, static_cast<int64_t>(ints[out]));
    double value = floats[out];
    if (kind == Reduction::Mean)
      value /= static_cast<double>(count);
    return Element::fromDouble(type, value);
  }
};
} // namespace

static FailureOr<Tensor> reduce(Reduction kind, const Tensor &input,
                                ArrayRef<int64_t> dims, RankedTensorType type) {
  ArrayRef<int64_t> shape = input.getType().getShape();
  int64_t count = 1;
  for (int64_t d : dims)
    count *= shape[d];
  if (count == 0 && (kind == Reduction::Max || kind == Reduction::Min))
    return failure(); // PyTorch raises on an empty max or min
  bool isFloat = isa<FloatType>(input.getElementType());
  if (kind == Reduction::Mean && !isa<FloatType>(type.getElementType()))
    return failure(); // torch.mean is defined on floats only
  Type element = type.getElementType();

  if (input.isSplat()) {
    // Every result element reduces `count` copies of one value: closed
    // forms (a sum of copies in double is the product with the count, exact
    // below 2^53), nothing added when the reduced dims are empty.
    Accumulators acc(kind, isFloat, 1);
    Element x = input.get(0);
    if (count > 0) {
      if (kind == Reduction::Max || kind == Reduction::Min) {
        acc.add(0, x);
      } else if (isFloat) {
        double v = x.toDouble(), n = static_cast<double>(count);
        acc.floats[0] = kind == Reduction::Prod ? std::pow(v, n) : v * n;
      } else if (kind == Reduction::Prod) {
        uint64_t base = static_cast<uint64_t>(x.toInt()), product = 1;
        for (uint64_t e = static_cast<uint64_t>(count); e; e >>= 1, base *= base)
          if (e & 1)
            product *= base;
        acc.ints[0] = product;
      } else {
        acc.ints[0] = static_cast<uint64_t>(x.toInt()) * static_cast<uint64_t>(count);
      }
    }
    Tensor result = Tensor::allocate(type, /*splat=*/true);
    result.set(0, acc.result(element, 0, count));
    return result;
  }

  int64_t outCount = type.getNumElements();
  Accumulators acc(kind, isFloat, outCount);
  // Result strides over the kept dims; a reduced dim does not move.
  SmallVector<int64_t> outStrides(shape.size(), 0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (llvm::is_contained(dims, d))
      continue;
    outStrides[d] = stride;
    stride *= shape[d];
  }
  forEachIndex(shape, 0, outStrides, 0, stridesOf(shape),
               [&](int64_t out, int64_t in) { acc.add(out, input.get(in)); });
  Tensor result = Tensor::allocate(type, /*splat=*/false);
  for (int64_t i = 0; i < outCount; ++i)
    result.set(i, acc.result(element, i, count));
  return result;
}

FailureOr<Tensor> reference::evalSumOp(const Tensor &input,
                                       ArrayRef<int64_t> dims,
                                       RankedTensorType type) {
  return reduce(Reduction::Sum, input, dims, type);
}

FailureOr<Tensor> reference::evalMeanOp(const Tensor &input,
                                        ArrayRef<int64_t> dims,
                                        RankedTensorType type) {
  return reduce(Reduction::Mean, input, dims, type);
}

FailureOr<Tensor> reference::evalMaxOp(const Tensor &input,
                                       ArrayRef<int64_t> dims,
                                       RankedTensorType type) {
  return reduce(Reduction::Max, input, dims, type);
}

FailureOr<Tensor> reference::evalMinOp(const Tensor &input,
                                       ArrayRef<int64_t> dims,
                                       RankedTensorType type) {
  return reduce(Reduction::Min, input, dims, type);
}

FailureOr<Tensor> reference::evalProdOp(const Tensor &input,
                                        ArrayRef<int64_t> dims,
                                        RankedTensorType type) {
  return reduce(Reduction::Prod, input, dims, type);
}
