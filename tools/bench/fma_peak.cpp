// Prints the machine's measured fp32 FMA peak in GFLOP/s on N threads (best of five
// runs), the number the benchmark's header (tools/bench/run.py) and the GEMM table's
// "% of peak" are stated against:
//
//   c++ -O2 -march=native -fopenmp tools/bench/fma_peak.cpp -o /tmp/fma_peak
//   /tmp/fma_peak [THREADS]
#include "fma_peak.h"

#include <chrono>
#include <cstdlib>

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "fma_peak: THREADS must be a positive number, not '%s'\n", argv[1]);
    return 2;
  }
  std::printf("%.1f\n", fmaPeak(threads, 20000000, 5, now));
  return 0;
}
