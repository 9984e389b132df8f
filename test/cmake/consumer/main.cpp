// A C++ program built against an installed Thunder with find_package(Thunder):
// it parses thunder IR and runs the graph pipeline, then prints the result.
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "thunder/Pipelines/Pipelines.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::DialectRegistry registry;
  thunder::registerThunderDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %c = thunder.constant dense<1.0> : tensor<4xf32>
      %d = thunder.constant dense<2.0> : tensor<4xf32>
      %s = thunder.add %c, %d : tensor<4xf32>
      %r = thunder.mul %a, %s : tensor<4xf32>
      return %r : tensor<4xf32>
    })mlir",
                                                        &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  thunder::buildThunderGraphPipeline(pm, thunder::GraphPipelineOptions());
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
