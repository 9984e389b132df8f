// An argmax/argmin along a dynamic dim that is 0 in a run has no index to
// return (PyTorch raises): the model refuses the run when it computes its
// output shapes, before anything runs, naming the op and its source line,
// instead of reading past an empty input. Other sizes run; a static reduced
// dim needs no check. The CUDA model has the same check.
// RUN: rm -rf %t && thunder-compile %s -o %t --name am
// RUN: not thunder-run %t/libam.so --dim s0=0 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: thunder-run %t/libam.so --dim s0=3 | FileCheck %s --check-prefix=RUNS
// RUN: thunder-opt %s --thunder-cpu-pipeline | thunder-translate --thunder-to-cpp --name am | FileCheck %s --check-prefix=SOURCE
// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name am --file=model.cu | FileCheck %s --check-prefix=SOURCE

func.func @main(%x: tensor<?x8xf32> {thunder.name = "x", thunder.dim_symbols = ["s0", ""]}) -> (tensor<8xi64>, tensor<?xi64>) {
  %a = thunder.argmax %x dim = 0 : tensor<?x8xf32> -> tensor<8xi64>
  %b = thunder.argmin %x dim = 1 : tensor<?x8xf32> -> tensor<?xi64>
  return %a, %b : tensor<8xi64>, tensor<?xi64>
}

// EMPTY: thunder-run: error: model 'am' failed to compute its output shapes: argmax along dim 0, which is 0 in this run (at {{.*}}arg_reduce_empty_dim.mlir:13): an empty dim has no index to return (PyTorch raises too)

// RUNS: output 0 output_0: int64 [8]
// RUNS: output 1 output_1: int64 [3]

// SOURCE-LABEL: int output_shapes(const void *, const thunder_tensor *inputs,
// SOURCE-NEXT: int64_t *const *shapes, char *error, size_t error_size) {
// SOURCE: compute_symbols(inputs, sym);
// SOURCE-NEXT: if (sym[0] == 0) {
// SOURCE-NEXT: snprintf(error, error_size, "%s", "argmax along dim 0, which is 0 in this run
// SOURCE-NEXT: return 1;
// SOURCE-NEXT: }
// SOURCE-NOT: argmin along
// SOURCE: return 0;
