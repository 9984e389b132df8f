// RUN: thunder-opt %s --thunder-cuda-pipeline | thunder-translate --thunder-to-cuda --name rnd --file=model.cu | FileCheck %s

// The GPU program passes the run's key to the support header's random kernel
// (the CPU's numbers: thunder_scalar.h's Philox), captures no CUDA graphs (a
// replay would repeat the captured key) and exports its random table.

// CHECK: constexpr int kRngSeed = kNumSymbols + 1, kRngOffset = kNumSymbols + 2;
// CHECK: constexpr bool kGraphs = false;
// CHECK-LABEL: static int enqueue(
// CHECK-NEXT: cudaStream_t main, uint64_t seed,
// CHECK: sym[kRngSeed] = int64_t(seed);
// CHECK: draw_random(c, {{.*}}, 1, 24, sym[kRngSeed], sym[kRngOffset], 0);
// CHECK: draw_random(c, {{.*}}, 0, 53, sym[kRngSeed], sym[kRngOffset], 1);
// CHECK: int run_seeded(
// CHECK: std::atomic<uint64_t> plain_runs{0};
// CHECK: return run_seeded(state, inputs, outputs, workspace, stream, 0, plain_runs.fetch_add(1),
// CHECK: THUNDER_PASTE(thunder_model_entry_v1, _random)

func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<3xf64>) {
  %n = thunder.random normal stream = 0 : tensor<64xf32>
  %s = thunder.mul %x, %n : tensor<64xf32>
  %u = thunder.random uniform stream = 1 : tensor<3xf64>
  return %s, %u : tensor<64xf32>, tensor<3xf64>
}
