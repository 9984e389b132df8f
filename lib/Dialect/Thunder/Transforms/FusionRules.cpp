//===- FusionRules.cpp - What may be fused, and why not -------------------===//
#include "FusionRules.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::thunder;

namespace mlir::thunder::fusion {

bool isElementwise(Operation *op) {
  return isa_and_nonnull<ThunderDialect>(op->getDialect()) &&
         op->hasTrait<OpTrait::Elementwise>();
}

bool isPointwise(Operation *op) {
  return isElementwise(op) ||
         isa<BroadcastOp, ExpandOp, ReshapeOp, TransposeOp, SliceOp>(op);
}

bool isReduction(Operation *op) { return isa<ReductionOpInterface>(op); }

bool isLibraryOp(Operation *op) {
  return isa_and_nonnull<ThunderDialect>(op->getDialect()) &&
         !isPointwise(op) && !isReduction(op) &&
         !isa<ConstantOp, FusionOp, YieldOp>(op);
}

bool isSplatConstant(Operation *op) {
  auto constant = dyn_cast_or_null<ConstantOp>(op);
  return constant && isa<SplatElementsAttr>(constant.getValue());
}

namespace {
/// The ops from a splat constant to `op`, the constant first, when `op` is a
/// splat value (isSplatValue); else empty.
SmallVector<Operation *> splatChain(Operation *op) {
  SmallVector<Operation *> chain;
  while (isa_and_nonnull<BroadcastOp, ExpandOp, ReshapeOp>(op) && op->getNumOperands() == 1) {
    chain.push_back(op);
    op = op->getOperand(0).getDefiningOp();
  }
  if (!isSplatConstant(op))
    return {};
  chain.push_back(op);
  std::reverse(chain.begin(), chain.end());
  return chain;
}
} // namespace

bool isSplatValue(Operation *op) { return !splatChain(op).empty(); }

bool isCheapToDuplicate(Operation *op) {
  return isSplatConstant(op) ||
         isa<BroadcastOp, ExpandOp, ReshapeOp, TransposeOp, SliceOp, ConvertOp,
             AddOp, SubOp, MulOp, NegOp, AbsOp, MaximumOp, MinimumOp, ReluOp,
             ClampOp, CompareOp, WhereOp, LogicalAndOp, LogicalOrOp,
             LogicalNotOp, LogicalXorOp>(op);
}

bool isDuplicable(Operation *op) {
  if (!isCheapToDuplicate(op))
    return false;
  unsigned tensors = 0;
  for (Value operand : op->getOperands())
    tensors += !isSplatValue(operand.getDefiningOp());
  return tensors <= 1;
}

std::optional<RowShape> rowShapeOf(Operation *reduction) {
  auto r = dyn_cast<ReductionOpInterface>(reduction);
  if (!r || r.getDims().empty() || !r.reducesTrailingDims())
    return std::nullopt;
  auto type = cast<RankedTensorType>(r.getInput().getType());
  RowShape rows;
  int64_t split = type.getRank() - static_cast<int64_t>(r.getDims().size());
  rows.outer.assign(type.getShape().begin(), type.getShape().begin() + split);
  rows.inner.assign(type.getShape().begin() + split, type.getShape().end());
  return rows;
}

bool isRowValue(RankedTensorType type, const RowShape &rows) {
  ArrayRef<int64_t> shape = type.getShape();
  if (shape == ArrayRef<int64_t>(rows.outer))
    return true;
  if (shape.size() != rows.outer.size() + rows.inner.size() ||
      shape.take_front(rows.outer.size()) != ArrayRef<int64_t>(rows.outer))
    return false;
  return llvm::all_of(shape.drop_front(rows.outer.size()),
                      [](int64_t d) { return d == 1; });
}

bool isFullValue(RankedTensorType type, const RowShape &rows) {
  ArrayRef<int64_t> shape = type.getShape();
  return shape.size() == rows.outer.size() + rows.inner.size() &&
         shape.take_front(rows.outer.size()) == ArrayRef<int64_t>(rows.outer) &&
         shape.drop_front(rows.outer.size()) == ArrayRef<int64_t>(rows.inner);
}

Positions::Positions(Block &block) {
  int64_t i = 0;
  for (Operation &op : block)
    index[&op] = i++;
}

bool Positions::wouldCreateCycle(const llvm::SetVector<Operation *> &group,
                                 Operation *candidate) const {
  llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
  members.insert(candidate);
  int64_t last = 0;
  for (Operation *op : members)
    last = std::max(last, of(op));
  // Walk forward from every user outside the group; reaching a member means
  // a path leaves the group and comes back.
  SmallVector<Operation *> stack;
  llvm::SmallPtrSet<Operation *, 32> seen;
  for (Operation *op : members)
    for (Operation *user : op->getUsers())
      if (!members.contains(user) && of(user) < last && seen.insert(user).second)
        stack.push_back(user);
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    for (Operation *user : op->getUsers()) {
      if (members.contains(user))
        return true;
      if (of(user) < last && seen.insert(user).second)
        stack.push_back(user);
    }
  }
  return false;
}

std::string kernelName(FusionKind kind, ArrayRef<Operation *> ops,
                       unsigned counter) {
  std::string name = stringifyFusionKind(kind).str();
  unsigned shown = 0;
  for (Operation *op : ops) {
    if (isSplatConstant(op) || isa<BroadcastOp, ExpandOp, ReshapeOp>(op))
      continue;
    if (shown++ == 3) {
      name += "_etc";
      break;
    }
    name += "_" + op->getName().stripDialect().str();
  }
  return name + "_" + std::to_string(counter);
}

SmallVector<Operation *> unfusedOps(Block &block,
                                    llvm::function_ref<bool(Operation *)> pred) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    if (!isa<FusionOp>(op) && pred(&op))
      ops.push_back(&op);
  return ops;
}

void sortByPosition(SmallVectorImpl<Operation *> &ops, const Positions &positions) {
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return positions.of(a) < positions.of(b);
  });
}

FusionOp outlineGroup(ArrayRef<Operation *> ops, FusionKind kind,
                      bool cloneSplats) {
  assert(!ops.empty() && "an empty group");
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> splats;
  SmallVector<Value> results;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && members.contains(def))
        continue;
      // A library call (GEMM, convolution) reads its operands from memory: a
      // splat it takes stays outside, where the backend gives it a buffer.
      // Views of a splat come along with it, the constant first (a dynamic
      // shape's scalar broadcast, shared by every layer that multiplies by
      // the scalar, was else a tensor of its own written once and read by
      // each of them).
      SmallVector<Operation *> chain;
      if (cloneSplats && !isa<MatmulOp, ConvolutionOp>(op))
        chain = splatChain(def);
      if (!chain.empty())
        splats.insert(chain.begin(), chain.end());
      else
        inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *u) { return !members.contains(u); }))
        results.push_back(result);
  }

  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  Operation *last = ops.back();
  OpBuilder builder(last);
  // Numbered per function, so names are stable from one compile to the next.
  unsigned counter = 0;
  if (auto func = last->getParentOfType<func::FuncOp>())
    func.walk([&](FusionOp) { ++counter; });
  auto fusion = builder.create<FusionOp>(
      FusedLoc::get(last->getContext(), locs),
      TypeRange(ValueRange(results)), kind, kernelName(kind, ops, counter),
      inputs.getArrayRef());
  Block &body = fusion.getBody().front();
  IRMapping mapping;
  for (auto [input, arg] : llvm::zip(inputs, body.getArguments()))
    mapping.map(input, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  // Splat constants first; their views just before the op that reads them,
  // so that the kernel's first op that is not a constant is still its anchor
  // (a GEMM's matmul: the emitters look for it there).
  for (Operation *splat : splats)
    if (isa<ConstantOp>(splat))
      inner.clone(*splat, mapping);
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      // The operand's views not yet in the region, the outermost first.
      SmallVector<Operation *> views;
      for (Operation *def = operand.getDefiningOp();
           def && splats.contains(def) && !mapping.contains(def->getResult(0));
           def = def->getOperand(0).getDefiningOp())
        views.push_back(def);
      for (Operation *view : llvm::reverse(views))
        inner.clone(*view, mapping);
    }
    inner.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value r : results)
    yielded.push_back(mapping.lookup(r));
  inner.create<YieldOp>(fusion.getLoc(), yielded);

  for (auto [r, replacement] : llvm::zip(results, fusion.getResults()))
    r.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !members.contains(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  for (Operation *splat : llvm::reverse(splats)) // views before their constant
    if (splat->use_empty())
      splat->erase();
  return fusion;
}

void sortBlock(Block &block) {
  bool sorted = sortTopologically(&block, block.without_terminator());
  assert(sorted && "fusion created a cycle");
  (void)sorted;
}

//===----------------------------------------------------------------------===//
// Explaining boundaries
//===----------------------------------------------------------------------===//

namespace {

/// The op inside `fusion` that computes result `index`.
Operation *producerInside(FusionOp fusion, Value result) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  unsigned index = cast<OpResult>(result).getResultNumber();
  return yield.getValues()[index].getDefiningOp();
}

/// The ops inside `fusion` that read input `value`.
SmallVector<Operation *> readersInside(FusionOp fusion, Value value) {
  SmallVector<Operation *> readers;
  for (auto [input, arg] :
       llvm::zip(fusion.getInputs(), fusion.getBody().front().getArguments())) {
    // The kernel may read the value through views.
    Value source = input;
    while (auto reshape = dyn_cast_or_null<ReshapeOp>(source.getDefiningOp()))
      source = reshape.getOperand();
    if (source == value)
      for (Operation *user : arg.getUsers())
        readers.push_back(user);
  }
  return readers;
}

std::string opName(Operation *op) {
  return op ? op->getName().getStringRef().str() : std::string("a block argument");
}

std::string shapeString(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return "?";
  SmallVector<std::string> dims;
  for (int64_t d : ranked.getShape())
    dims.push_back(ShapedType::isDynamic(d) ? "?" : std::to_string(d));
  return dims.empty() ? "scalar" : llvm::join(dims, "x");
}

bool isLibraryKind(FusionKind kind) {
  return kind == FusionKind::Attention || kind == FusionKind::DataMovement ||
         kind == FusionKind::Library;
}

} // namespace

std::string explainBoundary(FusionOp producer, FusionOp consumer, Value value) {
  FusionKind from = producer.getKind(), to = consumer.getKind();
  Operation *def = producerInside(producer, value);
  SmallVector<Operation *> readers = readersInside(consumer, value);
  Operation *reader = readers.empty() ? nullptr : readers.front();
  llvm::SmallPtrSet<Operation *, 4> kernels;
  SmallVector<Value> worklist{value};
  while (!worklist.empty())
    for (Operation *user : worklist.pop_back_val().getUsers()) {
      if (auto reshape = dyn_cast<ReshapeOp>(user))
        worklist.push_back(reshape.getResult());
      else
        kernels.insert(user);
    }
  unsigned numKernels = kernels.size();

  if (consumer->getParentOfType<func::FuncOp>()->hasAttr("thunder.unfused"))
    return "fusion is off (--fusion=false): one kernel per op";
  if ((to == FusionKind::Gemm || to == FusionKind::Conv) && reader &&
      isPointwise(reader))
    return llvm::formatv("the epilogue reads it as another operand of {0}; "
                         "only views of such operands (a bias broadcast) join "
                         "an epilogue, not the kernels computing them",
                         opName(reader))
        .str();
  if (to == FusionKind::Gemm || to == FusionKind::Conv || isLibraryKind(to))
    return llvm::formatv("{0} reads its operands from memory (a library call "
                         "or a kernel of its own: no prologue fusion)",
                         opName(reader))
        .str();
  if (isLibraryKind(from))
    return llvm::formatv("{0} is a kernel of its own; nothing is fused into "
                         "its output",
                         opName(def))
        .str();
  if (from == FusionKind::Gemm || from == FusionKind::Conv) {
    if (numKernels > 1)
      return llvm::formatv("the {0} result is read by {1} kernels; an "
                           "epilogue must be its only reader",
                           opName(def), numKernels)
          .str();
    if (to == FusionKind::Reduction)
      return "a reduction is not a GEMM/convolution epilogue (the row "
             "reduction needs the whole output row)";
    if (reader && !isElementwise(reader))
      return llvm::formatv("{0} reads the {1} result through a view, not "
                           "element for element as an epilogue must",
                           opName(reader), opName(def))
          .str();
    if (reader && isa<ConvertOp>(reader))
      return "a dtype convert after the library call needs its result in "
             "memory first; it runs in the next kernel";
    return llvm::formatv("{0} does not have the output's shape ({1}) or "
                         "reads another tensor that depends on the library "
                         "call",
                         opName(reader), shapeString(value.getType()))
        .str();
  }
  if (numKernels > 1 && def && isCheapToDuplicate(def) && !isDuplicable(def))
    return llvm::formatv("the value feeds {0} kernels and {1} reads two "
                         "tensors: a copy in each kernel would keep both "
                         "alive, and copies of copies would recompute whole "
                         "chains",
                         numKernels, opName(def))
        .str();
  if (numKernels > 1 && def && !isCheapToDuplicate(def))
    return llvm::formatv("the value feeds {0} kernels and recomputing {1} in "
                         "each costs more than reading it back",
                         numKernels, opName(def))
        .str();
  if (from == FusionKind::Reduction && to == FusionKind::Reduction)
    return llvm::formatv("the two kernels reduce different rows (or the "
                         "consumer reads the value at shape {0}, not per row)",
                         shapeString(value.getType()))
        .str();
  if (to == FusionKind::Reduction && numKernels > 1)
    return llvm::formatv("the value feeds {0} kernels; a row kernel takes in "
                         "only producers that it alone reads (it recomputes "
                         "them in every pass over the row)",
                         numKernels)
        .str();
  if (to == FusionKind::Reduction)
    return llvm::formatv("{0} produces shape {1}, which is neither the "
                         "reduction's full rows nor a per-row value",
                         opName(def), shapeString(value.getType()))
        .str();
  if (from == FusionKind::Reduction && reader && isPointwise(reader) &&
      !isElementwise(reader))
    return llvm::formatv("{0} is a view that does not keep each element in "
                         "the reduction's row (it reads {1}): the row "
                         "kernel's per-row values hold for one row at a time",
                         opName(reader), shapeString(value.getType()))
        .str();
  if (from == FusionKind::Reduction)
    return llvm::formatv("{0} iterates over a shape that is not the "
                         "reduction's rows (it reads {1})",
                         opName(reader), shapeString(value.getType()))
        .str();
  // Pointwise to pointwise.
  Type producedAt = value.getType();
  Type consumedAt =
      consumer.getNumResults() ? consumer.getResult(0).getType() : producedAt;
  if (cast<RankedTensorType>(producedAt).getShape() !=
          cast<RankedTensorType>(consumedAt).getShape() &&
      def && !isCheapToDuplicate(def))
    return llvm::formatv("{0} would be recomputed for every element of a "
                         "larger loop ({1} -> {2}); it is not cheap enough",
                         opName(def), shapeString(producedAt),
                         shapeString(consumedAt))
        .str();
  return "fusing them would create a cycle through another kernel, or a "
         "result would be needed at two iteration shapes";
}

} // namespace mlir::thunder::fusion
