//===- RandomOps.h - thunder.random -----------------------------*- C++ -*-===//
//
// The op that draws random numbers. Apart from ThunderOps.h (as CustomOps.h)
// so that only the code that handles it (the importer, the shape plan, the
// backends' emitters) includes it: the passes treat it as any other op.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DIALECT_THUNDER_IR_RANDOMOPS_H
#define THUNDER_DIALECT_THUNDER_IR_RANDOMOPS_H

#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

#include "thunder/Dialect/Thunder/IR/RandomEnums.h.inc"

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/RandomOps.h.inc"

#endif // THUNDER_DIALECT_THUNDER_IR_RANDOMOPS_H
