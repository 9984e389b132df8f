// A slice of a dynamic dim from a negative start (`x[-3:]`, and `x[-1]`, a
// language model's last position, as a slice then a reshape) counts from the
// run-time size, clamped at 0 as in Python: the kernels' index, on the CPU and
// CUDA, and the result's size in compute_symbols. With two rows, `x[-3:]` is
// both of them.
// RUN: thunder-opt %s --thunder-cpu-pipeline | thunder-translate --thunder-to-cpp --name tail | FileCheck %s --check-prefixes=SIZE,INDEX
// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name tail --file=model.cu | FileCheck %s --check-prefixes=SIZE,INDEX
// RUN: rm -rf %t && thunder-compile %s -o %t --name tail
// RUN: thunder-run %t/libtail.so --dim s0=5 | FileCheck %s --check-prefix=FIVE
// RUN: thunder-run %t/libtail.so --dim s0=2 | FileCheck %s --check-prefix=TWO

func.func @main(%x: tensor<?x8xf32> {thunder.name = "x", thunder.dim_symbols = ["s0", ""]}) -> (tensor<?x8xf32>, tensor<8xf32>) {
  %t = thunder.slice %x, start = [-3, 0], end = [9223372036854775807, 8], step = [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  %two = thunder.constant dense<2.0> : tensor<f32>
  %twos = thunder.broadcast %two, dims = [] : tensor<f32> -> tensor<?x8xf32>
  %d = thunder.mul %t, %twos : tensor<?x8xf32>
  %l = thunder.slice %x, start = [-1, 0], end = [9223372036854775807, 8], step = [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  %r = thunder.reshape %l : tensor<?x8xf32> -> tensor<8xf32>
  %one = thunder.constant dense<1.0> : tensor<8xf32>
  %s = thunder.add %r, %one : tensor<8xf32>
  return %d, %s : tensor<?x8xf32>, tensor<8xf32>
}

// SIZE: std::max<int64_t>(0, (
// SIZE-SAME: - std::max<int64_t>(0, {{.*}} - 3LL)
// INDEX-DAG: > 3LL ? {{.*}} - 3LL : 0LL)
// INDEX-DAG: > 1LL ? {{.*}} - 1LL : 0LL)

// FIVE: output 0 output_0: float32 [3, 8]
// FIVE: output 1 output_1: float32 [8]
// TWO: output 0 output_0: float32 [2, 8]
