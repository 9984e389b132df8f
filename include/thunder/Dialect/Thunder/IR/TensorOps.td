// Value-producing and data-movement ops of the `thunder` dialect: constants,
// weights, iota, broadcasts, reshapes, permutations, slices, concatenation,
// padding and gathers.
#ifndef THUNDER_DIALECT_THUNDER_IR_TENSOROPS_TD
#define THUNDER_DIALECT_THUNDER_IR_TENSOROPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"

//===----------------------------------------------------------------------===//
// Constants, weights, iota
//===----------------------------------------------------------------------===//

def Thunder_ConstantOp : Thunder_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor (inline splat/small, or a resource blob)";
  let description = [{
    A tensor known at compile time. Small and splat values are written inline
    (`dense<...>`); weights are `dense_resource<name>` blobs so their bytes are
    never printed as IR text. The value's type is the result type
    (constant_c1); the shape is static (constant_c2).

    Example:
    ```mlir
    %c = thunder.constant dense<1.0> : tensor<4xf32>
    %w = thunder.constant dense_resource<fc1.weight> : tensor<16x8xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

def Thunder_WeightOp : Thunder_Op<"weight", [Pure]> {
  let summary = "a weight stored outside the IR, by name";
  let description = [{
    A parameter, buffer or constant of the model that lives in an external
    weights table (a `.safetensors` file or the archive it was imported from)
    under `name`, which is the tensor's fully qualified PyTorch name. The name is
    not empty (weight_c1) and the shape is static (weight_c2).

    Example:
    ```mlir
    %w = thunder.weight "encoder.layer.0.attention.query.weight" : tensor<768x768xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Thunder_IotaOp : Thunder_Op<"iota", [Pure]> {
  let summary = "indices along one dimension";
  let description = [{
    Each element is its own index along `dim` (converted to the element type),
    like `torch.arange` broadcast along the other dims. `dim` is in range
    (iota_c1); the element type is numeric (iota_c2).

    Example:
    ```mlir
    %i = thunder.iota dim = 1 : tensor<4x8xi64>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Broadcasts and views
//===----------------------------------------------------------------------===//

def Thunder_BroadcastOp : Thunder_Op<"broadcast", [Pure]> {
  let summary = "explicit broadcast into a larger shape";
  let description = [{
    `broadcast_dims[i]` is the result dim that operand dim `i` maps to; the other
    result dims are new. An operand dim of size 1 is repeated; otherwise it
    equals its result dim. Constraints: the element types match (broadcast_c1),
    `broadcast_dims` has one entry per operand dim (broadcast_c2), its entries
    are strictly increasing and within the result rank (broadcast_c3), and each
    mapped operand dim is 1 or equal to its result dim (broadcast_c4).

    Example:
    ```mlir
    %b = thunder.broadcast %bias, dims = [1] : tensor<16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand, DenseI64ArrayAttr:$broadcast_dims);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $broadcast_dims attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Thunder_ExpandOp : Thunder_Op<"expand", [Pure]> {
  let summary = "PyTorch expand: right-aligned broadcast";
  let description = [{
    `Tensor.expand`: operand dims align with the trailing result dims; a dim of
    size 1 may grow, others stay. Canonicalizes to `thunder.broadcast`.
    Constraints: element types match (expand_c1), the result rank is at least
    the operand rank (expand_c2), aligned dims are 1 or equal (expand_c3).

    Example:
    ```mlir
    %e = thunder.expand %x : tensor<1x4xf32> -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Thunder_ReshapeOp : Thunder_Op<"reshape", [Pure]> {
  let summary = "reshape (view) to a new shape with the same elements";
  let description = [{
    Row-major reshape. Element types match (reshape_c1); when both shapes are
    static they hold the same number of elements (reshape_c2).

    Example:
    ```mlir
    %r = thunder.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Thunder_TransposeOp : Thunder_InferredOp<"transpose"> {
  let summary = "permute the dimensions";
  let description = [{
    `torch.permute`: result dim `i` is operand dim `permutation[i]`. The
    permutation is a permutation of `[0, rank)` (transpose_c1); the result type
    follows.

    Example:
    ```mlir
    %t = thunder.transpose %x, permutation = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `permutation` `=` $permutation attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def Thunder_SliceOp : Thunder_InferredOp<"slice"> {
  let summary = "strided slice";
  let description = [{
    For each dim, elements `start, start + step, ...` below `end`. The importer
    normalizes PyTorch's negative and out-of-range indices. On a dynamic dim,
    `start` and `end` are resolved at run time: an `end` past the size is
    clamped to it (the importer writes the int64 maximum for "to the end"), a
    negative `end` counts from the size (`size + end`, as in Python), and a
    negative `start` too, clamped at 0. Constraints: `start`, `end` and `step`
    have one entry per dim (slice_c1), `step >= 1` (slice_c2), and
    `0 <= start <= end <= size` where the size is static, `start <= end`
    where it is dynamic and both are negative or both are not (slice_c3).

    Example:
    ```mlir
    %s = thunder.slice %x, start = [0, 1], end = [4, 8], step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand, DenseI64ArrayAttr:$start,
      DenseI64ArrayAttr:$end, DenseI64ArrayAttr:$step);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `end` `=` $end `,` `step` `=` $step attr-dict
    `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def Thunder_ConcatOp : Thunder_InferredOp<"concat"> {
  let summary = "concatenate along a dimension";
  let description = [{
    `torch.cat`. Constraints: at least one input (concat_c1); all inputs have
    the same rank and element type (concat_c2); `dim` is in `[0, rank)`
    (concat_c3); the other dims are equal (concat_c4).

    Example:
    ```mlir
    %c = thunder.concat %a, %b dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Thunder_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dim attr-dict `:` functional-type($inputs, $result)
  }];
  let hasFolder = 1;
}

def Thunder_PadOp : Thunder_InferredOp<"pad"> {
  let summary = "constant padding (negative padding crops)";
  let description = [{
    `torch.nn.functional.pad(mode="constant")` over every dim: `low[i]`
    elements of `value` before dim `i` and `high[i]` after. Constraints: `low`
    and `high` have one entry per dim (pad_c1); no result dim is negative
    (pad_c2).

    Example:
    ```mlir
    %p = thunder.pad %x, low = [0, 1], high = [0, 2], value = 0.0 : tensor<4x5xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand, DenseI64ArrayAttr:$low,
      DenseI64ArrayAttr:$high, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `low` `=` $low `,` `high` `=` $high `,` `value` `=` $value attr-dict
    `:` type($operand) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

def Thunder_GatherOp : Thunder_InferredOp<"gather"> {
  let summary = "torch.gather along a dimension";
  let description = [{
    `result[i][j][k] = input[i][index[i][j][k]][k]` for `dim = 1` (and so on).
    Indices out of range are undefined behaviour at run time. Constraints: `input` and `index` have the same rank
    (gather_c1); `dim` is in range (gather_c2); every dim of `index` other than
    `dim` is at most the input's (gather_c3). The result has the index's shape
    and the input's element type.

    Example:
    ```mlir
    %g = thunder.gather %x, %idx dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$input, Thunder_IndexTensor:$index,
      I64Attr:$dim);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $index `dim` `=` $dim attr-dict `:` functional-type(operands, $result)
  }];
}

def Thunder_ScatterOp : Thunder_Op<"scatter", [Pure,
    AllTypesMatch<["input", "result"]>, AllElementTypesMatch<["input", "src"]>]> {
  let summary = "torch.scatter_reduce along a dimension";
  let description = [{
    The result is `input` with, for every position `p` of `index`, the element
    at `p` with `p[dim]` replaced by `index[p]` combined with `src[p]`:
    `reduce` is `none` (overwrite; the last write wins where indices repeat),
    `sum`, `prod`, `amax`, `amin` or `mean` (torch.scatter_reduce). With
    `include_self = false` the input's elements that receive a value do not
    take part in the reduction. Indices out of range are undefined behaviour at
    run time. Constraints: `input`, `index` and `src` have one rank
    (scatter_c1); `dim` is in range (scatter_c2); every dim of `index` is at
    most `src`'s, and at most `input`'s other than `dim` (scatter_c3); `reduce`
    is one of the names above (scatter_c4). `scatter`, `scatter_add`,
    `scatter_reduce` and `index_put` import as this op.

    Example:
    ```mlir
    %s = thunder.scatter %x, %idx, %src dim = 0 reduce = "sum" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$input, Thunder_IndexTensor:$index,
      Thunder_NumericTensor:$src, I64Attr:$dim,
      DefaultValuedAttr<StrAttr, "\"none\"">:$reduce,
      DefaultValuedAttr<BoolAttr, "true">:$include_self);
  let results = (outs Thunder_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $index `,` $src `dim` `=` $dim (`reduce` `=` $reduce^)?
    (`include_self` `=` $include_self^)? attr-dict `:` functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

def Thunder_IndexSelectOp : Thunder_InferredOp<"index_select"> {
  let summary = "select slices along a dimension by a 1-D index";
  let description = [{
    `torch.index_select`: dim `dim` of the result has the index's length.
    Constraints: `index` is 1-D (index_select_c1); `dim` is in range
    (index_select_c2).

    Example:
    ```mlir
    %s = thunder.index_select %x, %idx dim = 0 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$input, Thunder_IndexTensor:$index,
      I64Attr:$dim);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $index `dim` `=` $dim attr-dict `:` functional-type(operands, $result)
  }];
}

def Thunder_EmbeddingOp : Thunder_InferredOp<"embedding"> {
  let summary = "embedding lookup";
  let description = [{
    `torch.nn.functional.embedding(indices, weight)`: each index selects a row
    of `weight`; the result shape is the indices' shape followed by the row
    size. `weight` is 2-D (embedding_c1).

    Example:
    ```mlir
    %e = thunder.embedding %table, %ids : (tensor<1000x64xf32>, tensor<2x7xi64>) -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$weight, Thunder_IndexTensor:$indices);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $weight `,` $indices attr-dict `:` functional-type(operands, $result)
  }];
}

#endif // THUNDER_DIALECT_THUNDER_IR_TENSOROPS_TD
