// The machine's FMA peak, measured: independent FMA chains on every thread, on the widest
// vectors the including unit is compiled for (-march). What "% of peak" divides by in
// gemm_libraries.cpp, and what fma_peak.cpp prints for the benchmark's header.
#ifndef THUNDER_TOOLS_BENCH_FMA_PEAK_H
#define THUNDER_TOOLS_BENCH_FMA_PEAK_H

#include <algorithm>
#include <cstdio>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

/// The FMA peak in GFLOP/s on `threads` threads: independent FMA chains on the widest
/// vectors this unit is compiled for, best of `rounds` runs of `iters` iterations, timed
/// by `now` (seconds).
inline double fmaPeak(int threads, long iters, int rounds, double (*now)()) {
  double best = 0;
  for (int round = 0; round < rounds; ++round) {
    double t0 = now();
    double sink = 0;
    int ran = 0; // the threads OpenMP granted (OMP_THREAD_LIMIT may cap them)
#pragma omp parallel num_threads(threads) reduction(+ : sink, ran)
    {
      ran += 1;
#if defined(__AVX512F__)
      __m512 acc[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        acc[i] = _mm512_set1_ps(0.001f * i);
      const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.0001f);
      for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i)
          acc[i] = _mm512_fmadd_ps(acc[i], x, y);
      }
#pragma GCC unroll 16
      for (int i = 1; i < 16; ++i)
        acc[0] = _mm512_add_ps(acc[0], acc[i]);
      sink += _mm512_reduce_add_ps(acc[0]);
      constexpr int lanes = 16;
#elif defined(__AVX2__)
      __m256 acc[12];
#pragma GCC unroll 16
      for (int i = 0; i < 12; ++i)
        acc[i] = _mm256_set1_ps(0.001f * i);
      const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.0001f);
      for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < 12; ++i)
          acc[i] = _mm256_fmadd_ps(acc[i], x, y);
      }
      float out[8];
#pragma GCC unroll 16
      for (int i = 1; i < 12; ++i)
        acc[0] = _mm256_add_ps(acc[0], acc[i]);
      _mm256_storeu_ps(out, acc[0]);
      sink += out[0];
      constexpr int lanes = 8;
#else
      float acc[8] = {};
      for (long it = 0; it < iters / 8; ++it)
        for (int i = 0; i < 8; ++i)
          acc[i] = acc[i] * 0.999f + 0.0001f;
      sink += acc[0];
      constexpr int lanes = 1;
#endif
      (void)lanes;
    }
    double t = now() - t0;
#if defined(__AVX512F__)
    double flops = 2.0 * 16 * 16 * iters * ran;
#elif defined(__AVX2__)
    double flops = 2.0 * 8 * 12 * iters * ran;
#else
    double flops = 2.0 * 8 * (iters / 8) * ran;
#endif
    if (sink == 12345.0)
      std::printf(" ");
    best = std::max(best, flops / t / 1e9);
  }
  return best;
}

#endif // THUNDER_TOOLS_BENCH_FMA_PEAK_H
