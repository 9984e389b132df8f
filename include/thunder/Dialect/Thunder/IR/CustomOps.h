//===- CustomOps.h - thunder.custom_call ------------------------*- C++ -*-===//
//
// The op that calls a user-registered kernel. Apart from ThunderOps.h so that
// only the code that handles it (the importer, the backends' emitters)
// includes it: the passes treat it as any other op of the dialect.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_IR_CUSTOMOPS_H
#define THUNDER_DIALECT_THUNDER_IR_CUSTOMOPS_H

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/CustomOps.h.inc"

#endif // THUNDER_DIALECT_THUNDER_IR_CUSTOMOPS_H
