// RUN: thunder-opt %s --thunder-cpu-pipeline | thunder-translate --thunder-to-cpp --name rnd | FileCheck %s

// A random draw is a library kernel that reads the run's key from sym[] (after
// the dynamic sizes) and passes it to thunder_cpu::random; the program exports
// run_seeded through its random table. The two draws have their own streams.

// CHECK: constexpr int kRngSeed = kNumSymbols + 1, kRngOffset = kNumSymbols + 2;
// CHECK-LABEL: int run_model(
// CHECK-NEXT: const thunder_tensor *outputs, void *workspace, uint64_t seed,
// CHECK: int64_t sym[kNumSymbols + 3];
// CHECK: sym[kRngSeed] = int64_t(seed);
// CHECK: sym[kRngOffset] = int64_t(offset);
// CHECK: // kernel library_random_1 (library): random
// CHECK: const int64_t S[] = {sym[kRngSeed], sym[kRngOffset]};
// CHECK: // kernel library_random_2 (library): random
// CHECK: const int64_t S[] = {sym[kRngSeed], sym[kRngOffset]};
// CHECK: int run_seeded(
// CHECK: std::atomic<uint64_t> plain_runs{0};
// CHECK: const thunder_model_random_v1 *THUNDER_PASTE(thunder_model_entry_v1, _random)(void)
// CHECK: sizeof(thunder_model_random_v1), thunder_model_entry_v1(), run_seeded
// The kernel units themselves (kernels/, not printed here) call
// draw_random(p0, n, kind, digits, S[0], S[1], stream): see the CUDA test.

func.func @main(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<5xi64>) {
  %u = thunder.random uniform stream = 0 : tensor<8x4xf32>
  %s = thunder.add %x, %u : tensor<8x4xf32>
  %k = thunder.random bits stream = 1 : tensor<5xi64>
  %p = thunder.argsort %k dim = 0 : tensor<5xi64> -> tensor<5xi64>
  return %s, %p : tensor<8x4xf32>, tensor<5xi64>
}
