// Passes over the `thunder` dialect.
#ifndef THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD
#define THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ThunderDecomposeComposites : Pass<"thunder-decompose-composites",
                                      "func::FuncOp"> {
  let summary = "Rewrite composite ops into thunder primitives";
  let description = [{
    Replaces softmax, log_softmax, layer_norm, rms_norm, batch_norm and sdpa by
    reductions, elementwise ops and matmuls, for targets that have no fused
    kernel for them. `ops` restricts the rewrite to the named composites
    (mnemonics without the `thunder.` prefix); by default all are decomposed.

    Before:
    ```mlir
    %p = thunder.softmax %x dim = 1 : tensor<4x8xf32>
    ```
    After:
    ```mlir
    %m  = thunder.max %x dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    %mb = thunder.broadcast %m, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %d  = thunder.sub %x, %mb : tensor<4x8xf32>
    %e  = thunder.exp %d : tensor<4x8xf32>
    %s  = thunder.sum %e dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    %sb = thunder.broadcast %s, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %p  = thunder.div %e, %sb : tensor<4x8xf32>
    ```

    Rationale: a composite keeps its meaning (and its fast path) through the
    graph passes; only the backend knows whether a fused kernel exists. The
    decompositions follow PyTorch's reference decompositions (max-subtracted
    softmax, biased variance) so results match eager. Shapes must be static:
    a dynamic dim is reported with `notifyMatchFailure` and the op is left
    alone.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Composites to decompose (default: all)">,
  ];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD
