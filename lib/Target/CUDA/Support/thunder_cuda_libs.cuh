// thunder_cuda_libs.cuh: the part of Thunder's CUDA support library that calls
// NVIDIA's libraries, and the model's device state.
//
// cuBLASLt (GEMMs, with the BIAS/RELU/GELU epilogues and a heuristics cache)
// and cuDNN (convolutions) are opened with dlopen at create(), only when the
// model needs them, so a model links against nothing but the driver API and
// the static CUDA runtime; the subsets of their C APIs Thunder calls are
// declared here (test/Target/CUDA/abi checks them against NVIDIA's headers).
// The types they lack get kernels of ours: a tiled GEMM, a direct convolution.
// Last, the Runtime: streams, events, the libraries' handles, CUDA graphs.
// This file holds cuBLASLt; thunder_cuda_dnn.cuh cuDNN, then the GEMMs and
// convolutions (thunder_gpu_libs.h, shared with HIP), thunder_cuda_runtime.cuh
// the Runtime (both included below).
#ifndef THUNDER_CUDA_LIBS_CUH
#define THUNDER_CUDA_LIBS_CUH

#include "thunder_cuda.cuh"

#include <initializer_list>

namespace thunder_cuda {

//===--------------------------------------------------------------------===//
// cuBLASLt, loaded at create() (the subset of cublasLt.h Thunder uses; its C
// ABI has been stable since CUDA 11)
//===--------------------------------------------------------------------===//

namespace lt_api {
using Status = int;                       // cublasStatus_t
using Handle = struct cublasLtContext *;  // cublasLtHandle_t
using MatmulDesc = struct cublasLtMatmulDescOpaque_t *;
using Layout = struct cublasLtMatrixLayoutOpaque_t *;
using Preference = struct cublasLtMatmulPreferenceOpaque_t *;
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
constexpr int kOpN = 0, kOpT = 1;                          // cublasOperation_t
constexpr int kCompute32F = 68, kCompute64F = 70;          // cublasComputeType_t
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;
constexpr int kPrefMaxWorkspace = 1, kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7,
              kPrefAlignD = 8;
} // namespace lt_api

/// cuBLASLt epilogues Thunder fuses (cublasLtEpilogue_t values).
enum class Epilogue : uint32_t {
  None = 1,
  Relu = 2,
  Bias = 4,
  ReluBias = 6,
  GeluTanh = 32,     ///< cuBLASLt's GELU is the tanh approximation
  GeluTanhBias = 36,
};

struct Lt {
  lt_api::Handle handle = nullptr;
  lt_api::Status (*create)(lt_api::Handle *) = nullptr;
  lt_api::Status (*destroy)(lt_api::Handle) = nullptr;
  lt_api::Status (*descCreate)(lt_api::MatmulDesc *, int, int) = nullptr;
  lt_api::Status (*descDestroy)(lt_api::MatmulDesc) = nullptr;
  lt_api::Status (*descSet)(lt_api::MatmulDesc, int, const void *, size_t) = nullptr;
  lt_api::Status (*layoutCreate)(lt_api::Layout *, int, uint64_t, uint64_t, int64_t) = nullptr;
  lt_api::Status (*layoutDestroy)(lt_api::Layout) = nullptr;
  lt_api::Status (*layoutSet)(lt_api::Layout, int, const void *, size_t) = nullptr;
  lt_api::Status (*prefCreate)(lt_api::Preference *) = nullptr;
  lt_api::Status (*prefDestroy)(lt_api::Preference) = nullptr;
  lt_api::Status (*prefSet)(lt_api::Preference, int, const void *, size_t) = nullptr;
  lt_api::Status (*heuristic)(lt_api::Handle, lt_api::MatmulDesc, lt_api::Layout, lt_api::Layout,
                              lt_api::Layout, lt_api::Layout, lt_api::Preference, int,
                              lt_api::HeuristicResult *, int *) = nullptr;
  lt_api::Status (*matmul)(lt_api::Handle, lt_api::MatmulDesc, const void *, const void *,
                           lt_api::Layout, const void *, lt_api::Layout, const void *,
                           const void *, lt_api::Layout, void *, lt_api::Layout,
                           const lt_api::Algo *, void *, size_t, cudaStream_t) = nullptr;

  /// One planned GEMM: descriptors and the algorithm the heuristic chose.
  struct Plan {
    lt_api::MatmulDesc desc = nullptr;
    lt_api::Layout a = nullptr, b = nullptr, d = nullptr;
    lt_api::Algo algo{};
    bool ok = false;
  };
  std::mutex mutex;
  std::map<std::vector<int64_t>, Plan> plans;

  /// Loads libcublasLt; false (with a message) when it is missing.
  bool load(std::string &why) {
    Library get({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
    if (!get.lib) {
      why = "libcublasLt.so.13 not found (install the CUDA toolkit's cuBLAS or the "
            "nvidia-cublas wheel and put its lib folder on LD_LIBRARY_PATH)";
      return false;
    }
    get(create, "cublasLtCreate");
    get(destroy, "cublasLtDestroy");
    get(descCreate, "cublasLtMatmulDescCreate");
    get(descDestroy, "cublasLtMatmulDescDestroy");
    get(descSet, "cublasLtMatmulDescSetAttribute");
    get(layoutCreate, "cublasLtMatrixLayoutCreate");
    get(layoutDestroy, "cublasLtMatrixLayoutDestroy");
    get(layoutSet, "cublasLtMatrixLayoutSetAttribute");
    get(prefCreate, "cublasLtMatmulPreferenceCreate");
    get(prefDestroy, "cublasLtMatmulPreferenceDestroy");
    get(prefSet, "cublasLtMatmulPreferenceSetAttribute");
    get(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    get(matmul, "cublasLtMatmul");
    if (get.missing) {
      why = std::string("libcublasLt has no ") + get.missing;
      return false;
    }
    if (create(&handle) != 0) {
      why = "cublasLtCreate failed";
      return false;
    }
    return true;
  }

  ~Lt() {
    for (auto &[key, p] : plans) {
      if (p.a) layoutDestroy(p.a);
      if (p.b) layoutDestroy(p.b);
      if (p.d) layoutDestroy(p.d);
      if (p.desc) descDestroy(p.desc);
    }
    if (handle)
      destroy(handle);
  }
};

template <class T> constexpr int cuda_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, f16>) return CUDA_R_16F;
  else if constexpr (std::is_same_v<T, bf16>) return CUDA_R_16BF;
  else return -1;
}

/// The GEMM libraries' code for T (thunder_gpu_libs.h): cuBLASLt's.
template <class T> constexpr int blas_type() { return cuda_type<T>(); }

/// The largest power of two (at most 256) that divides the address.
inline uint32_t alignment_of(const void *p) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a)
    a >>= 1;
  return a;
}

/// Row-major strided-batched GEMM: C[b] = op(A[b]) @ op(B[b]) (+ bias[n],
/// activation), where A[b] starts at A + b * sa (sa may be 0: shared), lda/ldb
/// the row strides as stored. Through cuBLASLt: the row-major product is the
/// column-major C^T = op(B)^T op(A)^T. Returns false when cuBLASLt has no
/// algorithm for it (the caller then runs the fallback kernel).
template <class T>
bool lt_gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
             const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch, Epilogue epi,
             const T *bias) {
  using namespace lt_api;
  constexpr int type = cuda_type<T>();
  if constexpr (type < 0) {
    return false;
  } else {
    Lt *lt = c.lt;
    if (!lt || m <= 0 || n <= 0 || k <= 0 || batch <= 0 || batch > INT32_MAX)
      return false;
    const int compute = std::is_same_v<T, double> ? kCompute64F : kCompute32F;
    const int scale = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
    std::vector<int64_t> key = {type, ta, tb, m, n, k, lda, sa, ldb, sb, ldc, sc, batch,
                                int64_t(epi), int64_t(alignment_of(a)), int64_t(alignment_of(b)),
                                int64_t(alignment_of(out)),
                                int64_t(bias ? alignment_of(bias) : 0),
                                int64_t(c.lib_workspace_bytes)};
    std::lock_guard<std::mutex> lock(lt->mutex);
    auto [it, fresh] = lt->plans.try_emplace(key);
    Lt::Plan &p = it->second;
    if (fresh) {
      // cuBLASLt's A is our B (op(B)^T: n x k), its B is our A (op(A)^T: k x m).
      int opA = tb ? kOpT : kOpN, opB = ta ? kOpT : kOpN;
      uint32_t e = uint32_t(epi);
      bool ok = lt->descCreate(&p.desc, compute, scale) == 0 &&
                lt->descSet(p.desc, kDescTransA, &opA, sizeof(opA)) == 0 &&
                lt->descSet(p.desc, kDescTransB, &opB, sizeof(opB)) == 0 &&
                lt->descSet(p.desc, kDescEpilogue, &e, sizeof(e)) == 0;
      if (ok && bias)
        ok = lt->descSet(p.desc, kDescBiasPointer, &bias, sizeof(bias)) == 0;
      // Stored shapes (column-major rows x cols = row-major cols x rows).
      ok = ok && lt->layoutCreate(&p.a, type, tb ? k : n, tb ? n : k, ldb) == 0 &&
           lt->layoutCreate(&p.b, type, ta ? m : k, ta ? k : m, lda) == 0 &&
           lt->layoutCreate(&p.d, type, n, m, ldc) == 0;
      if (ok && batch > 1) {
        int32_t count = int32_t(batch);
        ok = lt->layoutSet(p.a, kLayoutBatchCount, &count, sizeof(count)) == 0 &&
             lt->layoutSet(p.a, kLayoutBatchStride, &sb, sizeof(sb)) == 0 &&
             lt->layoutSet(p.b, kLayoutBatchCount, &count, sizeof(count)) == 0 &&
             lt->layoutSet(p.b, kLayoutBatchStride, &sa, sizeof(sa)) == 0 &&
             lt->layoutSet(p.d, kLayoutBatchCount, &count, sizeof(count)) == 0 &&
             lt->layoutSet(p.d, kLayoutBatchStride, &sc, sizeof(sc)) == 0;
      }
      Preference pref = nullptr;
      if (ok && lt->prefCreate(&pref) == 0) {
        uint64_t ws = c.lib_workspace_bytes;
        uint32_t al[4] = {alignment_of(b), alignment_of(a), alignment_of(out), alignment_of(out)};
        lt->prefSet(pref, kPrefMaxWorkspace, &ws, sizeof(ws));
        lt->prefSet(pref, kPrefAlignA, &al[0], sizeof(uint32_t));
        lt->prefSet(pref, kPrefAlignB, &al[1], sizeof(uint32_t));
        lt->prefSet(pref, kPrefAlignC, &al[2], sizeof(uint32_t));
        lt->prefSet(pref, kPrefAlignD, &al[3], sizeof(uint32_t));
        HeuristicResult result{};
        int found = 0;
        if (lt->heuristic(lt->handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found) == 0 &&
            found > 0 && result.state == 0 && result.workspaceSize <= ws) {
          p.algo = result.algo;
          p.ok = true;
        }
        lt->prefDestroy(pref);
      }
      if (!p.ok)
        fprintf(stderr,
                "thunder: cuBLASLt has no algorithm for a %lldx%lldx%lld GEMM (batch %lld) "
                "within the %zu-byte workspace; running Thunder's own kernel\n",
                (long long)m, (long long)n, (long long)k, (long long)batch,
                c.lib_workspace_bytes);
    }
    if (!p.ok)
      return false;
    if (bias && lt->descSet(p.desc, kDescBiasPointer, &bias, sizeof(bias)) != 0)
      return false;
    using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
    S one = 1, zero = 0;
    lt_api::Status s = lt->matmul(lt->handle, p.desc, &one, b, p.a, a, p.b, &zero, out, p.d, out,
                                  p.d, &p.algo, c.lib_workspace, c.lib_workspace_bytes, c.stream);
    if (s != 0 && c.error && !*c.error)
      *c.error = 1000 + s;
    return s == 0;
  }
}

} // namespace thunder_cuda

#include "thunder_cuda_dnn.cuh"
#include "thunder_cuda_runtime.cuh"

#endif // THUNDER_CUDA_LIBS_CUH
