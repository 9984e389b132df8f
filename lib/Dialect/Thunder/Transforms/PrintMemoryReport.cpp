//===- PrintMemoryReport.cpp - thunder-print-memory-report ----------------===//
//
// Prints the memory report (what thunder-compile --report=memory prints) of
// the module on standard output, so thunder-opt and lit tests can see it.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"
#include "thunder/Dialect/Thunder/Transforms/Reports.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERPRINTMEMORYREPORT
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;

namespace {
struct ThunderPrintMemoryReport
    : mlir::thunder::impl::ThunderPrintMemoryReportBase<ThunderPrintMemoryReport> {
  void runOnOperation() override {
    llvm::outs() << ::thunder::formatMemoryReport(getOperation());
    llvm::outs().flush();
    markAllAnalysesPreserved();
  }
};
} // namespace
