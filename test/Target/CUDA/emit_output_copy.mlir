// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name dup --file=model.cu | FileCheck %s

// A value returned twice is written by its kernel into the first output and
// copied into the second. The matmul runs on a stream of its own (the exp
// beside it), so the copy waits for the streams to join.

// CHECK-LABEL: static int enqueue(
// CHECK: on stream 1.
// CHECK: matmul(c,
// CHECK: rt.join(main);
// CHECK-NEXT: // Outputs no kernel wrote.
// CHECK-NEXT: cudaMemcpyAsync(out[2], {{.*}}, cudaMemcpyDeviceToDevice, main);

func.func @main(%x: tensor<4096xf32>, %w: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<4096xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %e = thunder.exp %x : tensor<4096xf32>
  %m = thunder.matmul %w, %y : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %e, %m, %m : tensor<4096xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
