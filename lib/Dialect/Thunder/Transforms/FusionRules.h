//===- FusionRules.h - What may be fused, and why not (private) -*- C++ -*-===//
//
// The rules every fusion pass applies, in one place, so that the passes and
// the fusion report (--report=fusion) agree: which ops are pointwise, which
// producers are cheap enough to recompute, when a reduction fits another's
// rows, and the reason two kernels stayed apart. Also the one routine that
// turns a group of ops into a `thunder.fusion`.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_FUSIONRULES_H
#define THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_FUSIONRULES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace mlir::thunder::fusion {

/// Elementwise ops (including convert and where).
bool isElementwise(Operation *op);
/// Ops a pointwise kernel computes per output element: elementwise ops,
/// broadcasts and views (reshape, transpose, slice).
bool isPointwise(Operation *op);
/// Sum, mean, max, min, prod.
bool isReduction(Operation *op);
/// An op that is never fused into a pointwise loop and becomes a kernel (or
/// a view) of its own.
bool isLibraryOp(Operation *op);

/// Whether recomputing `op` in every kernel (or for every element of a
/// broadcast of its result) that needs it costs less than a round trip
/// through memory: views, converts, splat constants and single arithmetic
/// ops without transcendental math.
bool isCheapToDuplicate(Operation *op);

/// Whether a kernel may take a private copy of `op` (read elsewhere too): it
/// is cheap (isCheapToDuplicate) and reads at most one tensor besides splat
/// values (isSplatValue: at a dynamic batch `x * 0.5` reads a broadcast of
/// the scalar, copied as the static case's splat is). A copied binary op
/// would make the kernel read both operands, and copies of copies would pull
/// whole chains into every kernel that ends one (a residual stream, added to
/// in every block, would be recomputed from its start in each, and every
/// block's output kept alive to the end).
bool isDuplicable(Operation *op);

/// A splat `thunder.constant`: fusion regions carry their own copy.
bool isSplatConstant(Operation *op);

/// A splat constant or a view of one (broadcast, expand, reshape): the same
/// value at every index. A scalar broadcast to a dynamic shape stays such a
/// view (a splat constant needs a static shape): fusion regions carry their
/// own copy of the whole chain, as of a splat.
bool isSplatValue(Operation *op);

/// The row structure of a reduction over trailing dims: `outer` dims are
/// kept, the trailing `inner` dims are reduced. std::nullopt when the
/// reduced dims are not the trailing ones.
struct RowShape {
  SmallVector<int64_t> outer, inner;
  bool operator==(const RowShape &other) const {
    return outer == other.outer && inner == other.inner;
  }
};
std::optional<RowShape> rowShapeOf(Operation *reduction);

/// Whether `type` is a per-row value of `rows`: the outer shape, possibly
/// with size-1 dims for the reduced ones (keepdim).
bool isRowValue(RankedTensorType type, const RowShape &rows);
/// Whether `type` is the full row shape (outer ++ inner).
bool isFullValue(RankedTensorType type, const RowShape &rows);

/// Schedule positions of a block's ops, for cycle checks while grouping.
class Positions {
public:
  explicit Positions(Block &block);
  int64_t of(Operation *op) const { return index.lookup(op); }

  /// Whether adding `candidate` to `group` would create a cycle: some user of
  /// a group member or of `candidate` outside both leads back into them.
  bool wouldCreateCycle(const llvm::SetVector<Operation *> &group,
                        Operation *candidate) const;

private:
  llvm::DenseMap<Operation *, int64_t> index;
};

/// Wraps `ops` (top-level ops of one block, in block order) into one
/// `thunder.fusion` of `kind`, placed at the last op; values used outside
/// become its results. The block is re-sorted topologically afterwards, so
/// the group must be acyclic with respect to the rest
/// (Positions::wouldCreateCycle). Splat values the group reads (isSplatValue:
/// splat constants and their views) are cloned inside, the constants first
/// and each view just before its reader, unless `cloneSplats` is false
/// (library kernels read every operand from memory); a library op's own
/// operands are never cloned.
FusionOp outlineGroup(ArrayRef<Operation *> ops, FusionKind kind,
                      bool cloneSplats = true);

/// The top-level ops of `block` that are not yet in a kernel and satisfy
/// `pred`, in block order.
SmallVector<Operation *> unfusedOps(Block &block,
                                    llvm::function_ref<bool(Operation *)> pred);

/// Sorts `ops` by position in their block.
void sortByPosition(SmallVectorImpl<Operation *> &ops, const Positions &positions);

/// A kernel name: kind, the first op mnemonics and a counter.
std::string kernelName(FusionKind kind, ArrayRef<Operation *> ops,
                       unsigned counter);

/// Sorts `block`'s ops topologically (after outlining).
void sortBlock(Block &block);

/// Why `consumer` reads `value` (a result of `producer`) from memory instead
/// of computing it in the same kernel. One line, for the fusion report.
std::string explainBoundary(FusionOp producer, FusionOp consumer, Value value);

} // namespace mlir::thunder::fusion

#endif // THUNDER_LIB_DIALECT_THUNDER_TRANSFORMS_FUSIONRULES_H
