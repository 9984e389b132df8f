// Workspaces on the host, and on CUDA/HIP devices through drivers dlopen'ed at first use.
//
// The driver entry points are declared here by hand (their C ABI has been stable for a decade),
// so the runtime builds without CUDA or ROCm and a CPU-only machine never loads either.
#include "Device.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

using namespace thunder::runtime;

namespace {

constexpr uint64_t kAlignment = 64;

/// `bytes` rounded up to the alignment; false if that overflows size_t.
bool roundUp(uint64_t bytes, size_t &rounded) {
  if (bytes > SIZE_MAX - (kAlignment - 1))
    return false;
  rounded = static_cast<size_t>((bytes + kAlignment - 1) / kAlignment * kAlignment);
  return true;
}

thunder_status outOfMemory(const char *where, uint64_t bytes, const std::string &detail = "") {
  std::string message = "cannot allocate a workspace of " + std::to_string(bytes) + " bytes in " +
                        where + " memory";
  if (!detail.empty())
    message += " (" + detail + ")";
  return fail(THUNDER_ERROR_OUT_OF_MEMORY, message);
}

//===----------------------------------------------------------------------===//
// Host
//===----------------------------------------------------------------------===//

class HostDevice final : public DeviceApi {
public:
  thunder_status allocateForRun(uint64_t bytes, void *, Buffer &buffer) override {
    return allocate(bytes, buffer);
  }
  void releaseForRun(Buffer &buffer, void *) override { release(buffer); }

  /// The host CPU's model name (/proc/cpuinfo) and machine (uname): "cpu: AMD EPYC 7B13
  /// (x86_64)".
  void describe(std::string &description, std::string &arch) override {
    struct utsname machine;
    arch = uname(&machine) == 0 ? machine.machine : "";
    std::string model;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; model.empty() && std::getline(cpuinfo, line);)
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
        model = line.substr(line.find(':') + 1);
        model.erase(0, model.find_first_not_of(" \t"));
      }
    description = "cpu";
    if (!model.empty())
      description += ": " + model;
    if (!arch.empty())
      description += " (" + arch + ")";
  }

  thunder_status allocate(uint64_t bytes, Buffer &buffer) override {
    buffer = Buffer();
    if (bytes == 0)
      return THUNDER_OK;
    size_t rounded;
    void *ptr = nullptr;
    if (!roundUp(bytes, rounded) || posix_memalign(&ptr, kAlignment, rounded) != 0)
      return outOfMemory("host", bytes);
    buffer.ptr = ptr;
    buffer.bytes = bytes;
    return THUNDER_OK;
  }
  void release(Buffer &buffer) override {
    std::free(buffer.ptr);
    buffer = Buffer();
  }
};

/// dlsym into a function pointer of the right type.
template <typename F> bool lookup(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

//===----------------------------------------------------------------------===//
// CUDA (driver API, libcuda.so.1)
//===----------------------------------------------------------------------===//

class CudaDevice final : public DeviceApi {
public:
  using CUresult = int;
  using CUdevice = int;
  using CUcontext = void *;
  using CUstream = void *;
  using CUdeviceptr = unsigned long long;
  static constexpr CUresult kOutOfMemory = 2;   // CUDA_ERROR_OUT_OF_MEMORY
  static constexpr CUresult kNotSupported = 801; // CUDA_ERROR_NOT_SUPPORTED

  /// Loads libcuda.so.1, initializes it and counts devices; null with a message otherwise.
  static CudaDevice *get(const std::string &modelName) {
    static std::mutex mutex;
    static CudaDevice *instance = nullptr; // kept for the life of the process
    std::lock_guard<std::mutex> lock(mutex);
    if (instance)
      return instance;
    std::string prefix = "model '" + modelName + "' was compiled for CUDA, but this machine has ";
    // The driver is never unloaded: drivers do not support being unloaded after cuInit.
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      fail(THUNDER_ERROR_DEVICE, prefix + "no CUDA driver (libcuda.so.1 not found)");
      return nullptr;
    }
    auto device = std::make_unique<CudaDevice>();
    CudaDevice &d = *device;
    const char *missing = nullptr;
#define THUNDER_CUDA_REQUIRE(name, field)                                                      \
  if (!missing && !lookup(handle, name, d.field))                                              \
    missing = name;
    THUNDER_CUDA_REQUIRE("cuInit", init)
    THUNDER_CUDA_REQUIRE("cuDeviceGetCount", deviceGetCount)
    THUNDER_CUDA_REQUIRE("cuDeviceGet", deviceGet)
    THUNDER_CUDA_REQUIRE("cuDevicePrimaryCtxRetain", primaryCtxRetain)
    THUNDER_CUDA_REQUIRE("cuCtxGetCurrent", ctxGetCurrent)
    THUNDER_CUDA_REQUIRE("cuCtxSetCurrent", ctxSetCurrent)
    THUNDER_CUDA_REQUIRE("cuCtxPushCurrent_v2", ctxPushCurrent)
    THUNDER_CUDA_REQUIRE("cuCtxPopCurrent_v2", ctxPopCurrent)
    THUNDER_CUDA_REQUIRE("cuCtxSynchronize", ctxSynchronize)
    THUNDER_CUDA_REQUIRE("cuStreamSynchronize", streamSynchronize)
    THUNDER_CUDA_REQUIRE("cuMemAlloc_v2", memAlloc)
    THUNDER_CUDA_REQUIRE("cuMemFree_v2", memFree)
#undef THUNDER_CUDA_REQUIRE
    if (missing) {
      fail(THUNDER_ERROR_DEVICE, prefix + "an unusable CUDA driver (libcuda.so.1 has no " +
                                     missing + "; is it older than CUDA 11.2?)");
      return nullptr;
    }
    // Optional: stream-ordered allocation (CUDA 11.2) and error strings.
    lookup(handle, "cuMemAllocAsync", d.memAllocAsync);
    lookup(handle, "cuMemFreeAsync", d.memFreeAsync);
    lookup(handle, "cuGetErrorName", d.getErrorName);
    lookup(handle, "cuGetErrorString", d.getErrorString);
    // Optional: what describe() says.
    lookup(handle, "cuCtxGetDevice", d.ctxGetDevice);
    lookup(handle, "cuDeviceGetName", d.deviceGetName);
    lookup(handle, "cuDeviceGetAttribute", d.deviceGetAttribute);

    if (CUresult r = d.init(0)) {
      fail(THUNDER_ERROR_DEVICE, prefix + "no CUDA device (cuInit: " + d.errorText(r) + ")");
      return nullptr;
    }
    int count = 0;
    if (CUresult r = d.deviceGetCount(&count)) {
      fail(THUNDER_ERROR_DEVICE,
           prefix + "no CUDA device (cuDeviceGetCount: " + d.errorText(r) + ")");
      return nullptr;
    }
    if (count <= 0) {
      fail(THUNDER_ERROR_DEVICE, prefix + "no CUDA device (the driver reports 0 devices)");
      return nullptr;
    }
    instance = device.release();
    return instance;
  }

  thunder_status allocateForRun(uint64_t bytes, void *stream, Buffer &buffer) override {
    buffer = Buffer();
    if (bytes == 0)
      return THUNDER_OK;
    CUcontext context;
    if (thunder_status s = currentContext(context))
      return s;
    if (memAllocAsync) {
      CUdeviceptr ptr = 0;
      CUresult r = memAllocAsync(&ptr, bytes, stream);
      if (r == 0) {
        buffer = {reinterpret_cast<void *>(ptr), bytes, context, true};
        return THUNDER_OK;
      }
      // Devices without memory pools say "not supported": allocate synchronously below.
      if (r != kNotSupported)
        return allocationFailed(r, bytes);
    }
    return allocate(bytes, buffer);
  }

  void releaseForRun(Buffer &buffer, void *stream) override {
    if (!buffer.ptr)
      return;
    if (buffer.streamOrdered) {
      memFreeAsync(reinterpret_cast<CUdeviceptr>(buffer.ptr), stream);
    } else {
      // The run's kernels may still be reading it.
      streamSynchronize(stream);
      memFree(reinterpret_cast<CUdeviceptr>(buffer.ptr));
    }
    buffer = Buffer();
  }

  thunder_status allocate(uint64_t bytes, Buffer &buffer) override {
    buffer = Buffer();
    if (bytes == 0)
      return THUNDER_OK;
    CUcontext context;
    if (thunder_status s = currentContext(context))
      return s;
    CUdeviceptr ptr = 0;
    if (CUresult r = memAlloc(&ptr, bytes))
      return allocationFailed(r, bytes);
    buffer = {reinterpret_cast<void *>(ptr), bytes, context, false};
    return THUNDER_OK;
  }

  void release(Buffer &buffer) override {
    if (!buffer.ptr)
      return;
    // Free in the context it came from, after every run that may still use it.
    CUcontext current = nullptr;
    ctxGetCurrent(&current);
    bool pushed = current != buffer.deviceContext && ctxPushCurrent(buffer.deviceContext) == 0;
    ctxSynchronize();
    memFree(reinterpret_cast<CUdeviceptr>(buffer.ptr));
    if (pushed) {
      CUcontext popped;
      ctxPopCurrent(&popped);
    }
    buffer = Buffer();
  }

  /// The device of the context current on this thread, else device 0 (whose primary
  /// context runs would make current): "CUDA device 0: NVIDIA H200 (sm_90)".
  void describe(std::string &description, std::string &arch) override {
    CUdevice device = 0;
    CUcontext context = nullptr;
    if (!(ctxGetCurrent(&context) == 0 && context && ctxGetDevice && ctxGetDevice(&device) == 0))
      deviceGet(&device, 0);
    char name[256] = "";
    if (deviceGetName && deviceGetName(name, sizeof(name), device) != 0)
      name[0] = '\0';
    name[sizeof(name) - 1] = '\0';
    int major = 0, minor = 0;
    arch.clear();
    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (75) and _MINOR (76).
    if (deviceGetAttribute && deviceGetAttribute(&major, 75, device) == 0 &&
        deviceGetAttribute(&minor, 76, device) == 0)
      arch = "sm_" + std::to_string(major) + std::to_string(minor);
    description = "CUDA device " + std::to_string(device) + ": " +
                  (name[0] ? name : "an NVIDIA GPU");
    if (!arch.empty())
      description += " (" + arch + ")";
  }

private:
  /// The context current on this thread; if there is none, device 0's primary context (the one
  /// the CUDA runtime API would use), made current.
  thunder_status currentContext(CUcontext &context) {
    context = nullptr;
    if (CUresult r = ctxGetCurrent(&context))
      return fail(THUNDER_ERROR_DEVICE, "cuCtxGetCurrent: " + errorText(r));
    if (context)
      return THUNDER_OK;
    CUdevice device;
    if (CUresult r = deviceGet(&device, 0))
      return fail(THUNDER_ERROR_DEVICE, "cuDeviceGet(0): " + errorText(r));
    if (CUresult r = primaryCtxRetain(&context, device))
      return fail(THUNDER_ERROR_DEVICE, "cuDevicePrimaryCtxRetain: " + errorText(r));
    if (CUresult r = ctxSetCurrent(context))
      return fail(THUNDER_ERROR_DEVICE, "cuCtxSetCurrent: " + errorText(r));
    return THUNDER_OK;
  }

  thunder_status allocationFailed(CUresult r, uint64_t bytes) {
    if (r == kOutOfMemory)
      return outOfMemory("CUDA device", bytes, errorText(r));
    return fail(THUNDER_ERROR_DEVICE, "cannot allocate a workspace of " + std::to_string(bytes) +
                                          " bytes on the CUDA device: " + errorText(r));
  }

  std::string errorText(CUresult r) const {
    std::string text = "error " + std::to_string(r);
    const char *name = nullptr, *description = nullptr;
    if (getErrorName && getErrorName(r, &name) == 0 && name)
      text = name;
    if (getErrorString && getErrorString(r, &description) == 0 && description)
      text += std::string(", ") + description;
    return text;
  }

  CUresult (*init)(unsigned) = nullptr;
  CUresult (*deviceGetCount)(int *) = nullptr;
  CUresult (*deviceGet)(CUdevice *, int) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext *) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ctxPushCurrent)(CUcontext) = nullptr;
  CUresult (*ctxPopCurrent)(CUcontext *) = nullptr;
  CUresult (*ctxSynchronize)() = nullptr;
  CUresult (*streamSynchronize)(CUstream) = nullptr;
  CUresult (*memAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*memFree)(CUdeviceptr) = nullptr;
  CUresult (*memAllocAsync)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*memFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*getErrorName)(CUresult, const char **) = nullptr;
  CUresult (*getErrorString)(CUresult, const char **) = nullptr;
  CUresult (*ctxGetDevice)(CUdevice *) = nullptr;
  CUresult (*deviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*deviceGetAttribute)(int *, int, CUdevice) = nullptr;
};

//===----------------------------------------------------------------------===//
// HIP (libamdhip64.so)
//===----------------------------------------------------------------------===//

class HipDevice final : public DeviceApi {
public:
  using hipError_t = int;
  using hipStream_t = void *;
  static constexpr hipError_t kOutOfMemory = 2;    // hipErrorOutOfMemory
  static constexpr hipError_t kNotSupported = 801; // hipErrorNotSupported

  static HipDevice *get(const std::string &modelName) {
    static std::mutex mutex;
    static HipDevice *instance = nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    if (instance)
      return instance;
    std::string prefix = "model '" + modelName + "' was compiled for HIP, but this machine has ";
    void *handle = nullptr;
    // The unversioned name comes with the -dev package only.
    for (const char *name :
         {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      fail(THUNDER_ERROR_DEVICE, prefix + "no HIP runtime (libamdhip64.so not found)");
      return nullptr;
    }
    auto device = std::make_unique<HipDevice>();
    HipDevice &d = *device;
    const char *missing = nullptr;
#define THUNDER_HIP_REQUIRE(name, field)                                                       \
  if (!missing && !lookup(handle, name, d.field))                                              \
    missing = name;
    THUNDER_HIP_REQUIRE("hipInit", init)
    THUNDER_HIP_REQUIRE("hipGetDeviceCount", getDeviceCount)
    THUNDER_HIP_REQUIRE("hipMalloc", mallocFn)
    THUNDER_HIP_REQUIRE("hipFree", freeFn)
    THUNDER_HIP_REQUIRE("hipStreamSynchronize", streamSynchronize)
    THUNDER_HIP_REQUIRE("hipDeviceSynchronize", deviceSynchronize)
#undef THUNDER_HIP_REQUIRE
    if (missing) {
      fail(THUNDER_ERROR_DEVICE,
           prefix + "an unusable HIP runtime (libamdhip64.so has no " + missing + ")");
      return nullptr;
    }
    lookup(handle, "hipMallocAsync", d.mallocAsync);
    lookup(handle, "hipFreeAsync", d.freeAsync);
    lookup(handle, "hipGetErrorString", d.getErrorString);
    // Optional: what describe() says. ROCm 6 and 7 export the properties of their
    // hipDeviceProp_t as hipGetDevicePropertiesR0600, ROCm 5 as hipGetDeviceProperties.
    lookup(handle, "hipGetDevice", d.getDevice);
    lookup(handle, "hipDeviceGetName", d.deviceGetName);
    if (!lookup(handle, "hipGetDevicePropertiesR0600", d.getDeviceProperties))
      lookup(handle, "hipGetDeviceProperties", d.getDeviceProperties);
    if (hipError_t r = d.init(0)) {
      fail(THUNDER_ERROR_DEVICE, prefix + "no AMD GPU (hipInit: " + d.errorText(r) + ")");
      return nullptr;
    }
    int count = 0;
    hipError_t r = d.getDeviceCount(&count);
    if (r != 0 || count <= 0) {
      fail(THUNDER_ERROR_DEVICE,
           prefix + "no AMD GPU (hipGetDeviceCount: " +
               (r ? d.errorText(r) : std::string("0 devices")) + ")");
      return nullptr;
    }
    instance = device.release();
    return instance;
  }

  thunder_status allocateForRun(uint64_t bytes, void *stream, Buffer &buffer) override {
    buffer = Buffer();
    if (bytes == 0)
      return THUNDER_OK;
    if (mallocAsync) {
      void *ptr = nullptr;
      hipError_t r = mallocAsync(&ptr, bytes, stream);
      if (r == 0) {
        buffer = {ptr, bytes, nullptr, true};
        return THUNDER_OK;
      }
      if (r != kNotSupported)
        return allocationFailed(r, bytes);
    }
    return allocate(bytes, buffer);
  }

  void releaseForRun(Buffer &buffer, void *stream) override {
    if (!buffer.ptr)
      return;
    if (buffer.streamOrdered) {
      freeAsync(buffer.ptr, stream);
    } else {
      streamSynchronize(stream);
      freeFn(buffer.ptr);
    }
    buffer = Buffer();
  }

  thunder_status allocate(uint64_t bytes, Buffer &buffer) override {
    buffer = Buffer();
    if (bytes == 0)
      return THUNDER_OK;
    void *ptr = nullptr;
    if (hipError_t r = mallocFn(&ptr, bytes))
      return allocationFailed(r, bytes);
    buffer = {ptr, bytes, nullptr, false};
    return THUNDER_OK;
  }

  void release(Buffer &buffer) override {
    if (!buffer.ptr)
      return;
    deviceSynchronize();
    freeFn(buffer.ptr);
    buffer = Buffer();
  }

  /// The calling thread's current device (0 unless the caller chose another): "HIP device 0:
  /// AMD Instinct MI300X (gfx942:sramecc+:xnack-)", arch "gfx942".
  void describe(std::string &description, std::string &arch) override {
    int device = 0;
    if (!getDevice || getDevice(&device) != 0)
      device = 0;
    char name[256] = "";
    if (deviceGetName && deviceGetName(name, sizeof(name), device) != 0)
      name[0] = '\0';
    name[sizeof(name) - 1] = '\0';
    std::string full = gcnArchName(device);
    arch = full.substr(0, full.find(':')); // without the target features
    description = "HIP device " + std::to_string(device) + ": " +
                  (name[0] ? name : "an AMD GPU");
    if (!full.empty())
      description += " (" + full + ")";
  }

private:
  /// hipDeviceProp_t's gcnArchName ("gfx942:sramecc+:xnack-"), "" when unknown. The
  /// struct's layout differs between ROCm 5, 6 and 7 and no ROCm header is used here, so
  /// the properties are read into a buffer larger than any of them and the field is found
  /// by its content: the first NUL-terminated "gfx..." string after the 256-byte name.
  std::string gcnArchName(int device) {
    if (!getDeviceProperties)
      return "";
    std::unique_ptr<char[]> props(new char[kPropsBytes]());
    if (getDeviceProperties(props.get(), device) != 0)
      return "";
    for (size_t i = 256; i + 4 < kPropsBytes; ++i) {
      if (std::strncmp(props.get() + i, "gfx", 3) != 0)
        continue;
      size_t end = i;
      while (end < kPropsBytes && props[end] > ' ' && props[end] < 127)
        ++end;
      if (end < kPropsBytes && props[end] == '\0' && end - i >= 4 && end - i < 64)
        return std::string(props.get() + i, end - i);
    }
    return "";
  }
  /// More than hipDeviceProp_t takes in any ROCm (about 1.5 KiB).
  static constexpr size_t kPropsBytes = 16 * 1024;

  thunder_status allocationFailed(hipError_t r, uint64_t bytes) {
    if (r == kOutOfMemory)
      return outOfMemory("HIP device", bytes, errorText(r));
    return fail(THUNDER_ERROR_DEVICE, "cannot allocate a workspace of " + std::to_string(bytes) +
                                          " bytes on the HIP device: " + errorText(r));
  }

  std::string errorText(hipError_t r) const {
    std::string text = "error " + std::to_string(r);
    if (getErrorString)
      if (const char *description = getErrorString(r))
        text += std::string(", ") + description;
    return text;
  }

  hipError_t (*init)(unsigned) = nullptr;
  hipError_t (*getDeviceCount)(int *) = nullptr;
  hipError_t (*mallocFn)(void **, size_t) = nullptr;
  hipError_t (*freeFn)(void *) = nullptr;
  hipError_t (*streamSynchronize)(hipStream_t) = nullptr;
  hipError_t (*deviceSynchronize)() = nullptr;
  hipError_t (*mallocAsync)(void **, size_t, hipStream_t) = nullptr;
  hipError_t (*freeAsync)(void *, hipStream_t) = nullptr;
  const char *(*getErrorString)(hipError_t) = nullptr;
  hipError_t (*getDevice)(int *) = nullptr;
  hipError_t (*deviceGetName)(char *, int, int) = nullptr;
  hipError_t (*getDeviceProperties)(void *, int) = nullptr;
};

} // namespace

DeviceApi &thunder::runtime::hostDevice() {
  static HostDevice host;
  return host;
}

DeviceApi *thunder::runtime::deviceFor(int32_t device, const std::string &modelName) {
  switch (device) {
  case THUNDER_DEVICE_CPU:
    return &hostDevice();
  case THUNDER_DEVICE_CUDA:
    return CudaDevice::get(modelName);
  case THUNDER_DEVICE_HIP:
    return HipDevice::get(modelName);
  default:
    fail(THUNDER_ERROR_DEVICE,
         "model '" + modelName + "' is for device " + std::to_string(device) +
             ", which this runtime does not know (it knows cpu, cuda, hip)");
    return nullptr;
  }
}
