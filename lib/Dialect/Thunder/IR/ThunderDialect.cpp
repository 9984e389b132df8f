//===- ThunderDialect.cpp - The `thunder` dialect -------------------------===//
//
// Dialect registration, enum definitions and constant materialization.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"

#include "thunder/Dialect/Thunder/IR/CustomOps.h"
#include "thunder/Dialect/Thunder/IR/RandomOps.h"

using namespace mlir;
using namespace mlir::thunder;

#include "thunder/Dialect/Thunder/IR/ThunderDialect.cpp.inc"
#include "thunder/Dialect/Thunder/IR/ThunderEnums.cpp.inc"

void ThunderDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/ElementwiseOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/TensorOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/ReductionOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/LinalgOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/CompositeOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/FusionOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/CustomOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "thunder/Dialect/Thunder/IR/RandomOps.cpp.inc"
      >();
}

Operation *ThunderDialect::materializeConstant(OpBuilder &builder,
                                               Attribute value, Type type,
                                               Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

Type mlir::thunder::getI1TensorLike(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(),
                               IntegerType::get(type.getContext(), 1));
}
