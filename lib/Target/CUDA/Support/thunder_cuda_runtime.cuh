// thunder_cuda_runtime.cuh: a CUDA model's device state (the Runtime):
// streams, events, the libraries' handles, CUDA graphs. Included last by
// thunder_cuda_libs.cuh.
#ifndef THUNDER_CUDA_RUNTIME_CUH
#define THUNDER_CUDA_RUNTIME_CUH

namespace thunder_cuda {

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

#endif // THUNDER_CUDA_RUNTIME_CUH
