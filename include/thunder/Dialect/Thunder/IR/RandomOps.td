// thunder.random: draws of the run's counter-based random number generator.
#ifndef THUNDER_DIALECT_THUNDER_IR_RANDOMOPS_TD
#define THUNDER_DIALECT_THUNDER_IR_RANDOMOPS_TD

include "thunder/Dialect/Thunder/IR/ThunderBase.td"
include "thunder/Dialect/Thunder/IR/RandomEnums.td"

def Thunder_RandomOp : Thunder_Op<"random", [Pure]> {
  let summary = "random numbers from the run's counter-based generator";
  let description = [{
    Element `i` (row-major) is drawn from Philox4x32-10 keyed by the run's
    seed, with the counter (i, stream, the run's offset): `uniform` in [0, 1),
    `normal` (Box-Muller: mean 0, standard deviation 1), or `bits` (64 uniform
    random bits). The seed and offset are the model's (set by the runtime,
    thunder_model_set_seed; the offset advances each run), so the op is a pure
    function of them, and two random ops of a program draw independent
    numbers because their `stream`s differ (the importer numbers them): CSE
    never merges two draws. The numbers are the same on every target for the
    same seed and offset, and differ from PyTorch eager's generator.
    Constraints: `uniform` and `normal` produce floats (random_c1), `bits`
    produces i64 (random_c2), `stream` is in [0, 2^32) (random_c3).

    Example:
    ```mlir
    %u = thunder.random uniform stream = 0 : tensor<?x4xf32>
    %k = thunder.random bits stream = 1 : tensor<5xi64>
    ```
  }];
  let arguments = (ins Thunder_RandomDistribution:$distribution, I64Attr:$stream);
  let results = (outs Thunder_Tensor:$result);
  let assemblyFormat = "$distribution `stream` `=` $stream attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // THUNDER_DIALECT_THUNDER_IR_RANDOMOPS_TD
