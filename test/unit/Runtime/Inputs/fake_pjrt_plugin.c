/* Fake PJRT plugins for the runtime's error tests: a GetPjrtApi whose table reports the PJRT
 * C API version FAKE_PJRT_MAJOR.FAKE_PJRT_MINOR and holds no functions (the runtime must
 * refuse it before calling any), or, with FAKE_PJRT_NO_ENTRY, no GetPjrtApi at all.
 *
 * The struct is the leading part of pjrt_c_api.h's PJRT_Api, which every version shares (its
 * size, extension list and version), followed by empty room for the function table; this file
 * does not need the header. */
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

#ifdef FAKE_PJRT_NO_ENTRY
EXPORT int not_a_pjrt_plugin(void) { return 7; }
#else
typedef struct fake_api {
  size_t struct_size;
  void *extension_start;
  struct {
    size_t struct_size;
    void *extension_start;
    int major_version;
    int minor_version;
  } version;
  void *functions[256]; /* all NULL */
} fake_api;

static fake_api api = {
    sizeof(fake_api), NULL, {4 * sizeof(size_t), NULL, FAKE_PJRT_MAJOR, FAKE_PJRT_MINOR}, {0}};

EXPORT const fake_api *GetPjrtApi(void) { return &api; }
#endif
