//===- ThunderToStablehlo.cpp - thunder-convert-to-stablehlo --------------===//
//
// The pass: decompose leftover composites, check that every op can be
// converted (reporting all that cannot at once), turn weights into leading
// arguments, then run the op families' patterns over @main.
//
//===----------------------------------------------------------------------===//
#include "thunder/Conversion/ThunderToStablehlo/ThunderToStablehlo.h"
#include "thunder/Dialect/Thunder/IR/RandomOps.h"

#include "PopulatePatterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

namespace mlir::thunder {
#define GEN_PASS_DEF_THUNDERCONVERTTOSTABLEHLO
#include "thunder/Conversion/Passes.h.inc"
} // namespace mlir::thunder

using namespace mlir;
using namespace mlir::thunder;

void mlir::thunder::populateThunderToStablehloPatterns(
    RewritePatternSet &patterns) {
  stablehlo::populateConstantPatterns(patterns);
  stablehlo::populateElementwisePatterns(patterns);
  stablehlo::populateDataMovementPatterns(patterns);
  stablehlo::populateReductionPatterns(patterns);
  stablehlo::populateLinalgPatterns(patterns);
}

namespace {

/// True for a ranked tensor with static dims.
bool isStatic(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape();
}

/// Reports every op of `main` the patterns cannot convert, at its location
/// (not the ops nested in one reported: a fusion region's body). Returns the
/// number reported.
unsigned reportUnconvertible(func::FuncOp main,
                             const FrozenRewritePatternSet &patterns) {
  const auto &byOp = patterns.getOpSpecificNativePatterns();
  unsigned count = 0;
  auto report = [&](Operation *op) {
    ++count;
    return op->emitError() << "thunder-convert-to-stablehlo: '"
                           << op->getName() << "' ";
  };
  main.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    if (op == main.getOperation() || isa<func::ReturnOp>(op))
      return WalkResult::advance();
    if (!isa_and_nonnull<ThunderDialect>(op->getDialect())) {
      report(op) << "is not a thunder op; only thunder IR at the graph phase "
                    "converts to StableHLO";
      return WalkResult::skip();
    }
    if (auto weight = dyn_cast<WeightOp>(op)) {
      report(op) << "(external weight '" << weight.getName()
                 << "') is not supported: the tpu target takes weights as "
                    "constants (compile without external weights)";
      return WalkResult::skip();
    }
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type type : types) {
      if (!isStatic(type)) {
        report(op) << "has a dynamic shape (" << type
                   << "): the tpu target needs static shapes (export with "
                      "static shapes)";
        return WalkResult::skip();
      }
    }
    if (isa<RandomOp>(op)) {
      // stablehlo.rng_bit_generator would need the generator's state as an
      // argument of @main, which the PJRT model ABI has no place for.
      report(op) << "(random numbers: torch.rand, randn, randint, randperm) is not "
                    "supported on the tpu target; compile for cpu, cuda or hip";
      return WalkResult::skip();
    }
    if (!byOp.count(op->getName())) {
      report(op) << "has no StableHLO lowering";
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return count;
}

/// True when `main` still holds a composite op.
bool hasComposites(func::FuncOp main) {
  return main
      .walk([](Operation *op) {
        return isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp,
                   BatchNormOp, ScaledDotProductAttentionOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

struct ThunderConvertToStablehlo
    : mlir::thunder::impl::ThunderConvertToStablehloBase<ThunderConvertToStablehlo> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    // The output is StableHLO in generic form: operations of a dialect that
    // Debian's MLIR does not have.
    context->allowUnregisteredDialects();
    RewritePatternSet set(context);
    populateThunderToStablehloPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("thunder-convert-to-stablehlo: the module has no "
                       "func.func @main with a body");
      return signalPassFailure();
    }
    // The tpu pipeline decomposes composites; a module that skipped it
    // still converts, as long as its shapes are static.
    if (hasComposites(main)) {
      RewritePatternSet decompose(&getContext());
      populateDecomposeCompositePatterns(decompose);
      (void)applyPatternsAndFoldGreedily(main, std::move(decompose));
    }
    if (unsigned count = reportUnconvertible(main, patterns)) {
      main.emitError() << "thunder-convert-to-stablehlo: " << count
                       << (count == 1 ? " op" : " ops")
                       << " cannot be converted to StableHLO";
      return signalPassFailure();
    }
    stablehlo::extractWeights(main);

    ConversionTarget target(getContext());
    target.addIllegalDialect<ThunderDialect>();
    target.addLegalOp<func::FuncOp, func::ReturnOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(main, target, patterns)))
      return signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
