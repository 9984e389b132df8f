//===- FuseEpilogues.cpp - GEMM/convolution plus their epilogues ----------===//
//
// Each matmul and convolution becomes a `gemm`/`conv` kernel together with
// the chain of elementwise ops that reads its result element for element:
// bias add (with the bias broadcast read in place), activation, residual
// add. The chain stops at the first op that is not such a reader, at a
// result with several readers, at a dtype convert (the library writes its
// own dtype) or where absorbing the op would create a cycle.
//
//===----------------------------------------------------------------------===//
#include "FusionRules.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFUSEEPILOGUES
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::fusion;

namespace {

/// Views of a broadcast operand (bias) read only by `user`: they join the
/// epilogue so it reads the small tensor directly.
void absorbOperandViews(Operation *user, Operation *anchor,
                        llvm::SetVector<Operation *> &group,
                        const Positions &positions) {
  for (Value operand : user->getOperands()) {
    Operation *def = operand.getDefiningOp();
    while (def && def != anchor && !group.contains(def) &&
           isa<BroadcastOp, ExpandOp, ReshapeOp>(def) &&
           llvm::all_of(def->getUsers(),
                        [&](Operation *u) { return group.contains(u) || u == user; }) &&
           !positions.wouldCreateCycle(group, def)) {
      group.insert(def);
      user = def;
      def = def->getOperand(0).getDefiningOp();
    }
  }
}

struct ThunderFuseEpilogues
    : mlir::thunder::impl::ThunderFuseEpiloguesBase<ThunderFuseEpilogues> {
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    for (Operation *anchor : unfusedOps(block, [](Operation *op) {
           return isa<MatmulOp, ConvolutionOp>(op);
         })) {
      Positions positions(block);
      llvm::SetVector<Operation *> group;
      group.insert(anchor);
      Value current = anchor->getResult(0);
      Type libraryElement = cast<RankedTensorType>(current.getType()).getElementType();
      while (true) {
        SmallPtrSet<Operation *, 2> users(current.getUsers().begin(),
                                          current.getUsers().end());
        if (users.size() != 1)
          break;
        Operation *user = *users.begin();
        if (user->getBlock() != &block || !isElementwise(user) ||
            user->getNumResults() != 1 ||
            user->getResult(0).getType() != current.getType() ||
            cast<RankedTensorType>(user->getResult(0).getType()).getElementType() !=
                libraryElement)
          break;
        if (positions.wouldCreateCycle(group, user))
          break;
        absorbOperandViews(user, anchor, group, positions);
        group.insert(user);
        current = user->getResult(0);
      }
      SmallVector<Operation *> ops(group.begin(), group.end());
      sortByPosition(ops, positions);
      outlineGroup(ops, isa<MatmulOp>(anchor) ? FusionKind::Gemm : FusionKind::Conv);
      sortBlock(block);
    }
  }
};

} // namespace
