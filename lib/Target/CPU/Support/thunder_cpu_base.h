// thunder_cpu_base.h: what every unit of a compiled CPU model includes.
//
// The element types (bf16, f16, f8), the scalar vocabulary (thunder_scalar.h),
// the vectorizable math (thunder_cpu_math.h) and the GEMM driver's entry
// (thunder_cpu_gemm_api.h): all that a generated loop kernel (pointwise, row
// reduction, GEMM with its epilogue) calls. Such a kernel's unit includes
// only this header (an fp32 convolution's or pooling's also
// thunder_cpu_conv_api.h), which the system compiler reads in a fifth of the
// time thunder_cpu.h takes; it is precompiled where four or more units
// include it first (CPUBackend::compileUnits). A kernel that calls the
// library's templates (gather, scatter, other types' convolutions, ...)
// includes thunder_cpu.h, which includes this one
// (lib/Target/CPU/KernelUnits.cpp).
#ifndef THUNDER_CPU_BASE_H
#define THUNDER_CPU_BASE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

// A model's kernels call the GEMM driver compiled once, in its library's
// thunder_cpu_gemm.cpp (see thunder_cpu_gemm.h).
#ifndef THUNDER_GEMM_APART
#define THUNDER_GEMM_APART 1
#endif
#if THUNDER_GEMM_APART
#include "thunder_cpu_gemm_api.h"
#else
#include "thunder_cpu_gemm.h"
#endif
#include "thunder_scalar.h"
#include "thunder_cpu_math.h"

#include <omp.h>

/// The -march the library was built for (the build passes THUNDER_CPU_ARCH), which the
/// runtime reports (THUNDER_MODEL_ARCH_SYMBOL in thunder-c/artifact.h); weak, as every
/// unit that includes this header defines it.
#ifdef THUNDER_CPU_ARCH
extern "C" __attribute__((weak, visibility("default"))) const char thunder_model_arch_v1[] =
    THUNDER_CPU_ARCH;
#endif

/// The CPU features the code of this unit may use (what -march enabled), which
/// the runtime checks at load (THUNDER_MODEL_ISA_SYMBOL); weak like the arch. A
/// library holding code for several instruction sets defines its own (strong)
/// list, its lowest one's.
#if defined(__x86_64__) && !defined(THUNDER_CPU_ISA_DEFINED)
extern "C" __attribute__((weak, visibility("default"))) const char thunder_model_isa_v1[] = ""
#ifdef __SSE3__
    " sse3"
#endif
#ifdef __SSSE3__
    " ssse3"
#endif
#ifdef __SSE4_1__
    " sse4.1"
#endif
#ifdef __SSE4_2__
    " sse4.2"
#endif
#ifdef __POPCNT__
    " popcnt"
#endif
#ifdef __AVX__
    " avx"
#endif
#ifdef __AVX2__
    " avx2"
#endif
#ifdef __FMA__
    " fma"
#endif
#ifdef __F16C__
    " f16c"
#endif
#ifdef __BMI__
    " bmi"
#endif
#ifdef __BMI2__
    " bmi2"
#endif
#ifdef __LZCNT__
    " lzcnt"
#endif
#ifdef __MOVBE__
    " movbe"
#endif
#ifdef __AVX512F__
    " avx512f"
#endif
#ifdef __AVX512DQ__
    " avx512dq"
#endif
#ifdef __AVX512CD__
    " avx512cd"
#endif
#ifdef __AVX512BW__
    " avx512bw"
#endif
#ifdef __AVX512VL__
    " avx512vl"
#endif
#ifdef __AVX512VNNI__
    " avx512vnni"
#endif
#ifdef __AVX512BF16__
    " avx512bf16"
#endif
#ifdef __AVX512FP16__
    " avx512fp16"
#endif
#ifdef __AVXVNNI__
    " avxvnni"
#endif
#ifdef __AMX_TILE__
    " amx-tile"
#endif
#ifdef __AMX_INT8__
    " amx-int8"
#endif
#ifdef __AMX_BF16__
    " amx-bf16"
#endif
    ;
#endif

namespace thunder_cpu {

using i64 = int64_t;

//===--------------------------------------------------------------------===//
// Element types
//===--------------------------------------------------------------------===//

/// bfloat16: the upper half of a float32, rounded to nearest even.
struct bf16 {
  uint16_t bits;
  bf16() = default;
  explicit bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = static_cast<uint16_t>((u >> 16) | 0x40u); // quiet NaN
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = static_cast<uint16_t>(u >> 16);
    }
  }
  explicit operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

using f16 = _Float16;

/// float8 e4m3fn (no infinities, one NaN pattern) and e5m2 (IEEE-like),
/// converted through float with round to nearest even, saturating e4m3fn.
template <int ExpBits, int ManBits, bool FN> struct f8 {
  uint8_t bits;
  f8() = default;
  explicit f8(float f) { bits = encode(f); }
  explicit operator float() const { return decode(bits); }
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static float decode(uint8_t b) {
    int sign = b >> 7, exp = (b >> ManBits) & ((1 << ExpBits) - 1),
        man = b & ((1 << ManBits) - 1);
    float s = sign ? -1.0f : 1.0f;
    if (FN && exp == (1 << ExpBits) - 1 && man == (1 << ManBits) - 1)
      return std::numeric_limits<float>::quiet_NaN();
    if (!FN && exp == (1 << ExpBits) - 1)
      return man ? std::numeric_limits<float>::quiet_NaN()
                 : s * std::numeric_limits<float>::infinity();
    if (exp == 0)
      return s * std::ldexp(static_cast<float>(man), 1 - bias - ManBits);
    return s * std::ldexp(1.0f + man / float(1 << ManBits), exp - bias);
  }
  static uint8_t encode(float f) {
    // Exhaustive nearest search over the 256 codes: simple and exact.
    if (std::isnan(f))
      return FN ? 0x7f : 0x7e;
    uint8_t best = 0;
    float bestErr = std::numeric_limits<float>::infinity();
    for (int c = 0; c < 256; ++c) {
      float v = decode(static_cast<uint8_t>(c));
      if (std::isnan(v))
        continue;
      float err = std::fabs(v - f);
      if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1))) {
        bestErr = err;
        best = static_cast<uint8_t>(c);
      }
    }
    return best;
  }
};
using f8e4m3fn = f8<4, 3, true>;
using f8e5m2 = f8<5, 2, false>;

/// The narrow floats, computed in float (thunder_scalar.h).
} // namespace thunder_cpu
namespace thunder_scalar {
template <> struct is_lowp<thunder_cpu::bf16> : std::true_type {};
template <> struct is_lowp<thunder_cpu::f16> : std::true_type {};
template <> struct is_lowp<thunder_cpu::f8e4m3fn> : std::true_type {};
template <> struct is_lowp<thunder_cpu::f8e5m2> : std::true_type {};
} // namespace thunder_scalar
namespace thunder_cpu {

// The scalar vocabulary (compute_t, cv, st, relu, maximum, py_remainder,
// power, the softmax steps, ...) is thunder_scalar.h's, shared with the GPU
// targets.
using namespace thunder_scalar;

/// One SIMD register of floats for the hand-blocked kernels (attention,
/// depthwise convolution), as GCC vectors of the machine's own width: a
/// vector wider than the registers is lowered through the stack (a 64-byte
/// one on AVX2 ran the depthwise kernel at 3-4 GFLOP/s).
namespace simd {
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float vf __attribute__((vector_size(kLanes * sizeof(float))));
inline vf load(const float *p) {
  vf v;
  std::memcpy(&v, p, sizeof(vf));
  return v;
}
inline void store(float *p, vf v) { std::memcpy(p, &v, sizeof(vf)); }
inline vf splat(float x) { return vf{} + x; }
} // namespace simd

} // namespace thunder_cpu

#endif // THUNDER_CPU_BASE_H
