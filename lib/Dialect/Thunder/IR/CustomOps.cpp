//===- CustomOps.cpp - Calls of user-registered kernels -------------------===//
#include "thunder/Dialect/Thunder/IR/CustomOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::thunder;

#define GET_OP_CLASSES
#include "thunder/Dialect/Thunder/IR/CustomOps.cpp.inc"

LogicalResult CustomCallOp::verify() {
  // custom_call_c1: the backends declare and call the kernel by this name.
  StringRef callee = getCallee();
  if (callee.empty() || llvm::isDigit(callee.front()) ||
      !llvm::all_of(callee, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return emitOpError("expects the callee to be a C identifier, got '")
           << callee << "' (custom_call_c1)";
  return success();
}
