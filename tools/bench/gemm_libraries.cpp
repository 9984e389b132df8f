// GEMM micro-benchmark: OpenBLAS (split over OpenMP threads with
// single-threaded calls) against oneDNN's dnnl_sgemm, on GEMM shapes of the
// zoo models. The measurement behind the CPU backend's choice of library
// (docs/performance.md):
//
//   g++ -O2 -fopenmp tools/bench/gemm_libraries.cpp -o /tmp/gemm -lopenblas -ldnnl
//   OMP_WAIT_POLICY=passive /tmp/gemm
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
static void openblasSplit(int m, int n, int k, const float *a, const float *b, float *c) {
#pragma omp parallel
  {
    int T = omp_get_num_threads(), t = omp_get_thread_num();
    if (m >= 4 * T) {
      int r0 = (long)m * t / T, r1 = (long)m * (t + 1) / T;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r1 - r0, n, k, 1, a + (long)r0 * k, k, b, k, 0, c + (long)r0 * n, n);
    } else {
      int c0 = (long)n * t / T, c1 = (long)n * (t + 1) / T;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, c1 - c0, k, 1, a, k, b + (long)c0 * k, k, 0, c + c0, n);
    }
  }
}
template <class F> double ms(F f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    auto s = std::chrono::steady_clock::now(); f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end()); return t[3];
}
int main() {
  openblas_set_num_threads(1);
  int shapes[][3] = {{128, 2304, 768}, {128, 3072, 768}, {128, 768, 3072}, {128, 32000, 768}, {1, 4096, 1024}, {3136, 64, 576}};
  printf("%-18s %12s %12s\n", "m x n x k", "openblas ms", "onednn ms");
  for (auto &s : shapes) {
    int m = s[0], n = s[1], k = s[2];
    std::vector<float> a((size_t)m * k, 0.5f), b((size_t)n * k, 0.25f), c((size_t)m * n);
    double o = ms([&] { openblasSplit(m, n, k, a.data(), b.data(), c.data()); });
    double d = ms([&] { dnnl_sgemm('N', 'T', m, n, k, 1.f, a.data(), k, b.data(), k, 0.f, c.data(), n); });
    printf("%5dx%5dx%5d %12.3f %12.3f\n", m, n, k, o, d);
  }
}
