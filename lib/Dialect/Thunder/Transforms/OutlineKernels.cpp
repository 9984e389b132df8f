//===- OutlineKernels.cpp - One kernel for every op left -------------------===//
//
// The last fusion step, and alone the unfused pipeline: every op outside a
// kernel, other than constants and reshapes (views), gets a single-op
// `thunder.fusion` whose kind tells the backend which kernel template
// applies.
//
//===----------------------------------------------------------------------===//
#include "FusionRules.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDEROUTLINEKERNELS
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::fusion;

namespace {

FusionKind kindOf(Operation *op) {
  if (isa<MatmulOp>(op))
    return FusionKind::Gemm;
  if (isa<ConvolutionOp>(op))
    return FusionKind::Conv;
  if (isa<ScaledDotProductAttentionOp>(op))
    return FusionKind::Attention;
  if (isPointwise(op))
    return FusionKind::Pointwise;
  if (isReduction(op) && rowShapeOf(op))
    return FusionKind::Reduction;
  if (isa<ConcatOp, PadOp, GatherOp, IndexSelectOp, EmbeddingOp, IotaOp>(op))
    return FusionKind::DataMovement;
  return FusionKind::Library;
}

struct ThunderOutlineKernels
    : mlir::thunder::impl::ThunderOutlineKernelsBase<ThunderOutlineKernels> {
  using Base::Base;

  void runOnOperation() override {
    if (unfused)
      getOperation()->setAttr("thunder.unfused", UnitAttr::get(&getContext()));
    Block &block = getOperation().getBody().front();
    for (Operation *op : unfusedOps(block, [](Operation *op) {
           return isa_and_nonnull<ThunderDialect>(op->getDialect()) &&
                  !isa<ConstantOp, ReshapeOp>(op);
         })) {
      FusionKind kind = kindOf(op);
      outlineGroup({op}, kind,
                   /*cloneSplats=*/kind == FusionKind::Pointwise ||
                       kind == FusionKind::Reduction);
    }
  }
};

} // namespace
