//===- Schedule.cpp - (being written) ---------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERSCHEDULE
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

namespace {
struct ThunderSchedule : mlir::thunder::impl::ThunderScheduleBase<ThunderSchedule> {
  void runOnOperation() override {}
};
} // namespace
