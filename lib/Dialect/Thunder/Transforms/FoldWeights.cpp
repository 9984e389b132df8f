//===- FoldWeights.cpp - Weight-only subgraphs evaluated at compile time --===//
//
// The thunder-fold-weights pass: every op whose operands are all known at
// compile time (constants, and broadcasts of constants) is evaluated by the
// reference interpreter (Dialect/Thunder/Reference) and replaced by a new
// constant, and an inference
// batch_norm with constant parameters is folded into the convolution that
// feeds it. Ops are visited in program order from a worklist, so chains
// (a transpose of a reshape of a convert of a weight) fold link by link.
//
//===----------------------------------------------------------------------===//
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Dialect/Thunder/Reference/Ops.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <deque>

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERFOLDWEIGHTS
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;
using reference::Tensor;

namespace {

/// A result up to this size always folds.
constexpr int64_t kSmallResultBytes = 64 * 1024;
/// Above that, it folds only when it has at most this many times the elements
/// of the constants it is computed from: a broadcast that would multiply a
/// weight's bytes stays an op (a fused kernel reads it for free).
constexpr int64_t kMaxGrowth = 2;
/// A result computed only from literals (no weight) stays a literal up to
/// this many elements, as the dialect's folders leave them.
constexpr int64_t kMaxLiteralElements = 4096;

/// What a value known at compile time is computed from.
struct Source {
  /// Elements stored by the constants it reads (a splat stores one).
  int64_t elements;
  /// The resource key of the weight it comes from; empty for literals.
  StringRef name;
  /// Elements the evaluator materializes to read it (a broadcast not folded
  /// on its own is expanded on the fly when a consumer folds).
  int64_t materialized;
};

class WeightFolder {
public:
  explicit WeightFolder(Operation *root) : root(root) {}

  /// Folds everything it can.
  void run();

private:
  std::optional<Source> sourceOf(Value value);
  FailureOr<Tensor> valueOf(Value value);
  LogicalResult foldOp(Operation *op);
  LogicalResult foldBatchNorm(BatchNormOp op);
  /// Replaces `op`'s result by a constant holding `value`, named after
  /// `name` (a literal when `name` is empty and the value is small).
  void replaceWithConstant(Operation *op, const Tensor &value,
                           StringRef name);
  /// Queues the users of `value` and the producers `op` leaves behind.
  void erase(Operation *op);
  void push(Operation *op);

  Operation *root;
  std::deque<Operation *> worklist;
  DenseSet<Operation *> pending;
  /// Producers that may be dead once their consumers folded.
  llvm::SetVector<Operation *> maybeDead;
};

} // namespace

/// The blob name of a value computed from `name` by an op: "w" -> "w.T".
static std::string derivedName(StringRef name, StringRef suffix) {
  return (name.empty() ? "folded_" + suffix : name + "." + suffix).str();
}

/// A short name for what `op` does to a weight, for the result's blob name.
static std::string suffixOf(Operation *op) {
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return llvm::equal(transpose.getPermutation(), ArrayRef<int64_t>{1, 0})
               ? "T"
               : "permute";
  if (isa<BroadcastOp, ExpandOp>(op))
    return "broadcast";
  if (isa<ConcatOp>(op))
    return "cat";
  if (isa<ConvertOp>(op)) {
    std::string type;
    llvm::raw_string_ostream os(type);
    os << "to_" << getElementTypeOrSelf(op->getResult(0).getType());
    return type;
  }
  return op->getName().stripDialect().str();
}

std::optional<Source> WeightFolder::sourceOf(Value value) {
  Operation *def = value.getDefiningOp();
  if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
    std::optional<Tensor> tensor =
        Tensor::fromAttr(constant.getValue());
    if (!tensor)
      return std::nullopt;
    StringRef name;
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
      name = resource.getRawHandle().getKey();
    return Source{tensor->getNumStored(), name, 0};
  }
  if (isa_and_nonnull<BroadcastOp, ExpandOp>(def)) {
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.hasStaticShape())
      return std::nullopt;
    std::optional<Source> operand = sourceOf(def->getOperand(0));
    if (!operand)
      return std::nullopt;
    return Source{operand->elements, operand->name, type.getNumElements()};
  }
  return std::nullopt;
}

FailureOr<Tensor> WeightFolder::valueOf(Value value) {
  Operation *def = value.getDefiningOp();
  if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
    if (std::optional<Tensor> tensor =
            Tensor::fromAttr(constant.getValue()))
      return *tensor;
    return failure();
  }
  if (isa_and_nonnull<BroadcastOp, ExpandOp>(def)) {
    FailureOr<Tensor> operand = valueOf(def->getOperand(0));
    if (failed(operand))
      return failure();
    return reference::evaluate(def, {&*operand});
  }
  return failure();
}

void WeightFolder::push(Operation *op) {
  if (!isa<ConstantOp>(op) && pending.insert(op).second)
    worklist.push_back(op);
}

void WeightFolder::erase(Operation *op) {
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp())
      maybeDead.insert(def);
  maybeDead.remove(op);
  pending.erase(op);
  op->erase();
}

void WeightFolder::replaceWithConstant(Operation *op,
                                       const Tensor &value,
                                       StringRef name) {
  bool literal = name.empty() && value.getNumElements() <= kMaxLiteralElements;
  std::string blobName = derivedName(name, suffixOf(op));
  OpBuilder builder(op);
  auto constant = builder.create<ConstantOp>(op->getLoc(),
                                             value.toAttr(blobName, literal));
  op->getResult(0).replaceAllUsesWith(constant.getResult());
  for (Operation *user : constant->getUsers())
    push(user);
  erase(op);
}

/// Whether `op` only moves or selects elements, computing none.
static bool isDataMovement(Operation *op) {
  return isa<ReshapeOp, TransposeOp, BroadcastOp, ExpandOp, SliceOp, ConcatOp,
             GatherOp, IndexSelectOp, EmbeddingOp, WhereOp>(op);
}

/// Whether a value of `type` is computed, not only moved, by `op` into an f8
/// type: the reference rounds as PyTorch does, but the kernels' f8
/// conversions are the target's (thunder_cpu.h saturates e4m3fn and e5m2
/// alike), so folding leaves such an op to run as the unfolded program would.
static bool computesIntoF8(Operation *op, Type type) {
  Type element = getElementTypeOrSelf(type);
  return isa<FloatType>(element) && element.getIntOrFloatBitWidth() == 8 &&
         !isDataMovement(op);
}

LogicalResult WeightFolder::foldOp(Operation *op) {
  if (!reference::isEvaluable(op) || op->getNumResults() != 1)
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || computesIntoF8(op, type))
    return failure();

  // Every operand known, and the result not much larger than what it is
  // computed from (a splat result costs nothing, whatever its shape).
  // The result is named after its largest weight operand, and of equal ones
  // the least derived (shortest name): w * scale[:, None] is "w.mul".
  int64_t sourceElements = 0, materialized = type.getNumElements();
  int64_t namedElements = 0;
  StringRef name;
  bool allSplats = true;
  for (Value operand : op->getOperands()) {
    std::optional<Source> source = sourceOf(operand);
    if (!source)
      return failure();
    sourceElements += source->elements;
    materialized = std::max(materialized, source->materialized);
    allSplats &= source->elements == 1;
    if (!source->name.empty() &&
        (source->elements > namedElements ||
         (source->elements == namedElements &&
          source->name.size() < name.size()))) {
      name = source->name;
      namedElements = source->elements;
    }
  }
  int64_t elementBytes = reference::getElementBytes(type.getElementType());
  auto tooLarge = [&](int64_t elements) {
    return elements * elementBytes > kSmallResultBytes &&
           elements > kMaxGrowth * sourceElements;
  };
  if (!allSplats && tooLarge(materialized))
    return failure();
  // A broadcast that grows a weight stays an op: a fused kernel reads the
  // small weight in place, and the model stays independent of the batch
  // size it was exported with. Its consumers still fold through it.
  if (isa<BroadcastOp, ExpandOp>(op) && !allSplats &&
      type.getNumElements() > sourceElements)
    return failure();

  SmallVector<Tensor> values;
  for (Value operand : op->getOperands()) {
    FailureOr<Tensor> value = valueOf(operand);
    if (failed(value))
      return failure();
    values.push_back(*value);
  }
  SmallVector<const Tensor *> operands;
  for (const Tensor &value : values)
    operands.push_back(&value);
  FailureOr<Tensor> result = reference::evaluate(op, operands);
  if (failed(result) || (!result->isSplat() && tooLarge(result->getNumElements())))
    return failure();
  replaceWithConstant(op, *result, name);
  return success();
}

/// batch_norm(conv(x, W, b)) with constant W, b and statistics is
/// conv(x, W * s, (b - mean) * s + beta) with s = gamma / sqrt(var + eps)
/// per output channel, computed in double and rounded once.
LogicalResult WeightFolder::foldBatchNorm(BatchNormOp op) {
  auto conv = op.getInput().getDefiningOp<ConvolutionOp>();
  if (!conv || !conv->hasOneUse())
    return failure();
  FailureOr<Tensor> weight = valueOf(conv.getWeight());
  FailureOr<Tensor> mean = valueOf(op.getMean());
  FailureOr<Tensor> variance = valueOf(op.getVariance());
  if (failed(weight) || failed(mean) || failed(variance))
    return failure();
  // Absent operands: no conv bias, gamma = 1, beta = 0.
  std::optional<Tensor> bias, gamma, beta;
  for (auto [value, slot] : {std::pair{conv.getBias(), &bias},
                             std::pair{op.getWeight(), &gamma},
                             std::pair{op.getBias(), &beta}}) {
    if (!value)
      continue;
    FailureOr<Tensor> known = valueOf(value);
    if (failed(known))
      return failure();
    slot->emplace(*known);
  }

  RankedTensorType weightType = weight->getType();
  int64_t channels = weightType.getDimSize(0);
  int64_t perChannel = channels ? weightType.getNumElements() / channels : 0;
  double epsilon = op.getEpsilon().convertToDouble();
  Tensor newWeight = Tensor::allocate(weightType, false);
  auto biasType = RankedTensorType::get({channels}, weightType.getElementType());
  Tensor newBias = Tensor::allocate(biasType, false);
  // f32 filters (nearly all) are scaled in place of their bytes: the same
  // rounding (double product, rounded to float once) without the reference's
  // per-element conversions, which took seconds for ResNet-18's 11M weights.
  const bool f32 = weightType.getElementType().isF32() && !weight->isSplat();
  const float *weightData =
      f32 ? reinterpret_cast<const float *>(weight->getBytes().data()) : nullptr;
  float *newData =
      f32 ? reinterpret_cast<float *>(newWeight.getMutableBytes().data()) : nullptr;
  for (int64_t c = 0; c < channels; ++c) {
    double scale = (gamma ? gamma->getDouble(c) : 1.0) /
                   std::sqrt(variance->getDouble(c) + epsilon);
    if (f32) {
      for (int64_t i = c * perChannel; i < (c + 1) * perChannel; ++i)
        newData[i] = static_cast<float>(static_cast<double>(weightData[i]) * scale);
    } else {
      for (int64_t i = c * perChannel; i < (c + 1) * perChannel; ++i)
        newWeight.setDouble(i, weight->getDouble(i) * scale);
    }
    double shift = (bias ? bias->getDouble(c) : 0.0) - mean->getDouble(c);
    newBias.setDouble(c, shift * scale + (beta ? beta->getDouble(c) : 0.0));
  }

  // Named after the convolution's weight: "conv1.weight.bn_folded" and
  // "conv1.bias.bn_folded".
  std::optional<Source> weightSource = sourceOf(conv.getWeight());
  StringRef weightName = weightSource ? weightSource->name : StringRef();
  std::string weightBlob, biasBlob;
  if (!weightName.empty()) {
    StringRef stem = weightName;
    std::string biasStem =
        stem.consume_back(".weight") ? (stem + ".bias").str()
                                     : (weightName + ".bias").str();
    weightBlob = derivedName(weightName, "bn_folded");
    biasBlob = derivedName(biasStem, "bn_folded");
  } else {
    weightBlob = derivedName("", "bn_weight");
    biasBlob = derivedName("", "bn_bias");
  }
  auto literal = [&](const Tensor &value) {
    return weightName.empty() && value.getNumElements() <= kMaxLiteralElements;
  };

  OpBuilder builder(conv);
  Value weightValue = builder.create<ConstantOp>(
      conv.getWeight().getLoc(),
      newWeight.toAttr(weightBlob, literal(newWeight)));
  Value biasValue = builder.create<ConstantOp>(
      op.getLoc(), newBias.toAttr(biasBlob, literal(newBias)));
  Location loc = builder.getFusedLoc({conv.getLoc(), op.getLoc()});
  auto folded = builder.create<ConvolutionOp>(
      loc, op.getType(), conv.getInput(), weightValue, biasValue,
      conv.getStrideAttr(), conv.getPaddingAttr(), conv.getDilationAttr(),
      conv.getGroupsAttr());
  // Annotations such as thunder.dim_symbols describe the value, which is
  // unchanged.
  folded->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op.getResult().replaceAllUsesWith(folded.getResult());
  erase(op);
  maybeDead.insert(conv);
  return success();
}

void WeightFolder::run() {
  root->walk([&](Operation *op) {
    if (op != root)
      push(op);
  });
  while (!worklist.empty()) {
    Operation *op = worklist.front();
    worklist.pop_front();
    pending.erase(op);
    if (auto batchNorm = dyn_cast<BatchNormOp>(op))
      (void)foldBatchNorm(batchNorm);
    else
      (void)foldOp(op);
  }
  // Constants and broadcasts that only folded ops read.
  while (!maybeDead.empty()) {
    Operation *op = maybeDead.pop_back_val();
    if (isOpTriviallyDead(op))
      erase(op);
  }
}

namespace {
struct ThunderFoldWeights
    : mlir::thunder::impl::ThunderFoldWeightsBase<ThunderFoldWeights> {
  using ThunderFoldWeightsBase::ThunderFoldWeightsBase;
  void runOnOperation() override {
    WeightFolder(getOperation()).run();
  }
};
} // namespace
