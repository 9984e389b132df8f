//===- FoldWeights.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFOLDWEIGHTS
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderFoldWeights : mlir::thunder::impl::ThunderFoldWeightsBase<ThunderFoldWeights> {
  void runOnOperation() override {}
};
} // namespace
