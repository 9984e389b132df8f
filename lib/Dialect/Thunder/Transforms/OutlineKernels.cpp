//===- OutlineKernels.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDEROUTLINEKERNELS
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderOutlineKernels : mlir::thunder::impl::ThunderOutlineKernelsBase<ThunderOutlineKernels> {
  void runOnOperation() override {}
};
} // namespace
