//===- FuseReductions.cpp - Row-wise reduction kernels ---------------------===//
//
// A generic rule, with no op names matched: starting from a reduction over
// trailing dims (its "rows": outer dims kept, inner dims reduced), the
// kernel grows through producers and consumers whose results are either
// full rows (outer ++ inner) or per-row values (outer, or keepdim), and
// through other reductions over the same rows. softmax (max, exp, sum,
// div), layer_norm (mean, variance, normalize, scale and shift) and
// rms_norm each become one kernel this way. A producer joins only when the
// kernel is its only reader (a row kernel recomputes in-kernel values once
// per pass over the row, so shared values are read from memory instead).
//
//===----------------------------------------------------------------------===//
#include "FusionRules.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFUSEREDUCTIONS
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::fusion;

namespace {

/// Whether `op` may join a row kernel over `rows`.
bool fitsRows(Operation *op, const RowShape &rows) {
  if (isa<FusionOp, ConstantOp>(op) || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return false;
  if (isReduction(op)) {
    std::optional<RowShape> other = rowShapeOf(op);
    return other && *other == rows;
  }
  return isPointwise(op) && (isFullValue(type, rows) || isRowValue(type, rows));
}

/// Whether the layout op `op` (a view: transpose, broadcast, expand, reshape,
/// slice) keeps each element in its row: result element (o, j) reads operand
/// elements of row o only. A row kernel computes per-row values (a mean, a
/// max) for the row it is in; a view that moves elements across rows would
/// read them at another row's statistics. Shapes alone do not tell: a
/// [N, H, W, C] -> [N, C, H, W] transpose with H = W = C has the rows' shape
/// on both sides.
bool keepsRows(Operation *op, const RowShape &rows) {
  int64_t outer = static_cast<int64_t>(rows.outer.size());
  auto outerPrefix = [&](Type type) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    return static_cast<int64_t>(shape.size()) >= outer &&
           shape.take_front(outer) == ArrayRef<int64_t>(rows.outer);
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<TransposeOp>([&](TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPermutation();
        return llvm::all_of(llvm::seq<int64_t>(0, outer),
                            [&](int64_t d) { return perm[d] == d; });
      })
      .Case<BroadcastOp>([&](BroadcastOp b) {
        ArrayRef<int64_t> dims = b.getBroadcastDims();
        return static_cast<int64_t>(dims.size()) >= outer &&
               llvm::all_of(llvm::seq<int64_t>(0, outer),
                            [&](int64_t d) { return dims[d] == d; });
      })
      .Case<ExpandOp>([&](ExpandOp e) {
        return e.getOperand().getType().getRank() == e.getType().getRank();
      })
      .Case<ReshapeOp>([&](ReshapeOp r) {
        // Row-major: with the same outer dims in front, row o is the same
        // contiguous block on both sides.
        return outerPrefix(r.getOperand().getType()) && outerPrefix(r.getType());
      })
      .Default([](Operation *) { return false; });
}

struct ThunderFuseReductions
    : mlir::thunder::impl::ThunderFuseReductionsBase<ThunderFuseReductions> {
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    // Ops outlined into an earlier kernel are erased: a seed is looked up
    // here before it is dereferenced.
    llvm::SmallPtrSet<Operation *, 32> taken;
    for (Operation *seed : unfusedOps(block, isReduction)) {
      if (taken.contains(seed))
        continue; // already taken into an earlier kernel
      std::optional<RowShape> rows = rowShapeOf(seed);
      if (!rows)
        continue;
      Positions positions(block);
      llvm::SetVector<Operation *> group;
      group.insert(seed);
      // The producers of views that move elements across rows: such a view
      // joins only as a prologue, its operand read from memory, so its
      // producers stay out of the kernel (keepsRows).
      llvm::SmallPtrSet<Operation *, 8> outside;
      auto tryAdd = [&](Operation *op) {
        if (!op || op->getBlock() != &block || group.contains(op) ||
            outside.contains(op) || !fitsRows(op, *rows) ||
            positions.wouldCreateCycle(group, op))
          return false;
        if (isPointwise(op) && !isElementwise(op) && !keepsRows(op, *rows)) {
          for (Value operand : op->getOperands())
            if (group.contains(operand.getDefiningOp()))
              return false;
          for (Value operand : op->getOperands())
            if (Operation *def = operand.getDefiningOp())
              outside.insert(def);
        }
        group.insert(op);
        return true;
      };
      for (bool changed = true; changed;) {
        changed = false;
        for (unsigned i = 0; i < group.size(); ++i) {
          Operation *member = group[i];
          // Producers read only by this kernel.
          for (Value operand : member->getOperands()) {
            Operation *def = operand.getDefiningOp();
            if (def && llvm::all_of(def->getUsers(), [&](Operation *u) {
                  return group.contains(u);
                }))
              changed |= tryAdd(def);
          }
          // Consumers of its results.
          for (Operation *user : member->getUsers())
            changed |= tryAdd(user);
        }
      }
      SmallVector<Operation *> ops(group.begin(), group.end());
      sortByPosition(ops, positions);
      taken.insert(ops.begin(), ops.end());
      outlineGroup(ops, FusionKind::Reduction);
      sortBlock(block);
    }
  }
};

} // namespace
