// Composite ops of the `thunder` dialect: ops with a fused fast path on most
// targets and a decomposition into primitives for the rest.
#ifndef THUNDER_DIALECT_THUNDER_IR_COMPOSITEOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_COMPOSITEOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"

class Thunder_SoftmaxLikeOp<string mnemonic, string semantics>
    : Thunder_Op<mnemonic, [Pure, SameOperandsAndResultType,
                            AllTypesMatch<["input", "result"]>,
                            InferTypeOpInterface]> {
  let summary = semantics # " along one dimension";
  let description = [{
    Numerically stable }] # semantics # [{ along `dim`, which is in `[0, rank)`
    (softmax_c1). Floating point only (unary_float_c1). Decomposes into
    max, sub, exp, sum and div or log.

    Example:
    ```mlir
    %p = thunder.}] # mnemonic # [{ %scores dim = 3 : tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Thunder_SoftmaxOp : Thunder_SoftmaxLikeOp<"softmax", "softmax">;
def Thunder_LogSoftmaxOp : Thunder_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def Thunder_LayerNormOp : Thunder_Op<"layer_norm", [Pure,
    AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalization over the trailing dims";
  let description = [{
    `torch.nn.functional.layer_norm` over the last `normalized_rank` dims:
    `(x - mean) / sqrt(var + epsilon) * weight + bias` with the biased
    variance. Constraints: `1 <= normalized_rank <= rank` (norm_c1); `weight`
    and `bias`, when given, have the normalized shape and the input's element
    type (norm_c2); `epsilon >= 0` (norm_c3).

    Example:
    ```mlir
    %y = thunder.layer_norm %x weight %g bias %b normalized_rank = 1 epsilon = 1.0e-05
        : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$input,
      Optional<Thunder_FloatTensor>:$weight, Optional<Thunder_FloatTensor>:$bias,
      I64Attr:$normalized_rank, F64Attr:$epsilon);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `normalized_rank` `=` $normalized_rank
    `epsilon` `=` $epsilon attr-dict `:` functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

def Thunder_RmsNormOp : Thunder_Op<"rms_norm", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalization over the trailing dims";
  let description = [{
    `torch.nn.functional.rms_norm`: `x / sqrt(mean(x^2) + epsilon) * weight`
    over the last `normalized_rank` dims. The importer fills PyTorch's default
    epsilon (the dtype's machine epsilon). Constraints as `layer_norm`
    (norm_c1..norm_c3).

    Example:
    ```mlir
    %y = thunder.rms_norm %x weight %g normalized_rank = 1 epsilon = 1.0e-06
        : (tensor<1x64x512xbf16>, tensor<512xbf16>) -> tensor<1x64x512xbf16>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$input,
      Optional<Thunder_FloatTensor>:$weight, I64Attr:$normalized_rank,
      F64Attr:$epsilon);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? `normalized_rank` `=` $normalized_rank
    `epsilon` `=` $epsilon attr-dict `:` functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

def Thunder_BatchNormOp : Thunder_Op<"batch_norm", [Pure,
    AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "batch normalization with running statistics (inference)";
  let description = [{
    `(x - mean[c]) / sqrt(var[c] + epsilon) * weight[c] + bias[c]` where `c`
    is dim 1 of `input` (`[N, C, ...]`). Constraints: the input has rank >= 2
    (batch_norm_c1); `mean`, `variance`, `weight` and `bias` are 1-D of size C
    with the input's element type (batch_norm_c2); `epsilon >= 0` (norm_c3).

    Example:
    ```mlir
    %y = thunder.batch_norm %x, %mean, %var weight %g bias %b epsilon = 1.0e-05
        : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$input, Thunder_FloatTensor:$mean,
      Thunder_FloatTensor:$variance, Optional<Thunder_FloatTensor>:$weight,
      Optional<Thunder_FloatTensor>:$bias, F64Attr:$epsilon);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mean `,` $variance (`weight` $weight^)? (`bias` $bias^)?
    `epsilon` `=` $epsilon attr-dict `:` functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

def Thunder_ScaledDotProductAttentionOp : Thunder_Op<"sdpa", [Pure]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `torch.nn.functional.scaled_dot_product_attention` (inference, no dropout):
    `softmax(q @ k^T * scale + mask) @ v`. `q` is `[..., L, E]`, `k` is
    `[..., S, E]`, `v` is `[..., S, Ev]`, the result `[..., L, Ev]`. `scale`
    defaults to `1 / sqrt(E)`. With `causal`, position `i` attends to `j <= i`
    (top-left aligned, as PyTorch). A boolean `mask` keeps where true; a float
    mask is added to the scores.

    Constraints: `q`, `k` and `v` have one rank >= 2 and one element type
    (sdpa_c1); their leading (batch, head) dims are equal, `k` and `v` have the
    same length S and `q` and `k` the same E (sdpa_c2); `mask` has the rank of
    `q`, each dim 1 or equal to the scores' `[..., L, S]`, and is i1 or the
    query's type (sdpa_c3); `causal` and `mask` are not both given (sdpa_c4);
    the result type is `[..., L, Ev]` of the query's type (sdpa_c5).

    Example:
    ```mlir
    %o = thunder.sdpa %q, %k, %v causal
        : (tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>, tensor<1x12x128x64xbf16>) -> tensor<1x12x128x64xbf16>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$query, Thunder_FloatTensor:$key,
      Thunder_FloatTensor:$value, Optional<Thunder_Tensor>:$mask,
      UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)? (`scale` `=` $scale^)?
    attr-dict `:` functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

#endif // THUNDER_DIALECT_THUNDER_IR_COMPOSITEOPS_TD
