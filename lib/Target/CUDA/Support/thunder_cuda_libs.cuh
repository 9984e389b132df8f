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
#ifndef THUNDER_CUDA_LIBS_CUH
#define THUNDER_CUDA_LIBS_CUH

#include "thunder_cuda.cuh"

#include <initializer_list>

namespace thunder_cuda {

//===--------------------------------------------------------------------===//
// cuBLASLt, loaded at create() (the subset of cublasLt.h Thunder uses; its C
// ABI has been stable since CUDA 11)
//===--------------------------------------------------------------------===//

/// A shared library opened with dlopen (the first of several sonames found),
/// whose symbols are read into function pointers: get(fn, "name"). The
/// library stays loaded for the life of the process.
struct Library {
  void *lib = nullptr;
  const char *missing = nullptr; ///< the first symbol not found
  explicit Library(std::initializer_list<const char *> names) {
    for (const char *name : names)
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
  }
  template <class F> void operator()(F *&fn, const char *name) {
    fn = reinterpret_cast<F *>(dlsym(lib, name));
    if (!fn && !missing)
      missing = name;
  }
};

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

/// The GEMM for types cuBLASLt lacks (integers, f8) or shapes it refuses:
/// 16x16 tiles in shared memory, one output element per thread, batches on
/// the grid's z dimension.
template <class T>
__global__ void gemm_tiled_kernel(bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                                  i64 sa, const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc,
                                  Epilogue epi, const T *bias) {
  using A = acc_t<T>;
  constexpr int TS = 16;
  __shared__ A as[TS][TS + 1], bs[TS][TS + 1];
  const i64 batch = blockIdx.z;
  const T *ab = a + batch * sa, *bb = b + batch * sb;
  const i64 row = i64(blockIdx.y) * TS + threadIdx.y, col = i64(blockIdx.x) * TS + threadIdx.x;
  A acc = 0;
  for (i64 k0 = 0; k0 < k; k0 += TS) {
    // as[y][x] = op(A)[row][k0 + x]; bs[y][x] = op(B)[k0 + y][col].
    i64 ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        (row < m && ka < k) ? static_cast<A>(cv(ta ? ab[ka * lda + row] : ab[row * lda + ka])) : A(0);
    bs[threadIdx.y][threadIdx.x] =
        (col < n && kb < k) ? static_cast<A>(cv(tb ? bb[col * ldb + kb] : bb[kb * ldb + col])) : A(0);
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TS; ++t)
      acc += as[threadIdx.y][t] * bs[t][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) {
    if (bias)
      acc += static_cast<A>(cv(bias[col]));
    if (epi == Epilogue::Relu || epi == Epilogue::ReluBias)
      acc = relu(acc);
    if constexpr (std::is_floating_point_v<A>)
      if (epi == Epilogue::GeluTanh || epi == Epilogue::GeluTanhBias)
        acc = gelu_tanh(acc);
    out[batch * sc + row * ldc + col] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

template <class T>
void gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
          const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch,
          Epilogue epi = Epilogue::None, const T *bias = nullptr) {
  if (m <= 0 || n <= 0 || batch <= 0)
    return;
  if (lt_gemm(c, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, out, ldc, sc, batch, epi, bias))
    return;
  dim3 block(16, 16);
  // The grid's y and z dimensions hold 65535 blocks: rows and batches in chunks.
  constexpr i64 kRows = 65535 * 16;
  for (i64 b0 = 0; b0 < batch; b0 += 65535) {
    i64 nb = std::min<i64>(65535, batch - b0);
    for (i64 r0 = 0; r0 < m; r0 += kRows) {
      i64 mr = std::min<i64>(kRows, m - r0);
      const T *ar = a + b0 * sa + (ta ? r0 : r0 * lda);
      dim3 grid(unsigned((n + 15) / 16), unsigned((mr + 15) / 16), unsigned(nb));
      gemm_tiled_kernel<T><<<grid, block, 0, c.stream>>>(ta, tb, mr, n, k, ar, lda, sa,
                                                        b + b0 * sb, ldb, sb,
                                                        out + b0 * sc + r0 * ldc, ldc, sc, epi,
                                                        bias);
    }
  }
}

/// out[b] = op(lhs[b]) @ op(rhs[b or shared]); lhs is [batch, m, k] (or
/// [batch, k, m] transposed), rhs [batch or 1, k, n] (or [.., n, k]).
template <class T>
void matmul(const Ctx &c, const T *lhs, const T *rhs, T *out, i64 batch, i64 m, i64 n, i64 k,
            bool ta, bool tb, bool rhs_shared, Epilogue epi = Epilogue::None,
            const T *bias = nullptr) {
  if (rhs_shared && !ta) {
    // One GEMM over every batch: [batch*m, k] @ [k, n].
    m *= batch;
    batch = 1;
  }
  i64 lda = ta ? m : k, ldb = tb ? k : n;
  gemm(c, ta, tb, m, n, k, lhs, lda, m * k, rhs, ldb, rhs_shared ? 0 : k * n, out, n, m * n,
       batch, epi, bias);
}

//===--------------------------------------------------------------------===//
// cuDNN, loaded at create() when the model has convolutions (the subset of
// cuDNN 9's convolution API Thunder uses)
//===--------------------------------------------------------------------===//

namespace dnn_api {
using Status = int;                                  // cudnnStatus_t
using Handle = struct cudnnContext *;                // cudnnHandle_t
using TensorDesc = struct cudnnTensorStruct *;       // cudnnTensorDescriptor_t
using FilterDesc = struct cudnnFilterStruct *;       // cudnnFilterDescriptor_t
using ConvDesc = struct cudnnConvolutionStruct *;    // cudnnConvolutionDescriptor_t
struct AlgoPerf {                                    // cudnnConvolutionFwdAlgoPerf_t
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};
constexpr int kSuccess = 0;                                      // cudnnStatus_t
constexpr int kFloat = 0, kDouble = 1, kHalf = 2, kBFloat16 = 9; // cudnnDataType_t
constexpr int kNCHW = 0;                                         // cudnnTensorFormat_t
constexpr int kCrossCorrelation = 1;                             // cudnnConvolutionMode_t
constexpr int kDefaultMath = 0, kTensorOpMath = 1, kFmaMath = 3; // cudnnMathType_t
constexpr int kFwdAlgoCount = 8; // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
} // namespace dnn_api

struct Dnn {
  using Status = dnn_api::Status;
  using Handle = dnn_api::Handle;
  using TensorDesc = dnn_api::TensorDesc;
  using FilterDesc = dnn_api::FilterDesc;
  using ConvDesc = dnn_api::ConvDesc;
  Handle handle = nullptr;
  size_t (*version)() = nullptr;
  const char *(*errorString)(Status) = nullptr;
  Status (*create)(Handle *) = nullptr;
  Status (*destroy)(Handle) = nullptr;
  Status (*setStream)(Handle, cudaStream_t) = nullptr;
  Status (*tensorCreate)(TensorDesc *) = nullptr;
  Status (*tensorSet)(TensorDesc, int, int, const int *, const int *) = nullptr;
  Status (*tensorDestroy)(TensorDesc) = nullptr;
  Status (*filterCreate)(FilterDesc *) = nullptr;
  Status (*filterSet)(FilterDesc, int, int, int, const int *) = nullptr;
  Status (*filterDestroy)(FilterDesc) = nullptr;
  Status (*convCreate)(ConvDesc *) = nullptr;
  Status (*convSet)(ConvDesc, int, const int *, const int *, const int *, int, int) = nullptr;
  Status (*convGroups)(ConvDesc, int) = nullptr;
  Status (*convMath)(ConvDesc, int) = nullptr;
  Status (*convDestroy)(ConvDesc) = nullptr;
  Status (*heuristic)(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int, int *,
                      dnn_api::AlgoPerf *) = nullptr;
  Status (*find)(Handle, TensorDesc, const void *, FilterDesc, const void *, ConvDesc,
                 TensorDesc, void *, int, int *, dnn_api::AlgoPerf *, void *, size_t) = nullptr;
  Status (*workspaceSize)(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int,
                          size_t *) = nullptr;
  Status (*forward)(Handle, const void *, TensorDesc, const void *, FilterDesc, const void *,
                    ConvDesc, int, void *, size_t, const void *, TensorDesc, void *) = nullptr;

  /// One planned convolution: descriptors and the chosen algorithm.
  struct Plan {
    TensorDesc x = nullptr, y = nullptr;
    FilterDesc w = nullptr;
    ConvDesc conv = nullptr;
    int algo = 0;
    size_t workspace = 0;
    bool ok = false;
  };
  std::mutex mutex;
  std::map<std::vector<int64_t>, Plan> plans;
  /// Time cuDNN's algorithms on the first run of each shape and keep the
  /// fastest (THUNDER_CUDNN_SEARCH=0: take its heuristic's first choice).
  bool search = true;

  /// Loads libcudnn (9.x); false (with a message) when it is missing.
  bool load(std::string &why) {
    Library get({"libcudnn.so.9", "libcudnn.so"});
    if (!get.lib) {
      why = "libcudnn.so.9 not found (install cuDNN 9 or the nvidia-cudnn-cu13 wheel and put "
            "its lib folder on LD_LIBRARY_PATH)";
      return false;
    }
    get(version, "cudnnGetVersion");
    get(errorString, "cudnnGetErrorString");
    get(create, "cudnnCreate");
    get(destroy, "cudnnDestroy");
    get(setStream, "cudnnSetStream");
    get(tensorCreate, "cudnnCreateTensorDescriptor");
    get(tensorSet, "cudnnSetTensorNdDescriptor");
    get(tensorDestroy, "cudnnDestroyTensorDescriptor");
    get(filterCreate, "cudnnCreateFilterDescriptor");
    get(filterSet, "cudnnSetFilterNdDescriptor");
    get(filterDestroy, "cudnnDestroyFilterDescriptor");
    get(convCreate, "cudnnCreateConvolutionDescriptor");
    get(convSet, "cudnnSetConvolutionNdDescriptor");
    get(convGroups, "cudnnSetConvolutionGroupCount");
    get(convMath, "cudnnSetConvolutionMathType");
    get(convDestroy, "cudnnDestroyConvolutionDescriptor");
    get(heuristic, "cudnnGetConvolutionForwardAlgorithm_v7");
    get(find, "cudnnFindConvolutionForwardAlgorithmEx");
    get(workspaceSize, "cudnnGetConvolutionForwardWorkspaceSize");
    get(forward, "cudnnConvolutionForward");
    if (get.missing) {
      why = std::string("libcudnn has no ") + get.missing;
      return false;
    }
    if (size_t v = version(); v < 90000 || v >= 100000) {
      why = "libcudnn is version " + std::to_string(v) + "; Thunder needs cuDNN 9";
      return false;
    }
    if (Status s = create(&handle); s != dnn_api::kSuccess) {
      why = std::string("cudnnCreate failed: ") + errorString(s);
      return false;
    }
    const char *env = getenv("THUNDER_CUDNN_SEARCH");
    search = !(env && (!strcmp(env, "0") || !strcasecmp(env, "off") || !strcasecmp(env, "false")));
    return true;
  }

  ~Dnn() {
    for (auto &[key, p] : plans) {
      if (p.x) tensorDestroy(p.x);
      if (p.y) tensorDestroy(p.y);
      if (p.w) filterDestroy(p.w);
      if (p.conv) convDestroy(p.conv);
    }
    if (handle)
      destroy(handle);
  }
};

template <class T> constexpr int dnn_type() {
  if constexpr (std::is_same_v<T, float>) return dnn_api::kFloat;
  else if constexpr (std::is_same_v<T, double>) return dnn_api::kDouble;
  else if constexpr (std::is_same_v<T, f16>) return dnn_api::kHalf;
  else if constexpr (std::is_same_v<T, bf16>) return dnn_api::kBFloat16;
  else return -1;
}

/// The math a convolution of T may use: float keeps to FMA (no TF32, as
/// Thunder's GEMMs), f16/bf16 may use tensor cores, double the default.
template <class T> constexpr int dnn_math() {
  if constexpr (std::is_same_v<T, float>) return dnn_api::kFmaMath;
  else if constexpr (std::is_same_v<T, double>) return dnn_api::kDefaultMath;
  else return dnn_api::kTensorOpMath;
}

/// Picks the algorithm of a fresh plan: the fastest of cuDNN's measured on
/// this call's buffers (search, outside stream capture: cuDNN's timing
/// synchronizes), else its heuristic's first choice; either within the
/// workspace.
template <class T>
void dnn_choose(const Ctx &c, Dnn &dnn, Dnn::Plan &p, const T *in, const T *w, T *out) {
  using namespace dnn_api;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  bool capturing = cudaStreamIsCapturing(c.stream, &capture) != cudaSuccess ||
                   capture != cudaStreamCaptureStatusNone;
  AlgoPerf perf[kFwdAlgoCount] = {};
  int found = 0;
  Status s = dnn.search && !capturing
                 ? dnn.find(dnn.handle, p.x, in, p.w, w, p.conv, p.y, out, kFwdAlgoCount, &found,
                            perf, c.lib_workspace, c.lib_workspace_bytes)
                 : dnn.heuristic(dnn.handle, p.x, p.w, p.conv, p.y, kFwdAlgoCount, &found, perf);
  if (s != kSuccess)
    return;
  for (int i = 0; i < found && !p.ok; ++i) {
    if (perf[i].status != kSuccess)
      continue;
    // f16/bf16 results say whether they use tensor cores; float and double
    // keep the math the descriptor was searched with.
    int math = dnn_math<T>() == kTensorOpMath ? perf[i].mathType : dnn_math<T>();
    size_t bytes = 0;
    if (dnn.convMath(p.conv, math) != kSuccess ||
        dnn.workspaceSize(dnn.handle, p.x, p.w, p.conv, p.y, perf[i].algo, &bytes) != kSuccess ||
        bytes > c.lib_workspace_bytes)
      continue;
    p.algo = perf[i].algo;
    p.workspace = bytes;
    p.ok = true;
  }
}

/// out = conv(in, w) through cuDNN for a convolution whose padding is the
/// same on both sides (what cuDNN describes), `batch` at most such that every
/// tensor stays under 2^31 elements. False when cuDNN has no algorithm for it
/// (the caller runs a kernel of ours); a failing call sets c.error.
template <class T>
bool dnn_conv(const Ctx &c, const T *in, const T *w, T *out, i64 batch, i64 cin, i64 cout,
              i64 groups, const Window &win) {
  using namespace dnn_api;
  constexpr int type = dnn_type<T>();
  Dnn *dnn = c.dnn;
  if (type < 0 || !dnn)
    return false;
  // cuDNN wants two spatial dims at least: a 1-D convolution is a 2-D one of
  // height 1.
  const int spatial = std::max(win.spatial, 2), lead = spatial - win.spatial;
  int x[5] = {int(batch), int(cin)}, y[5] = {int(batch), int(cout)},
      f[5] = {int(cout), int(cin / groups)};
  int pad[3], stride[3], dilation[3];
  for (int s = 0; s < spatial; ++s) {
    int k = s - lead;
    x[s + 2] = k < 0 ? 1 : int(win.in[k]);
    y[s + 2] = k < 0 ? 1 : int(win.out[k]);
    f[s + 2] = k < 0 ? 1 : int(win.kernel[k]);
    pad[s] = k < 0 ? 0 : int(win.pad_lo[k]);
    stride[s] = k < 0 ? 1 : int(win.stride[k]);
    dilation[s] = k < 0 ? 1 : int(win.dilation[k]);
  }
  const int rank = spatial + 2;
  auto strides = [rank](const int *dims, int *out_strides) {
    int s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      out_strides[d] = s;
      s *= dims[d];
    }
  };
  // Pointer alignments too: cuDNN may pick a vectorized algorithm for the
  // first batch chunk that a less aligned later chunk could not use.
  std::vector<int64_t> key = {type, rank, groups, int64_t(c.lib_workspace_bytes),
                              int64_t(alignment_of(in)), int64_t(alignment_of(out))};
  for (int d = 0; d < rank; ++d)
    key.insert(key.end(), {x[d], y[d], f[d]});
  for (int s = 0; s < spatial; ++s)
    key.insert(key.end(), {pad[s], stride[s], dilation[s]});

  std::lock_guard<std::mutex> lock(dnn->mutex);
  if (dnn->setStream(dnn->handle, c.stream) != kSuccess)
    return false;
  auto [it, fresh] = dnn->plans.try_emplace(key);
  Dnn::Plan &p = it->second;
  if (fresh) {
    int xs[5], ys[5];
    strides(x, xs);
    strides(y, ys);
    const int compute = std::is_same_v<T, double> ? kDouble : kFloat;
    bool ok = dnn->tensorCreate(&p.x) == kSuccess && dnn->tensorCreate(&p.y) == kSuccess &&
              dnn->filterCreate(&p.w) == kSuccess && dnn->convCreate(&p.conv) == kSuccess &&
              dnn->tensorSet(p.x, type, rank, x, xs) == kSuccess &&
              dnn->tensorSet(p.y, type, rank, y, ys) == kSuccess &&
              dnn->filterSet(p.w, type, kNCHW, rank, f) == kSuccess &&
              dnn->convSet(p.conv, spatial, pad, stride, dilation, kCrossCorrelation, compute) ==
                  kSuccess &&
              dnn->convGroups(p.conv, int(groups)) == kSuccess &&
              dnn->convMath(p.conv, dnn_math<T>()) == kSuccess;
    if (ok)
      dnn_choose(c, *dnn, p, in, w, out);
    if (!p.ok)
      fprintf(stderr,
              "thunder: cuDNN has no algorithm for a %dx%d-channel convolution (groups %d, "
              "kernel %dx%d) within the %zu-byte workspace; running Thunder's own kernel\n",
              x[1], y[1], int(groups), f[rank - 2], f[rank - 1], c.lib_workspace_bytes);
  }
  if (!p.ok)
    return false;
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  S one = 1, zero = 0;
  Status s = dnn->forward(dnn->handle, &one, p.x, in, p.w, w, p.conv, p.algo, c.lib_workspace,
                          p.workspace, &zero, p.y, out);
  if (s != kSuccess && c.error && !*c.error)
    *c.error = 2000 + s;
  return true;
}

//===--------------------------------------------------------------------===//
// Convolution: cuDNN; im2col + GEMM or a direct kernel where it cannot
//===--------------------------------------------------------------------===//

/// cols[b][c * kk + kf][o] = input[b][c][window position of o and kf] (zero
/// in the padding).
template <class T>
__global__ void __launch_bounds__(kBlock)
    im2col_kernel(const T *__restrict__ in, T *__restrict__ cols, i64 batch, i64 cin, Window win) {
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  i64 n = batch * cin * kk * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat % out_size, rest = flat / out_size;
    i64 kf = rest % kk;
    rest /= kk;
    i64 ch = rest % cin, b = rest / cin;
    i64 oidx[3] = {0, 0, 0}, off;
    win.out_index(o, oidx);
    bool inside = win.tap_offset(oidx, kf, off);
    cols[flat] = inside ? in[(b * cin + ch) * in_size + off] : T(0.0f);
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    conv_direct_kernel(const T *__restrict__ in, const T *__restrict__ w, const T *__restrict__ bias,
                       T *__restrict__ out, i64 batch, i64 cin, i64 cout, i64 groups, Window win) {
  using A = acc_t<T>;
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  i64 cin_g = cin / groups, cout_g = cout / groups;
  i64 n = batch * cout * out_size;
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 o = flat % out_size, rest = flat / out_size;
    i64 oc = rest % cout, b = rest / cout;
    i64 g = oc / cout_g;
    i64 oidx[3] = {0, 0, 0};
    win.out_index(o, oidx);
    A acc = bias ? static_cast<A>(cv(bias[oc])) : A(0);
    for (i64 ic = 0; ic < cin_g; ++ic) {
      const T *x = in + (b * cin + g * cin_g + ic) * in_size;
      const T *wk = w + (oc * cin_g + ic) * kk;
      for (i64 kf = 0; kf < kk; ++kf) {
        i64 off;
        if (win.tap_offset(oidx, kf, off))
          acc += static_cast<A>(cv(x[off])) * static_cast<A>(cv(wk[kf]));
      }
    }
    out[flat] = st<T>(static_cast<compute_t<T>>(acc));
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    channel_bias_kernel(T *__restrict__ out, const T *__restrict__ bias, i64 n, i64 channels,
                        i64 rest) {
  for (i64 flat = thread_index(); flat < n; flat += grid_size()) {
    i64 ch = (flat / rest) % channels;
    out[flat] = st<T>(cv(out[flat]) + cv(bias[ch]));
  }
}

/// Bytes of scratch conv() needs (the im2col matrix; none for 1x1 convs
/// with unit stride and no padding, or for grouped ones).
inline i64 conv_scratch_bytes(i64 elem_bytes, i64 batch, i64 cin, i64 groups, const Window &w) {
  if (groups != 1)
    return 0;
  bool pointwise = true;
  for (int s = 0; s < w.spatial; ++s)
    pointwise = pointwise && w.kernel[s] == 1 && w.stride[s] == 1 && w.pad_lo[s] == 0 &&
                w.out[s] == w.in[s];
  return pointwise ? 0 : (batch * cin * w.taps() * w.out_size() * elem_bytes + 255) / 256 * 256;
}

/// out = conv(in, w) (+ bias per output channel). Through cuDNN when the
/// padding is the same on both sides (`symmetric`, known when the model is
/// compiled) and the type is one cuDNN has; else im2col + GEMM (ungrouped,
/// cuBLASLt's types, the im2col scratch reserved), else the direct kernel.
template <class T>
void conv(const Ctx &c, const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
          i64 cout, i64 groups, const Window &win, bool symmetric) {
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  i64 total = batch * cout * out_size;
  if (total == 0)
    return;
  auto add_bias = [&] {
    if (bias)
      channel_bias_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
          out, bias, total, cout, out_size);
  };
  // cuDNN's descriptors hold int sizes and strides: a call takes as many
  // images as keep every tensor under 2^31 elements.
  const i64 per_image = std::max(cin * in_size, cout * out_size);
  if (symmetric && c.dnn && dnn_type<T>() >= 0 && per_image <= INT32_MAX) {
    const i64 step = INT32_MAX / std::max<i64>(per_image, 1);
    bool done = true;
    for (i64 b0 = 0; done && b0 < batch; b0 += step)
      done = dnn_conv(c, in + b0 * cin * in_size, w, out + b0 * cout * out_size,
                      std::min(step, batch - b0), cin, cout, groups, win);
    if (done) {
      add_bias();
      return;
    }
  }
  const i64 scratch = conv_scratch_bytes(sizeof(T), batch, cin, groups, win);
  if (groups != 1 || cuda_type<T>() < 0 || scratch > i64(c.scratch_bytes)) {
    conv_direct_kernel<T><<<grid_for(total, kBlock, c), kBlock, 0, c.stream>>>(
        in, w, bias, out, batch, cin, cout, groups, win);
    return;
  }
  // out[b] (cout x out_size) = w (cout x cin*kk) @ cols[b] (cin*kk x out_size).
  const T *cols = in;
  if (scratch > 0) {
    T *buffer = static_cast<T *>(c.scratch);
    i64 n = batch * cin * kk * out_size;
    im2col_kernel<T><<<grid_for(n, kBlock, c), kBlock, 0, c.stream>>>(in, buffer, batch, cin, win);
    cols = buffer;
  }
  i64 k = cin * kk;
  gemm(c, false, false, cout, out_size, k, w, k, 0, cols, out_size, k * out_size, out, out_size,
       cout * out_size, batch);
  add_bias();
}

//===--------------------------------------------------------------------===//
// The model's device state: streams, events, cuBLASLt, CUDA graphs
//===--------------------------------------------------------------------===//

/// Writes "what: cudaGetErrorString" into error; returns 1.
inline int report(char *error, size_t size, const char *what, cudaError_t e) {
  snprintf(error, size, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return 1;
}

/// Ctx::error's code of an attention whose head dims the kernel does not
/// take (above 256: refused at compile time when the dims are static).
constexpr int kFailureAttention = 1;

/// Writes what failed (Ctx::error's code) into error; returns 1.
inline int report_library(char *error, size_t size, int code, const Dnn *dnn) {
  if (code == kFailureAttention)
    snprintf(error, size, "attention with head dims above 256 is not supported on CUDA");
  else if (code >= 2000)
    snprintf(error, size, "cuDNN's convolution failed with status %d (%s)", code - 2000,
             dnn && dnn->errorString ? dnn->errorString(code - 2000) : "unknown");
  else
    snprintf(error, size, "cuBLASLt failed with status %d", code - 1000);
  return 1;
}

/// Everything a model keeps on the device between runs, except its weights.
/// Runs enqueue under one mutex (streams and events are shared); the work
/// itself runs concurrently on the callers' streams.
class Runtime {
public:
  int sms = 1;
  int num_streams = 1;                  ///< the caller's stream plus auxiliaries
  std::vector<cudaStream_t> aux;        ///< streams 1..num_streams-1
  std::vector<cudaEvent_t> events;      ///< one per kernel another stream waits for
  std::vector<cudaEvent_t> joins;       ///< fork (index 0) and joins of aux streams
  Lt lt;
  bool have_lt = false;
  std::string lt_missing;
  Dnn dnn;
  bool have_dnn = false;
  std::string dnn_missing;
  bool graphs = false;
  cudaStream_t capture = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<uintptr_t> exec_key, warm_key;
  std::mutex mutex;

  /// Creates streams and events, loads cuBLASLt and cuDNN (when the model
  /// needs them: `needs_lt`, `needs_dnn`), reads
  /// THUNDER_CUDA_GRAPHS. `probe` is a kernel of this model: fetching its
  /// attributes tells whether the library holds code for this device.
  int init(int streams, int num_events, bool needs_lt, bool needs_dnn, bool allow_graphs,
           const void *probe,
           const char *archs, char *error, size_t size) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
      return report(error, size, "cudaGetDevice", e);
    cudaFuncAttributes attributes;
    e = cudaFuncGetAttributes(&attributes, probe);
    if (e != cudaSuccess) {
      cudaDeviceProp prop;
      cudaGetDeviceProperties(&prop, device);
      cudaGetLastError();
      snprintf(error, size,
               "this model holds GPU code for %s, which cannot run on device %d (%s, sm_%d%d): "
               "recompile it with --cuda-arch=sm_%d%d (%s)",
               archs, device, prop.name, prop.major, prop.minor, prop.major, prop.minor,
               cudaGetErrorString(e));
      return 1;
    }
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    num_streams = streams;
    for (int i = 1; i < streams; ++i) {
      cudaStream_t s;
      if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
        return report(error, size, "cudaStreamCreate", e);
      aux.push_back(s);
    }
    for (int i = 0; i < num_events + streams; ++i) {
      cudaEvent_t ev;
      if ((e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess)
        return report(error, size, "cudaEventCreate", e);
      (i < num_events ? events : joins).push_back(ev);
    }
    if (needs_lt)
      have_lt = lt.load(lt_missing);
    if (needs_dnn)
      have_dnn = dnn.load(dnn_missing);
    const char *env = getenv("THUNDER_CUDA_GRAPHS");
    graphs = allow_graphs && !(env && (!strcmp(env, "0") || !strcasecmp(env, "off") ||
                                        !strcasecmp(env, "false")));
    if (graphs && (e = cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking)) != cudaSuccess)
      return report(error, size, "cudaStreamCreate", e);
    return 0;
  }

  ~Runtime() {
    // cuDNN's handle outlives the streams below (members are destroyed
    // after this body): point it at none of them first.
    if (have_dnn)
      dnn.setStream(dnn.handle, nullptr);
    if (exec)
      cudaGraphExecDestroy(exec);
    if (capture)
      cudaStreamDestroy(capture);
    for (cudaEvent_t ev : events)
      cudaEventDestroy(ev);
    for (cudaEvent_t ev : joins)
      cudaEventDestroy(ev);
    for (cudaStream_t s : aux)
      cudaStreamDestroy(s);
  }

  /// The stream of schedule index `i` for a run whose main stream is `main`.
  cudaStream_t stream(int i, cudaStream_t main) const { return i == 0 ? main : aux[i - 1]; }

  /// Runs `enqueue(main)` on the caller's stream: replays the CUDA graph
  /// captured for the same pointers (key), captures it first if needed, or
  /// enqueues directly when graphs are off. The first run with a key runs
  /// directly (a warm-up: cuBLASLt's heuristics and kernel attributes are
  /// settled outside the capture); the second captures.
  template <class F>
  int run(cudaStream_t caller, const std::vector<uintptr_t> &key, F &&enqueue, char *error,
          size_t size) {
    std::lock_guard<std::mutex> lock(mutex);
    cudaGetLastError(); // an earlier, unrelated failure is not ours
    if (!graphs || (key != exec_key && key != warm_key)) {
      if (graphs)
        warm_key = key;
      if (int rc = enqueue(caller))
        return rc;
      cudaError_t e = cudaGetLastError();
      return e == cudaSuccess ? 0 : report(error, size, "launching the model's kernels", e);
    }
    if (!exec || key != exec_key) {
      cudaError_t e = cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal);
      if (e != cudaSuccess)
        return report(error, size, "cudaStreamBeginCapture", e);
      int rc = enqueue(capture);
      cudaGraph_t graph = nullptr;
      cudaError_t end = cudaStreamEndCapture(capture, &graph);
      if (rc) {
        if (graph)
          cudaGraphDestroy(graph);
        return rc;
      }
      if (end != cudaSuccess || !graph)
        return report(error, size, "capturing the model into a CUDA graph", end);
      if (exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(exec, graph, &info) != cudaSuccess) {
          cudaGetLastError();
          cudaGraphExecDestroy(exec);
          exec = nullptr;
        }
      }
      if (!exec && (e = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess) {
        cudaGraphDestroy(graph);
        exec = nullptr;
        return report(error, size, "cudaGraphInstantiate", e);
      }
      cudaGraphDestroy(graph);
      exec_key = key;
    }
    cudaError_t e = cudaGraphLaunch(exec, caller);
    return e == cudaSuccess ? 0 : report(error, size, "cudaGraphLaunch", e);
  }

  /// Makes every auxiliary stream wait for the work enqueued so far on `main`.
  void fork(cudaStream_t main) {
    if (aux.empty())
      return;
    cudaEventRecord(joins[0], main);
    for (cudaStream_t s : aux)
      cudaStreamWaitEvent(s, joins[0], 0);
  }
  /// Makes `main` wait for everything enqueued on the auxiliary streams.
  void join(cudaStream_t main) {
    for (size_t i = 0; i < aux.size(); ++i) {
      cudaEventRecord(joins[i + 1], aux[i]);
      cudaStreamWaitEvent(main, joins[i + 1], 0);
    }
  }
};

/// Device memory holding a model's weights and splat constants.
struct DeviceBuffer {
  void *ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr)
      cudaFree(ptr);
  }
};

} // namespace thunder_cuda

#endif // THUNDER_CUDA_LIBS_CUH
