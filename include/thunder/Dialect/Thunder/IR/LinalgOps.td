// Contraction and window ops of the `thunder` dialect: matmul, convolution,
// max and average pooling.
#ifndef THUNDER_DIALECT_THUNDER_IR_LINALGOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_LINALGOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"

def Thunder_MatmulOp : Thunder_InferredOp<"matmul"> {
  let summary = "batched matrix multiplication with optional transposes";
  let description = [{
    `lhs @ rhs` over the last two dims, after swapping them in `lhs` when
    `transpose_lhs` and in `rhs` when `transpose_rhs` (so `nn.Linear` is
    `matmul %x, %w transpose_rhs`). Accumulation is in f32 or wider for
    floating types. Constraints: the element types match (matmul_c1); `lhs` has
    rank >= 2 and `rhs` has rank 2 (shared by every batch) or the rank of `lhs`
    (matmul_c2); with equal ranks the batch dims are equal (matmul_c3); the
    contraction dims are equal (matmul_c4). The result has the batch dims of
    `lhs` then `[M, N]`.

    Example:
    ```mlir
    %y = thunder.matmul %x, %w transpose_rhs : (tensor<8x128x768xbf16>, tensor<3072x768xbf16>) -> tensor<8x128x3072xbf16>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$lhs, Thunder_NumericTensor:$rhs,
      UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Thunder_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` functional-type(operands, $result)
  }];
  let hasCanonicalizer = 1;
}

def Thunder_ConvolutionOp : Thunder_InferredOp<"convolution"> {
  let summary = "1-3d convolution (cross-correlation) with groups and optional bias";
  let description = [{
    `torch.nn.functional.conv{1,2,3}d`. `input` is `[N, C, spatial...]` and
    `weight` is `[O, C / groups, kernel...]`. `stride` and `dilation` have one
    entry per spatial dim, `padding` two (`[lo0, hi0, lo1, hi1, ...]`).
    Constraints: 1 to 3 spatial dims (conv_c1); `weight` has the input's rank
    (conv_c2); attribute sizes fit the spatial rank (conv_c3); `groups >= 1`
    divides both C and O and `weight` dim 1 is `C / groups` (conv_c4); `bias`,
    when given, is 1-D of size O (conv_c5); element types match (conv_c6);
    strides and dilations are >= 1, padding >= 0 and the output is not empty
    (conv_c7).

    Example:
    ```mlir
    %y = thunder.convolution %x, %w, %b stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$input, Thunder_FloatTensor:$weight,
      Optional<Thunder_FloatTensor>:$bias, DenseI64ArrayAttr:$stride,
      DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation `groups` `=` $groups attr-dict `:` functional-type(operands, $result)
  }];
}

def Thunder_MaxPoolOp : Thunder_InferredOp<"max_pool"> {
  let summary = "1-3d max pooling";
  let description = [{
    `torch.nn.functional.max_pool{1,2,3}d` over the trailing `kernel.size()`
    dims (padding counts as -inf). Constraints: 1 to 3 window dims and at least
    one leading dim (pool_c1); `stride` and `dilation` have one entry per window
    dim and `padding` two (pool_c2); strides, dilations and kernel sizes are
    >= 1, padding is at most half the kernel and the output is not empty
    (pool_c3).

    Example:
    ```mlir
    %y = thunder.max_pool %x kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1]
        : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
      DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
      DenseI64ArrayAttr:$dilation, UnitAttr:$ceil_mode);
  let results = (outs Thunder_NumericTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation (`ceil_mode` $ceil_mode^)? attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Thunder_AvgPoolOp : Thunder_InferredOp<"avg_pool"> {
  let summary = "1-3d average pooling";
  let description = [{
    `torch.nn.functional.avg_pool{1,2,3}d` over the trailing `kernel.size()`
    dims. With `count_include_pad` the padded zeros count in the divisor.
    Constraints: as `max_pool` (pool_c1..pool_c3) with dilation 1; floating
    point only (unary_float_c1). `adaptive_avg_pool` imports as `mean` or as
    `avg_pool` with the equivalent window.

    Example:
    ```mlir
    %y = thunder.avg_pool %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] count_include_pad
        : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
      DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding, UnitAttr:$ceil_mode,
      UnitAttr:$count_include_pad);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    (`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)? attr-dict
    `:` type($input) `->` type($result)
  }];
}

#endif // THUNDER_DIALECT_THUNDER_IR_LINALGOPS_TD
