// gemm_in_place.cpp: Thunder's GEMM on a weight as the module holds it (read in
// place: [k, n], GPT-2's Conv1D, or [n, k] with --tb, nn.Linear's and a tied LM
// head's) against the same weight packed at compile time, in one process:
// alternating rounds, each weight cold (another of 256 MiB of copies per call,
// as a model's weights come from memory), the median GFLOP/s of each and their
// ratio. What `thunder.compile`'s default (pack_weights=False) costs per GEMM.
//
//   c++ -std=c++17 -O2 -march=native -fopenmp -Ilib/Target/CPU/Support
//     tools/bench/gemm_in_place.cpp -o /tmp/gemm_in_place
//   OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE /tmp/gemm_in_place M N K [--tb]
#include "thunder_cpu_gemm.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using thunder_gemm::i64;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M N K [--tb]\n", argv[0]);
    return 2;
  }
  const i64 m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  const bool tb = argc > 4 && std::strcmp(argv[4], "--tb") == 0;
  if (m <= 0 || n <= 0 || k <= 0) {
    std::fprintf(stderr, "M, N and K must be positive\n");
    return 2;
  }
  const i64 ldb = tb ? k : n;
  const i64 copies = std::max<i64>(2, (i64(256) << 20) / (k * n * 4 * 2));
  std::vector<float> a(m * k, 0.5f), c(m * n);
  std::vector<std::vector<float>> raw(copies), packed(copies);
  for (i64 i = 0; i < copies; ++i) {
    raw[i].assign(k * n, 0.01f * static_cast<float>(i + 1));
    packed[i].resize(thunder_gemm::packed_b_floats(k, n));
    thunder_gemm::pack_b_full(raw[i].data(), ldb, tb, k, n, packed[i].data());
  }
  const double flops = 2.0 * m * n * k;
  const int calls = static_cast<int>(std::max(1.0, 2e9 / flops)), rounds = 15;
  std::vector<double> rate[2];
  i64 next = 0;
  for (int round = 0; round < rounds; ++round)
    for (int packed_b = 0; packed_b < 2; ++packed_b) {
      const double start = now();
      for (int r = 0; r < calls; ++r, ++next) {
        const i64 i = next % copies;
        if (packed_b)
          thunder_gemm::sgemm(m, n, k, a.data(), k, false, nullptr, 0, false,
                              packed[i].data(), c.data(), n, 0.0f, thunder_gemm::NoEpilogue{});
        else
          thunder_gemm::sgemm(m, n, k, a.data(), k, false, raw[i].data(), ldb, tb, nullptr,
                              c.data(), n, 0.0f, thunder_gemm::NoEpilogue{});
      }
      rate[packed_b].push_back(flops * calls / (now() - start) / 1e9);
    }
  for (auto &r : rate)
    std::sort(r.begin(), r.end());
  const double in_place = rate[0][rounds / 2], packed_rate = rate[1][rounds / 2];
  std::printf("| %lld x %lld x %lld | %s | %.0f | %.0f | %.2f |\n", static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k), tb ? "[n, k]" : "[k, n]",
              in_place, packed_rate, in_place / packed_rate);
  return 0;
}
