//===- ThunderOps.h - Ops of the `thunder` dialect ---------------*- C++ -*-===//
//
// Every op of the dialect, generated from the *Ops.td files beside this header.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_IR_THUNDEROPS_H
#define THUNDER_DIALECT_THUNDER_IR_THUNDEROPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"

namespace mlir::thunder {
/// The i1 tensor type with the shape of `type` (a ranked tensor): the result
/// type of comparisons and the condition type of `thunder.where`.
Type getI1TensorLike(Type type);
} // namespace mlir::thunder

#include "thunder/Dialect/Thunder/IR/ThunderInterfaces.h.inc"

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/ElementwiseOps.h.inc"
#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/TensorOps.h.inc"
#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/ReductionOps.h.inc"
#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/LinalgOps.h.inc"
#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/CompositeOps.h.inc"
#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/FusionOps.h.inc"

#endif // THUNDER_DIALECT_THUNDER_IR_THUNDEROPS_H
