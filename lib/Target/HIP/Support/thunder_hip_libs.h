// thunder_hip_libs.h: the part of Thunder's HIP support library that calls
// AMD's libraries, and the model's device state.
//
// GEMMs go through hipBLASLt, else rocBLAS (both opened with dlopen at
// create(), only when the model has GEMMs; the subsets of their C APIs
// Thunder calls are declared here, written from AMD's API references), else
// a tiled kernel of ours (the types they lack: integers, f8, f64 on
// hipBLASLt). Convolutions go through MIOpen (likewise opened at create()),
// else im2col + GEMM, else a direct kernel. Last, the Runtime: streams, events, the libraries'
// handles, HIP graphs.
#ifndef THUNDER_HIP_LIBS_H
#define THUNDER_HIP_LIBS_H

#include "thunder_hip.h"

#include <initializer_list>

namespace thunder_hip {

//===--------------------------------------------------------------------===//
// hipBLASLt and rocBLAS, loaded at create() (the subsets of hipblaslt.h and
// rocblas.h Thunder uses; ROCm 6 and 7)
//===--------------------------------------------------------------------===//

namespace lt_api {
using Status = int;                         // hipblasStatus_t
using Handle = struct hipblasLtContext *;   // hipblasLtHandle_t
using MatmulDesc = struct hipblasLtMatmulDescOpaque_st *;
using Layout = struct hipblasLtMatrixLayoutOpaque_st *;
using Preference = struct hipblasLtMatmulPreferenceOpaque_st *;
struct Algo { // hipblasLtMatmulAlgo_t
  uint8_t data[16];
  size_t max_workspace_bytes;
};
struct HeuristicResult { // hipblasLtMatmulHeuristicResult_t
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
constexpr int kOpN = 111, kOpT = 112;              // hipblasOperation_t
constexpr int kCompute32F = 2, kCompute64F = 7;    // hipblasComputeType_t
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14; // hipDataType
constexpr int kDescTransA = 0, kDescTransB = 1, kDescEpilogue = 2, kDescBiasPointer = 3;
constexpr int kLayoutBatchCount = 0, kLayoutBatchStride = 1;
constexpr int kPrefMaxWorkspace = 1;
} // namespace lt_api

namespace rb_api {
using Status = int;                          // rocblas_status
using Handle = struct _rocblas_handle *;     // rocblas_handle
constexpr int kOpN = 111, kOpT = 112;        // rocblas_operation
constexpr int kF16 = 150, kF32 = 151, kF64 = 152, kBF16 = 168; // rocblas_datatype
constexpr int kAlgoStandard = 0;             // rocblas_gemm_algo
} // namespace rb_api

/// The epilogues Thunder fuses into a GEMM (hipblasLtEpilogue_t values,
/// which are cuBLASLt's).
enum class Epilogue : uint32_t {
  None = 1,
  Relu = 2,
  Bias = 4,
  ReluBias = 6,
  GeluTanh = 32,     ///< applied by a kernel of ours after the GEMM
  GeluTanhBias = 36,
};

/// hipBLASLt (preferred) and rocBLAS (where hipBLASLt is missing or has no
/// algorithm): the GEMM library of a HIP model.
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
                           const lt_api::Algo *, void *, size_t, hipStream_t) = nullptr;

  rb_api::Handle rb = nullptr;
  rb_api::Status (*rbCreate)(rb_api::Handle *) = nullptr;
  rb_api::Status (*rbDestroy)(rb_api::Handle) = nullptr;
  rb_api::Status (*rbSetStream)(rb_api::Handle, hipStream_t) = nullptr;
  rb_api::Status (*rbGemm)(rb_api::Handle, int, int, int32_t, int32_t, int32_t, const void *,
                           const void *, int, int32_t, int64_t, const void *, int, int32_t,
                           int64_t, const void *, const void *, int, int32_t, int64_t, void *,
                           int, int32_t, int64_t, int32_t, int, int, int32_t,
                           uint32_t) = nullptr; // rocblas_gemm_strided_batched_ex

  /// One planned hipBLASLt GEMM: descriptors and the algorithm chosen.
  struct Plan {
    lt_api::MatmulDesc desc = nullptr;
    lt_api::Layout a = nullptr, b = nullptr, d = nullptr;
    lt_api::Algo algo{};
    bool ok = false;
  };
  std::mutex mutex;
  std::map<std::vector<int64_t>, Plan> plans;

  /// Loads hipBLASLt and rocBLAS; false (with a message naming both) when
  /// neither is usable.
  bool load(std::string &why) {
    std::string lt_why, rb_why;
    Library get({"libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0"});
    if (!get.lib) {
      lt_why = "libhipblaslt.so not found";
    } else {
      get(create, "hipblasLtCreate");
      get(destroy, "hipblasLtDestroy");
      get(descCreate, "hipblasLtMatmulDescCreate");
      get(descDestroy, "hipblasLtMatmulDescDestroy");
      get(descSet, "hipblasLtMatmulDescSetAttribute");
      get(layoutCreate, "hipblasLtMatrixLayoutCreate");
      get(layoutDestroy, "hipblasLtMatrixLayoutDestroy");
      get(layoutSet, "hipblasLtMatrixLayoutSetAttribute");
      get(prefCreate, "hipblasLtMatmulPreferenceCreate");
      get(prefDestroy, "hipblasLtMatmulPreferenceDestroy");
      get(prefSet, "hipblasLtMatmulPreferenceSetAttribute");
      get(heuristic, "hipblasLtMatmulAlgoGetHeuristic");
      get(matmul, "hipblasLtMatmul");
      if (get.missing)
        lt_why = std::string("libhipblaslt has no ") + get.missing;
      else if (create(&handle) != 0)
        lt_why = "hipblasLtCreate failed";
      if (!lt_why.empty())
        handle = nullptr;
    }
    Library rget({"librocblas.so", "librocblas.so.5", "librocblas.so.4"});
    if (!rget.lib) {
      rb_why = "librocblas.so not found";
    } else {
      rget(rbCreate, "rocblas_create_handle");
      rget(rbDestroy, "rocblas_destroy_handle");
      rget(rbSetStream, "rocblas_set_stream");
      rget(rbGemm, "rocblas_gemm_strided_batched_ex");
      if (rget.missing)
        rb_why = std::string("librocblas has no ") + rget.missing;
      else if (rbCreate(&rb) != 0)
        rb_why = "rocblas_create_handle failed";
      if (!rb_why.empty())
        rb = nullptr;
    }
    if (handle || rb)
      return true;
    why = lt_why + " and " + rb_why +
          " (install ROCm's hipBLASLt or rocBLAS and put its lib folder on LD_LIBRARY_PATH)";
    return false;
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
    if (rb)
      rbDestroy(rb);
  }
};

/// T as hipDataType (hipBLASLt), -1 for the types it lacks (f64 included:
/// hipBLASLt has no double GEMMs on CDNA; rocBLAS does).
template <class T> constexpr int lt_type() {
  if constexpr (std::is_same_v<T, float>) return lt_api::kR32F;
  else if constexpr (std::is_same_v<T, f16>) return lt_api::kR16F;
  else if constexpr (std::is_same_v<T, bf16>) return lt_api::kR16BF;
  else return -1;
}
/// T as rocblas_datatype, -1 for the types it lacks.
template <class T> constexpr int rb_type() {
  if constexpr (std::is_same_v<T, float>) return rb_api::kF32;
  else if constexpr (std::is_same_v<T, double>) return rb_api::kF64;
  else if constexpr (std::is_same_v<T, f16>) return rb_api::kF16;
  else if constexpr (std::is_same_v<T, bf16>) return rb_api::kBF16;
  else return -1;
}
/// Whether a GEMM library takes T (what the convolutions' im2col needs).
template <class T> constexpr int blas_type() { return rb_type<T>(); }

/// The largest power of two (at most 256) that divides the address.
inline uint32_t alignment_of(const void *p) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a)
    a >>= 1;
  return a;
}

/// The epilogue a library did not apply: out[b][r][col] += bias[col], then
/// the activation.
template <class T>
__global__ void __launch_bounds__(kBlock)
    epilogue_kernel(T *__restrict__ out, const T *__restrict__ bias, i64 m, i64 n, i64 ldc,
                    i64 sc, i64 batch, Epilogue epi, bool add_bias) {
  using A = acc_t<T>;
  i64 total = batch * m * n;
  for (i64 flat = thread_index(); flat < total; flat += grid_size()) {
    i64 col = flat % n, rest = flat / n, row = rest % m, b = rest / m;
    T *at = out + b * sc + row * ldc + col;
    A v = static_cast<A>(cv(*at));
    if (add_bias && bias)
      v += static_cast<A>(cv(bias[col]));
    if (epi == Epilogue::Relu || epi == Epilogue::ReluBias)
      v = relu(v);
    if constexpr (std::is_floating_point_v<A>)
      if (epi == Epilogue::GeluTanh || epi == Epilogue::GeluTanhBias)
        v = gelu_tanh(v);
    *at = st<T>(static_cast<compute_t<T>>(v));
  }
}

/// Row-major strided-batched GEMM through hipBLASLt: the row-major product
/// is the column-major C^T = op(B)^T op(A)^T. GELU is not left to
/// hipBLASLt's epilogue (whose approximation is not documented as
/// PyTorch's tanh form): the GEMM adds the bias, epilogue_kernel the GELU.
/// False when hipBLASLt is missing or has no algorithm.
template <class T>
bool hipblaslt_gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                    i64 sa, const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch,
                    Epilogue epi, const T *bias) {
  using namespace lt_api;
  constexpr int type = lt_type<T>();
  if constexpr (type < 0) {
    return false;
  } else {
    Lt *lt = c.lt;
    if (!lt || !lt->handle || m <= 0 || n <= 0 || k <= 0 || batch <= 0 || batch > INT32_MAX)
      return false;
    const bool gelu = epi == Epilogue::GeluTanh || epi == Epilogue::GeluTanhBias;
    const Epilogue lib_epi = !gelu ? epi : bias ? Epilogue::Bias : Epilogue::None;
    std::vector<int64_t> key = {type, ta, tb, m, n, k, lda, sa, ldb, sb, ldc, sc, batch,
                                int64_t(lib_epi), int64_t(alignment_of(a)),
                                int64_t(alignment_of(b)), int64_t(alignment_of(out)),
                                int64_t(bias ? alignment_of(bias) : 0),
                                int64_t(c.lib_workspace_bytes)};
    std::lock_guard<std::mutex> lock(lt->mutex);
    auto [it, fresh] = lt->plans.try_emplace(key);
    Lt::Plan &p = it->second;
    if (fresh) {
      // hipBLASLt's A is our B (op(B)^T: n x k), its B is our A (op(A)^T: k x m).
      int opA = tb ? kOpT : kOpN, opB = ta ? kOpT : kOpN;
      uint32_t e = uint32_t(lib_epi);
      bool ok = lt->descCreate(&p.desc, kCompute32F, kR32F) == 0 &&
                lt->descSet(p.desc, kDescTransA, &opA, sizeof(opA)) == 0 &&
                lt->descSet(p.desc, kDescTransB, &opB, sizeof(opB)) == 0 &&
                lt->descSet(p.desc, kDescEpilogue, &e, sizeof(e)) == 0;
      if (ok && bias)
        ok = lt->descSet(p.desc, kDescBiasPointer, &bias, sizeof(bias)) == 0;
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
        lt->prefSet(pref, kPrefMaxWorkspace, &ws, sizeof(ws));
        HeuristicResult result{};
        int found = 0;
        if (lt->heuristic(lt->handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found) == 0 &&
            found > 0 && result.state == 0 && result.workspaceSize <= ws) {
          p.algo = result.algo;
          p.ok = true;
        }
        lt->prefDestroy(pref);
      }
    }
    if (!p.ok)
      return false;
    if (bias && lt->descSet(p.desc, kDescBiasPointer, &bias, sizeof(bias)) != 0)
      return false;
    float one = 1, zero = 0;
    lt_api::Status s = lt->matmul(lt->handle, p.desc, &one, b, p.a, a, p.b, &zero, out, p.d, out,
                                  p.d, &p.algo, c.lib_workspace, c.lib_workspace_bytes, c.stream);
    if (s != 0 && c.error && !*c.error)
      *c.error = 1000 + s;
    if (s == 0 && gelu)
      epilogue_kernel<T><<<grid_for(batch * m * n, kBlock, c), kBlock, 0, c.stream>>>(
          out, bias, m, n, ldc, sc, batch, epi, false);
    return s == 0;
  }
}

/// The same GEMM through rocBLAS (gemm_strided_batched_ex), the epilogue by
/// epilogue_kernel. False when rocBLAS is missing or the sizes exceed its
/// int32 dims.
template <class T>
bool rocblas_gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda,
                  i64 sa, const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch,
                  Epilogue epi, const T *bias) {
  using namespace rb_api;
  constexpr int type = rb_type<T>();
  if constexpr (type < 0) {
    return false;
  } else {
    Lt *lt = c.lt;
    for (i64 v : {m, n, k, lda, ldb, ldc, batch})
      if (v > INT32_MAX)
        return false;
    if (!lt || !lt->rb || m <= 0 || n <= 0 || k <= 0 || batch <= 0)
      return false;
    using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const int compute = std::is_same_v<T, double> ? kF64 : kF32;
    S one = 1, zero = 0;
    std::lock_guard<std::mutex> lock(lt->mutex);
    lt->rbSetStream(lt->rb, c.stream);
    Status s = lt->rbGemm(lt->rb, tb ? kOpT : kOpN, ta ? kOpT : kOpN, int32_t(n), int32_t(m),
                          int32_t(k), &one, b, type, int32_t(ldb), sb, a, type, int32_t(lda), sa,
                          &zero, out, type, int32_t(ldc), sc, out, type, int32_t(ldc), sc,
                          int32_t(batch), compute, kAlgoStandard, 0, 0);
    if (s != 0) {
      if (c.error && !*c.error)
        *c.error = 3000 + s;
      return true; // reported; the fallback kernel would hide the failure
    }
    if (epi != Epilogue::None)
      epilogue_kernel<T><<<grid_for(batch * m * n, kBlock, c), kBlock, 0, c.stream>>>(
          out, bias, m, n, ldc, sc, batch, epi, true);
    return true;
  }
}

/// A GEMM through hipBLASLt, else rocBLAS; false when neither takes it.
template <class T>
bool lt_gemm(const Ctx &c, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
             const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch, Epilogue epi,
             const T *bias) {
  return hipblaslt_gemm(c, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, out, ldc, sc, batch, epi,
                        bias) ||
         rocblas_gemm(c, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, out, ldc, sc, batch, epi, bias);
}

//===--------------------------------------------------------------------===//
// MIOpen, loaded at create() when the model has convolutions it takes (the
// subset of miopen.h Thunder uses; ROCm 6 and 7)
//===--------------------------------------------------------------------===//

namespace dnn_api {
using Status = int;                                   // miopenStatus_t
using Handle = struct miopenHandle *;                 // miopenHandle_t
using TensorDesc = struct miopenTensorDescriptor *;   // miopenTensorDescriptor_t
using ConvDesc = struct miopenConvolutionDescriptor *; // miopenConvolutionDescriptor_t
struct AlgoPerf { // miopenConvAlgoPerf_t
  int algo;       // the union's fwd_algo (miopenConvFwdAlgorithm_t)
  float time;
  size_t memory;
};
constexpr int kSuccess = 0;                             // miopenStatus_t
constexpr int kHalf = 0, kFloat = 1, kBFloat16 = 5;     // miopenDataType_t
constexpr int kConvolution = 0;                         // miopenConvolutionMode_t
constexpr int kMaxAlgos = 8;
} // namespace dnn_api

/// MIOpen: the convolution library of a HIP model.
struct Dnn {
  using Status = dnn_api::Status;
  using Handle = dnn_api::Handle;
  using TensorDesc = dnn_api::TensorDesc;
  using ConvDesc = dnn_api::ConvDesc;
  Handle handle = nullptr;
  const char *(*errorString)(Status) = nullptr;
  Status (*create)(Handle *) = nullptr;
  Status (*destroy)(Handle) = nullptr;
  Status (*setStream)(Handle, hipStream_t) = nullptr;
  Status (*tensorCreate)(TensorDesc *) = nullptr;
  Status (*tensorSet)(TensorDesc, int, int, const int *, const int *) = nullptr;
  Status (*tensorDestroy)(TensorDesc) = nullptr;
  Status (*convCreate)(ConvDesc *) = nullptr;
  Status (*convInit)(ConvDesc, int, const int *, const int *, const int *, int) = nullptr;
  Status (*convGroups)(ConvDesc, int) = nullptr;
  Status (*convDestroy)(ConvDesc) = nullptr;
  Status (*find)(Handle, TensorDesc, const void *, TensorDesc, const void *, ConvDesc,
                 TensorDesc, void *, int, int *, dnn_api::AlgoPerf *, void *, size_t,
                 bool) = nullptr;
  Status (*forward)(Handle, const void *, TensorDesc, const void *, TensorDesc, const void *,
                    ConvDesc, int, const void *, TensorDesc, void *, void *, size_t) = nullptr;

  /// One planned convolution: descriptors and the chosen algorithm.
  struct Plan {
    TensorDesc x = nullptr, w = nullptr, y = nullptr;
    ConvDesc conv = nullptr;
    int algo = 0;
    size_t workspace = 0;
    bool ok = false;
  };
  std::mutex mutex;
  std::map<std::vector<int64_t>, Plan> plans;

  /// Loads libMIOpen; false (with a message) when it is missing.
  bool load(std::string &why) {
    Library get({"libMIOpen.so", "libMIOpen.so.1"});
    if (!get.lib) {
      why = "libMIOpen.so not found (install ROCm's MIOpen and put its lib folder on "
            "LD_LIBRARY_PATH)";
      return false;
    }
    get(errorString, "miopenGetErrorString");
    get(create, "miopenCreate");
    get(destroy, "miopenDestroy");
    get(setStream, "miopenSetStream");
    get(tensorCreate, "miopenCreateTensorDescriptor");
    get(tensorSet, "miopenSetTensorDescriptor");
    get(tensorDestroy, "miopenDestroyTensorDescriptor");
    get(convCreate, "miopenCreateConvolutionDescriptor");
    get(convInit, "miopenInitConvolutionNdDescriptor");
    get(convGroups, "miopenSetConvolutionGroupCount");
    get(convDestroy, "miopenDestroyConvolutionDescriptor");
    get(find, "miopenFindConvolutionForwardAlgorithm");
    get(forward, "miopenConvolutionForward");
    if (get.missing) {
      why = std::string("libMIOpen has no ") + get.missing;
      return false;
    }
    if (create(&handle) != dnn_api::kSuccess) {
      why = "miopenCreate failed";
      return false;
    }
    return true;
  }

  ~Dnn() {
    for (auto &[key, p] : plans) {
      if (p.x) tensorDestroy(p.x);
      if (p.w) tensorDestroy(p.w);
      if (p.y) tensorDestroy(p.y);
      if (p.conv) convDestroy(p.conv);
    }
    if (handle)
      destroy(handle);
  }
};

/// T as miopenDataType_t, -1 for the types Thunder does not give MIOpen.
template <class T> constexpr int dnn_type() {
  if constexpr (std::is_same_v<T, float>) return dnn_api::kFloat;
  else if constexpr (std::is_same_v<T, f16>) return dnn_api::kHalf;
  else if constexpr (std::is_same_v<T, bf16>) return dnn_api::kBFloat16;
  else return -1;
}

/// out = conv(in, w) through MIOpen for a convolution whose padding is the
/// same on both sides, `batch` at most such that every tensor stays under
/// 2^31 elements. The algorithm is MIOpen's fastest (timed by its Find on
/// the first run of each shape, outside any graph capture) within the
/// workspace. False when MIOpen has none (the caller runs a kernel of
/// ours); a failing call sets c.error.
template <class T>
bool dnn_conv(const Ctx &c, const T *in, const T *w, T *out, i64 batch, i64 cin, i64 cout,
              i64 groups, const Window &win) {
  using namespace dnn_api;
  constexpr int type = dnn_type<T>();
  Dnn *dnn = c.dnn;
  if (type < 0 || !dnn)
    return false;
  // Two spatial dims at least: a 1-D convolution is a 2-D one of height 1.
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
    int xs[5], ys[5], fs[5];
    strides(x, xs);
    strides(y, ys);
    strides(f, fs);
    bool ok = dnn->tensorCreate(&p.x) == kSuccess && dnn->tensorCreate(&p.y) == kSuccess &&
              dnn->tensorCreate(&p.w) == kSuccess && dnn->convCreate(&p.conv) == kSuccess &&
              dnn->tensorSet(p.x, type, rank, x, xs) == kSuccess &&
              dnn->tensorSet(p.y, type, rank, y, ys) == kSuccess &&
              dnn->tensorSet(p.w, type, rank, f, fs) == kSuccess &&
              dnn->convInit(p.conv, spatial, pad, stride, dilation, kConvolution) == kSuccess &&
              dnn->convGroups(p.conv, int(groups)) == kSuccess;
    AlgoPerf perf[kMaxAlgos] = {};
    int found = 0;
    if (ok && dnn->find(dnn->handle, p.x, in, p.w, w, p.conv, p.y, out, kMaxAlgos, &found, perf,
                        c.lib_workspace, c.lib_workspace_bytes, false) == kSuccess) {
      for (int i = 0; i < found && !p.ok; ++i)
        if (perf[i].memory <= c.lib_workspace_bytes) {
          p.algo = perf[i].algo;
          p.workspace = perf[i].memory;
          p.ok = true;
        }
    }
    if (!p.ok)
      fprintf(stderr,
              "thunder: MIOpen has no algorithm for a %dx%d-channel convolution (groups %d) "
              "within the %zu-byte workspace; running Thunder's own kernel\n",
              x[1], y[1], int(groups), c.lib_workspace_bytes);
  }
  if (!p.ok)
    return false;
  float one = 1, zero = 0;
  Status s = dnn->forward(dnn->handle, &one, p.x, in, p.w, w, p.conv, p.algo, &zero, p.y, out,
                          c.lib_workspace, p.workspace);
  if (s != kSuccess && c.error && !*c.error)
    *c.error = 2000 + s;
  return true;
}

} // namespace thunder_hip

// The GEMMs and convolutions of our own, shared with CUDA.
#include "thunder_gpu_libs.h"

namespace thunder_hip {


//===--------------------------------------------------------------------===//
// The model's device state: streams, events, the GEMM libraries, HIP graphs
//===--------------------------------------------------------------------===//

/// Writes "what: hipGetErrorString" into error; returns 1.
inline int report(char *error, size_t size, const char *what, hipError_t e) {
  snprintf(error, size, "%s: %s (%s)", what, hipGetErrorString(e), hipGetErrorName(e));
  return 1;
}

/// Ctx::error's code of an attention whose head dims the kernel does not
/// take (refused at compile time when the dims are static).
constexpr int kFailureAttention = 1;

/// Writes what failed (Ctx::error's code) into error; returns 1.
inline int report_library(char *error, size_t size, int code, const Dnn *dnn) {
  if (code == kFailureAttention)
    snprintf(error, size, "attention with head dims above 256 is not supported on HIP");
  else if (code >= 3000)
    snprintf(error, size, "rocBLAS failed with status %d", code - 3000);
  else if (code >= 2000)
    snprintf(error, size, "MIOpen's convolution failed with status %d (%s)", code - 2000,
             dnn && dnn->errorString ? dnn->errorString(code - 2000) : "unknown");
  else
    snprintf(error, size, "hipBLASLt failed with status %d", code - 1000);
  return 1;
}

/// Everything a model keeps on the device between runs, except its weights.
/// Runs enqueue under one mutex (streams and events are shared); the work
/// itself runs concurrently on the callers' streams.
class Runtime {
public:
  int sms = 1;
  int num_streams = 1;                  ///< the caller's stream plus auxiliaries
  std::vector<hipStream_t> aux;         ///< streams 1..num_streams-1
  std::vector<hipEvent_t> events;       ///< one per kernel another stream waits for
  std::vector<hipEvent_t> joins;        ///< fork (index 0) and joins of aux streams
  Lt lt;
  bool have_lt = false;
  std::string lt_missing;
  Dnn dnn;
  bool have_dnn = false;
  std::string dnn_missing;
  bool graphs = false;
  hipStream_t capture = nullptr;
  hipGraphExec_t exec = nullptr;
  std::vector<uintptr_t> exec_key, warm_key;
  std::mutex mutex;

  /// Loads the HIP runtime and the model's code for this device, creates
  /// streams and events, loads the GEMM libraries (`needs_lt`) and MIOpen
  /// (`needs_dnn`). HIP graphs
  /// are used when THUNDER_HIP_GRAPHS=1 (off by default until checked on an
  /// AMD GPU). `probe` is a kernel of this model: loading it tells whether
  /// the library holds code for this device.
  int init(int streams, int num_events, bool needs_lt, bool needs_dnn, bool allow_graphs,
           const void *probe, const char *archs, char *error, size_t size) {
    HipApi &a = api();
    if (!a.missing.empty()) {
      snprintf(error, size, "this model was compiled for HIP, but this machine has %s",
               a.missing.c_str());
      return 1;
    }
    hipError_t e = a.hipInit(0);
    int count = 0;
    if (e == hipSuccess)
      e = a.hipGetDeviceCount(&count);
    if (e != hipSuccess || count == 0) {
      snprintf(error, size, "this model was compiled for HIP, but this machine has no AMD GPU (%s)",
               e != hipSuccess ? a.hipGetErrorString(e) : "no devices");
      return 1;
    }
    int device = 0;
    if ((e = hipGetDevice(&device)) != hipSuccess)
      return report(error, size, "hipGetDevice", e);
    hipFunction_t fn = nullptr;
    if ((e = function_of(probe, &fn)) != hipSuccess) {
      char name[256] = "unknown";
      hipDeviceGetName(name, sizeof(name), device);
      snprintf(error, size,
               "this model holds GPU code for %s, which cannot run on device %d (%s): "
               "recompile it with --hip-arch set to the device's gfx architecture "
               "(rocminfo names it) (%s)",
               archs, device, name, hipGetErrorString(e));
      return 1;
    }
    hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, device);
    num_streams = streams;
    for (int i = 1; i < streams; ++i) {
      hipStream_t s;
      if ((e = hipStreamCreateWithFlags(&s, hipStreamNonBlocking)) != hipSuccess)
        return report(error, size, "hipStreamCreate", e);
      aux.push_back(s);
    }
    for (int i = 0; i < num_events + streams; ++i) {
      hipEvent_t ev;
      if ((e = hipEventCreateWithFlags(&ev, hipEventDisableTiming)) != hipSuccess)
        return report(error, size, "hipEventCreate", e);
      (i < num_events ? events : joins).push_back(ev);
    }
    if (needs_lt)
      have_lt = lt.load(lt_missing);
    if (needs_dnn)
      have_dnn = dnn.load(dnn_missing);
    const char *env = getenv("THUNDER_HIP_GRAPHS");
    graphs = allow_graphs && env && (!strcmp(env, "1") || !strcasecmp(env, "on") ||
                                     !strcasecmp(env, "true"));
    if (graphs && (e = hipStreamCreateWithFlags(&capture, hipStreamNonBlocking)) != hipSuccess)
      return report(error, size, "hipStreamCreate", e);
    return 0;
  }

  ~Runtime() {
    // MIOpen's handle outlives the streams below (members are destroyed
    // after this body): point it at none of them first.
    if (have_dnn)
      dnn.setStream(dnn.handle, nullptr);
    if (exec)
      hipGraphExecDestroy(exec);
    if (capture)
      hipStreamDestroy(capture);
    for (hipEvent_t ev : events)
      hipEventDestroy(ev);
    for (hipEvent_t ev : joins)
      hipEventDestroy(ev);
    for (hipStream_t s : aux)
      hipStreamDestroy(s);
  }

  /// The stream of schedule index `i` for a run whose main stream is `main`.
  hipStream_t stream(int i, hipStream_t main) const { return i == 0 ? main : aux[i - 1]; }

  /// Runs `enqueue(main)` on the caller's stream: replays the HIP graph
  /// captured for the same pointers (key), captures it first if needed, or
  /// enqueues directly when graphs are off. The first run with a key runs
  /// directly (a warm-up: the GEMM libraries' heuristics and the kernels'
  /// loading are settled outside the capture); the second captures.
  template <class F>
  int run(hipStream_t caller, const std::vector<uintptr_t> &key, F &&enqueue, char *error,
          size_t size) {
    std::lock_guard<std::mutex> lock(mutex);
    hipGetLastError(); // an earlier, unrelated failure is not ours
    if (!graphs || (key != exec_key && key != warm_key)) {
      if (graphs)
        warm_key = key;
      if (int rc = enqueue(caller))
        return rc;
      hipError_t e = hipGetLastError();
      return e == hipSuccess ? 0 : report(error, size, "launching the model's kernels", e);
    }
    if (!exec || key != exec_key) {
      hipError_t e = hipStreamBeginCapture(capture, hipStreamCaptureModeThreadLocal);
      if (e != hipSuccess)
        return report(error, size, "hipStreamBeginCapture", e);
      int rc = enqueue(capture);
      hipGraph_t graph = nullptr;
      hipError_t end = hipStreamEndCapture(capture, &graph);
      if (rc) {
        if (graph)
          hipGraphDestroy(graph);
        return rc;
      }
      if (end != hipSuccess || !graph)
        return report(error, size, "capturing the model into a HIP graph", end);
      if (exec) {
        hipGraphNode_t node = nullptr;
        int result = 0;
        if (hipGraphExecUpdate(exec, graph, &node, &result) != hipSuccess) {
          hipGetLastError();
          hipGraphExecDestroy(exec);
          exec = nullptr;
        }
      }
      if (!exec && (e = hipGraphInstantiateWithFlags(&exec, graph, 0)) != hipSuccess) {
        hipGraphDestroy(graph);
        exec = nullptr;
        return report(error, size, "hipGraphInstantiate", e);
      }
      hipGraphDestroy(graph);
      exec_key = key;
    }
    hipError_t e = hipGraphLaunch(exec, caller);
    return e == hipSuccess ? 0 : report(error, size, "hipGraphLaunch", e);
  }

  /// Makes every auxiliary stream wait for the work enqueued so far on `main`.
  void fork(hipStream_t main) {
    if (aux.empty())
      return;
    hipEventRecord(joins[0], main);
    for (hipStream_t s : aux)
      hipStreamWaitEvent(s, joins[0], 0);
  }
  /// Makes `main` wait for everything enqueued on the auxiliary streams.
  void join(hipStream_t main) {
    for (size_t i = 0; i < aux.size(); ++i) {
      hipEventRecord(joins[i + 1], aux[i]);
      hipStreamWaitEvent(main, joins[i + 1], 0);
    }
  }
};

/// Device memory holding a model's weights and splat constants.
struct DeviceBuffer {
  void *ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr)
      hipFree(ptr);
  }
};

} // namespace thunder_hip

#endif // THUNDER_HIP_LIBS_H
