// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name conv --file=model.cu | FileCheck %s

// A convolution with the same padding on both sides goes through cuDNN
// (loaded at create(), its workspace the stream's library workspace, no
// im2col scratch), grouped or not; padding cuDNN's descriptor cannot hold
// (more on one side) is im2col, in scratch reserved per stream, + cuBLASLt.

// CHECK: constexpr bool kNeedsLt = true;
// CHECK-NEXT: constexpr bool kNeedsDnn = true;
// CHECK: constexpr uint64_t kLibWorkspace = 33554432ULL;
// Only the asymmetric convolution reserves im2col scratch: 8 channels x 2x2 taps x 16x16.
// CHECK: need[0] = std::max<uint64_t>(need[0], uint64_t(0 + ((uint64_t(2LL * 8LL * 2LL * 16LL * 2LL * 16LL) * 4ULL + 255) & ~255ULL)));
// CHECK-NOT: need[0] = 
// CHECK-LABEL: static int enqueue(
// CHECK: c.dnn = rt.have_dnn ? &rt.dnn : nullptr;
// CHECK: conv(c, a0, {{.*}}, 2LL, 4LL, 8LL, 1, w, true); }
// CHECK: conv(c, {{.*}}, 2LL, 8LL, 8LL, 8, w, true); }
// CHECK: conv(c, {{.*}}, 2LL, 8LL, 8LL, 1, w, false); }
// CHECK: return report_library(error, error_size, failure, &rt.dnn);
// CHECK-LABEL: int create(
// CHECK: st->rt.init(kNumStreams, kNumEvents, kNeedsLt, kNeedsDnn, kGraphs,
// CHECK: if (kNeedsDnn && !st->rt.have_dnn) {
// CHECK-NEXT: this model's convolutions need cuDNN: %s

func.func @main(%x: tensor<2x4x16x16xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>, %dw: tensor<8x1x3x3xf32>, %aw: tensor<8x8x2x2xf32>) -> tensor<2x8x16x16xf32> {
  %y = thunder.convolution %x, %w, %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<2x4x16x16xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  %r = thunder.relu %y : tensor<2x8x16x16xf32>
  %d = thunder.convolution %r, %dw stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 8 : (tensor<2x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x16x16xf32>
  %a = thunder.convolution %d, %aw stride = [1, 1] padding = [0, 1, 0, 1] dilation = [1, 1] groups = 1 : (tensor<2x8x16x16xf32>, tensor<8x8x2x2xf32>) -> tensor<2x8x16x16xf32>
  return %a : tensor<2x8x16x16xf32>
}
