// Structural ops of the `thunder` dialect: the fusion region (one kernel) and
// its terminator.
#ifndef THUNDER_DIALECT_THUNDER_IR_FUSIONOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_FUSIONOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"

def Thunder_FusionOp : Thunder_Op<"fusion", [IsolatedFromAbove,
    RecursiveMemoryEffects, RecursivelySpeculatable, SingleBlock]> {
  let summary = "a region of ops that becomes one kernel";
  let description = [{
    The unit of code generation: a backend emits one kernel (or one library
    call) per fusion. The region is isolated from above; its block arguments
    bind `inputs` one to one with the same types (fusion_c1); it holds only
    `thunder` ops other than `thunder.fusion` (fusion_c2); its
    `thunder.yield` returns values of the result types (fusion_c3). `kind`
    says which kernel template applies; `kernel_name` is the kernel's name in
    generated code and reports.

    Example:
    ```mlir
    %r = thunder.fusion pointwise "fused_add_gelu_0" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = thunder.add %x, %y : tensor<4xf32>
      %g = thunder.gelu %s : tensor<4xf32>
      thunder.yield %g : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Thunder_FusionKind:$kind, StrAttr:$kernel_name,
      Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind $kernel_name `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
      "FusionKind":$kind, "::llvm::StringRef":$name, "::mlir::ValueRange":$inputs)>];
}

def Thunder_YieldOp : Thunder_Op<"yield", [Pure, Terminator,
    HasParent<"::mlir::thunder::FusionOp">]> {
  let summary = "the results of a fusion region";
  let description = [{
    Terminates a `thunder.fusion` body and gives its results, which match the
    fusion's result types (fusion_c3).

    Example:
    ```mlir
    thunder.yield %g : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // THUNDER_DIALECT_THUNDER_IR_FUSIONOPS_TD
