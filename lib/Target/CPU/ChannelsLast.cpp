//===- ChannelsLast.cpp - Tensors kept channels last between convolutions -===//
//
// oneDNN runs an fp32 convolution in its own layout: channels last (NHWC) on
// AVX-512 machines, and our tensors are channels first (NCHW), so every call
// reordered its input in and its output back (ResNet-18 at batch 1, 2 vCPUs
// of a Zen 4: 39 reorders, 4.9 ms of a 22 ms run; ONEDNN_VERBOSE). A tensor
// that one such convolution writes and that only such convolutions read (as
// their input, or elementwise in the epilogue of one whose output is kept so
// too) stays channels last: the writer writes it so and the readers read it
// so (thunder_cpu_conv_api.h's ConvLayout), and neither reorders it. A 2-D
// fp32 max or average pool between them (ResNet's stem) runs channels last
// too, its output kept so when its input is and every reader of its output
// reads it so. Generated loops read and write such tensors where they can
// do so in order (below); every other kernel (GEMMs, library calls, the
// model's outputs) sees channels first.
//
// Depthwise and pointwise convolutions run on Thunder's own kernels channels
// first, and other grouped ones on oneDNN channels first. Where a chain of
// them can stay channels last (a MobileNet-style network's inverted residual
// blocks), oneDNN runs them so faster on AVX-512: the kernels compiled for
// AVX-512 hand them to oneDNN channels last, the others keep them as they
// were (without AVX-512, oneDNN 2.6 picks a blocked layout and would reorder
// around each). So the analysis runs twice, and a convolution whose
// layout differs between the two gets THUNDER_CONV_LAYOUT(avx512, other).
// Each set is closed on its own, so writers and readers agree in each build.
//
// A generated loop (a pointwise or reduction kernel) reads a tensor kept
// channels last where it reads it only through permute(0, 2, 3, 1): that
// permute's elements in their own order are the NHWC tensor's in memory
// order (FusedBody.h's storageOrder), so the loop reads it in order. A
// ConvNeXt block's channel LayerNorm over its depthwise convolution's output
// then reads it contiguously, where channels first it gathered each
// position's channels H * W apart.
//
// A reduction over the spatial dims alone of a small map (global average
// pooling at a network's end) reads a kept tensor too, gathering each
// channel's positions.
//
// A pointwise kernel's rank-4 output is kept channels last too where each
// tensor it reads is kept, or is an NHWC tensor read only through
// permute(0, 3, 1, 2) as the output's NCHW shape (ConvNeXt's residual
// stream: the block's input plus its MLP's [N, H, W, C] output), or is
// broadcast (a per-channel scale). Its loop then runs over its output in
// memory order, so it reads the first two kinds in order and the third
// where it lies. It reads a kept tensor however its ops read it (FusedBody
// computes the position), in order where elementwise. Such a writer needs
// no convolution beside it, only readers that read channels last.
//
// An epilogue reads its operands at the flat index of the element it writes;
// when every operand has the output's shape (or is a scalar), it computes the
// same thing whatever the order of the elements, as long as they all share
// it. So a kernel's output can be kept channels last when its epilogue is
// elementwise so and every same-shaped operand it reads is kept so too.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::cpu {

namespace {

/// The bits of the runtime's ConvLayout (thunder_cpu_conv_api.h).
constexpr int kInputChannelsLast = 1, kOutputChannelsLast = 2;

/// The kernel's convolution when oneDNN runs it with tensors in either
/// layout: fp32 and 2-D; unless `ownKernels`, also ungrouped and not
/// pointwise (1x1, stride 1, unpadded): those run on Thunder's kernels
/// channels first (thunder_cpu_conv.h's direct_conv::takes) unless a layout
/// says otherwise. Else null.
ConvolutionOp onednnConv(FusionOp fusion, bool ownKernels) {
  if (fusion.getKind() != FusionKind::Conv || fusion.getNumResults() != 1)
    return {};
  ConvolutionOp conv;
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (auto c = dyn_cast<ConvolutionOp>(op)) {
      if (conv)
        return {};
      conv = c;
    }
  if (!conv || (conv.getGroups() != 1 && !ownKernels))
    return {};
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  if (!out.getElementType().isF32() || in.getRank() != 4 ||
      fusion.getResult(0).getType() != out)
    return {};
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  bool pointwise = true;
  for (int s = 0; s < 2; ++s)
    pointwise = pointwise && weight.getDimSize(2 + s) == 1 && conv.getStride()[s] == 1 &&
                conv.getPadding()[2 * s] == 0 && conv.getPadding()[2 * s + 1] == 0;
  return pointwise && !ownKernels ? ConvolutionOp() : conv;
}

/// The kernel's pooling when it can run channels last: a kernel of one fp32
/// 2-D max or average pool over [N, C, H, W] of its input
/// (thunder_cpu_pool.h's pool2d_channels_last). Else null.
Operation *channelsLastPool(FusionOp fusion) {
  if (fusion.getNumResults() != 1 || fusion.getInputs().size() != 1)
    return nullptr;
  Operation *pool = nullptr;
  for (Operation &op : fusion.getBody().front().without_terminator()) {
    if (pool || !isa<MaxPoolOp, AvgPoolOp>(op))
      return nullptr;
    pool = &op;
  }
  if (!pool || !isa<BlockArgument>(pool->getOperand(0)))
    return nullptr;
  auto in = cast<RankedTensorType>(pool->getOperand(0).getType());
  auto out = cast<RankedTensorType>(pool->getResult(0).getType());
  auto window = isa<MaxPoolOp>(pool) ? cast<MaxPoolOp>(pool).getKernel().size()
                                     : cast<AvgPoolOp>(pool).getKernel().size();
  if (!out.getElementType().isF32() || in.getRank() != 4 || window != 2 ||
      fusion.getResult(0).getType() != out)
    return nullptr;
  return pool;
}

/// NCHW to NHWC, and back.
constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1}, kToChannelsFirst[] = {0, 3, 1, 2};

/// `op` as a transpose by `permutation`, else null.
TransposeOp asPermute(Operation *op, ArrayRef<int64_t> permutation) {
  auto transpose = dyn_cast<TransposeOp>(op);
  return transpose && llvm::equal(transpose.getPermutation(), permutation) ? transpose
                                                                           : TransposeOp();
}

/// Whether a generated loop (a pointwise or reduction kernel) reads its
/// block argument `arg`, a rank-4 tensor, only through permute(0, 2, 3, 1).
bool readsThroughChannelsLastPermute(FusionOp fusion, BlockArgument arg) {
  if (fusion.getKind() != FusionKind::Pointwise && fusion.getKind() != FusionKind::Reduction)
    return false;
  auto type = cast<RankedTensorType>(arg.getType());
  if (type.getRank() != 4 || arg.use_empty())
    return false;
  return llvm::all_of(arg.getUsers(),
                      [](Operation *user) { return asPermute(user, kToChannelsLast); });
}

/// Positions of a map (H x W, static) up to which a reduction over them
/// reads it kept channels last: ResNet-18's and ConvNeXt's final 7 x 7.
constexpr int64_t kPooledPositions = 256;

/// Whether a reduction kernel reduces its block argument `arg`, a rank-4
/// tensor, only directly over its spatial dims (2 and 3), of at most
/// kPooledPositions static positions: global pooling at a network's end.
/// Read channels last, each row then gathers its H * W elements C apart,
/// which over such a small map costs less than the reorders that keeping
/// the layers before it channels first takes. (A larger map, a
/// squeeze-and-excitation block's mean in mid-network, stays channels first
/// for it.)
bool poolsSpatially(FusionOp fusion, BlockArgument arg) {
  auto type = cast<RankedTensorType>(arg.getType());
  if (fusion.getKind() != FusionKind::Reduction || type.getRank() != 4 || arg.use_empty() ||
      type.isDynamicDim(2) || type.isDynamicDim(3) ||
      type.getDimSize(2) * type.getDimSize(3) > kPooledPositions)
    return false;
  return llvm::all_of(arg.getUsers(), [](Operation *user) {
    auto r = dyn_cast<ReductionOpInterface>(user);
    return r && !isa<ProdOp>(user) && llvm::equal(r.getDims(), ArrayRef<int64_t>{2, 3});
  });
}

/// Whether the kernel is a pointwise loop of one rank-4 fp32 result, which
/// can write it channels last.
bool pointwiseWriter(FusionOp fusion) {
  if (fusion.getKind() != FusionKind::Pointwise || fusion.getNumResults() != 1)
    return false;
  auto out = cast<RankedTensorType>(fusion.getResult(0).getType());
  return out.getRank() == 4 && out.getElementType().isF32();
}

/// Whether every use of `v` is permute(0, 3, 1, 2) to the shape `shape`,
/// after reshapes (which keep the elements' order): an NHWC tensor (a GEMM's
/// [N * H * W, C] output viewed so) read as the NCHW output's elements.
bool readsAsChannelsFirst(Value v, ArrayRef<int64_t> shape) {
  return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *user) {
    if (auto reshape = dyn_cast<ReshapeOp>(user))
      return readsAsChannelsFirst(reshape.getResult(), shape);
    TransposeOp transpose = asPermute(user, kToChannelsFirst);
    return transpose && cast<RankedTensorType>(transpose.getType()).getShape() == shape;
  });
}

/// Whether a tensor of `type` is broadcast to `shape`: its dims, aligned
/// right, are each 1 or the output's, and it has fewer of them or a 1 where
/// the output has not (a per-channel scale [C, 1, 1], a scalar).
bool broadcastTo(RankedTensorType type, ArrayRef<int64_t> shape) {
  auto dims = type.getShape();
  if (dims.size() > shape.size())
    return false;
  bool smaller = dims.size() < shape.size();
  for (auto [d, o] : llvm::zip(llvm::reverse(dims), llvm::reverse(shape))) {
    if (d != 1 && d != o)
      return false;
    smaller = smaller || (d == 1 && o != 1);
  }
  return smaller;
}

/// Whether every op of the kernel besides its convolution is elementwise
/// over tensors of the output's shape (or scalars), and its constants are
/// splats (a constant tensor's elements are in channels-first order).
bool flatEpilogue(FusionOp fusion, ConvolutionOp conv) {
  auto shape = cast<RankedTensorType>(conv.getType()).getShape();
  auto fits = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && (type.getRank() == 0 || type.getShape() == shape);
  };
  for (Operation &op : fusion.getBody().front().without_terminator()) {
    if (&op == conv.getOperation())
      continue;
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (!isa<SplatElementsAttr>(constant.getValue()))
        return false;
      continue;
    }
    if (!isa_and_nonnull<ThunderDialect>(op.getDialect()) ||
        !op.hasTrait<OpTrait::Elementwise>() || !llvm::all_of(op.getOperands(), fits) ||
        !llvm::all_of(op.getResults(), fits))
      return false;
  }
  return true;
}

/// What stays channels last when oneDNN runs the convolutions onednnConv
/// takes: the layout argument of each convolution and pooling that reads or
/// writes such a tensor, and the tensors.
struct ChannelsLastPlan {
  llvm::DenseMap<Operation *, int> layouts;
  llvm::SetVector<Value> kept;
};

ChannelsLastPlan channelsLastPlan(func::FuncOp func, bool ownKernels) {
  ChannelsLastPlan plan;
  llvm::DenseMap<Operation *, int> &layouts = plan.layouts;
  // Candidates: the outputs of kernels whose convolution oneDNN runs and
  // whose epilogue is flat.
  // Also the outputs of pooling kernels that can run channels last.
  llvm::SetVector<Value> &kept = plan.kept;
  llvm::DenseMap<Operation *, ConvolutionOp> convs; // kernel -> its conv
  llvm::DenseMap<Operation *, Operation *> pools;   // kernel -> its pool
  llvm::DenseSet<Operation *> writers;              // pointwise writers
  for (auto fusion : func.getBody().front().getOps<FusionOp>()) {
    if (ConvolutionOp conv = onednnConv(fusion, ownKernels)) {
      convs[fusion] = conv;
      if (flatEpilogue(fusion, conv))
        kept.insert(fusion.getResult(0));
    } else if (Operation *pool = channelsLastPool(fusion)) {
      pools[fusion] = pool;
      kept.insert(fusion.getResult(0));
    } else if (pointwiseWriter(fusion)) {
      writers.insert(fusion);
      kept.insert(fusion.getResult(0));
    }
  }
  if (convs.empty()) {
    kept.clear();
    return plan;
  }
  // Whether a use of a kept value reads it channels last as it must: as a
  // convolution's input, elementwise in the epilogue of a kernel whose
  // output is kept too, as a pool's input whose output is kept, or in a
  // generated loop through permute(0, 2, 3, 1), or in any way in a
  // pointwise loop whose output is kept.
  auto readsLast = [&](OpOperand &use) {
    auto reader = dyn_cast<FusionOp>(use.getOwner());
    if (!reader)
      return false;
    if (pools.count(reader))
      return kept.contains(reader.getResult(0));
    if (writers.contains(reader) && kept.contains(reader.getResult(0)))
      return true;
    unsigned index = use.getOperandNumber() - reader.getInputs().getBeginOperandIndex();
    BlockArgument arg = reader.getBody().front().getArgument(index);
    if (readsThroughChannelsLastPermute(reader, arg) || poolsSpatially(reader, arg))
      return true;
    auto conv = convs.lookup(reader);
    if (!conv)
      return false;
    for (OpOperand &inner : arg.getUses()) {
      if (inner.getOwner() == conv.getOperation()) {
        // Its input, not its filter or bias (the same tensor may be both).
        if (inner.getOperandNumber() != conv.getInputMutable().getOperandNumber())
          return false;
      } else if (!kept.contains(reader.getResult(0))) {
        return false;
      }
    }
    return true;
  };
  // A kept output also needs every tensor its epilogue reads (not a
  // scalar) kept: they share the order of its elements. A pool's, its input.
  // A pointwise writer's inputs each kept, read as NHWC seen as NCHW, or
  // broadcast.
  auto epilogueReadsKept = [&](Value v) {
    auto kernel = cast<FusionOp>(v.getDefiningOp());
    if (pools.count(kernel))
      return kept.contains(kernel.getInputs()[0]);
    if (writers.contains(kernel)) {
      auto shape = cast<RankedTensorType>(v.getType()).getShape();
      return llvm::all_of(kernel.getBody().front().getArguments(), [&](BlockArgument arg) {
        return arg.use_empty() || kept.contains(kernel.getInputs()[arg.getArgNumber()]) ||
               readsAsChannelsFirst(arg, shape) ||
               broadcastTo(cast<RankedTensorType>(arg.getType()), shape);
      });
    }
    Operation *conv = convs.lookup(kernel).getOperation();
    for (BlockArgument arg : kernel.getBody().front().getArguments()) {
      bool read = llvm::any_of(arg.getUsers(), [&](Operation *user) { return user != conv; });
      if (read && cast<RankedTensorType>(arg.getType()).getRank() > 0 &&
          !kept.contains(kernel.getInputs()[arg.getArgNumber()]))
        return false;
    }
    return true;
  };
  // The largest set closed under both: drop what breaks either, until
  // nothing does.
  for (bool changed = true; changed;) {
    SmallVector<Value> drop;
    for (Value v : kept)
      if (!epilogueReadsKept(v) || !llvm::all_of(v.getUses(), readsLast))
        drop.push_back(v);
    for (Value v : drop)
      kept.remove(v);
    changed = !drop.empty();
  }
  for (auto [kernel, conv] : convs) {
    int layout = 0;
    auto fusion = cast<FusionOp>(kernel);
    if (auto arg = dyn_cast<BlockArgument>(conv.getInput()))
      if (kept.contains(fusion.getInputs()[arg.getArgNumber()]))
        layout |= kInputChannelsLast;
    if (kept.contains(fusion.getResult(0)))
      layout |= kOutputChannelsLast;
    if (layout)
      layouts[conv] = layout;
  }
  for (auto [kernel, pool] : pools)
    if (kept.contains(cast<FusionOp>(kernel).getResult(0)))
      layouts[pool] = kInputChannelsLast | kOutputChannelsLast;
  return plan;
}

} // namespace

void Emitter::findChannelsLast() {
  // The AVX-512 build hands Thunder's own depthwise and pointwise
  // convolutions to oneDNN too.
  for (bool avx512 : {false, true}) {
    ChannelsLastPlan plan = channelsLastPlan(func, /*ownKernels=*/avx512);
    for (auto [conv, layout] : plan.layouts)
      (avx512 ? convLayouts[conv].avx512 : convLayouts[conv].other) = layout;
    keptLast[avx512].insert(plan.kept.begin(), plan.kept.end());
  }
}

llvm::SmallVector<int64_t, 4> Emitter::storageOrder(FusionOp fusion, unsigned argument,
                                                     bool avx512) const {
  if (keptLast[avx512].contains(fusion.getInputs()[argument]))
    return llvm::to_vector<4>(kToChannelsLast);
  return {};
}

bool Emitter::writesLast(FusionOp fusion, bool avx512) const {
  return fusion.getKind() == FusionKind::Pointwise && fusion.getNumResults() == 1 &&
         keptLast[avx512].contains(fusion.getResult(0));
}

} // namespace thunder::cpu
