//===- RandomOps.cpp - Draws of the run's random number generator ---------===//
#include "thunder/Dialect/Thunder/IR/RandomOps.h"

using namespace mlir;
using namespace mlir::thunder;

#include "thunder/Dialect/Thunder/IR/RandomEnums.cpp.inc"

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/RandomOps.cpp.inc"

LogicalResult RandomOp::verify() {
  Type element = getType().getElementType();
  if (getDistribution() == RandomDistribution::Bits) {
    // random_c2
    if (!element.isInteger(64))
      return emitOpError("expects i64 elements for bits, got ") << element;
  } else if (!isa<FloatType>(element)) {
    // random_c1
    return emitOpError("expects a floating-point element type for ")
           << stringifyRandomDistribution(getDistribution()) << ", got " << element;
  }
  // random_c3
  int64_t stream = getStreamAttr().getInt();
  if (stream < 0 || stream > int64_t(UINT32_MAX))
    return emitOpError("expects stream in [0, 2^32), got ") << stream;
  return success();
}
