//===- MemoryReport.cpp - The memory plan, for people ---------------------===//
//
// Reads the plan that thunder-schedule and thunder-plan-memory recorded in
// the IR (thunder.arena on the function; thunder.offsets, thunder.inplace and
// thunder.live on the kernels) back into a structure (for Python) and a text
// report (thunder-compile --report=memory).
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Reports.h"

#include "KernelGraph.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>

using namespace mlir;
using namespace mlir::thunder::planning;
using ::thunder::FunctionMemoryPlan;
using ::thunder::PlannedTensor;

namespace {

/// "512 B", "1.50 KiB", "12.00 MiB", "1.25 GiB".
std::string humanBytes(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes < 0)
    return "?";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    os << bytes << " B";
    return text;
  }
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  os << llvm::format("%.2f ", value) << units[unit];
  return text;
}

int64_t intField(DictionaryAttr dict, StringRef name, int64_t fallback) {
  if (auto value = dict.getAs<IntegerAttr>(name))
    return value.getInt();
  return fallback;
}

/// The element of a dense i64 array attribute, or `fallback`.
int64_t element(Operation *op, StringRef name, size_t index, int64_t fallback) {
  auto array = op->getAttrOfType<DenseI64ArrayAttr>(name);
  if (!array || index >= array.asArrayRef().size())
    return fallback;
  return array.asArrayRef()[index];
}

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

} // namespace

auto ::thunder::collectMemoryPlans(ModuleOp module)
    -> std::vector<FunctionMemoryPlan> {
  std::vector<FunctionMemoryPlan> plans;
  module.walk([&](func::FuncOp func) {
    auto arena = func->getAttrOfType<DictionaryAttr>(kArenaAttr);
    if (!arena || func.isExternal() || !llvm::hasSingleElement(func.getBody()))
      return;
    FunctionMemoryPlan plan;
    plan.function = func.getSymName().str();
    plan.alignment = intField(arena, "alignment", kAlignment);
    plan.arenaBytes = intField(arena, "bytes", -1);
    plan.lowerBound = intField(arena, "lower_bound", -1);
    plan.naive = intField(arena, "naive", -1);
    plan.dynamic = arena.contains("dynamic");
    plan.borrowed = intField(arena, "borrowed", -1);
    plan.workspace = intField(arena, "workspace", -1);
    KernelGraph graph = KernelGraph::build(func.front());
    plan.kernels = graph.kernels.size();
    plan.outputBytes = 0;
    for (auto [t, tensor] : llvm::enumerate(graph.tensors)) {
      Operation *kernel = graph.kernels[tensor.kernel];
      PlannedTensor planned;
      std::string name = kernelName(kernel, tensor.kernel);
      planned.name = name + "#" + std::to_string(tensor.result);
      planned.type = typeText(tensor.value.getType());
      planned.kernel = tensor.kernel;
      planned.result = tensor.result;
      planned.bytes = tensor.bytes.value_or(-1);
      planned.offset = element(kernel, kOffsetsAttr, tensor.result, kRuntimeOffset);
      planned.runtime = planned.offset == kRuntimeOffset;
      planned.output = planned.offset < 0 && !planned.runtime ? -1 - planned.offset : -1;
      planned.first = element(kernel, kLiveAttr, 2 * tensor.result, tensor.kernel);
      planned.last =
          element(kernel, kLiveAttr, 2 * tensor.result + 1, graph.lastUse(t));
      planned.inplaceOperand = element(kernel, kInplaceAttr, tensor.result, -1);
      planned.inOutput = element(kernel, kBorrowedAttr, tensor.result, -1);
      if (planned.inplaceOperand >= 0 &&
          planned.inplaceOperand < static_cast<int64_t>(kernel->getNumOperands()))
        if (std::optional<unsigned> from =
                graph.tensorFor(kernel->getOperand(planned.inplaceOperand))) {
          const KernelGraph::Tensor &source = graph.tensors[*from];
          planned.inplaceFrom = kernelName(graph.kernels[source.kernel], source.kernel) +
                                "#" + std::to_string(source.result);
        }
      if (planned.output >= 0)
        plan.outputBytes = planned.bytes < 0 || plan.outputBytes < 0
                               ? -1
                               : plan.outputBytes + planned.bytes;
      plan.tensors.push_back(std::move(planned));
    }
    // Library workspaces: arena bytes live at their kernel only.
    for (auto [k, kernel] : llvm::enumerate(graph.kernels))
      if (auto at = kernel->getAttrOfType<IntegerAttr>(kWorkspaceAttr)) {
        PlannedTensor workspace;
        workspace.name = kernelName(kernel, k) + "#workspace";
        workspace.type = "library workspace";
        workspace.kernel = workspace.first = workspace.last = k;
        workspace.result = -1;
        workspace.bytes = plan.workspace;
        workspace.offset = at.getInt();
        plan.tensors.push_back(std::move(workspace));
      }
    plans.push_back(std::move(plan));
  });
  return plans;
}

auto ::thunder::formatMemoryReport(ModuleOp module) -> std::string {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::vector<FunctionMemoryPlan> plans = collectMemoryPlans(module);
  if (plans.empty()) {
    os << "memory report: no memory plan (thunder-plan-memory has not run: "
          "compile to the plan phase)\n";
    return text;
  }
  for (const FunctionMemoryPlan &plan : plans) {
    if (&plan != &plans.front())
      os << "\n";
    // Library workspaces are the entries without a result.
    size_t workspaces = llvm::count_if(
        plan.tensors, [](const PlannedTensor &t) { return t.result < 0; });
    size_t arenaTensors = llvm::count_if(plan.tensors, [](const PlannedTensor &t) {
      return t.output < 0 && t.result >= 0;
    });
    os << "memory plan of @" << plan.function << ": " << plan.kernels
       << " kernels, " << plan.tensors.size() - workspaces << " tensors (" << arenaTensors
       << " in the arena)";
    if (workspaces)
      os << ", " << workspaces << " library workspace" << (workspaces > 1 ? "s" : "");
    os << "\n";
    auto line = [&](StringRef label, int64_t bytes, StringRef note) {
      os << "  " << llvm::left_justify(label, 12) << " "
         << llvm::right_justify(humanBytes(bytes), 11) << "  ("
         << bytes << " bytes)";
      if (!note.empty())
        os << "  " << note;
      os << "\n";
    };
    if (plan.dynamic) {
      os << "  arena        packed at run time (dynamic shapes): sizes, lower "
            "bound and naive sum depend on the inputs\n";
    } else {
      std::string ratio;
      llvm::raw_string_ostream ratioOs(ratio);
      if (plan.lowerBound > 0)
        ratioOs << "arena / lower bound = "
                << llvm::format("%.3f", double(plan.arenaBytes) / double(plan.lowerBound));
      line("arena", plan.arenaBytes,
           ("aligned to " + llvm::Twine(plan.alignment) + " bytes").str());
      line("lower bound", plan.lowerBound, ratio);
      line("naive sum", plan.naive, "every tensor its own buffer");
      if (plan.borrowed >= 0)
        line("borrowed", plan.borrowed,
             "in output buffers before the outputs are written");
      if (plan.workspace >= 0)
        line("workspace", plan.workspace,
             "per gemm/conv kernel, in the arena (counted above)");
    }
    if (plan.outputBytes >= 0)
      line("outputs", plan.outputBytes, "written to the caller's buffers");
    else
      os << "  outputs      dynamic size, written to the caller's buffers\n";

    // The table, columns as wide as their widest cell.
    std::vector<std::array<std::string, 6>> rows;
    rows.push_back({"tensor", "bytes", "offset", "live", "in-place from", "type"});
    for (const PlannedTensor &t : plan.tensors) {
      std::string offset =
          t.output >= 0   ? "output " + std::to_string(t.output)
          : t.runtime     ? std::string("runtime")
          : t.inOutput >= 0 ? "output " + std::to_string(t.inOutput) + " + " +
                                  std::to_string(t.offset)
                          : std::to_string(t.offset);
      std::string live =
          "[" + std::to_string(t.first) + ", " + std::to_string(t.last) + "]";
      std::string inplace = t.inplaceFrom.empty()
                                ? (t.inplaceOperand >= 0 ? "operand " + std::to_string(t.inplaceOperand)
                                                         : std::string("-"))
                                : t.inplaceFrom;
      rows.push_back({t.name, t.bytes < 0 ? std::string("dynamic") : humanBytes(t.bytes),
                      offset, live, inplace, t.type});
    }
    std::array<size_t, 6> width{};
    for (const auto &row : rows)
      for (size_t c = 0; c < row.size(); ++c)
        width[c] = std::max(width[c], row[c].size());
    os << "\n";
    for (const auto &row : rows) {
      os << "  " << llvm::left_justify(row[0], width[0]) << "  "
         << llvm::right_justify(row[1], width[1]) << "  "
         << llvm::right_justify(row[2], width[2]) << "  "
         << llvm::left_justify(row[3], width[3]) << "  "
         << llvm::left_justify(row[4], width[4]) << "  " << row[5] << "\n";
    }
  }
  return text;
}
