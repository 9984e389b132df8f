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

//===----------------------------------------------------------------------===//
// Weight folding
//===----------------------------------------------------------------------===//

def ThunderFoldWeights : Pass<"thunder-fold-weights", "func::FuncOp"> {
  let summary = "Evaluate weight-only subgraphs at compile time";
  let description = [{
    Evaluates every op whose operands are all known at compile time and
    replaces it by a new `thunder.constant`, so that nothing that depends only
    on weights runs per inference. Known values are constants (resource
    blobs, dense literals, splats) and broadcasts of them. Evaluated ops:
    views and data movement (reshape, transpose, broadcast, expand, slice,
    concat, pad), gathers (gather, index_select, embedding), convert,
    elementwise arithmetic, comparisons, where, clamp, and the
    sum/mean/max/min/prod reductions. Ops are visited in program
    order, so chains (a transpose of a reshape of a convert of a weight) fold
    link by link.

    The result is a `dense_resource` blob named after the weight it comes
    from and the op (`fc.weight.T`, `w.to_bf16`), keeping the op's location;
    a splat stays a splat, and a small result of literals alone stays a dense
    literal. Arithmetic runs in double and rounds once to the result type;
    f16 and bf16 round through f32 as PyTorch computes them, to nearest even.

    A `thunder.batch_norm` whose input is a `thunder.convolution` with a
    constant weight (and constant bias, if any), whose statistics and affine
    parameters are constants, and whose convolution has no other user, is
    folded into one convolution with
    `W' = W * s`, `b' = (b - mean) * s + beta`, `s = gamma / sqrt(var + eps)`
    per output channel (blobs `<conv>.weight.bn_folded`,
    `<conv>.bias.bn_folded`).

    Before:
    ```mlir
    %w  = thunder.constant dense_resource<fc.weight> : tensor<8x4xf32>
    %wt = thunder.transpose %w, permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
    %y  = thunder.convolution %x, %k stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1
        : (tensor<1x3x8x8xf32>, tensor<16x3x1x1xf32>) -> tensor<1x16x8x8xf32>
    %z  = thunder.batch_norm %y, %mean, %var weight %g bias %b epsilon = 1.0e-05
        : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
    ```
    After:
    ```mlir
    %wt = thunder.constant dense_resource<fc.weight.T> : tensor<4x8xf32>
    %k2 = thunder.constant dense_resource<conv.weight.bn_folded> : tensor<16x3x1x1xf32>
    %b2 = thunder.constant dense_resource<conv.bias.bn_folded> : tensor<16xf32>
    %z  = thunder.convolution %x, %k2, %b2 stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1
        : (tensor<1x3x8x8xf32>, tensor<16x3x1x1xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
    ```

    Rationale: a result that would be much larger than the constants it is
    computed from (over 64 KiB and more than twice their elements, e.g. a
    bias broadcast to an activation's shape) is left as an op: a fused
    kernel reads a broadcast for free, while a folded one costs its bytes in
    the weights and in memory traffic. Such a broadcast still counts as known
    for its consumers, so `w * scale[:, None]` folds to one weight. Values
    with no compile-time meaning (integer division by zero, a float out of
    an integer type's range, an index out of range) are left to run, and so
    is rounding into an f8 type (saturating or NaN out of range, by kernel);
    f8 values are only moved or converted to wider types. Blobs elided from
    printed IR have no bytes and are not folded.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def ThunderFuseEpilogues : Pass<"thunder-fuse-epilogues", "func::FuncOp"> {
  let summary = "Fuse pointwise consumers into GEMM and convolution kernels";
  let description = [{
    Wraps each `thunder.matmul` and `thunder.convolution` into a
    `thunder.fusion` of kind `gemm` or `conv` together with the chain of
    pointwise consumers (bias add, activation, residual add, dtype convert)
    that reads its result element by element, so a backend can apply them
    in the library call's epilogue or in one pass right after it.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderFuseReductions : Pass<"thunder-fuse-reductions", "func::FuncOp"> {
  let summary = "Fuse reductions with their pointwise producers and consumers";
  let description = [{
    Groups reductions over the same trailing dims of the same row shape with
    the pointwise ops that feed them and the pointwise ops that consume their
    results (broadcast back over the row), into one `thunder.fusion` of kind
    `reduction`: a row-wise kernel. softmax, log_softmax, layer_norm,
    rms_norm and mean/variance patterns, once decomposed, each become one
    kernel through this generic rule; no op names are matched.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderFusePointwise : Pass<"thunder-fuse-pointwise", "func::FuncOp"> {
  let summary = "Fuse chains of pointwise ops into one kernel";
  let description = [{
    Merges elementwise ops, broadcasts, converts and view-like ops (reshape,
    transpose, slice) that are not yet in a kernel into `thunder.fusion`
    regions of kind `pointwise`, one loop over the output. A producer with
    several consumers is duplicated into each only when it is cheap (the
    cost model in FusionRules.h); it is never recomputed when it is
    expensive or when fusing would create a cycle.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderOutlineKernels : Pass<"thunder-outline-kernels", "func::FuncOp"> {
  let summary = "Put every remaining op in a kernel of its own";
  let description = [{
    After the fusion passes, wraps each op that still runs outside a
    `thunder.fusion` (data movement, library calls, attention, reductions
    that could not be fused) into a single-op region, so that a backend sees
    only constants, views (`thunder.reshape`) and kernels. Run alone, it is
    the unfused pipeline: one kernel per op.
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

//===----------------------------------------------------------------------===//
// Scheduling and memory planning
//===----------------------------------------------------------------------===//

def ThunderSchedule : Pass<"thunder-schedule", "func::FuncOp"> {
  let summary = "Order kernels to lower peak memory; mark concurrent branches";
  let description = [{
    Reorders the kernels of a function (a topological order) to lower the
    most bytes live at once, and marks each kernel with `thunder.stream`: an
    index such that kernels on different streams have no dependency path
    between them through the same stream (GPU backends may run them
    concurrently, with events on the edges that cross streams).
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

def ThunderPlanMemory : Pass<"thunder-plan-memory", "func::FuncOp"> {
  let summary = "Place every intermediate tensor in one arena";
  let description = [{
    Computes the liveness of every tensor that crosses a kernel boundary and
    assigns it an offset in one arena (64-byte aligned), reusing an input's
    bytes in place for pointwise kernels where that is safe. Function results
    are written straight into the caller's output buffers. The plan is
    recorded in the IR: `thunder.offsets` on each kernel, `thunder.arena` on
    the function (arena bytes, the lower bound and the naive sum).
  }];
  let dependentDialects = ["::mlir::thunder::ThunderDialect"];
}

#endif // THUNDER_DIALECT_THUNDER_TRANSFORMS_PASSES_TD
