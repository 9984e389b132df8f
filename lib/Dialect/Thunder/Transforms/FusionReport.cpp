//===- FusionReport.cpp - (being written) ---------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Reports.h"

std::string thunder::formatFusionReport(mlir::ModuleOp) { return "fusion report: not written yet\n"; }
