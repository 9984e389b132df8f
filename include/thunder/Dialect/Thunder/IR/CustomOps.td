// The user's own operators in the `thunder` dialect: a call of a kernel the
// user registered (thunder.register_kernel, thunder-compile --custom-ops).
#ifndef THUNDER_DIALECT_THUNDER_IR_CUSTOMOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_CUSTOMOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"

def Thunder_CustomCallOp : Thunder_Op<"custom_call", [Pure]> {
  let summary = "a call of a user-registered kernel";
  let description = [{
    Calls the kernel `callee`, which the user registered for a PyTorch custom
    op (`torch.library.custom_op("mylib::op")`, exported as
    `mylib.op.default`); `op` keeps that name for messages. The kernel reads
    `inputs` and writes fresh `results` whose shapes and element types are
    the declared ones (the op's meta kernel, as torch.export recorded them).
    Backends call it through the C ABI of `include/thunder-c/custom_op.h`:
    pointers, shapes and dtypes of inputs and results, and the op's scalar
    arguments (`scalars`, as doubles, in schema order).

    Constraints: `callee` is a C identifier (custom_call_c1); results do not
    alias inputs, and inputs are not written (custom_call_c2: what
    torch.library.custom_op requires of an op with `mutates_args=()`, so the
    op is `Pure` and is scheduled and memory-planned like any kernel). A
    dynamic dim of a result carries the symbol torch.export gave it (the meta
    kernel's), from which the backends size it at run time.

    Example:
    ```mlir
    %y = thunder.custom_call @mylib_rms_norm "mylib.rms_norm.default" (%x, %w)
        scalars [1.0e-06] : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, StrAttr:$op,
      Variadic<Thunder_Tensor>:$inputs,
      DefaultValuedAttr<F64ArrayAttr, "{}">:$scalars);
  let results = (outs Variadic<Thunder_Tensor>:$results);
  let assemblyFormat = [{
    $callee $op `(` $inputs `)` (`scalars` $scalars^)? attr-dict `:`
    functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
}

#endif // THUNDER_DIALECT_THUNDER_IR_CUSTOMOPS_TD
