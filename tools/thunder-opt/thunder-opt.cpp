//===- thunder-opt.cpp - Run Thunder's passes and pipelines on MLIR -------===//
//
// mlir-opt with the `thunder` dialect, Thunder's passes and pipelines, each
// target's pipeline (`--thunder-<target>-pipeline`: what thunder-compile runs
// for that target), and the upstream dialects Thunder uses.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "thunder/Pipelines/Pipelines.h"
#include "thunder/Target/TargetBackend.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  thunder::registerThunderPassesAndPipelines();
  thunder::registerAllTargetBackends();
  thunder::registerTargetPipelines();

  mlir::DialectRegistry registry;
  thunder::registerThunderDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Thunder optimizer driver\n", registry));
}
