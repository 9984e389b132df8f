//===- CpuFeatures.cpp - The host's x86 features against a model's needs --===//
//
// A CPU model's library lists the instruction-set features its code was
// compiled for (THUNDER_MODEL_ISA_SYMBOL). Before calling into it, the
// runtime reads the list and asks cpuid (and XGETBV, whether the OS saves
// the AVX/AVX-512/AMX register state) for each, so a library built for a
// newer machine is refused with the features it lacks named, not run into
// SIGILL.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace thunder::runtime {

namespace {

#if defined(__x86_64__) || defined(__i386__)
struct Feature {
  const char *name;
  unsigned leaf, subleaf;
  int reg; // 0 eax, 1 ebx, 2 ecx, 3 edx
  unsigned bit;
  uint64_t osState; // XCR0 bits the OS must enable
};

constexpr uint64_t kAvxState = 0x6, kAvx512State = 0xe6, kAmxState = 0x60000;

/// GCC's feature names (the -m flags, what thunder_cpu.h lists) and their cpuid bits.
constexpr Feature kFeatures[] = {
    {"sse3", 1, 0, 2, 0, 0},          {"ssse3", 1, 0, 2, 9, 0},
    {"sse4.1", 1, 0, 2, 19, 0},       {"sse4.2", 1, 0, 2, 20, 0},
    {"popcnt", 1, 0, 2, 23, 0},       {"movbe", 1, 0, 2, 22, 0},
    {"avx", 1, 0, 2, 28, kAvxState},  {"fma", 1, 0, 2, 12, kAvxState},
    {"f16c", 1, 0, 2, 29, kAvxState}, {"bmi", 7, 0, 1, 3, 0},
    {"avx2", 7, 0, 1, 5, kAvxState},  {"bmi2", 7, 0, 1, 8, 0},
    {"avx512f", 7, 0, 1, 16, kAvx512State},   {"avx512dq", 7, 0, 1, 17, kAvx512State},
    {"avx512cd", 7, 0, 1, 28, kAvx512State},  {"avx512bw", 7, 0, 1, 30, kAvx512State},
    {"avx512vl", 7, 0, 1, 31, kAvx512State},  {"avx512vnni", 7, 0, 2, 11, kAvx512State},
    {"avx512fp16", 7, 0, 3, 23, kAvx512State}, {"amx-bf16", 7, 0, 3, 22, kAmxState},
    {"amx-tile", 7, 0, 3, 24, kAmxState},     {"amx-int8", 7, 0, 3, 25, kAmxState},
    {"avxvnni", 7, 1, 0, 4, kAvxState},       {"avx512bf16", 7, 1, 0, 5, kAvx512State},
    {"lzcnt", 0x80000001u, 0, 2, 5, 0},
};

uint64_t enabledState() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) // OSXSAVE
    return 0;
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

} // namespace

bool hostHasCpuFeature(const std::string &name) {
#if defined(__x86_64__) || defined(__i386__)
  for (const Feature &f : kFeatures) {
    if (name != f.name)
      continue;
    unsigned r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count(f.leaf, f.subleaf, &r[0], &r[1], &r[2], &r[3]))
      return false;
    if (!(r[f.reg] & (1u << f.bit)))
      return false;
    return (enabledState() & f.osState) == f.osState;
  }
  return false; // a feature this runtime does not know: not assumed present
#else
  (void)name;
  return false;
#endif
}

std::string missingCpuFeatures(const char *required) {
  std::istringstream words(required ? required : "");
  std::string missing;
  for (std::string w; words >> w;)
    if (!hostHasCpuFeature(w))
      missing += (missing.empty() ? "" : " ") + w;
  return missing;
}

} // namespace thunder::runtime
