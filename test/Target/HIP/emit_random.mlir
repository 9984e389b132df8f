// RUN: thunder-opt %s --thunder-hip-pipeline | thunder-translate --thunder-to-hip --name rnd --file=model.hip | FileCheck %s

// The HIP flavour of the shared GPU generator: the same draw as CUDA's (and
// the CPU's), no hipGraphs, the random table beside the entry.

// CHECK: constexpr bool kGraphs = false;
// CHECK: hipStream_t main, uint64_t seed,
// CHECK: draw_random(c, {{.*}}, 2, 0, sym[kRngSeed], sym[kRngOffset], 0);
// CHECK: int run_seeded(
// CHECK: THUNDER_PASTE(thunder_model_entry_v1, _random)

func.func @main() -> tensor<7xi64> {
  %k = thunder.random bits stream = 0 : tensor<7xi64>
  return %k : tensor<7xi64>
}
