//===- ThunderDialect.h - The `thunder` dialect ------------------*- C++ -*-===//
//
// The dialect class and its enums (I32EnumAttr-based attributes). Ops are in ThunderOps.h.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_IR_THUNDERDIALECT_H
#define THUNDER_DIALECT_THUNDER_IR_THUNDERDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "thunder/Dialect/Thunder/IR/ThunderDialect.h.inc"
#include "thunder/Dialect/Thunder/IR/ThunderEnums.h.inc"

#endif // THUNDER_DIALECT_THUNDER_IR_THUNDERDIALECT_H
