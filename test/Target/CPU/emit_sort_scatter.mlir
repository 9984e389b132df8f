// thunder.argsort and thunder.scatter on the CPU: each is one library kernel
// unit calling the support header's argsort/scatter with the op's dim,
// direction, reduce mode (ScatterOp's order of names: none 0, sum 1, prod 2,
// amax 3, amin 4, mean 5) and include_self; a dynamic dim comes from the
// run's input shape. The header defines both.
// RUN: thunder-opt %s --thunder-cpu-pipeline | thunder-translate --thunder-to-cpp --name ss > %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: FileCheck %s --check-prefix=HEADER < %t.cpp

func.func @main(%x: tensor<4x8xf32>, %idx: tensor<2x8xi64>, %src: tensor<2x8xf32>, %y: tensor<?x5xi32>)
    -> (tensor<4x8xi64>, tensor<4x8xi64>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x5xi64>) {
  %a = thunder.argsort %x dim = 0 : tensor<4x8xf32> -> tensor<4x8xi64>
  %d = thunder.argsort %x dim = 1 descending = true : tensor<4x8xf32> -> tensor<4x8xi64>
  %s = thunder.scatter %x, %idx, %src dim = 0 : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %r = thunder.scatter %x, %idx, %src dim = 0 reduce = "amax" include_self = false : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %m = thunder.scatter %x, %idx, %src dim = 1 reduce = "mean" : (tensor<4x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %y1 = thunder.argsort %y dim = 0 descending = true : tensor<?x5xi32> -> tensor<?x5xi64>
  return %a, %d, %s, %r, %m, %y1 : tensor<4x8xi64>, tensor<4x8xi64>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x5xi64>
}

// The host program calls one kernel per op, with the operands' shapes.
// CHECK-LABEL: // ===== model.cpp =====
// CHECK: sym[0] = inputs[3].shape[0];
// CHECK: const int64_t a3_shape[2] = {sym[0], 5LL};
// CHECK: // kernel library_argsort_0 (library): argsort
// CHECK: void *const P[] = {(void *)a0, (void *)v{{[0-9]+}}};
// CHECK: thunder_kernel_[[SORT_ASC:[0-9a-f]+]](P, D, S);
// CHECK: // kernel library_argsort_1 (library): argsort
// CHECK: thunder_kernel_[[SORT_DESC:[0-9a-f]+]](P, D, S);
// CHECK: // kernel library_scatter_2 (library): scatter
// CHECK: void *const P[] = {(void *)a0, (void *)a1, (void *)a2, (void *)v{{[0-9]+}}};
// CHECK: const int64_t *const D[] = {a0_shape, a1_shape, a2_shape, v{{[0-9]+}}_shape};
// CHECK: thunder_kernel_[[SCATTER:[0-9a-f]+]](P, D, S);
// CHECK: // kernel library_scatter_3 (library): scatter
// CHECK: thunder_kernel_[[AMAX:[0-9a-f]+]](P, D, S);
// CHECK: // kernel library_scatter_4 (library): scatter
// CHECK: thunder_kernel_[[MEAN:[0-9a-f]+]](P, D, S);
// CHECK: // kernel library_argsort_5 (library): argsort
// CHECK: const int64_t *const D[] = {a3_shape, v{{[0-9]+}}_shape};
// CHECK: thunder_kernel_[[DYN:[0-9a-f]+]](P, D, S);

// Each kernel unit is the support call with the op's attributes.
// CHECK-DAG: void thunder_kernel_[[SORT_ASC]](void *const *P, const int64_t *const *D, const int64_t *S) {
// CHECK-DAG: argsort(p0, p0_shape, 2, 0, false, p1);
// CHECK-DAG: argsort(p0, p0_shape, 2, 1, true, p1);
// CHECK-DAG: scatter(p0, p0_shape, 2, 0, p1, p1_shape, p2, p2_shape, 0, true, p3);
// CHECK-DAG: scatter(p0, p0_shape, 2, 0, p1, p1_shape, p2, p2_shape, 3, false, p3);
// CHECK-DAG: scatter(p0, p0_shape, 2, 1, p1, p1_shape, p2, p2_shape, 5, true, p3);
// CHECK-DAG: const int32_t *p0 = static_cast<const int32_t *>(P[0]);
// CHECK-DAG: argsort(p0, p0_shape, 2, 0, true, p1);

// HEADER-LABEL: // ===== thunder_cpu.h =====
// HEADER: void argsort(const T *in, const i64 *shape, int rank, int dim, bool descending, i64 *out) {
// HEADER: void scatter(const T *in, const i64 *in_shape, int rank, int dim, const I *index,
