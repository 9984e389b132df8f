//===- FuseEpilogues.cpp - GEMM/convolution plus their epilogues ----------===//
//
// Each matmul and convolution becomes a `gemm`/`conv` kernel together with
// the chain of elementwise ops that reads its result element for element:
// bias add (with the bias broadcast read in place), activation, residual
// add. A GEMM's chain also passes a reshape that keeps the rows (the same
// last dim: GPT-2's Conv1D views its addmm's [tokens, n] as [batch, seq, n]
// before the GELU) when elementwise ops follow it. The chain stops at the
// first op that is not such a reader, at a result with several readers, at a
// dtype convert (the library writes its own dtype) or where absorbing the op
// would create a cycle.
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
/// epilogue so it reads the small tensor directly. (Views of a splat are
/// copied in by outlineGroup instead: as members they would come before the
/// anchor, the op the backends find first.)
void absorbOperandViews(Operation *user, Operation *anchor,
                        llvm::SetVector<Operation *> &group,
                        const Positions &positions) {
  for (Value operand : user->getOperands()) {
    Operation *def = operand.getDefiningOp();
    while (def && def != anchor && !group.contains(def) && !isSplatValue(def) &&
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

/// A reshape of a GEMM's result that keeps its rows: the last dim is the
/// same (static), so a finished tile's rows x columns are rows x columns of
/// the reshaped value too, element for element. Rank 2 at least: a tiled
/// epilogue iterates rows and columns (a [1, n] output viewed as [n] is
/// left to a kernel of its own).
bool keepsRows(ReshapeOp reshape) {
  auto from = cast<RankedTensorType>(reshape.getOperand().getType());
  auto to = cast<RankedTensorType>(reshape.getType());
  return from.getRank() >= 2 && to.getRank() >= 2 && !from.isDynamicDim(from.getRank() - 1) &&
         from.getShape().back() == to.getShape().back();
}

/// At most this many ops between two convergence points of an epilogue.
constexpr size_t kMaxTrialOps = 64;

/// `current` and the results of `trial` that are read outside `trial`.
SmallVector<Value> openValues(Value current, const llvm::SetVector<Operation *> &trial) {
  SmallVector<Value> open;
  auto readOutside = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *u) { return !trial.contains(u); });
  };
  if (readOutside(current))
    open.push_back(current);
  for (Operation *op : trial)
    for (Value r : op->getResults())
      if (readOutside(r))
        open.push_back(r);
  return open;
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
      // Grow from `current` one reader at a time, in block order, and take
      // the ops in whenever their values converge again on one value read
      // outside them: a chain (bias, activation, residual) converges at
      // every op, an activation computed from several reads of its input
      // (GPT-2's tanh GELU: x * 0.5, x * x * x, x + ...) at its last op. A
      // reshape that keeps the rows may pass at a convergence point; it is
      // taken in only with the elementwise ops after it (alone it would
      // cost the epilogue a pass copying the output onto itself).
      llvm::SetVector<Operation *> trial;
      Type trialType = current.getType();
      SmallVector<Value> open = openValues(current, trial);
      while (trial.size() < kMaxTrialOps) {
        Operation *next = nullptr;
        for (Value v : open)
          for (Operation *user : v.getUsers())
            if (!trial.contains(user) &&
                (!next || positions.of(user) < positions.of(next)))
              next = user;
        if (!next || next->getBlock() != &block)
          break;
        if (auto reshape = dyn_cast<ReshapeOp>(next)) {
          if (!isa<MatmulOp>(anchor) || open.size() != 1 ||
              trialType != current.getType() || !keepsRows(reshape))
            break;
          trialType = reshape.getType();
        } else if (!isElementwise(next) || next->getNumResults() != 1 ||
                   next->getResult(0).getType() != trialType ||
                   cast<RankedTensorType>(trialType).getElementType() != libraryElement) {
          break;
        }
        trial.insert(next);
        open = openValues(current, trial);
        // (Converging on a reshape's result would take the reshape in alone,
        // with only dead readers of it: the next live reader decides.)
        if (open.size() != 1 || !trial.contains(open[0].getDefiningOp()) ||
            isa<ReshapeOp>(open[0].getDefiningOp()))
          continue;
        // Converged: take the trial in, unless that makes a cycle.
        SmallVector<Operation *> taken(trial.begin(), trial.end());
        sortByPosition(taken, positions);
        size_t before = group.size();
        bool cycle = false;
        for (Operation *op : taken) {
          if (positions.wouldCreateCycle(group, op)) {
            cycle = true;
            break;
          }
          group.insert(op);
        }
        if (cycle) {
          while (group.size() > before)
            group.pop_back();
          break;
        }
        for (Operation *op : taken)
          absorbOperandViews(op, anchor, group, positions);
        current = open[0];
        trial.clear();
        open = openValues(current, trial);
      }
      SmallVector<Operation *> ops(group.begin(), group.end());
      sortByPosition(ops, positions);
      outlineGroup(ops, isa<MatmulOp>(anchor) ? FusionKind::Gemm : FusionKind::Conv);
      sortBlock(block);
    }
  }
};

} // namespace
