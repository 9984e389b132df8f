// GEMM microbenchmark: Thunder's own GEMM (lib/Target/CPU/Support/thunder_cpu_gemm.h,
// weights prepacked as a compiled model has them) against oneDNN's dnnl_sgemm and
// OpenBLAS's cblas_sgemm, on the linear layers of the zoo (test/python/zoo.py, "large"
// sizes) at m = 1 .. 1024 and at 1024^3, interleaved per shape (round-robin, median of
// the rounds), in GFLOP/s and as a fraction of the FMA peak measured by an FMA-only loop
// on the same threads. MLAS (ONNX Runtime) is measured by gemm_ort.py on the same shapes.
// The measurement behind the CPU backend's choice of GEMM (docs/performance.md, "GEMM
// microbenchmark"):
//
//   c++ -std=c++17 -O2 -march=native -fopenmp -Ilib/Target/CPU/Support \
//       tools/bench/gemm_libraries.cpp -o /tmp/gemm -lopenblas -ldnnl
//   OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=10000 OPENBLAS_THREAD_TIMEOUT=4 /tmp/gemm \
//       [--cpu-time] [--quick | --shape M N K [LAYER]]
//
// GEMM_LIBRARIES=thunder (or any of thunder,onednn,openblas, comma-separated) runs only
// those; the others' columns read "-". Each library's threads wait between its calls
// (OpenBLAS's spin, OpenMP's unless passive) and take CPU from the next library's
// round: on a 2-vCPU VM that halved Thunder's numbers (1024^3: 102 against 204
// GFLOP/s). OPENBLAS_THREAD_TIMEOUT=4 (read when OpenBLAS loads, before main) stops
// OpenBLAS's spin; GOMP_SPINCOUNT=10000 lets OpenMP's workers spin briefly between calls,
// as Thunder's runtime does. gemm_ort.py sets both. Run one library per process (and
// compare ratios of runs taken close together) where that still matters.
//
// With -march=x86-64-v3 the Thunder column is its AVX2 path (oneDNN and OpenBLAS pick
// their kernels at run time either way).
#include "fma_peak.h"
#include "thunder_cpu_gemm.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

/// With --cpu-time: the process's CPU time divided by the thread count (on a machine
/// shared with other work, what the threads got of the cores, not the wall clock).
bool cpuTime = false;
int timedThreads = 1;

double now() {
  if (cpuTime) {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (t.tv_sec + 1e-9 * t.tv_nsec) / timedThreads;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Shape {
  long m, n, k;
  const char *what;
};

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "--cpu-time") == 0) {
    cpuTime = true;
    --argc;
    ++argv;
  }
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // --shape M N K [LAYER]: that one row, without the header (gemm_ort.py interleaves
  // ONNX Runtime with it shape by shape).
  bool one = argc >= 5 && std::strcmp(argv[1], "--shape") == 0;
  int threads = omp_get_max_threads();
  timedThreads = cpuTime ? threads : 1;
  // Which libraries run (GEMM_LIBRARIES, default all).
  const char *names[3] = {"thunder", "onednn", "openblas"};
  bool enabled[3] = {true, true, true};
  if (const char *only = std::getenv("GEMM_LIBRARIES")) {
    std::string list = std::string(",") + only + ",";
    for (int lib = 0; lib < 3; ++lib)
      enabled[lib] = list.find(std::string(",") + names[lib] + ",") != std::string::npos;
  }
  openblas_set_num_threads(enabled[2] ? threads : 1);
  // (n, k) of the zoo's linear layers, weights [n, k] as nn.Linear has them.
  struct Layer {
    long n, k;
    const char *what;
  } layers[] = {{4096, 1024, "mlp fc1"},          {4096, 4096, "mlp fc2"},
                {768, 768, "bert/llama/vit attn"}, {2304, 768, "gpt2 c_attn"},
                {3072, 768, "ffn up"},             {768, 3072, "ffn down"},
                {32000, 768, "lm head"}};
  std::vector<long> ms = {1, 8, 16, 32, 128, 512, 1024};
  if (quick)
    ms = {1, 16, 128};
  std::vector<Shape> shapes{{1024, 1024, 1024, "1024^3"}};
  for (const Layer &l : layers)
    for (long m : ms)
      if (!(quick && l.n * l.k > 4096L * 1024))
        shapes.push_back({m, l.n, l.k, l.what});

  // The peak once up front (best of 5), and again in every round next to the GEMMs:
  // on a shared machine the fraction of peak is taken per round.
  if (one)
    shapes = {{std::atol(argv[2]), std::atol(argv[3]), std::atol(argv[4]),
               argc > 5 ? argv[5] : "-"}};
  else
    std::printf("# Thunder GEMM path: %s; threads: %d; measured FMA peak: %.1f GFLOP/s\n",
                thunder_gemm::kIsa, threads, fmaPeak(threads, 20000000, 5, now));
  if (!one)
    std::printf("| m x n x k | layer | Thunder (prepacked) | oneDNN dnnl_sgemm | OpenBLAS | "
              "Thunder %% of peak (same round) |\n|---|---|---|---|---|---|\n");
  std::mt19937 gen(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Shape &s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.n * s.k), c(s.m * s.n);
    for (float &x : a) x = dist(gen);
    for (float &x : b) x = dist(gen);
    // Packed B 64-byte aligned, as in a compiled library's weights blob (a
    // vector's own alignment moved gemm_ab.py's numbers by up to 1.25x).
    std::vector<float> packed_storage(thunder_gemm::packed_b_floats(s.k, s.n) + 16);
    float *packed = reinterpret_cast<float *>(
        (reinterpret_cast<uintptr_t>(packed_storage.data()) + 63) & ~uintptr_t(63));
    thunder_gemm::pack_b_full(b.data(), s.k, true, s.k, s.n, packed);
    std::function<void()> runs[3] = {
        [&] {
          thunder_gemm::sgemm(s.m, s.n, s.k, a.data(), s.k, false, nullptr, s.k, true,
                              packed, c.data(), s.n, 0.0f, thunder_gemm::NoEpilogue{});
        },
        [&] {
          dnnl_sgemm('N', 'T', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k, 0.0f,
                     c.data(), s.n);
        },
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.m, s.n, s.k, 1.0f, a.data(),
                      s.k, b.data(), s.k, 0.0f, c.data(), s.n);
        }};
    double flops = 2.0 * s.m * s.n * s.k;
    // Repetitions per round: about 20 ms of work at 100 GFLOP/s (at most 200: on a
    // loaded machine each fork/join of a tiny GEMM can wait for the scheduler).
    int reps = static_cast<int>(std::clamp(2e9 / flops, 1.0, 200.0));
    std::vector<double> times[3], fractions;
    for (int lib = 0; lib < 3; ++lib)
      if (enabled[lib])
        runs[lib](); // warm up (oneDNN's JIT, the packing buffers)
    for (int round = 0; round < (quick ? 3 : 5); ++round) {
      double roundPeak = fmaPeak(threads, 1000000, 2, now);
      for (int lib = 0; lib < 3; ++lib) {
        if (!enabled[lib])
          continue;
        double t0 = now();
        for (int r = 0; r < reps; ++r)
          runs[lib]();
        times[lib].push_back((now() - t0) / reps);
      }
      if (enabled[0])
        fractions.push_back(flops / times[0].back() / 1e9 / roundPeak);
    }
    std::string cells[3];
    for (int lib = 0; lib < 3; ++lib) {
      cells[lib] = "-";
      if (!enabled[lib])
        continue;
      std::sort(times[lib].begin(), times[lib].end());
      char cell[32];
      std::snprintf(cell, sizeof cell, "%.1f",
                    flops / times[lib][times[lib].size() / 2] / 1e9);
      cells[lib] = cell;
    }
    std::string fraction = "-";
    if (!fractions.empty()) {
      std::sort(fractions.begin(), fractions.end());
      fraction = std::to_string(
                     static_cast<int>(100.0 * fractions[fractions.size() / 2] + 0.5)) + "%";
    }
    char dims[64];
    std::snprintf(dims, sizeof dims, "%ld x %ld x %ld", s.m, s.n, s.k);
    std::printf("| %s | %s | %s | %s | %s | %s |\n", dims, s.what, cells[0].c_str(),
                cells[1].c_str(), cells[2].c_str(), fraction.c_str());
    std::fflush(stdout);
  }
}
