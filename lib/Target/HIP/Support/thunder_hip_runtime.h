// thunder_hip_runtime.h: the HIP runtime as a HIP model calls it: loaded
// from libamdhip64.so with dlopen at the first call, so that the built
// library needs only libc until it runs, and any ROCm release (5, 6, 7)
// serves.
//
// The entry points Thunder uses are declared here with their HIP names,
// written from AMD's HIP runtime API reference (no ROCm header is needed
// at build time); each forwards to the loaded library. Kernels are launched
// through the module API: clang's host compile of the model embeds the
// device code bundle (gfx90a/gfx942/gfx950 code objects) and registers each
// kernel's host stub with __hipRegisterFatBinary / __hipRegisterFunction,
// and turns `kernel<<<grid, block, smem, stream>>>(args)` into
// __hipPushCallConfiguration + hipLaunchKernel. This header defines those
// entry points itself (hidden: a process that has loaded the real runtime,
// PyTorch's for instance, keeps its own): registration only records the
// bundle and the kernels' names; the first launch loads the bundle with
// hipModuleLoadData and each kernel with hipModuleGetFunction, and
// launches with hipModuleLaunchKernel.
//
// Included once per model, by its one HIP translation unit.
#ifndef THUNDER_HIP_RUNTIME_H
#define THUNDER_HIP_RUNTIME_H

typedef enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNotInitialized = 3,
  hipErrorNoDevice = 100,
  hipErrorInvalidImage = 200,
  hipErrorNoBinaryForGpu = 209,
  hipErrorNotFound = 500,
  hipErrorLaunchFailure = 719,
  hipErrorUnknown = 999,
} hipError_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef struct hipGraphNode *hipGraphNode_t;
typedef int hipDevice_t;

typedef enum hipMemcpyKind {
  hipMemcpyHostToHost = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
} hipMemcpyKind;
constexpr unsigned hipStreamNonBlocking = 0x1;
constexpr unsigned hipEventDisableTiming = 0x2;
constexpr int hipStreamCaptureModeThreadLocal = 1;       // hipStreamCaptureMode
constexpr int hipDeviceAttributeMultiprocessorCount = 63; // hipDeviceAttribute_t

namespace thunder_hip {

/// libamdhip64's entry points, read once.
struct HipApi {
  void *lib = nullptr;
  std::string missing; ///< why it is unusable ("" when loaded)
#define THUNDER_HIP_FN(ret, name, params) ret(*name) params = nullptr;
#define THUNDER_HIP_API(X)                                                                     \
  X(hipError_t, hipInit, (unsigned))                                                           \
  X(hipError_t, hipGetDeviceCount, (int *))                                                    \
  X(hipError_t, hipGetDevice, (int *))                                                         \
  X(hipError_t, hipDeviceGetName, (char *, int, hipDevice_t))                                  \
  X(hipError_t, hipDeviceGetAttribute, (int *, int, int))                                      \
  X(const char *, hipGetErrorString, (hipError_t))                                             \
  X(const char *, hipGetErrorName, (hipError_t))                                               \
  X(hipError_t, hipGetLastError, ())                                                           \
  X(hipError_t, hipMalloc, (void **, size_t))                                                  \
  X(hipError_t, hipFree, (void *))                                                             \
  X(hipError_t, hipMemcpy, (void *, const void *, size_t, hipMemcpyKind))                      \
  X(hipError_t, hipMemcpyAsync, (void *, const void *, size_t, hipMemcpyKind, hipStream_t))    \
  X(hipError_t, hipStreamCreateWithFlags, (hipStream_t *, unsigned))                           \
  X(hipError_t, hipStreamSynchronize, (hipStream_t))                                           \
  X(hipError_t, hipStreamDestroy, (hipStream_t))                                               \
  X(hipError_t, hipStreamWaitEvent, (hipStream_t, hipEvent_t, unsigned))                       \
  X(hipError_t, hipDeviceSynchronize, ())                                                      \
  X(hipError_t, hipEventCreateWithFlags, (hipEvent_t *, unsigned))                             \
  X(hipError_t, hipEventRecord, (hipEvent_t, hipStream_t))                                     \
  X(hipError_t, hipEventDestroy, (hipEvent_t))                                                 \
  X(hipError_t, hipModuleLoadData, (hipModule_t *, const void *))                              \
  X(hipError_t, hipModuleUnload, (hipModule_t))                                                \
  X(hipError_t, hipModuleGetFunction, (hipFunction_t *, hipModule_t, const char *))            \
  X(hipError_t, hipModuleLaunchKernel,                                                         \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,     \
     hipStream_t, void **, void **))                                                           \
  X(hipError_t, hipStreamBeginCapture, (hipStream_t, int))                                     \
  X(hipError_t, hipStreamEndCapture, (hipStream_t, hipGraph_t *))                              \
  X(hipError_t, hipGraphInstantiateWithFlags, (hipGraphExec_t *, hipGraph_t, unsigned long long)) \
  X(hipError_t, hipGraphExecUpdate, (hipGraphExec_t, hipGraph_t, hipGraphNode_t *, int *))     \
  X(hipError_t, hipGraphLaunch, (hipGraphExec_t, hipStream_t))                                 \
  X(hipError_t, hipGraphExecDestroy, (hipGraphExec_t))                                         \
  X(hipError_t, hipGraphDestroy, (hipGraph_t))
  THUNDER_HIP_API(THUNDER_HIP_FN)
#undef THUNDER_HIP_FN

  HipApi() {
    for (const char *name : {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                             "libamdhip64.so.5"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!lib) {
      missing = "no HIP runtime: libamdhip64.so not found (install ROCm's HIP runtime and put "
                "its lib folder, e.g. /opt/rocm/lib, on LD_LIBRARY_PATH)";
      return;
    }
#define THUNDER_HIP_FN(ret, name, params)                                                      \
  name = reinterpret_cast<ret(*) params>(dlsym(lib, #name));                                   \
  if (!name && missing.empty())                                                                \
    missing = "an unusable HIP runtime: libamdhip64.so has no " #name;
    THUNDER_HIP_API(THUNDER_HIP_FN)
#undef THUNDER_HIP_FN
  }
};

/// The runtime, loaded at the first call (never unloaded).
inline HipApi &api() {
  static HipApi *instance = new HipApi();
  return *instance;
}

/// The device code bundle and the kernels clang's host compile registered.
struct Kernels {
  const void *bundle = nullptr;
  std::map<const void *, std::string> names; ///< host stub -> device symbol
  std::map<const void *, hipFunction_t> loaded;
  hipModule_t module = nullptr;
  hipError_t load_error = hipSuccess;
  bool tried = false;
  std::mutex mutex;
};
inline Kernels &kernels() {
  static Kernels *instance = new Kernels();
  return *instance;
}

/// The launch configuration between __hipPushCallConfiguration and the
/// stub's __hipPopCallConfiguration (per thread, as launches are).
struct LaunchConfig {
  dim3 grid, block;
  size_t smem = 0;
  hipStream_t stream = nullptr;
};
inline thread_local LaunchConfig launch_config;
/// The first failed launch since the last hipGetLastError (per thread).
inline thread_local hipError_t launch_error = hipSuccess;

/// Loads the bundle as a module (once); the runtime picks the code object
/// of the device's architecture, and fails when there is none.
inline hipError_t load_module() {
  Kernels &k = kernels();
  std::lock_guard<std::mutex> lock(k.mutex);
  if (!k.tried) {
    k.tried = true;
    HipApi &a = api();
    if (!a.missing.empty())
      k.load_error = hipErrorNotInitialized;
    else if (!k.bundle)
      k.load_error = hipErrorInvalidImage;
    else
      k.load_error = a.hipModuleLoadData(&k.module, k.bundle);
  }
  return k.load_error;
}

/// The module function of a registered host stub.
inline hipError_t function_of(const void *stub, hipFunction_t *fn) {
  if (hipError_t e = load_module())
    return e;
  Kernels &k = kernels();
  std::lock_guard<std::mutex> lock(k.mutex);
  auto it = k.loaded.find(stub);
  if (it != k.loaded.end()) {
    *fn = it->second;
    return hipSuccess;
  }
  auto name = k.names.find(stub);
  if (name == k.names.end())
    return hipErrorNotFound;
  hipError_t e = api().hipModuleGetFunction(fn, k.module, name->second.c_str());
  if (e == hipSuccess)
    k.loaded.emplace(stub, *fn);
  return e;
}

} // namespace thunder_hip

// The HIP names the generated code and the support headers call.
#define THUNDER_HIP_FORWARD(name, params, args)                                                \
  inline hipError_t name params {                                                              \
    auto &a = ::thunder_hip::api();                                                            \
    return a.name ? a.name args : hipErrorNotInitialized;                                      \
  }
THUNDER_HIP_FORWARD(hipGetDevice, (int *d), (d))
THUNDER_HIP_FORWARD(hipDeviceGetName, (char *s, int n, hipDevice_t d), (s, n, d))
THUNDER_HIP_FORWARD(hipDeviceGetAttribute, (int *v, int attr, int d), (v, attr, d))
THUNDER_HIP_FORWARD(hipMalloc, (void **p, size_t n), (p, n))
THUNDER_HIP_FORWARD(hipFree, (void *p), (p))
THUNDER_HIP_FORWARD(hipMemcpy, (void *d, const void *s, size_t n, hipMemcpyKind k), (d, s, n, k))
THUNDER_HIP_FORWARD(hipMemcpyAsync,
                    (void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st),
                    (d, s, n, k, st))
THUNDER_HIP_FORWARD(hipStreamCreateWithFlags, (hipStream_t *s, unsigned f), (s, f))
THUNDER_HIP_FORWARD(hipStreamSynchronize, (hipStream_t s), (s))
THUNDER_HIP_FORWARD(hipStreamDestroy, (hipStream_t s), (s))
THUNDER_HIP_FORWARD(hipStreamWaitEvent, (hipStream_t s, hipEvent_t e, unsigned f), (s, e, f))
THUNDER_HIP_FORWARD(hipDeviceSynchronize, (), ())
THUNDER_HIP_FORWARD(hipEventCreateWithFlags, (hipEvent_t *e, unsigned f), (e, f))
THUNDER_HIP_FORWARD(hipEventRecord, (hipEvent_t e, hipStream_t s), (e, s))
THUNDER_HIP_FORWARD(hipEventDestroy, (hipEvent_t e), (e))
THUNDER_HIP_FORWARD(hipStreamBeginCapture, (hipStream_t s, int mode), (s, mode))
THUNDER_HIP_FORWARD(hipStreamEndCapture, (hipStream_t s, hipGraph_t *g), (s, g))
THUNDER_HIP_FORWARD(hipGraphInstantiateWithFlags,
                    (hipGraphExec_t *x, hipGraph_t g, unsigned long long f), (x, g, f))
THUNDER_HIP_FORWARD(hipGraphExecUpdate,
                    (hipGraphExec_t x, hipGraph_t g, hipGraphNode_t *n, int *r), (x, g, n, r))
THUNDER_HIP_FORWARD(hipGraphLaunch, (hipGraphExec_t x, hipStream_t s), (x, s))
THUNDER_HIP_FORWARD(hipGraphExecDestroy, (hipGraphExec_t x), (x))
THUNDER_HIP_FORWARD(hipGraphDestroy, (hipGraph_t g), (g))
#undef THUNDER_HIP_FORWARD

/// The runtime's last error, or a failed launch of ours before it.
inline hipError_t hipGetLastError() {
  hipError_t mine = thunder_hip::launch_error;
  thunder_hip::launch_error = hipSuccess;
  auto &a = thunder_hip::api();
  hipError_t theirs = a.hipGetLastError ? a.hipGetLastError() : hipSuccess;
  return mine != hipSuccess ? mine : theirs;
}

inline const char *hipGetErrorString(hipError_t e) {
  auto &a = thunder_hip::api();
  if (e == hipErrorNotInitialized && !a.missing.empty())
    return a.missing.c_str();
  return a.hipGetErrorString ? a.hipGetErrorString(e) : "HIP runtime not loaded";
}
inline const char *hipGetErrorName(hipError_t e) {
  auto &a = thunder_hip::api();
  return a.hipGetErrorName ? a.hipGetErrorName(e) : "hipErrorNotInitialized";
}

// What clang's host compile of HIP code calls (see the top of this file).
#define THUNDER_HIP_ABI extern "C" __attribute__((visibility("hidden")))

/// clang's __hip_fatbin_wrapper: "HIPF", version 1, the bundle.
struct ThunderHipFatbinWrapper {
  unsigned magic, version;
  const void *binary;
  void *unused;
};

THUNDER_HIP_ABI void **__hipRegisterFatBinary(const void *data) {
  auto *w = static_cast<const ThunderHipFatbinWrapper *>(data);
  thunder_hip::kernels().bundle = w->binary;
  static void *handle = nullptr;
  return &handle;
}

THUNDER_HIP_ABI void __hipRegisterFunction(void **, const void *stub, char *, const char *name,
                                           int, void *, void *, dim3 *, dim3 *, int *) {
  thunder_hip::kernels().names[stub] = name;
}

THUNDER_HIP_ABI void __hipUnregisterFatBinary(void **) {
  // The module stays loaded: kernels may still run while the process exits.
}

THUNDER_HIP_ABI hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t smem,
                                                      hipStream_t stream) {
  thunder_hip::launch_config = {grid, block, smem, stream};
  return hipSuccess;
}

THUNDER_HIP_ABI hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem,
                                                     hipStream_t *stream) {
  const thunder_hip::LaunchConfig &c = thunder_hip::launch_config;
  *grid = c.grid;
  *block = c.block;
  *smem = c.smem;
  *stream = c.stream;
  return hipSuccess;
}

THUNDER_HIP_ABI hipError_t hipLaunchKernel(const void *stub, dim3 grid, dim3 block, void **args,
                                           size_t smem, hipStream_t stream) {
  hipFunction_t fn = nullptr;
  hipError_t e = thunder_hip::function_of(stub, &fn);
  if (e == hipSuccess)
    e = thunder_hip::api().hipModuleLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y,
                                                 block.z, unsigned(smem), stream, args, nullptr);
  if (e != hipSuccess && thunder_hip::launch_error == hipSuccess)
    thunder_hip::launch_error = e;
  return e;
}
#undef THUNDER_HIP_ABI

#endif // THUNDER_HIP_RUNTIME_H
