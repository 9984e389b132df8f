/* A fake CUDA driver (SONAME libcuda.so.1) for the runtime's device tests on
 * machines without a GPU: "device memory" is host memory, and the test
 * configures what cuInit and cuDeviceGetCount report and reads counters of
 * allocations. A test dlopens it by path first; the runtime's
 * dlopen("libcuda.so.1") then finds it by its SONAME. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef void *CUcontext;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

static int init_result = 0, device_count = 1, async_supported = 1;
static atomic_long allocs, async_allocs, frees, live, ctx_syncs, stream_syncs;
static int primary_context; /* its address is the context handle */
static _Thread_local CUcontext current, pushed_from;

EXPORT void fake_cuda_configure(int init, int count, int async) {
  init_result = init;
  device_count = count;
  async_supported = async;
}

/* allocs (all), async_allocs, frees, live, ctx_syncs, stream_syncs. */
EXPORT void fake_cuda_stats(long *out) {
  out[0] = atomic_load(&allocs);
  out[1] = atomic_load(&async_allocs);
  out[2] = atomic_load(&frees);
  out[3] = atomic_load(&live);
  out[4] = atomic_load(&ctx_syncs);
  out[5] = atomic_load(&stream_syncs);
}

EXPORT CUresult cuInit(unsigned flags) { return flags ? 1 : init_result; }
EXPORT CUresult cuDeviceGetCount(int *count) {
  *count = device_count;
  return 0;
}
EXPORT CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal < device_count ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}
EXPORT CUresult cuDeviceGetName(char *name, int size, int device) {
  snprintf(name, (size_t)size, "Fake NVIDIA GPU %d", device);
  return 0;
}
/* Compute capability 9.0 (attributes 75 and 76). */
EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 9 : 0;
  return attribute == 75 || attribute == 76 ? 0 : 1;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, int device) {
  (void)device;
  *context = &primary_context;
  return 0;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = current;
  return 0;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  current = context;
  return 0;
}
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  pushed_from = current;
  current = context;
  return 0;
}
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  *context = current;
  current = pushed_from;
  return 0;
}
EXPORT CUresult cuCtxSynchronize(void) {
  atomic_fetch_add(&ctx_syncs, 1);
  return current ? 0 : 201; /* CUDA_ERROR_INVALID_CONTEXT */
}
EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  (void)stream;
  atomic_fetch_add(&stream_syncs, 1);
  return 0;
}

static CUresult allocate(CUdeviceptr *ptr, size_t bytes) {
  void *p = NULL;
  if (!current)
    return 201;
  if (posix_memalign(&p, 256, bytes) != 0)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  *ptr = (CUdeviceptr)p;
  atomic_fetch_add(&allocs, 1);
  atomic_fetch_add(&live, 1);
  return 0;
}
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) { return allocate(ptr, bytes); }
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  (void)stream;
  if (!async_supported)
    return 801; /* CUDA_ERROR_NOT_SUPPORTED */
  atomic_fetch_add(&async_allocs, 1);
  return allocate(ptr, bytes);
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  free((void *)ptr);
  atomic_fetch_add(&frees, 1);
  atomic_fetch_sub(&live, 1);
  return 0;
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  (void)stream;
  return cuMemFree_v2(ptr);
}
EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = error == 100 ? "no CUDA-capable device is detected" : "unknown error";
  return 0;
}
