//===- FuseEpilogues.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFUSEEPILOGUES
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderFuseEpilogues : mlir::thunder::impl::ThunderFuseEpiloguesBase<ThunderFuseEpilogues> {
  void runOnOperation() override {}
};
} // namespace
