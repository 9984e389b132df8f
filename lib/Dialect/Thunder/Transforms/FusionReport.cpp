//===- FusionReport.cpp - Every kernel, and why kernels stayed apart ------===//
#include "FusionRules.h"
#include "thunder/Dialect/Thunder/Transforms/Reports.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::thunder;

namespace {

/// "file.py:12" for each distinct source line of `op`'s location.
void sourceLines(Location loc, std::set<std::string> &lines) {
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner))
      lines.insert(
          (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
           llvm::Twine(file.getLine()))
              .str());
    return WalkResult::advance();
  });
}

/// What an input outside the kernel is, for the report.
std::string describeInput(Value value,
                          const llvm::DenseMap<Operation *, unsigned> &number) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (func)
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "thunder.name"))
        return "input '" + name.getValue().str() + "'";
    return "input #" + std::to_string(arg.getArgNumber());
  }
  Operation *def = value.getDefiningOp();
  if (auto constant = dyn_cast<ConstantOp>(def)) {
    if (auto name = dyn_cast<NameLoc>(constant.getLoc()))
      return "weight '" + name.getName().str() + "'";
    return "a constant";
  }
  if (auto reshape = dyn_cast<ReshapeOp>(def))
    return "a view of " + describeInput(reshape.getOperand(), number);
  if (auto it = number.find(def); it != number.end())
    return "kernel #" + std::to_string(it->second);
  return def->getName().getStringRef().str();
}

/// The kernel that produces `value`, looking through views.
FusionOp producerKernel(Value value) {
  Operation *def = value.getDefiningOp();
  while (auto reshape = dyn_cast_or_null<ReshapeOp>(def))
    def = reshape.getOperand().getDefiningOp();
  return dyn_cast_or_null<FusionOp>(def);
}

} // namespace

namespace thunder {

std::string formatFusionReport(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<FusionOp> kernels(func.getBody().front().getOps<FusionOp>());
    llvm::DenseMap<Operation *, unsigned> number;
    std::map<std::string, unsigned> byKind;
    unsigned opsInKernels = 0;
    for (auto [i, k] : llvm::enumerate(kernels)) {
      number[k] = i;
      ++byKind[stringifyFusionKind(k.getKind()).str()];
      for (Operation &op : k.getBody().front().without_terminator())
        opsInKernels += !isa<ConstantOp, BroadcastOp, ExpandOp, ReshapeOp>(op);
    }
    os << "Fusion report for @" << func.getSymName() << ": " << kernels.size()
       << " kernels for " << opsInKernels << " ops (";
    llvm::interleaveComma(byKind, os, [&](const auto &entry) {
      os << entry.second << " " << entry.first;
    });
    os << ")\n";
    for (auto [i, kernel] : llvm::enumerate(kernels)) {
      os << llvm::formatv("\n#{0,-4} {1} ({2})\n", i, kernel.getKernelName(),
                          stringifyFusionKind(kernel.getKind()));
      SmallVector<std::string> ops;
      std::set<std::string> lines;
      for (Operation &op : kernel.getBody().front().without_terminator()) {
        if (!isa<ConstantOp>(op))
          ops.push_back(op.getName().stripDialect().str());
        sourceLines(op.getLoc(), lines);
      }
      os << "      ops:   " << llvm::join(ops, ", ") << "\n";
      if (!lines.empty()) {
        SmallVector<std::string> shown(lines.begin(), lines.end());
        if (shown.size() > 4) {
          shown.resize(4);
          shown.push_back("...");
        }
        os << "      at:    " << llvm::join(shown, ", ") << "\n";
      }
      llvm::SetVector<Value> seen;
      for (Value input : kernel.getInputs()) {
        if (!seen.insert(input))
          continue;
        FusionOp producer = producerKernel(input);
        if (!producer) {
          os << "      reads  " << describeInput(input, number) << "\n";
          continue;
        }
        Value produced = input;
        while (auto reshape = dyn_cast_or_null<ReshapeOp>(produced.getDefiningOp()))
          produced = reshape.getOperand();
        os << "      reads  kernel #" << number.lookup(producer) << " "
           << producer.getKernelName() << ": not fused because "
           << fusion::explainBoundary(producer, kernel, produced) << "\n";
      }
    }
  }
  return text;
}

} // namespace thunder
