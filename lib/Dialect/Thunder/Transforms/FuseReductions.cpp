//===- FuseReductions.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFUSEREDUCTIONS
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderFuseReductions : mlir::thunder::impl::ThunderFuseReductionsBase<ThunderFuseReductions> {
  void runOnOperation() override {}
};
} // namespace
