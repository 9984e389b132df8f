// RUN: thunder-translate %s --thunder-to-cuda --name streams --file=model.cu | FileCheck %s

// The schedule's streams and waits become auxiliary streams and events; the
// memory plan's offsets place the kernels' results in the arena.

// CHECK: constexpr int kNumStreams = 2;
// CHECK: constexpr int kNumEvents = 1;
// CHECK: // The memory plan's arena (thunder-plan-memory).
// CHECK-NEXT: L.off[0] = 0ULL;
// CHECK-NEXT: L.off[1] = 256ULL;
// CHECK-LABEL: static int enqueue(
// CHECK: float *v{{[0-9]+}} = static_cast<float *>(out[0]);
// CHECK: rt.fork(main);
// CHECK: // Kernel 0: k_exp_0 (pointwise) on stream 0.
// CHECK: Ctx c = ctx(0);
// CHECK: // Kernel 1: k_neg_1 (pointwise) on stream 1.
// CHECK: Ctx c = ctx(1);
// CHECK: cudaEventRecord(rt.events[0], c.stream);
// CHECK: // Kernel 2: k_add_2 (pointwise) on stream 0.
// CHECK: Ctx c = ctx(0);
// CHECK-NEXT: cudaStreamWaitEvent(c.stream, rt.events[0], 0);
// CHECK: rt.join(main);

// A planned module: thunder-translate emits it as it is.
module attributes {thunder.phase = "plan"} {
  func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
    %e = thunder.fusion pointwise "k_exp_0" (%x) {thunder.stream = 0 : i64, thunder.offsets = array<i64: 0>} : (tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%a: tensor<64xf32>):
      %r = thunder.exp %a : tensor<64xf32>
      thunder.yield %r : tensor<64xf32>
    }
    %n = thunder.fusion pointwise "k_neg_1" (%x) {thunder.stream = 1 : i64, thunder.offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%a: tensor<64xf32>):
      %r = thunder.neg %a : tensor<64xf32>
      thunder.yield %r : tensor<64xf32>
    }
    %s = thunder.fusion pointwise "k_add_2" (%e, %n) {thunder.stream = 0 : i64, thunder.wait = array<i64: 1>, thunder.offsets = array<i64: -1>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
      %r = thunder.add %a, %b : tensor<64xf32>
      thunder.yield %r : tensor<64xf32>
    }
    return %s : tensor<64xf32>
  }
}
