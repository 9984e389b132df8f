// The `thunder` dialect: its definition, type constraints, enums and op base classes.
#ifndef THUNDER_DIALECT_THUNDER_IR_THUNDERBASE_TD
#define THUNDER_DIALECT_THUNDER_IR_THUNDERBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Thunder_Dialect : Dialect {
  let name = "thunder";
  let cppNamespace = "::mlir::thunder";
  let summary = "Graph-level tensor operations of the Thunder compiler";
  let description = [{
    The `thunder` dialect is the graph-level IR that a PyTorch program is imported
    into (one `func.func` per exported program) and that fusion, scheduling and
    memory planning work on.

    Design rules, written down in `docs/dialect.md`:

    * Value semantics on builtin ranked `tensor` types, static or `?` dims, with
      element types f64, f32, f16, bf16, f8E4M3FN, f8E5M2, i64, i32, i8 and i1
      (i1 is PyTorch's `bool`; integers are signless and signed in meaning).
    * Nothing is implicit: broadcasting (`thunder.broadcast`, `thunder.expand`)
      and dtype conversion (`thunder.convert`) are ops of their own, inserted by
      the importer following PyTorch's promotion rules. Elementwise ops take
      operands of one type.
    * Composites with a fast path (softmax, normalizations, attention) are ops
      that keep their meaning until a target decides; each has a decomposition
      into primitives (`thunder-decompose-composites`).
    * Weights are `thunder.constant` ops holding `dense_resource` blobs or
      `thunder.weight` ops that name an entry of an external weights table; large
      tensors never appear as literal bytes in IR text.
    * After fusion, every op that runs on a device is inside a `thunder.fusion`
      region; one region becomes one kernel.
  }];
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Thunder_FloatElement : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2],
    "floating-point (f64, f32, f16, bf16, f8E4M3FN, f8E5M2)">;
def Thunder_IntElement : AnyTypeOf<[I64, I32, I8], "integer (i64, i32, i8)">;
def Thunder_BoolElement : TypeAlias<I1, "bool (i1)">;
def Thunder_NumericElement : AnyTypeOf<[Thunder_FloatElement, Thunder_IntElement],
    "numeric (floating-point or integer)">;
def Thunder_Element : AnyTypeOf<[Thunder_NumericElement, Thunder_BoolElement],
    "supported element type">;

def Thunder_Tensor : RankedTensorOf<[Thunder_Element]>;
def Thunder_FloatTensor : RankedTensorOf<[Thunder_FloatElement]>;
def Thunder_NumericTensor : RankedTensorOf<[Thunder_NumericElement]>;
def Thunder_BoolTensor : RankedTensorOf<[I1]>;
def Thunder_IntTensor : RankedTensorOf<[Thunder_IntElement]>;
def Thunder_IndexTensor : RankedTensorOf<[I64, I32]>;
def Thunder_I64Tensor : RankedTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Thunder_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">]> {
  let cppNamespace = "::mlir::thunder";
}

def Thunder_RoundingMode : I32EnumAttr<"RoundingMode",
    "rounding of a division (PyTorch's rounding_mode)", [
      I32EnumAttrCase<"None", 0, "none">, I32EnumAttrCase<"Trunc", 1, "trunc">,
      I32EnumAttrCase<"Floor", 2, "floor">]> {
  let cppNamespace = "::mlir::thunder";
}

def Thunder_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "approximation of gelu (PyTorch's approximate=)", [
      I32EnumAttrCase<"None", 0, "none">, I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let cppNamespace = "::mlir::thunder";
}

def Thunder_FusionKind : I32EnumAttr<"FusionKind",
    "the kind of kernel a fusion region becomes", [
      I32EnumAttrCase<"Pointwise", 0, "pointwise">,
      I32EnumAttrCase<"Reduction", 1, "reduction">,
      I32EnumAttrCase<"Gemm", 2, "gemm">,
      I32EnumAttrCase<"Conv", 3, "conv">,
      I32EnumAttrCase<"Attention", 4, "attention">,
      I32EnumAttrCase<"DataMovement", 5, "data_movement">,
      I32EnumAttrCase<"Library", 6, "library">]> {
  let cppNamespace = "::mlir::thunder";
}

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Thunder_Op<string mnemonic, list<Trait> traits = []>
    : Op<Thunder_Dialect, mnemonic, traits>;

/// An op whose result type the verifier derives from its operands and
/// attributes (`inferReturnTypes` in C++); the written result type must match.
class Thunder_InferredOp<string mnemonic, list<Trait> traits = []>
    : Thunder_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

#endif // THUNDER_DIALECT_THUNDER_IR_THUNDERBASE_TD
