//===- Pipelines.cpp - Thunder's compilation pipelines --------------------===//
#include "thunder/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "thunder/Conversion/Passes.h"
#include "thunder/Dialect/Thunder/IR/ThunderDialect.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"

using namespace mlir;

void ::thunder::buildThunderGraphPipeline(OpPassManager &pm,
                                        const ::thunder::GraphPipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  if (options.decomposeComposites) {
    pm.addNestedPass<func::FuncOp>(mlir::thunder::createThunderDecomposeComposites());
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createCSEPass());
}

void ::thunder::buildThunderFusionPipeline(
    OpPassManager &pm, const ::thunder::KernelPipelineOptions &options) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(mlir::thunder::createThunderFoldWeights());
  if (options.fuse) {
    // The generic reduction rule fuses these once they are primitives; sdpa
    // stays whole for the attention kernel.
    // The options hold an ArrayRef: the names must outlive the pass's creation
    // (a braced list assigned to it dies at the end of the statement; ASan
    // found the pass reading the destroyed strings).
    std::string decomposed[] = {"softmax", "log_softmax", "layer_norm", "rms_norm",
                                "batch_norm"};
    mlir::thunder::ThunderDecomposeCompositesOptions decompose;
    decompose.ops = decomposed;
    fn.addPass(mlir::thunder::createThunderDecomposeComposites(decompose));
    fn.addPass(createCanonicalizerPass());
    fn.addPass(createCSEPass());
    // Decomposed batch_norms that follow no convolution leave weight-only
    // arithmetic (the scale and shift) to fold.
    fn.addPass(mlir::thunder::createThunderFoldWeights());
    fn.addPass(mlir::thunder::createThunderFuseEpilogues());
    fn.addPass(mlir::thunder::createThunderFuseReductions());
    fn.addPass(mlir::thunder::createThunderFusePointwise());
  }
  mlir::thunder::ThunderOutlineKernelsOptions outline;
  outline.unfused = !options.fuse;
  fn.addPass(mlir::thunder::createThunderOutlineKernels(outline));
}

void ::thunder::buildThunderPlanPipeline(OpPassManager &pm) {
  buildThunderPlanPipeline(pm, KernelPipelineOptions());
}

void ::thunder::buildThunderPlanPipeline(
    OpPassManager &pm, const ::thunder::KernelPipelineOptions &options) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(mlir::thunder::createThunderSchedule());
  mlir::thunder::ThunderPlanMemoryOptions plan;
  plan.borrowOutputs = options.borrowOutputs;
  plan.libraryWorkspace = options.libraryWorkspace;
  fn.addPass(mlir::thunder::createThunderPlanMemory(plan));
}

void ::thunder::buildThunderKernelPipeline(
    OpPassManager &pm, const ::thunder::KernelPipelineOptions &options) {
  buildThunderFusionPipeline(pm, options);
  buildThunderPlanPipeline(pm, options);
}

void ::thunder::registerThunderDialects(DialectRegistry &registry) {
  registry.insert<mlir::thunder::ThunderDialect, func::FuncDialect>();
}

void ::thunder::registerThunderPassesAndPipelines() {
  mlir::thunder::registerThunderPasses();
  mlir::thunder::registerThunderConversionPasses();
  PassPipelineRegistration<::thunder::GraphPipelineOptions>(
      "thunder-graph-pipeline",
      "Thunder's graph-level pipeline: canonicalize, fold, optionally "
      "decompose composites, CSE",
      ::thunder::buildThunderGraphPipeline);
  PassPipelineRegistration<::thunder::KernelPipelineOptions>(
      "thunder-fusion-pipeline",
      "Thunder's fusion pipeline: fold weights, decompose, fuse epilogues, "
      "reductions and pointwise chains, outline the rest",
      ::thunder::buildThunderFusionPipeline);
  PassPipelineRegistration<>(
      "thunder-plan-pipeline",
      "Thunder's planning pipeline: schedule kernels, plan the arena",
      [](OpPassManager &pm) { ::thunder::buildThunderPlanPipeline(pm); });
  PassPipelineRegistration<::thunder::KernelPipelineOptions>(
      "thunder-kernel-pipeline",
      "The fusion pipeline, then the planning pipeline",
      ::thunder::buildThunderKernelPipeline);
}
