//===- PlanMemory.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERPLANMEMORY
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderPlanMemory : mlir::thunder::impl::ThunderPlanMemoryBase<ThunderPlanMemory> {
  void runOnOperation() override {}
};
} // namespace
