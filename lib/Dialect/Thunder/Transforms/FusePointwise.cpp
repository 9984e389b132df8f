//===- FusePointwise.cpp - Pointwise chains into one loop ------------------===//
//
// Walks the remaining pointwise ops from the last to the first: each op not
// yet in a kernel starts one whose loop runs over its result's shape, and
// the kernel grows through its producers. A producer read only by the
// kernel joins it, unless a broadcast would make the kernel recompute an
// expensive producer for many elements. A producer read elsewhere too is
// duplicated into the kernel when it is cheap and reads one tensor (FusionRules'
// isDuplicable), becomes an extra result when it has the loop's
// shape, and otherwise stays in a kernel of its own. A lone view is left a
// view.
//
//===----------------------------------------------------------------------===//
#include "FusionRules.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFUSEPOINTWISE
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::fusion;

namespace {

int64_t numel(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.hasStaticShape() ? type.getNumElements() : -1;
}

struct ThunderFusePointwise
    : mlir::thunder::impl::ThunderFusePointwiseBase<ThunderFusePointwise> {
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    SmallVector<Operation *> candidates = unfusedOps(block, isPointwise);
    llvm::SmallPtrSet<Operation *, 32> taken;
    for (Operation *root : llvm::reverse(candidates)) {
      if (taken.contains(root) || isa<ReshapeOp>(root))
        continue;
      Positions positions(block);
      Value loop = root->getResult(0);
      auto loopType = cast<RankedTensorType>(loop.getType());
      llvm::SetVector<Operation *> group;
      group.insert(root);
      for (unsigned i = 0; i < group.size(); ++i) {
        Operation *member = group[i];
        for (OpOperand &use : member->getOpOperands()) {
          Operation *def = use.get().getDefiningOp();
          if (!def || def->getBlock() != &block || group.contains(def) ||
              taken.contains(def) || !isPointwise(def) || isa<ConstantOp>(def))
            continue;
          Value produced = def->getResult(0);
          bool sameSize = numel(produced) == numel(loop) &&
                          (numel(loop) >= 0 || produced.getType() == loopType);
          bool onlyHere = llvm::all_of(def->getUsers(), [&](Operation *u) {
            return group.contains(u);
          });
          bool cheap = isCheapToDuplicate(def);
          bool duplicable = isDuplicable(def);
          if (!sameSize && !cheap)
            continue; // recomputed per element of a broadcast: not worth it
          if (onlyHere) {
            if (!positions.wouldCreateCycle(group, def))
              group.insert(def);
          } else if (duplicable) {
            // A private copy for this kernel; the original keeps its readers.
            OpBuilder builder(def);
            builder.setInsertionPointAfter(def);
            Operation *copy = builder.clone(*def);
            use.set(copy->getResult(0));
            group.insert(copy);
          } else if (produced.getType() == loopType &&
                     !positions.wouldCreateCycle(group, def)) {
            group.insert(def); // an extra result of the same shape
          }
        }
      }
      if (llvm::all_of(group, [](Operation *op) { return isa<ReshapeOp>(op); }))
        continue;
      for (Operation *op : group)
        taken.insert(op);
      // Clones are not in `positions`: place them just before their user.
      Positions fresh(block);
      SmallVector<Operation *> ops(group.begin(), group.end());
      sortByPosition(ops, fresh);
      outlineGroup(ops, FusionKind::Pointwise);
      sortBlock(block);
    }
  }
};

} // namespace
