// Conversions out of the `thunder` dialect into other dialects.
#ifndef THUNDER_CONVERSION_PASSES_TD
#define THUNDER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// ThunderToStablehlo
//===----------------------------------------------------------------------===//

def ThunderConvertToStablehlo : Pass<"thunder-convert-to-stablehlo",
                                     "ModuleOp"> {
  let summary = "Rewrite a graph-phase module's @main into StableHLO";
  let description = [{
    Converts every op of `func.func @main` at the graph phase into StableHLO
    operations, written in MLIR's generic form as operations of the
    unregistered `stablehlo` dialect (Debian's MLIR has no StableHLO; XLA and
    jaxlib parse the text with the real dialect). Dialect attributes are
    `OpaqueAttr`s (`#stablehlo.dot<...>`, `#stablehlo<comparison_direction GT>`).
    The pass lets the context accept unregistered dialects. StableHLO has
    no erf: `thunder.erf` (and exact `thunder.gelu`) use `chlo.erf`, which
    XLA expands itself (jax emits the same op).

    Weights: every `thunder.constant` holding a `dense_resource` blob, or a
    dense non-splat value of more than 64 elements, becomes a leading argument
    of @main, in order of first appearance; @main gets
    `thunder.weights = [<value>, ...]` (one per weight argument) and
    `thunder.weight_names = ["fc1.weight", ...]` (the resource keys, or "" for
    literals). The user's arguments follow with their attributes; results do
    not change. Small and splat constants become `stablehlo.constant`.

    Composites still present are decomposed first (static shapes only).
    Anything that cannot be converted (an op without a pattern, a dynamic
    dim, `thunder.weight`) is reported at its location, all of them in one
    run, and the pass fails.

    Before:
    ```mlir
    func.func @main(%x: tensor<2x32xf32> {thunder.name = "x"}) -> tensor<2x64xf32> {
      %w = thunder.constant dense_resource<fc.weight> : tensor<64x32xf32>
      %y = thunder.matmul %x, %w transpose_rhs : (tensor<2x32xf32>, tensor<64x32xf32>) -> tensor<2x64xf32>
      return %y : tensor<2x64xf32>
    }
    ```
    After:
    ```mlir
    func.func @main(%w: tensor<64x32xf32>, %x: tensor<2x32xf32> {thunder.name = "x"}) -> tensor<2x64xf32>
        attributes {thunder.weights = [dense_resource<fc.weight> : tensor<64x32xf32>], ...} {
      %y = "stablehlo.dot_general"(%x, %w) {dot_dimension_numbers = #stablehlo.dot<
          lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, ...}
          : (tensor<2x32xf32>, tensor<64x32xf32>) -> tensor<2x64xf32>
      return %y : tensor<2x64xf32>
    }
    ```

    Rationale: on the TPU path fusion, scheduling and memory planning are
    XLA's; the graph phase already has explicit broadcasts and conversions,
    so each thunder op maps to a short StableHLO sequence with PyTorch's
    numerics (Python-sign remainder, floor division, NaN-propagating max,
    first-index argmax, f32 accumulation of f16/bf16 sums). Weights are
    arguments so the runtime uploads them once as device buffers instead of
    XLA constant-folding megabytes into the executable.
  }];
}

#endif // THUNDER_CONVERSION_PASSES_TD
