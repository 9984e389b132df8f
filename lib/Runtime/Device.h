// Workspace memory on a model's device: host memory, or CUDA/HIP memory through a driver that is
// dlopen'ed on first use (no CUDA or HIP headers or link-time dependency).
#ifndef THUNDER_LIB_RUNTIME_DEVICE_H
#define THUNDER_LIB_RUNTIME_DEVICE_H

#include "Internal.h"

#include <string>

namespace thunder::runtime {

/// Allocates and frees workspaces on one kind of device. Implementations are process-wide
/// singletons and thread-safe.
class DeviceApi {
public:
  virtual ~DeviceApi() = default;

  /// A workspace for one run, ordered on `stream` where the driver supports it.
  virtual thunder_status allocateForRun(uint64_t bytes, void *stream, Buffer &buffer) = 0;
  /// Frees a workspace from allocateForRun once the work enqueued on `stream` is done.
  virtual void releaseForRun(Buffer &buffer, void *stream) = 0;

  /// A workspace kept between runs (a context's).
  virtual thunder_status allocate(uint64_t bytes, Buffer &buffer) = 0;
  /// Waits for every run that may use `buffer`, then frees it.
  virtual void release(Buffer &buffer) = 0;

  /// The device runs would use now, for people: `description` names it with its
  /// architecture ("CUDA device 0: NVIDIA H200 (sm_90)"), `arch` is the architecture alone
  /// ("sm_90", "gfx942", the host's "x86_64"). Never fails: what a driver cannot say is
  /// left out.
  virtual void describe(std::string &description, std::string &arch) = 0;
};

/// The host allocator (64-byte aligned). Always available.
DeviceApi &hostDevice();

/// The device API for models of `device` (a thunder_device). For CUDA and HIP this loads the
/// driver and checks that a device exists; on failure it returns null after recording a
/// THUNDER_ERROR_DEVICE message that names `modelName`. Never crashes on a machine without a
/// driver.
DeviceApi *deviceFor(int32_t device, const std::string &modelName);

} // namespace thunder::runtime

#endif // THUNDER_LIB_RUNTIME_DEVICE_H
