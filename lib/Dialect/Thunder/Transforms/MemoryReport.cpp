//===- MemoryReport.cpp - (being written) ---------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Reports.h"

std::string thunder::formatMemoryReport(mlir::ModuleOp) { return "memory report: not written yet\n"; }
