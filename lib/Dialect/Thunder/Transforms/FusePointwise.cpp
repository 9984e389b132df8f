//===- FusePointwise.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFUSEPOINTWISE
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderFusePointwise : mlir::thunder::impl::ThunderFusePointwiseBase<ThunderFusePointwise> {
  void runOnOperation() override {}
};
} // namespace
