//===- ThunderToStablehlo.h - thunder to StableHLO --------------*- C++ -*-===//
//
// The conversion of graph-phase thunder IR into StableHLO in generic form
// (operations of the unregistered `stablehlo` dialect), for the tpu target.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_CONVERSION_THUNDERTOSTABLEHLO_THUNDERTOSTABLEHLO_H
#define THUNDER_CONVERSION_THUNDERTOSTABLEHLO_THUNDERTOSTABLEHLO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace thunder {

#define GEN_PASS_DECL_THUNDERCONVERTTOSTABLEHLO
#include "thunder/Conversion/Passes.h.inc"

/// Adds the patterns that rewrite every supported thunder op (all families)
/// into StableHLO operations. Constants must be small or splat by then:
/// weights are turned into arguments by the pass before the patterns run.
void populateThunderToStablehloPatterns(RewritePatternSet &patterns);

/// The name of @main's attribute listing the weights' values, one per leading
/// weight argument (the contract with the tpu backend).
inline constexpr llvm::StringLiteral kWeightsAttrName = "thunder.weights";
/// The name of @main's attribute listing the weights' names (resource keys).
inline constexpr llvm::StringLiteral kWeightNamesAttrName = "thunder.weight_names";

} // namespace thunder
} // namespace mlir

#endif // THUNDER_CONVERSION_THUNDERTOSTABLEHLO_THUNDERTOSTABLEHLO_H
