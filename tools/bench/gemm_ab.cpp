// A/B benchmark of two versions of Thunder's GEMM (thunder_cpu_gemm.h) in one process:
// gemm_ab.py writes variants.h, both headers with their namespaces renamed, and builds
// this file against it. For each shape, the variants run in alternating rounds (9 rounds,
// each about 1 GFLOP of work per variant), B prepacked as a compiled model has it; the
// result is GFLOP/s, median/best over the rounds, and each variant's output is checked
// against a double-precision reference on sampled elements. On a shared or noisy
// machine the ratio between the columns of one row is the measurement, not the numbers.
#include "variants.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// One variant's GEMM; b is its B, prepacked or as given.
using Run = void (*)(const float *a, const float *b, float *c, long m, long n, long k);

} // namespace

int main(int argc, char **argv) {
  // --b=packed (default): B prepacked as a compiled model's weights are;
  // --b=nt / --b=nn: B given as is ([n, k] as nn.Linear holds it, or [k, n]),
  // packed by the GEMM per call (activations, or weights read in place).
  // --cold: each call reads another copy of B (prepacked or as given), the
  // copies together larger than the last-level cache, as a model's weights
  // come from memory (a model's whole weights exceed the caches; a shape
  // timed alone keeps its B in L3 from one call to the next).
  std::string mode = "packed";
  bool cold = false;
  while (argc > 1 && std::strncmp(argv[1], "--", 2) == 0) {
    if (std::strncmp(argv[1], "--b=", 4) == 0)
      mode = argv[1] + 4;
    else if (std::strcmp(argv[1], "--cold") == 0)
      cold = true;
    else {
      std::fprintf(stderr, "unknown option %s (--b=packed|nt|nn, --cold)\n", argv[1]);
      return 2;
    }
    --argc;
    ++argv;
  }
  static bool tb = mode != "nn", prepacked = mode == "packed";
  std::vector<std::array<long, 3>> shapes = {
      {1024, 1024, 1024}, {1, 4096, 1024},  {4, 3072, 768},    {8, 3072, 768},    {16, 768, 768},
      {16, 2304, 768},    {32, 3072, 768},  {128, 768, 3072},  {128, 4096, 1024},
      {512, 3072, 768},   {1024, 768, 768}};
  if (argc == 4)
    shapes = {{std::atol(argv[1]), std::atol(argv[2]), std::atol(argv[3])}};
  const char *names[] = {
#define V(ns) #ns,
      VARIANTS
#undef V
  };
  constexpr int kVariants = sizeof(names) / sizeof(names[0]);
  std::printf("B: %s%s\n\n| m x n x k |", mode.c_str(),
              cold ? ", cold (a copy larger than the caches per call)" : "");
  for (const char *name : names)
    std::printf(" %s GFLOP/s (median/best) |", name);
  std::printf(" %s / %s |\n|---|", names[kVariants - 1], names[0]);
  for (int v = 0; v <= kVariants; ++v)
    std::printf("---|");
  std::printf("\n");
  for (auto [m, n, k] : shapes) {
    std::mt19937 gen(0);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> a(m * k), w(n * k);
    for (float &x : a) x = dist(gen);
    for (float &x : w) x = dist(gen);
    // Packed B 64-byte aligned, as the library's weights blob and the GEMM's
    // own buffers are. std::vector's 16 bytes, which depend on where malloc
    // put each variant's copy, read up to 1.25x apart between two identical
    // headers.
    auto align64 = [](float *p) {
      return reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t(63));
    };
    // Copies of B per variant: one, or (--cold) enough for 128 MiB.
    const long bfloats = std::max<long>(n * k, 1);
    const int copies = cold ? static_cast<int>(std::clamp<long>(
                                  (long(128) << 20) / (4 * bfloats) + 1, 2, 4096))
                            : 1;
    std::vector<std::vector<float>> storage;
    // bcopy[v * copies + i]: variant v's copy i of B, prepacked (--b=packed)
    // or as given (nt, nn).
    std::vector<float *> bcopy;
    std::vector<std::vector<float>> out(kVariants, std::vector<float>(m * n));
    std::vector<Run> runs;
#define V(ns)                                                                              \
  {                                                                                        \
    const long floats = prepacked ? ns::packed_b_floats(k, n) : n * k;                    \
    for (int copy = 0; copy < copies; ++copy) {                                            \
      storage.emplace_back(floats + 16);                                                   \
      bcopy.push_back(align64(storage.back().data()));                                     \
      if (copy > 0)                                                                        \
        std::copy_n(bcopy[bcopy.size() - 1 - copy], floats, bcopy.back());                 \
      else if (prepacked)                                                                  \
        ns::pack_b_full(w.data(), tb ? k : n, tb, k, n, bcopy.back());                     \
      else                                                                                 \
        std::copy_n(w.data(), floats, bcopy.back());                                       \
    }                                                                                      \
    runs.push_back([](const float *a, const float *p, float *c, long m, long n, long k) { \
      ns::matmul_f32(a, p, prepacked ? p : nullptr, c, 1, m, n, k, false, tb, true,       \
                     ns::NoEpilogue{});                                                    \
    });                                                                                    \
  }
    VARIANTS
#undef V
    double flops = 2.0 * m * n * k;
    int reps = static_cast<int>(std::clamp(1e9 / flops, 3.0, 1000.0));
    std::vector<std::vector<double>> times(kVariants);
    std::vector<long> next(kVariants, 0);
    for (int v = 0; v < kVariants; ++v)
      runs[v](a.data(), bcopy[v * copies], out[v].data(), m, n, k);
    // The order of the variants alternates from round to round: in a fixed
    // order the same variant always ran first in a round, after the other's
    // data had taken the caches, which read as 0.94-1.18x between two
    // identical headers, depending on the shape.
    for (int round = 0; round < 10; ++round)
      for (int i = 0; i < kVariants; ++i) {
        const int v = round % 2 ? kVariants - 1 - i : i;
        double t0 = now();
        for (int r = 0; r < reps; ++r)
          runs[v](a.data(), bcopy[v * copies + next[v]++ % copies], out[v].data(), m, n, k);
        times[v].push_back((now() - t0) / reps);
      }
    std::printf("| %ld x %ld x %ld |", m, n, k);
    double median[kVariants];
    for (int v = 0; v < kVariants; ++v) {
      std::sort(times[v].begin(), times[v].end());
      median[v] = times[v][times[v].size() / 2];
      std::mt19937 pick(1);
      double worst = 0;
      for (int s = 0; s < 32; ++s) {
        long i = pick() % m, j = pick() % n;
        double ref = 0;
        for (long p = 0; p < k; ++p)
          ref += double(a[i * k + p]) * (tb ? w[j * k + p] : w[p * n + j]);
        worst = std::max(worst, std::abs(ref - out[v][i * n + j]) / (1 + std::abs(ref)));
      }
      std::printf(" %.0f / %.0f%s |", flops / median[v] / 1e9, flops / times[v][0] / 1e9,
                  worst > 1e-4 ? " WRONG" : "");
    }
    std::printf(" %.2fx |\n", median[0] / median[kVariants - 1]);
    std::fflush(stdout);
  }
}
