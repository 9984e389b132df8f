// Reduction ops of the `thunder` dialect: sum, mean, max, min, prod, cumsum,
// argmax, argmin.
#ifndef THUNDER_DIALECT_THUNDER_IR_REDUCTIONOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_REDUCTIONOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"
include "thunder/Dialect/Thunder/IR/ThunderInterfaces.td"

// Shared constraints (docs/dialect.md, reduce_c1..reduce_c3) are checked in
// `inferReduction` (ReductionOps.cpp) from inferReturnTypes.
class Thunder_ReduceOp<string mnemonic, Type T, string semantics>
    : Thunder_InferredOp<mnemonic, [Thunder_ReductionOpInterface]> {
  let summary = mnemonic # " over dimensions";
  let description = semantics # [{

    `dims` lists the reduced dims: not empty (reduce_c1), each in
    `[0, rank)` (reduce_c2), no dim twice (reduce_c3). With `keepdim` the
    reduced dims stay as size 1, otherwise they are removed.

    Example:
    ```mlir
    %r = thunder.}] # mnemonic # [{ %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    %k = thunder.}] # mnemonic # [{ %x dims = [0, 1] keepdim : tensor<4x8xf32> -> tensor<1x1xf32>
    ```
  }];
  let arguments = (ins T:$input, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs T:$result);
  let assemblyFormat = [{
    $input `dims` `=` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Thunder_SumOp : Thunder_ReduceOp<"sum", Thunder_NumericTensor,
    "Sum of the elements. The importer chooses the accumulation dtype "
    "(PyTorch sums integers as i64).">;
def Thunder_MeanOp : Thunder_ReduceOp<"mean", Thunder_FloatTensor,
    "Arithmetic mean; floating-point element types only (unary_float_c1).">;
def Thunder_MaxOp : Thunder_ReduceOp<"max", Thunder_NumericTensor,
    "Largest element; NaN if any element is NaN.">;
def Thunder_MinOp : Thunder_ReduceOp<"min", Thunder_NumericTensor,
    "Smallest element; NaN if any element is NaN.">;
def Thunder_ProdOp : Thunder_ReduceOp<"prod", Thunder_NumericTensor,
    "Product of the elements.">;

class Thunder_ArgReduceOp<string mnemonic, string semantics>
    : Thunder_InferredOp<mnemonic> {
  let summary = "index of the " # semantics # " along a dimension";
  let description = [{
    The i64 index of the first }] # semantics # [{ element along `dim` (NaN counts
    as the extreme, as in PyTorch). `dim` is in `[0, rank)` (argreduce_c1); the
    result is i64 with `dim` removed, or kept as size 1 with `keepdim`.

    Example:
    ```mlir
    %i = thunder.}] # mnemonic # [{ %logits dim = 1 : tensor<4x10xf32> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$input, I64Attr:$dim, UnitAttr:$keepdim);
  let results = (outs Thunder_I64Tensor:$result);
  let assemblyFormat = [{
    $input `dim` `=` $dim (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Thunder_CumsumOp : Thunder_Op<"cumsum", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "cumulative sum along a dimension";
  let description = [{
    `torch.cumsum`: element `i` along `dim` is the sum of elements `0..i`.
    `dim` is in `[0, rank)` (cumsum_c1). The importer converts the input to
    the result dtype first (PyTorch sums bool and integers as i64).

    Example:
    ```mlir
    %c = thunder.cumsum %x dim = 1 : tensor<2x16xi64>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$input, I64Attr:$dim);
  let results = (outs Thunder_NumericTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Thunder_ArgSortOp : Thunder_Op<"argsort", [Pure]> {
  let summary = "stable sorting permutation along a dimension";
  let description = [{
    The i64 indices that sort `input` along `dim` (ascending, or descending
    with `descending`), ties in their original order; NaN sorts above every
    number, as in torch.sort. `sort`, `topk`, `kthvalue` and `msort` import as
    this and a `gather`. `dim` is in `[0, rank)` (argsort_c1); the result has
    the input's shape (argsort_c2).

    Example:
    ```mlir
    %i = thunder.argsort %x dim = 1 descending = true : tensor<2x16xf32> -> tensor<2x16xi64>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$input, I64Attr:$dim,
      DefaultValuedAttr<BoolAttr, "false">:$descending);
  let results = (outs Thunder_I64Tensor:$result);
  let assemblyFormat = [{
    $input `dim` `=` $dim (`descending` `=` $descending^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Thunder_ArgMaxOp : Thunder_ArgReduceOp<"argmax", "largest">;
def Thunder_ArgMinOp : Thunder_ArgReduceOp<"argmin", "smallest">;

#endif // THUNDER_DIALECT_THUNDER_IR_REDUCTIONOPS_TD
