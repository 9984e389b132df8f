// Op interfaces of the `thunder` dialect.
#ifndef THUNDER_DIALECT_THUNDER_IR_THUNDERINTERFACES_TD
#define THUNDER_DIALECT_THUNDER_IR_THUNDERINTERFACES_TD

include "mlir/IR/OpBase.td"

def Thunder_ReductionOpInterface : OpInterface<"ReductionOpInterface"> {
  let description = [{
    A reduction over dims of one tensor: thunder.sum, mean, max, min and
    prod (Thunder_ReduceOp). Passes and code generators that only need the
    input, the reduced dims and keepdim read them through this interface
    rather than switching on the five ops; which reduction it is stays the
    op's type.
  }];
  let cppNamespace = "::mlir::thunder";
  let methods = [
    InterfaceMethod<"The reduced tensor.", "::mlir::Value", "getInput", (ins),
                    [{ return $_op.getInput(); }]>,
    InterfaceMethod<"The reduced dims, each in [0, rank), none twice.",
                    "::llvm::ArrayRef<int64_t>", "getDims", (ins),
                    [{ return $_op.getDims(); }]>,
    InterfaceMethod<"Whether the reduced dims stay as size 1.", "bool",
                    "getKeepdim", (ins), [{ return $_op.getKeepdim(); }]>,
  ];
  let extraClassDeclaration = [{
    /// Whether the reduced dims are the input's trailing ones, in any order.
    bool reducesTrailingDims();
  }];
}

#endif // THUNDER_DIALECT_THUNDER_IR_THUNDERINTERFACES_TD
