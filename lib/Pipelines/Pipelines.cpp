//===- Pipelines.cpp - Thunder's compilation pipelines --------------------===//
#include "thunder/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

auto ::thunder::parsePhase(llvm::StringRef name) -> std::optional<Phase> {
  using ::thunder::Phase;
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("import", Phase::Import)
      .Case("graph", Phase::Graph)
      .Case("source", Phase::Source)
      .Case("library", Phase::Library)
      .Default(std::nullopt);
}

void ::thunder::buildThunderGraphPipeline(OpPassManager &pm,
                                        const ::thunder::GraphPipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  if (options.decomposeComposites) {
    pm.addNestedPass<func::FuncOp>(mlir::thunder::createThunderDecomposeComposites());
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createCSEPass());
}

void ::thunder::registerThunderDialects(DialectRegistry &registry) {
  registry.insert<mlir::thunder::ThunderDialect, func::FuncDialect>();
}

void ::thunder::registerThunderPassesAndPipelines() {
  mlir::thunder::registerThunderPasses();
  PassPipelineRegistration<::thunder::GraphPipelineOptions>(
      "thunder-graph-pipeline",
      "Thunder's graph-level pipeline: canonicalize, fold, optionally "
      "decompose composites, CSE",
      ::thunder::buildThunderGraphPipeline);
}
