// thunder_cuda_dnn.cuh: cuDNN, opened with dlopen when a model has
// convolutions (the subset of its C API Thunder calls); then the GEMMs and
// the convolutions that use it and cuBLASLt (thunder_gpu_libs.h: through
// cuDNN, else im2col + GEMM, else a direct kernel). Included by
// thunder_cuda_libs.cuh.
#ifndef THUNDER_CUDA_DNN_CUH
#define THUNDER_CUDA_DNN_CUH

namespace thunder_cuda {

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

} // namespace thunder_cuda

// The GEMMs and convolutions of our own, shared with HIP.
#include "thunder_gpu_libs.h"

#endif // THUNDER_CUDA_DNN_CUH
