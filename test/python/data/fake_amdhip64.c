/* fake_amdhip64.c: a stand-in for ROCm's libamdhip64.so, so that the tests of
 * the hip target (test_hip_backend.py) run a HIP model's host side on a
 * machine without an AMD GPU or ROCm. Device memory is host memory, streams
 * and events are tokens, and a kernel launch runs nothing: it checks that the
 * kernel was looked up in the loaded code object bundle and logs its
 * configuration.
 *
 * Environment: FAKE_HIP_DEVICES (default 1; 0: hipInit fails with
 * hipErrorNoDevice), FAKE_HIP_NO_BINARY=1 (hipModuleLoadData fails with
 * hipErrorNoBinaryForGpu, as on a device the bundle has no code object for),
 * FAKE_HIP_LOG (a file each call appends a line to), FAKE_HIP_ARCH (the
 * device's gcnArchName, default gfx942:sramecc+:xnack-).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
enum { kNoDevice = 100, kNoBinary = 209, kNotFound = 500, kInvalidValue = 1 };

static void note(const char *fmt, const char *text, long a, long b, long c) {
  const char *path = getenv("FAKE_HIP_LOG");
  if (!path)
    return;
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  fprintf(f, fmt, text, a, b, c);
  fputc('\n', f);
  fclose(f);
}

static int devices(void) {
  const char *n = getenv("FAKE_HIP_DEVICES");
  return n ? atoi(n) : 1;
}

hipError_t hipInit(unsigned flags) {
  (void)flags;
  return devices() > 0 ? 0 : kNoDevice;
}
hipError_t hipGetDeviceCount(int *count) {
  *count = devices();
  return *count > 0 ? 0 : kNoDevice;
}
hipError_t hipGetDevice(int *device) {
  *device = 0;
  return 0;
}
hipError_t hipDeviceGetName(char *name, int size, int device) {
  (void)device;
  snprintf(name, (size_t)size, "Fake AMD GPU");
  return 0;
}
/* ROCm 6's hipDeviceProp_t (R0600): the name first, gcnArchName much later
 * (its offset here is the fake's own: the runtime finds the field by its
 * content, the layout differing between ROCm versions), other fields between. */
hipError_t hipGetDevicePropertiesR0600(void *props, int device) {
  char *p = (char *)props;
  int warp = 64;
  (void)device;
  memset(p, 0, 1472);
  snprintf(p, 256, "Fake AMD GPU");
  memcpy(p + 308, &warp, sizeof warp);
  snprintf(p + 1160, 256, "%s", getenv("FAKE_HIP_ARCH") ? getenv("FAKE_HIP_ARCH")
                                                         : "gfx942:sramecc+:xnack-");
  return 0;
}
hipError_t hipDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 63 ? 304 : attribute == 74 ? 65536 : 0;
  return 0;
}
const char *hipGetErrorString(hipError_t e) {
  return e == kNoDevice ? "no ROCm-capable device is detected"
         : e == kNoBinary ? "no kernel image is available for execution on the device"
                          : "fake HIP error";
}
const char *hipGetErrorName(hipError_t e) {
  return e == kNoDevice ? "hipErrorNoDevice" : e == kNoBinary ? "hipErrorNoBinaryForGpu"
                                                              : "hipErrorUnknown";
}
hipError_t hipGetLastError(void) { return 0; }

hipError_t hipMalloc(void **p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
  return *p ? 0 : 2;
}
hipError_t hipFree(void *p) {
  free(p);
  return 0;
}
hipError_t hipMallocAsync(void **p, size_t n, void *stream) {
  (void)stream;
  return hipMalloc(p, n);
}
hipError_t hipFreeAsync(void *p, void *stream) {
  (void)stream;
  return hipFree(p);
}
hipError_t hipMemcpy(void *d, const void *s, size_t n, int kind) {
  (void)kind;
  memmove(d, s, n);
  return 0;
}
hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, int kind, void *stream) {
  (void)stream;
  return hipMemcpy(d, s, n, kind);
}

static int token;
hipError_t hipStreamCreateWithFlags(void **s, unsigned f) {
  (void)f;
  *s = &token;
  return 0;
}
hipError_t hipStreamSynchronize(void *s) { (void)s; return 0; }
hipError_t hipStreamDestroy(void *s) { (void)s; return 0; }
hipError_t hipStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
hipError_t hipDeviceSynchronize(void) { return 0; }
hipError_t hipEventCreateWithFlags(void **e, unsigned f) {
  (void)f;
  *e = &token;
  return 0;
}
hipError_t hipEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
hipError_t hipEventDestroy(void *e) { (void)e; return 0; }
hipError_t hipStreamBeginCapture(void *s, int m) { (void)s; (void)m; return kInvalidValue; }
hipError_t hipStreamEndCapture(void *s, void **g) { (void)s; *g = NULL; return kInvalidValue; }
hipError_t hipGraphInstantiateWithFlags(void **x, void *g, unsigned long long f) {
  (void)x; (void)g; (void)f;
  return kInvalidValue;
}
hipError_t hipGraphExecUpdate(void *x, void *g, void **n, int *r) {
  (void)x; (void)g; (void)n; (void)r;
  return kInvalidValue;
}
hipError_t hipGraphLaunch(void *x, void *s) { (void)x; (void)s; return kInvalidValue; }
hipError_t hipGraphExecDestroy(void *x) { (void)x; return 0; }
hipError_t hipGraphDestroy(void *g) { (void)g; return 0; }

/* The module: a clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", entry
 * count, then per entry offset, size, triple length, triple). */
static const unsigned char *bundle;
static size_t bundle_size;

hipError_t hipModuleLoadData(void **module, const void *image) {
  const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (memcmp(image, magic, 24) != 0) {
    note("%s %ld %ld %ld", "load not-a-bundle", 0, 0, 0);
    return 200; /* hipErrorInvalidImage */
  }
  if (getenv("FAKE_HIP_NO_BINARY"))
    return kNoBinary;
  const unsigned char *p = (const unsigned char *)image + 24;
  uint64_t entries;
  memcpy(&entries, p, 8);
  p += 8;
  size_t end = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    uint64_t offset, size, length;
    memcpy(&offset, p, 8);
    memcpy(&size, p + 8, 8);
    memcpy(&length, p + 16, 8);
    p += 24 + length;
    if (offset + size > end)
      end = offset + size;
  }
  bundle = (const unsigned char *)image;
  bundle_size = end;
  note("%s %ld %ld %ld", "load", (long)entries, (long)end, 0);
  *module = &token;
  return 0;
}
hipError_t hipModuleUnload(void *m) { (void)m; return 0; }

/* A kernel is found when its name is a symbol of the bundle's code objects
 * (a NUL-delimited string of their string tables). */
hipError_t hipModuleGetFunction(void **fn, void *module, const char *name) {
  (void)module;
  size_t n = strlen(name);
  for (size_t i = 1; bundle && i + n < bundle_size; ++i)
    if (bundle[i - 1] == 0 && bundle[i + n] == 0 && memcmp(bundle + i, name, n) == 0) {
      *fn = (void *)(bundle + i);
      note("function %s %ld %ld %ld", name, 0, 0, 0);
      return 0;
    }
  note("missing %s %ld %ld %ld", name, 0, 0, 0);
  return kNotFound;
}
hipError_t hipModuleLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned smem, void *stream,
                                 void **params, void **extra) {
  (void)gy; (void)gz; (void)stream; (void)params; (void)extra;
  note("launch %s %ld %ld %ld", (const char *)fn, (long)gx, (long)(bx * by * bz), (long)smem);
  return 0;
}
