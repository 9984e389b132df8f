//===- Constants.cpp - Constants and weights of ThunderToStablehlo --------===//
//
// Weights (resource blobs and large literals) become leading arguments of
// @main, listed in `thunder.weights`, so the runtime uploads them once as
// device buffers; what is left (splats, small literals) becomes
// `stablehlo.constant`.
//
//===----------------------------------------------------------------------===//
#include "PopulatePatterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "thunder/Conversion/ThunderToStablehlo/ThunderToStablehlo.h"
#include "thunder/Dialect/Thunder/IR/ThunderOps.h"

using namespace mlir;
using namespace mlir::thunder;
using namespace mlir::thunder::stablehlo;

/// Literals up to this many elements stay inline in the program.
static constexpr int64_t kMaxInlineElements = 64;

bool mlir::thunder::stablehlo::isWeight(ElementsAttr value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return true; // dense_resource blobs (and any other out-of-line storage)
  return !dense.isSplat() && dense.getNumElements() > kMaxInlineElements;
}

void mlir::thunder::stablehlo::extractWeights(func::FuncOp main) {
  MLIRContext *context = main.getContext();
  SmallVector<Attribute> values, names;
  llvm::DenseMap<Attribute, unsigned> argumentOf;
  SmallVector<ConstantOp> constants;
  main.walk([&](ConstantOp op) {
    if (isWeight(op.getValue()))
      constants.push_back(op);
  });
  for (ConstantOp op : constants) {
    ElementsAttr value = op.getValue();
    auto [it, inserted] = argumentOf.try_emplace(value, values.size());
    if (inserted) {
      unsigned index = values.size();
      values.push_back(value);
      StringRef name;
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
        name = resource.getRawHandle().getKey();
      names.push_back(StringAttr::get(context, name));
      main.insertArgument(index, value.getType(), DictionaryAttr::get(context),
                          op.getLoc());
    }
    op.getResult().replaceAllUsesWith(main.getArgument(it->second));
    op.erase();
  }
  main->setAttr(kWeightsAttrName, ArrayAttr::get(context, values));
  main->setAttr(kWeightNamesAttrName, ArrayAttr::get(context, names));
}

void mlir::thunder::stablehlo::populateConstantPatterns(
    RewritePatternSet &patterns) {
  addLowering<ConstantOp>(patterns, [](ConstantOp op, ConstantOp::Adaptor,
                                       HloBuilder &h) -> FailureOr<Value> {
    if (isWeight(op.getValue()))
      return op.emitError("a weight reached the constant pattern; "
                          "thunder-convert-to-stablehlo makes weights "
                          "arguments first");
    return h.constant(op.getValue());
  });
}
