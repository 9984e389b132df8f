// Checks thunder_cpu_gemm.h against a double-precision reference on odd
// shapes, every epilogue, packed and unpacked B, transposes, batches and
// thread counts; compiled by test_gemm_kernel.py once per -march. Prints the
// instruction-set path and "ok", or the first mismatch.
#include "thunder_cpu_gemm.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>
#include <vector>

using namespace thunder_gemm;

static double act_ref(Act act, double v) {
  switch (act) {
  case Act::None: return v;
  case Act::Relu: return v > 0 ? v : 0;
  case Act::GeluTanh: return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  case Act::GeluErf: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case Act::Silu: return v / (1 + std::exp(-v));
  }
  return v;
}

static int failures = 0;

/// One case: C = act(op(A) op(B) + beta C0 + bias) + residual.
static void check(i64 m, i64 n, i64 k, bool ta, bool tb, bool prepack, int epi, float beta,
                  int threads) {
  std::mt19937 gen(static_cast<unsigned>(m * 131 + n * 17 + k + epi));
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k + 1), b(k * n + 1), c0(m * n + 1), bias(n + 1), res(m * n + 1);
  for (auto *v : {&a, &b, &c0, &bias, &res})
    for (float &x : *v)
      x = dist(gen);
  std::vector<float> c = c0;
  i64 lda = ta ? m : k, ldb = tb ? k : n;
  std::vector<float> packed;
  if (prepack) {
    packed.resize(packed_b_floats(k, n) + 1);
    pack_b_full(b.data(), ldb, tb, k, n, packed.data());
  }
  Act act = static_cast<Act>(epi % 5);
  bool with_bias = epi % 2 == 1, with_res = epi >= 5;
  BiasActResidual e{c.data(), n, with_bias ? bias.data() : nullptr, act,
                    with_res ? res.data() : nullptr, n};
  sgemm(m, n, k, a.data(), lda, ta, prepack ? nullptr : b.data(), ldb, tb,
        prepack ? packed.data() : nullptr, c.data(), n, beta, e, threads);
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (i64 p = 0; p < k; ++p) {
        double x = ta ? a[p * lda + i] : a[i * lda + p];
        double y = tb ? b[j * ldb + p] : b[p * ldb + j];
        s += x * y;
        mag += std::fabs(x * y);
      }
      s += beta * c0[i * n + j];
      if (with_bias)
        s += bias[j];
      s = act_ref(act, s);
      if (with_res)
        s += res[i * n + j];
      double got = c[i * n + j];
      if (!(std::fabs(got - s) <= 1e-5 * (mag + 4))) {
        if (failures++ < 5)
          std::printf("mismatch m=%lld n=%lld k=%lld ta=%d tb=%d packed=%d epi=%d beta=%g "
                      "threads=%d at [%lld, %lld]: %.7g, expected %.7g\n",
                      (long long)m, (long long)n, (long long)k, ta, tb, prepack, epi, beta,
                      threads, (long long)i, (long long)j, got, s);
        return;
      }
    }
}

/// matmul_f32 over batches with an epilogue that records its rows; B [k, n],
/// or [n, k] when `tb`.
static void check_batched(i64 batch, i64 m, i64 n, i64 k, bool shared, bool prepack,
                          bool tb = false) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(batch * m * k), b((shared ? 1 : batch) * k * n), c(batch * m * n);
  for (float &x : a) x = dist(gen);
  for (float &x : b) x = dist(gen);
  std::vector<float> packed;
  if (prepack) {
    packed.resize(packed_b_floats(k, n));
    pack_b_full(b.data(), n, false, k, n, packed.data());
  }
  // The epilogue adds 1 to every element, once: rows are of the whole output.
  auto epi = [&](i64 r0, i64 r1, i64 c0, i64 c1) {
    for (i64 r = r0; r < r1; ++r)
      for (i64 j = c0; j < c1; ++j)
        c[r * n + j] += 1.0f;
  };
  matmul_f32(a.data(), prepack ? nullptr : b.data(), prepack ? packed.data() : nullptr,
             c.data(), batch, m, n, k, false, tb, shared, epi);
  for (i64 s = 0; s < batch; ++s)
    for (i64 i = 0; i < m; ++i)
      for (i64 j = 0; j < n; ++j) {
        double r = 1, mag = 1;
        const float *bs = b.data() + (shared ? 0 : s * k * n);
        for (i64 p = 0; p < k; ++p) {
          const double y = tb ? bs[j * k + p] : bs[p * n + j];
          r += double(a[(s * m + i) * k + p]) * y;
          mag += std::fabs(double(a[(s * m + i) * k + p]) * y);
        }
        if (!(std::fabs(c[(s * m + i) * n + j] - r) <= 1e-5 * (mag + 4))) {
          if (failures++ < 5)
            std::printf("batched mismatch batch=%lld m=%lld n=%lld k=%lld shared=%d tb=%d\n",
                        (long long)batch, (long long)m, (long long)n, (long long)k, shared, tb);
          return;
        }
      }
}

/// C (ldc) = A (lda) @ op(B) for B [n, k] (tb) or [k, n] (ldb), rows of each
/// longer than they need: the dot-product path's reads and its copy of A at
/// strides other than k (tb), and a row-major B read in place with its
/// panels ldb apart (reads_b_in_place: at every m with AVX-512).
static void check_strided(i64 m, i64 n, i64 k, i64 lda, i64 ldb, i64 ldc, bool tb = true) {
  std::mt19937 gen(static_cast<unsigned>(m * 5 + n + k));
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * lda), b((tb ? n : k) * ldb), c(m * ldc, 7.0f);
  for (float &x : a) x = dist(gen);
  for (float &x : b) x = dist(gen);
  sgemm(m, n, k, a.data(), lda, false, b.data(), ldb, tb, nullptr, c.data(), ldc, 0.0f,
        NoEpilogue{}, 2);
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < ldc; ++j) {
      double r = 7.0, mag = 1;  // past n: untouched
      if (j < n) {
        r = 0;
        for (i64 p = 0; p < k; ++p) {
          const double y = tb ? b[j * ldb + p] : b[p * ldb + j];
          r += double(a[i * lda + p]) * y;
          mag += std::fabs(double(a[i * lda + p]) * y);
        }
      }
      if (!(std::fabs(c[i * ldc + j] - r) <= 1e-5 * (mag + 4))) {
        if (failures++ < 5)
          std::printf("strided mismatch m=%lld n=%lld k=%lld lda=%lld ldb=%lld tb=%d at "
                      "[%lld, %lld]\n",
                      (long long)m, (long long)n, (long long)k, (long long)lda,
                      (long long)ldb, int(tb), (long long)i, (long long)j);
        return;
      }
    }
}

/// A row-major A packed once (pack_a_once_f32, a convolution's constant
/// filter), then C = A @ B + bias through it (a bias per row when
/// `with_bias`: the accumulators start from it), with an epilogue that adds 1.
static void check_packed_a(i64 m, i64 n, i64 k, bool with_bias) {
  std::mt19937 gen(static_cast<unsigned>(m * 7 + n * 3 + k));
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(k * n), c(m * n), packed(m * k), bias(m);
  for (float &x : a) x = dist(gen);
  for (float &x : b) x = dist(gen);
  for (float &x : bias) x = dist(gen);
  pack_a_once_f32(a.data(), m, k, packed.data());
  auto epi = [&](i64 r0, i64 r1, i64 c0, i64 c1) {
    for (i64 r = r0; r < r1; ++r)
      for (i64 j = c0; j < c1; ++j)
        c[r * n + j] += 1.0f;
  };
  gemm_packed_a(packed.data(), b.data(), c.data(), m, n, k,
                with_bias ? bias.data() : nullptr, epi);
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double r = 1 + (with_bias ? bias[i] : 0.0), mag = 1;
      for (i64 p = 0; p < k; ++p) {
        r += double(a[i * k + p]) * b[p * n + j];
        mag += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      if (!(std::fabs(c[i * n + j] - r) <= 1e-5 * (mag + 4))) {
        if (failures++ < 5)
          std::printf("packed-A mismatch m=%lld n=%lld k=%lld bias=%d at [%lld, %lld]\n",
                      (long long)m, (long long)n, (long long)k, with_bias, (long long)i,
                      (long long)j);
        return;
      }
    }
}

/// An epilogue marked as a clamp (EpilogueRef::clamping, what ReLU6 after a
/// convolution compiles to): C = clamp(op(A) op(B) + beta C0 (+ a bias per
/// row through gemm_packed_a), lo, hi), NaN kept (row 1 of A holds one).
/// The microkernels clamp their registers and do not call the epilogue;
/// the dot-product path (few rows of an [n, k] B) calls it, and it clamps.
static void check_clamp(i64 m, i64 n, i64 k, bool tb, bool prepack, bool packed_a, float beta,
                        float lo, float hi) {
  std::mt19937 gen(static_cast<unsigned>(m * 5 + n * 11 + k * 3));
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k + 1), b(k * n + 1), c0(m * n + 1), bias(m + 1);
  for (auto *v : {&a, &b, &c0, &bias})
    for (float &x : *v)
      x = dist(gen);
  if (m > 1 && k > 0)
    a[1 * k + k / 2] = NAN;
  std::vector<float> c = c0;
  const i64 ldb = tb ? k : n;
  std::vector<float> packed, apacked;
  if (prepack) {
    packed.resize(packed_b_floats(k, n) + 1);
    pack_b_full(b.data(), ldb, tb, k, n, packed.data());
  }
  std::atomic<int> calls{0};
  auto epi = [&](i64 r0, i64 r1, i64 c0_, i64 c1) {
    ++calls;
    for (i64 r = r0; r < r1; ++r)
      for (i64 j = c0_; j < c1; ++j) {
        float &x = c[r * n + j];
        x = x < lo ? lo : x > hi ? hi : x;
      }
  };
  const EpilogueRef clamp = EpilogueRef(epi).clamping(lo, hi);
  if (packed_a) {
    apacked.resize(m * k + 1);
    pack_a_once_f32(a.data(), m, k, apacked.data());
    gemm_packed_a(apacked.data(), b.data(), c.data(), m, n, k, bias.data(), clamp);
  } else {
    sgemm(m, n, k, a.data(), k, false, prepack ? nullptr : b.data(), ldb, tb,
          prepack ? packed.data() : nullptr, c.data(), n, beta, clamp, 2);
  }
  // (An empty sum, k = 0, calls it too.)
  const bool calls_epilogue = k <= 0 || (!prepack && !packed_a && tb && m <= 8);
  if (!calls_epilogue && calls) {
    if (failures++ < 5)
      std::printf("clamp m=%lld n=%lld k=%lld: the epilogue was called %d times\n",
                  (long long)m, (long long)n, (long long)k, calls.load());
    return;
  }
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double s = packed_a ? bias[i] : beta * c0[i * n + j], mag = 0;
      for (i64 p = 0; p < k; ++p) {
        s += double(a[i * k + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
        mag += std::fabs(double(a[i * k + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]));
      }
      const double want = std::isnan(s) ? s : std::min<double>(hi, std::max<double>(lo, s));
      const double got = c[i * n + j];
      if (std::isnan(want) ? !std::isnan(got) : !(std::fabs(got - want) <= 1e-5 * (mag + 4))) {
        if (failures++ < 5)
          std::printf("clamp mismatch m=%lld n=%lld k=%lld tb=%d packed=%d packed_a=%d "
                      "beta=%g at [%lld, %lld]: %.7g, expected %.7g\n",
                      (long long)m, (long long)n, (long long)k, tb, prepack, packed_a, beta,
                      (long long)i, (long long)j, got, want);
        return;
      }
    }
}

int main() {
  const i64 sizes[] = {0, 1, 7, 17, 33, 255};
  int index = 0;
  for (i64 m : sizes)
    for (i64 n : sizes)
      for (i64 k : sizes) {
        ++index;
        // Every epilogue, transpose and packing across the shapes.
        check(m, n, k, index & 1, index & 2, index & 4, index % 10, 0.0f, 1 + index % 2);
        check(m, n, k, !(index & 1), !(index & 2), !(index & 4), (index + 5) % 10,
              (index % 3) ? 0.0f : 0.5f, 2);
      }
  // Several KC blocks, MC tiles and partial panels, each epilogue.
  for (int epi = 0; epi < 10; ++epi)
    check(300, 70, 600, epi & 1, epi & 2, epi & 4, epi, epi == 3 ? 1.0f : 0.0f, 2);
  check(1, 4100, 300, false, true, true, 1, 0.0f, 2);
  // B read in place by a few rows of A (row-major: the microkernels with a
  // narrow last panel; [n, k]: dot products, n not a multiple of 4); and unpacked B packed per tile over several row blocks
  // (tiles spanning 2+ blocks on one thread, one block each on two).
  for (i64 m : {2, 3, 4, 6, 8})
    for (bool tb : {false, true})
      check(m, 100 + tb * 3, 300, false, tb, false, m + 3 + tb, m == 3 ? 0.5f : 0.0f, 2);
  // Row-major B read in place up to 32 rows of A, and up to 128 where its
  // rows are not a multiple of 4 KiB apart, packed per tile beyond; with
  // AVX-512, in place at every m (reads_b_in_place): both sides of each
  // bound, a partial last panel.
  for (i64 m : {32, 33, 128, 129})
    for (i64 n : {1000, 1024})
      check(m, n, 300, m == 33, false, false, static_cast<int>(m % 10), m == 128 ? 0.5f : 0.0f,
            2);
  // Read in place by few rows, the next panel prefetched (kInPlaceAheadRows):
  // several panels and kc blocks, a narrow last panel (n = 1000) or none.
  // (Prefetches cannot change results: this checks the in-place reads.)
  for (i64 m : {5, 8, 9, 16, 17})
    for (i64 n : {1000, 1024})
      check(m, n, 600, false, false, false, static_cast<int>(m % 10), m == 9 ? 0.5f : 0.0f, 2);
#ifdef THUNDER_GEMM_HAS_DOT
  // nn.Linear's [n, k] B read in place as dot products up to kDotRows rows
  // for k >= kDotMinDepth and a column block per thread (packed per tile
  // otherwise): row, column and k tails; k in blocks where m k >
  // kDotAFloats (beta applies to the first only); rows of A 4 KiB apart
  // (k = 1024, 2048, 3072), copied first; both sides of each bound. (With
  // AVX-512, kDotRows is 64: m = 100 and 128 are packed per tile there, and
  // k is blocked by kDotMaxDepth, as at 40 x 70 x 3072.)
  static_assert(128 * 1000 > kDotAFloats && 100 * 2048 > 2 * kDotAFloats);
  static_assert(3072 > 2 * kDotMaxDepth);
  for (auto [m, n, k] :
       {std::tuple<i64, i64, i64>{9, 103, 600}, {40, 70, 1024}, {100, 130, 2048},
        {128, 67, 1000}, {kDotRows, 130, kDotMinDepth + 7}, {16, 130, kDotMinDepth - 1},
        {kDotRows + 1, 67, 1000}, {32, kDotBlock, 1000}, {40, 70, 3072}})
    for (float beta : {0.0f, 0.5f})
      check(m, n, k, false, true, false, static_cast<int>((m + k) % 10), beta, 2);
#endif
  for (int threads : {1, 2})
    for (bool tb : {false, true})
      check(700, 200, 300, false, tb, false, tb ? 2 : 7, threads == 1 ? 0.5f : 0.0f,
            threads);
  // A too large to pack once for all tiles (m * k > kSharedAFloats): each
  // tile packs its own rows, the tiles then split row blocks too.
  static_assert(1100 * 1000 > kSharedAFloats);
  for (int variant = 0; variant < 3; ++variant)
    check(1100, 70, 1000, variant == 1, variant == 2, variant == 0, 1 + variant, 0.0f, 2);
  // A shared, B packed per tile (tb; and a row-major B but with AVX-512, which
  // reads it in place), few column panels: tiles split the row blocks once
  // they are one panel wide (each packs its B block).
  for (bool tb : {false, true})
    check(700, 40, 300, false, tb, false, tb ? 5 : 8, 0.0f, 2);
  for (bool shared : {false, true})
    for (bool prepack : {false, true})
      if (shared || !prepack)
        check_batched(3, 17, 33, 65, shared, prepack);
#ifdef THUNDER_GEMM_HAS_DOT
  // [n, k] B per batch slice, each slice's dot products on one thread of the
  // batch loop (the copy of A per thread), rows of A 4 KiB apart; and
  // strides longer than k (A copied: lda 2048; read in place: lda 1000).
  for (bool shared : {false, true})
    check_batched(3, 40, 70, 1024, shared, false, /*tb=*/true);
  check_strided(40, 70, 1000, 2048, 1040, 75);
  check_strided(9, 33, 700, 1000, 701, 40);
  // Dot products over k in blocks (kDotMaxDepth), the last one partial; and
  // with rows of A 4 KiB multiples apart (A copied first).
  check_strided(12, 140, 2500, 2500, 2600, 150);
  check_strided(12, 140, 2500, 3072, 2600, 150);
  // A row-major B wider than n (ldb > n) over many rows: several row blocks,
  // kc blocks and panels, the narrow last one packed (in place with AVX-512,
  // its panels copied by their first reader, copy_b; packed per tile with
  // AVX2).
  check_strided(300, 70, 600, 610, 1030, 75, false);
  check_strided(129, 100, 300, 300, 1024, 100, false);
  // Rows 4 KiB multiples apart (ldb 1024, 2048) in place over few rows,
  // copied by their first reader (copies_b_in_place) with both instruction
  // sets at 30 and 17 rows, with AVX2 only at 14 (one AVX-512 panel of
  // rows). These tiles are one panel of B wide; wider tiles, whose copies
  // go to other slots, and a narrow last panel packed beside them are the
  // check(m, 1000 or 1024, 600, tb = false) and check(700, 200, 300) cases
  // above.
  check_strided(30, 96, 700, 700, 1024, 100, false);
  check_strided(17, 64, 300, 300, 2048, 64, false);
  check_strided(14, 64, 300, 300, 2048, 64, false);
#endif
  // A packed once: one panel, partial panels, several row and kc blocks, and
  // more than sgemm would share (m * k > kSharedAFloats); an empty sum (k 0);
  // with and without a bias per row.
  for (auto [m, n, k] : {std::tuple<i64, i64, i64>{1, 1, 1}, {7, 33, 5}, {17, 255, 33},
                         {300, 70, 600}, {129, 40, 700}, {1100, 33, 1000}, {9, 20, 0}})
    for (bool with_bias : {false, true})
      check_packed_a(m, n, k, with_bias);
  // Clamp epilogues in the microkernels' registers: partial panels and row
  // tiles, several kc blocks (clamped at the last only), beta, prepacked B,
  // A packed once with a bias per row (pointwise convolutions), a lower
  // bound alone (ReLU); and the dot-product path, which calls the epilogue.
  for (auto [m, n, k] : {std::tuple<i64, i64, i64>{1, 1, 1}, {7, 33, 5}, {17, 255, 33},
                         {300, 70, 600}, {33, 1000, 300}})
    for (int variant = 0; variant < 4; ++variant)
      check_clamp(m, n, k, variant == 3, variant == 1, variant == 2,
                  variant == 0 ? 0.5f : 0.0f, -0.3f, variant == 3 ? INFINITY : 0.4f);
  check_clamp(5, 103, 600, true, false, false, 0.0f, -0.3f, 0.4f);
  check_clamp(9, 20, 0, false, false, false, 0.5f, -0.3f, 0.4f); // an empty sum
  if (failures) {
    std::printf("%d failures (%s)\n", failures, kIsa);
    return 1;
  }
  std::printf("%s ok\n", kIsa);
  return 0;
}
