// The CPU backend's custom_call: the kernel declared in the C ABI of
// thunder-c/custom_op.h, called with descriptors of its operands and results
// and its scalars (one library kernel, scheduled and planned like any), and
// the registered source added as a translation unit of its own; a kernel with
// no CPU source is refused, naming the op.

// RUN: thunder-compile %s --target=cpu --compile-to=source --name m | FileCheck %s
// RUN: sed 's/cpu_source = "[^"]*"/cpu_source = ""/' %s > %t.nocpu.mlir
// RUN: not thunder-compile %t.nocpu.mlir --target=cpu --compile-to=source 2>&1 | FileCheck %s --check-prefix=NOCPU

// CHECK: extern "C" int mylib_k(const thunder_tensor *, int32_t, const thunder_tensor *, int32_t,
// CHECK: // kernel {{.*}} (library): custom_call
// CHECK: const thunder_tensor custom_in[1] = {
// CHECK: const thunder_tensor custom_out[1] = {
// CHECK: static const double custom_scalars[1] = {2};
// CHECK: if (int status = mylib_k(custom_in, 1, custom_out, 1, custom_scalars, 1, nullptr)) {
// CHECK-NEXT: return status;
// CHECK: custom_mylib_k.cpp
// CHECK: #include "thunder-c/custom_op.h"
// CHECK: extern "C" int mylib_k(THUNDER_CUSTOM_KERNEL_PARAMS) { return 0; }

// NOCPU: error: the custom op mylib.k.default has no cpu kernel: register one with cpu=<C++ source or (library, symbol)> (thunder.register_kernel or --custom-ops)

module attributes {thunder.custom_kernels = {mylib_k = {cpu_library = "", cpu_source = "extern \22C\22 int mylib_k(THUNDER_CUSTOM_KERNEL_PARAMS) { return 0; }", cuda_source = "", op = "mylib.k.default"}}} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = thunder.exp %x : tensor<4xf32>
    %y = thunder.custom_call @mylib_k "mylib.k.default" (%a) scalars [2.0] : (tensor<4xf32>) -> tensor<4xf32>
    %z = thunder.add %x, %y : tensor<4xf32>
    return %z : tensor<4xf32>
  }
}
