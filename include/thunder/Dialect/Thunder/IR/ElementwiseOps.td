// Elementwise ops of the `thunder` dialect: unary, binary, comparison, logical,
// select, clamp and dtype conversion.
#ifndef THUNDER_DIALECT_THUNDER_IR_ELEMENTWISEOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_ELEMENTWISEOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"

// Shared constraint of every elementwise op (docs/dialect.md, elementwise_c1):
// operands and result have one type; broadcasting and conversion are explicit.
// It is the AllTypesMatch trait below, which requires identical types.
// SameOperandsAndResultType alone would accept `?` against a static dim; it is
// kept because it gives the ops their generated inferReturnTypes.

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

class Thunder_UnaryOp<string mnemonic, Type T, string semantics,
                      list<Trait> traits = [],
                      string exampleType = "tensor<2x?xf32>">
    : Thunder_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
          SameOperandsAndResultType, AllTypesMatch<["operand", "result"]>,
          InferTypeOpInterface])> {
  let summary = "elementwise " # mnemonic;
  let description = semantics # [{

    The operand and the result have the same type (elementwise_c1).

    Example:
    ```mlir
    %r = thunder.}] # mnemonic # [{ %x : }] # exampleType # [{
    ```
  }];
  let arguments = (ins T:$operand);
  let results = (outs T:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class Thunder_UnaryFloatOp<string mnemonic, string semantics,
                           list<Trait> traits = []>
    : Thunder_UnaryOp<mnemonic, Thunder_FloatTensor, semantics # [{

    Floating-point element types only (unary_float_c1).}], traits>;

def Thunder_NegOp : Thunder_UnaryOp<"neg", Thunder_NumericTensor,
    "`-x` for each element. Integers wrap.", [Involution]> {
  let hasFolder = 1;
}
def Thunder_AbsOp : Thunder_UnaryOp<"abs", Thunder_NumericTensor,
    "`|x|` for each element.", [Idempotent]> {
  let hasFolder = 1;
}
def Thunder_ReluOp : Thunder_UnaryOp<"relu", Thunder_NumericTensor,
    "`max(x, 0)` for each element (NaN stays NaN).", [Idempotent]>;
def Thunder_ExpOp : Thunder_UnaryFloatOp<"exp", "`e^x` for each element.">;
def Thunder_LogOp : Thunder_UnaryFloatOp<"log", "Natural logarithm.">;
def Thunder_Log1pOp : Thunder_UnaryFloatOp<"log1p", "`log(1 + x)`, accurate near 0.">;
def Thunder_SqrtOp : Thunder_UnaryFloatOp<"sqrt", "Square root.">;
def Thunder_RsqrtOp : Thunder_UnaryFloatOp<"rsqrt", "`1 / sqrt(x)`.">;
def Thunder_ReciprocalOp : Thunder_UnaryFloatOp<"reciprocal", "`1 / x`.">;
def Thunder_TanhOp : Thunder_UnaryFloatOp<"tanh", "Hyperbolic tangent.">;
def Thunder_SigmoidOp : Thunder_UnaryFloatOp<"sigmoid", "`1 / (1 + e^-x)`.">;
def Thunder_ErfOp : Thunder_UnaryFloatOp<"erf", "The Gauss error function.">;
def Thunder_SinOp : Thunder_UnaryFloatOp<"sin", "Sine (radians).">;
def Thunder_CosOp : Thunder_UnaryFloatOp<"cos", "Cosine (radians).">;
def Thunder_FloorOp : Thunder_UnaryFloatOp<"floor", "Round toward -inf.", [Idempotent]>;
def Thunder_CeilOp : Thunder_UnaryFloatOp<"ceil", "Round toward +inf.", [Idempotent]>;
def Thunder_SiluOp : Thunder_UnaryFloatOp<"silu", "`x * sigmoid(x)` (SiLU, swish).">;
def Thunder_TanOp : Thunder_UnaryFloatOp<"tan", "Tangent (radians).">;
def Thunder_AsinOp : Thunder_UnaryFloatOp<"asin", "Inverse sine; NaN outside [-1, 1].">;
def Thunder_AcosOp : Thunder_UnaryFloatOp<"acos", "Inverse cosine; NaN outside [-1, 1].">;
def Thunder_AtanOp : Thunder_UnaryFloatOp<"atan", "Inverse tangent.">;
def Thunder_SinhOp : Thunder_UnaryFloatOp<"sinh", "Hyperbolic sine.">;
def Thunder_CoshOp : Thunder_UnaryFloatOp<"cosh", "Hyperbolic cosine.">;
def Thunder_AsinhOp : Thunder_UnaryFloatOp<"asinh", "Inverse hyperbolic sine.">;
def Thunder_AcoshOp : Thunder_UnaryFloatOp<"acosh", "Inverse hyperbolic cosine; NaN below 1.">;
def Thunder_AtanhOp : Thunder_UnaryFloatOp<"atanh", "Inverse hyperbolic tangent; NaN outside [-1, 1].">;
def Thunder_Expm1Op : Thunder_UnaryFloatOp<"expm1", "`e^x - 1`, accurate near 0.">;
def Thunder_Log2Op : Thunder_UnaryFloatOp<"log2", "Base-2 logarithm.">;
def Thunder_Log10Op : Thunder_UnaryFloatOp<"log10", "Base-10 logarithm.">;
def Thunder_TruncOp : Thunder_UnaryFloatOp<"trunc", "Round toward 0.", [Idempotent]>;
def Thunder_RoundOp : Thunder_UnaryFloatOp<"round",
    "Round to the nearest integer, ties to even (torch.round).", [Idempotent]>;
def Thunder_BitwiseNotOp : Thunder_UnaryOp<"bitwise_not", Thunder_IntTensor,
    "`~x` for each element of an integer tensor (bool uses logical_not).",
    [Involution], "tensor<8xi32>">;

def Thunder_GeluOp : Thunder_Op<"gelu", [Pure, Elementwise,
    SameOperandsAndResultType, AllTypesMatch<["operand", "result"]>,
          InferTypeOpInterface]> {
  let summary = "elementwise gelu, exact or tanh-approximated";
  let description = [{
    `x * Phi(x)` where Phi is the standard normal CDF
    (`0.5 * x * (1 + erf(x / sqrt(2)))`). With `approximate = tanh`, PyTorch's
    tanh approximation `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`.
    Floating-point element types only (unary_float_c1); operand and result have
    the same type (elementwise_c1).

    Example:
    ```mlir
    %r = thunder.gelu %x : tensor<8x16xf32>
    %t = thunder.gelu %y approximate = tanh : tensor<8x16xbf16>
    ```
  }];
  let arguments = (ins Thunder_FloatTensor:$operand,
      DefaultValuedAttr<Thunder_GeluApproximation,
                        "GeluApproximation::None">:$approximate);
  let results = (outs Thunder_FloatTensor:$result);
  let assemblyFormat = [{
    $operand (`approximate` `=` $approximate^)? attr-dict `:` type($result)
  }];
}

def Thunder_LogicalNotOp : Thunder_UnaryOp<"logical_not", Thunder_BoolTensor,
    "Boolean negation of i1 elements (bool_c1).", [Involution], "tensor<8xi1>">;

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

class Thunder_BinaryOp<string mnemonic, Type T, string semantics,
                       list<Trait> traits = [],
                       string exampleType = "tensor<4x?xf32>">
    : Thunder_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
          SameOperandsAndResultType, AllTypesMatch<["lhs", "rhs", "result"]>,
          InferTypeOpInterface])> {
  let summary = "elementwise " # mnemonic;
  let description = semantics # [{

    Both operands and the result have the same type (elementwise_c1): the
    importer broadcasts and converts first.

    Example:
    ```mlir
    %r = thunder.}] # mnemonic # [{ %a, %b : }] # exampleType # [{
    ```
  }];
  let arguments = (ins T:$lhs, T:$rhs);
  let results = (outs T:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Thunder_AddOp : Thunder_BinaryOp<"add", Thunder_NumericTensor,
    "`a + b`. Integers wrap.", [Commutative]> { let hasFolder = 1; }
def Thunder_SubOp : Thunder_BinaryOp<"sub", Thunder_NumericTensor,
    "`a - b`. Integers wrap."> { let hasFolder = 1; }
def Thunder_MulOp : Thunder_BinaryOp<"mul", Thunder_NumericTensor,
    "`a * b`. Integers wrap.", [Commutative]> { let hasFolder = 1; }
def Thunder_MaximumOp : Thunder_BinaryOp<"maximum", Thunder_NumericTensor,
    "Elementwise maximum; NaN if either is NaN (torch.maximum).", [Commutative]> {
  let hasFolder = 1;
}
def Thunder_MinimumOp : Thunder_BinaryOp<"minimum", Thunder_NumericTensor,
    "Elementwise minimum; NaN if either is NaN (torch.minimum).", [Commutative]> {
  let hasFolder = 1;
}
def Thunder_RemainderOp : Thunder_BinaryOp<"remainder", Thunder_NumericTensor,
    "Python-style remainder `a - floor(a / b) * b`: the sign follows the divisor (torch.remainder).">;
def Thunder_PowOp : Thunder_BinaryOp<"pow", Thunder_NumericTensor,
    "`a ^ b`. A floating-point power by the constant 1, 2, 3, 0.5, -0.5, -1 "
    "or -2 canonicalizes to multiplications, sqrt, rsqrt or reciprocal, as "
    "ATen computes torch.pow(tensor, scalar) in fp32, fp64 and bf16 (within "
    "an ulp of std::pow elsewhere; sqrt(-0) is -0).", [], "tensor<4x?xf32>"> {
  let hasCanonicalizer = 1;
}
def Thunder_Atan2Op : Thunder_BinaryOp<"atan2", Thunder_FloatTensor,
    "`atan(a / b)` with the quadrant from the signs of both (torch.atan2).">;
def Thunder_FmodOp : Thunder_BinaryOp<"fmod", Thunder_NumericTensor,
    "C-style remainder `a - trunc(a / b) * b`: the sign follows the dividend (torch.fmod).">;
def Thunder_BitwiseAndOp : Thunder_BinaryOp<"bitwise_and", Thunder_IntTensor,
    "`a & b` of integer elements (bool uses logical_and).", [Commutative], "tensor<8xi32>">;
def Thunder_BitwiseOrOp : Thunder_BinaryOp<"bitwise_or", Thunder_IntTensor,
    "`a | b` of integer elements (bool uses logical_or).", [Commutative], "tensor<8xi32>">;
def Thunder_BitwiseXorOp : Thunder_BinaryOp<"bitwise_xor", Thunder_IntTensor,
    "`a ^ b` of integer elements (bool uses logical_xor).", [Commutative], "tensor<8xi32>">;
def Thunder_LogicalAndOp : Thunder_BinaryOp<"logical_and", Thunder_BoolTensor,
    "Boolean and of i1 elements (bool_c1).", [Commutative], "tensor<8xi1>">;
def Thunder_LogicalOrOp : Thunder_BinaryOp<"logical_or", Thunder_BoolTensor,
    "Boolean or of i1 elements (bool_c1).", [Commutative], "tensor<8xi1>">;
def Thunder_LogicalXorOp : Thunder_BinaryOp<"logical_xor", Thunder_BoolTensor,
    "Boolean exclusive or of i1 elements (bool_c1).", [Commutative], "tensor<8xi1>">;

def Thunder_DivOp : Thunder_Op<"div", [Pure, Elementwise,
    SameOperandsAndResultType, AllTypesMatch<["lhs", "rhs", "result"]>,
          InferTypeOpInterface]> {
  let summary = "elementwise division: true, truncating or floor";
  let description = [{
    `a / b`. With `rounding_mode = none` (the default) it is true division and
    requires a floating-point type (div_c1); the importer converts integer
    operands to the default float first, as PyTorch does. `trunc` rounds toward
    zero and `floor` toward -inf (torch.div's rounding_mode, `//` is floor).
    Operands and the result have the same type (elementwise_c1).

    Example:
    ```mlir
    %q = thunder.div %a, %b : tensor<4xf32>
    %f = thunder.div %i, %j rounding_mode = floor : tensor<4xi64>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$lhs, Thunder_NumericTensor:$rhs,
      DefaultValuedAttr<Thunder_RoundingMode, "RoundingMode::None">:$rounding_mode);
  let results = (outs Thunder_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`rounding_mode` `=` $rounding_mode^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Comparison, select, clamp
//===----------------------------------------------------------------------===//

def Thunder_CompareOp : Thunder_Op<"compare", [Pure, Elementwise,
    AllTypesMatch<["lhs", "rhs"]>,
    TypesMatchWith<"result is an i1 tensor of the operands' shape", "lhs",
        "result", "::mlir::thunder::getI1TensorLike($_self)">]> {
  let summary = "elementwise comparison producing i1";
  let description = [{
    Compares `lhs` and `rhs` elementwise with `direction` (eq, ne, lt, le, gt,
    ge); comparisons with NaN are false except `ne`. Both operands have the same
    type (elementwise_c1); the result is an i1 tensor of the same shape
    (compare_c1).

    Example:
    ```mlir
    %m = thunder.compare lt, %a, %b : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Thunder_ComparisonDirection:$direction,
      Thunder_Tensor:$lhs, Thunder_Tensor:$rhs);
  let results = (outs Thunder_BoolTensor:$result);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def Thunder_WhereOp : Thunder_Op<"where", [Pure, Elementwise,
    AllTypesMatch<["on_true", "on_false", "result"]>,
    TypesMatchWith<"condition is an i1 tensor of the result's shape", "result",
        "condition", "::mlir::thunder::getI1TensorLike($_self)">]> {
  let summary = "elementwise select";
  let description = [{
    `condition ? on_true : on_false` for each element. `on_true`, `on_false`
    and the result have one type (elementwise_c1); `condition` is an i1 tensor
    of the same shape (where_c1).

    Example:
    ```mlir
    %r = thunder.where %c, %a, %b : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Thunder_BoolTensor:$condition, Thunder_Tensor:$on_true,
      Thunder_Tensor:$on_false);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($result)
  }];
  let hasFolder = 1;
}

def Thunder_ClampOp : Thunder_Op<"clamp", [Pure, Elementwise,
    SameOperandsAndResultType, AllTypesMatch<["operand", "result"]>,
          InferTypeOpInterface]> {
  let summary = "elementwise clamp to constant bounds";
  let description = [{
    `min(max(x, min), max)` with scalar bounds (torch.clamp with numbers; tensor
    bounds import as `maximum`/`minimum`). At least one bound is given
    (clamp_c1); when both are, `min <= max` (clamp_c2). For integer tensors the
    bounds must be integral values (clamp_c3).

    Example:
    ```mlir
    %r = thunder.clamp %x min = 0.0 max = 6.0 : tensor<1x32xf32>
    ```
  }];
  let arguments = (ins Thunder_NumericTensor:$operand, OptionalAttr<F64Attr>:$min,
      OptionalAttr<F64Attr>:$max);
  let results = (outs Thunder_NumericTensor:$result);
  let assemblyFormat = [{
    $operand (`min` `=` $min^)? (`max` `=` $max^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Conversion
//===----------------------------------------------------------------------===//

def Thunder_ConvertOp : Thunder_Op<"convert", [Pure, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "elementwise dtype conversion";
  let description = [{
    Converts each element to the result's element type with PyTorch's `.to()`
    semantics: float to integer truncates toward zero, to i1 is `x != 0`, float
    narrowing rounds to nearest even. The shape does not change (convert_c1).

    Example:
    ```mlir
    %h = thunder.convert %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Thunder_Tensor:$operand);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

#endif // THUNDER_DIALECT_THUNDER_IR_ELEMENTWISEOPS_TD
