// The distributions of thunder.random. A file of its own so that its enum
// declarations (RandomEnums.h.inc) hold this enum alone.
#ifndef THUNDER_DIALECT_THUNDER_IR_RANDOMENUMS_TD
#define THUNDER_DIALECT_THUNDER_IR_RANDOMENUMS_TD

include "mlir/IR/EnumAttr.td"

def Thunder_RandomDistribution : I32EnumAttr<"RandomDistribution",
    "what thunder.random draws", [
      I32EnumAttrCase<"Uniform", 0, "uniform">,
      I32EnumAttrCase<"Normal", 1, "normal">,
      I32EnumAttrCase<"Bits", 2, "bits">]> {
  let cppNamespace = "::mlir::thunder";
}

#endif // THUNDER_DIALECT_THUNDER_IR_RANDOMENUMS_TD
