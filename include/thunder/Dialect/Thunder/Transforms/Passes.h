//===- Passes.h - Passes over the `thunder` dialect -------------*- C++ -*-===//
#ifndef THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_H
#define THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"

namespace mlir {
class RewritePatternSet;
namespace thunder {

#define GEN_PASS_DECL
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"

/// Adds the patterns that rewrite composites into primitives. `ops` names the
/// composites to decompose (mnemonics without "thunder."); empty means all.
void populateDecomposeCompositePatterns(RewritePatternSet &patterns,
                                        ArrayRef<std::string> ops = {});

#define GEN_PASS_REGISTRATION
#include "thunder/Dialect/Thunder/Transforms/Passes.h.inc"

} // namespace thunder
} // namespace mlir

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_H
