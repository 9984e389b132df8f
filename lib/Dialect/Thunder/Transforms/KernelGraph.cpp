//===- KernelGraph.cpp - Kernels and the tensors between them -------------===//
#include "KernelGraph.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/RegionUtils.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::planning;

bool planning::isWeight(Operation *op) {
  return isa<ConstantOp, WeightOp>(op) ||
         (op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
          op->hasTrait<OpTrait::ConstantLike>());
}

bool planning::isView(Operation *op) { return isa<ReshapeOp>(op); }

bool planning::isKernel(Operation *op) {
  return !isWeight(op) && !isView(op) && !op->hasTrait<OpTrait::IsTerminator>();
}

Value planning::viewRoot(Value value) {
  while (auto view = value.getDefiningOp<ReshapeOp>())
    value = view.getOperand();
  return value;
}

int64_t planning::elementBytes(Type elementType) {
  if (elementType.isInteger(1))
    return 1;
  if (elementType.isIntOrFloat())
    return (elementType.getIntOrFloatBitWidth() + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(elementType))
    return 2 * elementBytes(complex.getElementType());
  return 8;
}

std::optional<int64_t> planning::tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  if (!tensor.hasStaticShape())
    return std::nullopt;
  return tensor.getNumElements() * elementBytes(tensor.getElementType());
}

std::string planning::kernelName(Operation *kernel, int64_t index) {
  if (auto fusion = dyn_cast<FusionOp>(kernel))
    return fusion.getKernelName().str();
  StringRef name = kernel->getName().stripDialect();
  return (name + "_" + llvm::Twine(index)).str();
}

SmallVector<Value> planning::usedValues(Operation *op) {
  llvm::SetVector<Value> used;
  used.insert(op->operand_begin(), op->operand_end());
  if (op->getNumRegions() && !op->hasTrait<OpTrait::IsIsolatedFromAbove>())
    getUsedValuesDefinedAbove(op->getRegions(), used);
  return used.takeVector();
}

KernelGraph KernelGraph::build(Block &block) {
  KernelGraph graph;
  for (Operation &op : block) {
    if (!isKernel(&op))
      continue;
    unsigned k = graph.kernels.size();
    graph.kernels.push_back(&op);
    graph.inputs.emplace_back();
    graph.results.emplace_back();
    // Inputs first: an op never reads its own results.
    for (Value value : usedValues(&op)) {
      std::optional<unsigned> t = graph.tensorFor(value);
      if (!t)
        continue;
      SmallVector<unsigned, 2> &inputs = graph.inputs[k];
      if (!llvm::is_contained(inputs, *t))
        inputs.push_back(*t);
      SmallVector<unsigned, 2> &readers = graph.tensors[*t].readers;
      if (readers.empty() || readers.back() != k)
        readers.push_back(k);
    }
    llvm::sort(graph.inputs[k]);
    for (OpResult result : op.getResults()) {
      unsigned t = graph.tensors.size();
      Tensor tensor;
      tensor.value = result;
      tensor.kernel = k;
      tensor.result = result.getResultNumber();
      tensor.bytes = tensorBytes(result.getType());
      graph.tensors.push_back(tensor);
      graph.tensorOf[result] = t;
      graph.results[k].push_back(t);
    }
  }
  if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>()) {
    for (auto [i, value] : llvm::enumerate(block.back().getOperands()))
      if (std::optional<unsigned> t = graph.tensorFor(value))
        if (graph.tensors[*t].output < 0)
          graph.tensors[*t].output = static_cast<int64_t>(i);
  }
  return graph;
}

std::optional<unsigned> KernelGraph::tensorFor(Value value) const {
  auto it = tensorOf.find(viewRoot(value));
  if (it == tensorOf.end())
    return std::nullopt;
  return it->second;
}

SmallVector<unsigned, 2> KernelGraph::producers(unsigned k) const {
  SmallVector<unsigned, 2> result;
  for (unsigned t : inputs[k])
    result.push_back(tensors[t].kernel);
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

StreamClocks::StreamClocks(ArrayRef<int64_t> streams)
    : streams(streams.begin(), streams.end()) {
  int64_t count = 1;
  for (int64_t s : streams)
    count = std::max(count, s + 1);
  clocks.assign(streams.size(), SmallVector<int64_t, 4>(count, -1));
  lastOnStream.assign(count, -1);
}

void StreamClocks::begin(int64_t pos) {
  int64_t s = streams[pos];
  if (int64_t last = lastOnStream[s]; last >= 0) {
    clocks[pos] = clocks[last];
    clocks[pos][s] = last;
  }
  lastOnStream[s] = pos;
}

bool StreamClocks::ordered(int64_t before, int64_t pos) const {
  if (before >= pos)
    return false;
  int64_t s = streams[before];
  return s == streams[pos] || clocks[pos][s] >= before;
}

void StreamClocks::wait(int64_t before, int64_t pos) {
  SmallVector<int64_t, 4> &clock = clocks[pos];
  for (auto [mine, theirs] : llvm::zip(clock, clocks[before]))
    mine = std::max(mine, theirs);
  int64_t s = streams[before];
  clock[s] = std::max(clock[s], before);
}
