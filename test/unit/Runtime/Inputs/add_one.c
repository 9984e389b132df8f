/* A hand-written stand-in for a compiled model, for the runtime's tests.
 *
 * Inputs: x float32 [s0, 4] and y int64 [s0], s0 in [1, 64].
 * Outputs: x + OFFSET (float32 [s0, 4]) and y * 2 (int64 [s0]).
 * Each run computes into its workspace first and copies to the outputs after
 * a pause, so two runs that shared a workspace would corrupt each other.
 *
 * Built several times with different definitions (test/unit/Runtime/CMakeLists.txt):
 *   THUNDER_TEST_ABI_VERSION   abi_version to report (default THUNDER_ABI_VERSION)
 *   THUNDER_TEST_SIZE_DELTA    added to struct_size (default 0)
 *   THUNDER_TEST_DEVICE        thunder_device (default CPU)
 *   THUNDER_TEST_WEIGHTS       weights_file; create() reads OFFSET from it as text
 *   THUNDER_TEST_NAME          the model's name (default "add_one")
 *   THUNDER_TEST_BAD_RANK      declare y with rank -1 (a malformed table)
 *   THUNDER_TEST_BAD_OUTPUT    output_shapes says [n, 5] for x_plus_one [s0, 4]
 *   THUNDER_TEST_WEIGHTS_ENTRY export thunder_model_weights_entry_v1: one weight,
 *                              "offset" (float32 [1]), which a caller may provide
 */
#include "thunder-c/artifact.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef THUNDER_TEST_ABI_VERSION
#define THUNDER_TEST_ABI_VERSION THUNDER_ABI_VERSION
#endif
#ifndef THUNDER_TEST_SIZE_DELTA
#define THUNDER_TEST_SIZE_DELTA 0
#endif
#ifndef THUNDER_TEST_DEVICE
#define THUNDER_TEST_DEVICE THUNDER_DEVICE_CPU
#endif
#ifndef THUNDER_TEST_WEIGHTS
#define THUNDER_TEST_WEIGHTS ""
#endif
#ifndef THUNDER_TEST_NAME
#define THUNDER_TEST_NAME "add_one"
#endif
#ifdef THUNDER_TEST_BAD_RANK
#define Y_RANK (-1)
#else
#define Y_RANK 1
#endif
#ifdef THUNDER_TEST_BAD_OUTPUT
#define OUTPUT_DIM1 5
#else
#define OUTPUT_DIM1 4
#endif

#define EXPORT __attribute__((visibility("default")))

static const int64_t x_shape[] = {-1, 4}, x_min[] = {1, 4}, x_max[] = {64, 4};
static const char *const x_symbols[] = {"s0", ""};
static const int64_t y_shape[] = {-1}, y_min[] = {1}, y_max[] = {64};
static const char *const y_symbols[] = {"s0"};

static const thunder_tensor_desc inputs[] = {
    {"x", THUNDER_DTYPE_FLOAT32, 2, x_shape, x_min, x_max, x_symbols},
    {"y", THUNDER_DTYPE_INT64, Y_RANK, y_shape, y_min, y_max, y_symbols},
};
static const thunder_tensor_desc outputs[] = {
    {"x_plus_one", THUNDER_DTYPE_FLOAT32, 2, x_shape, x_min, x_max, x_symbols},
    {"y_times_two", THUNDER_DTYPE_INT64, 1, y_shape, y_min, y_max, y_symbols},
};

typedef struct state {
  uint32_t magic;
  float offset;
} state;
#define MAGIC 0x7e57ab1eu

static atomic_int live_states;

/* For tests: how many states are alive (create minus destroy). */
EXPORT int thunder_test_live_states(void) { return atomic_load(&live_states); }

static int report(char *error, size_t size, const char *message) {
  snprintf(error, size, "%s", message);
  return 1;
}

static int create(const char *weights_path, void **out, char *error, size_t size) {
  float offset = 1.0f;
  if (!weights_path)
    return report(error, size, "weights_path is NULL");
  if (THUNDER_TEST_WEIGHTS[0]) {
    /* The runtime resolved the path: it must end with the file's name. */
    size_t n = strlen(weights_path), m = strlen(THUNDER_TEST_WEIGHTS);
    if (n < m || strcmp(weights_path + n - m, THUNDER_TEST_WEIGHTS) != 0)
      return report(error, size, "weights_path does not name the weights file");
    FILE *file = fopen(weights_path, "r");
    if (!file)
      return report(error, size, "cannot open the weights file");
    int ok = fscanf(file, "%f", &offset) == 1;
    fclose(file);
    if (!ok)
      return report(error, size, "the weights file holds no number");
  } else if (weights_path[0]) {
    return report(error, size, "expected an empty weights_path for embedded weights");
  }
  state *s = malloc(sizeof(state));
  if (!s)
    return report(error, size, "out of memory");
  s->magic = MAGIC;
  s->offset = offset;
  *out = s;
  atomic_fetch_add(&live_states, 1);
  return 0;
}

static void destroy(void *s) {
  ((state *)s)->magic = 0;
  free(s);
  atomic_fetch_sub(&live_states, 1);
}

static int output_shapes(const void *s, const thunder_tensor *in, int64_t *const *shapes,
                         char *error, size_t size) {
  if (((const state *)s)->magic != MAGIC)
    return report(error, size, "bad state");
  shapes[0][0] = in[0].shape[0];
  shapes[0][1] = OUTPUT_DIM1;
  shapes[1][0] = in[0].shape[0];
  return 0;
}

static uint64_t workspace_bytes(const void *s, const thunder_tensor *in) {
  (void)s;
  return (uint64_t)in[0].shape[0] * (4 * sizeof(float) + sizeof(int64_t));
}

/* The workspace of the last run, for tests of how the runtime provides it. */
EXPORT void *thunder_test_last_workspace;

static int run(const void *sv, const thunder_tensor *in, const thunder_tensor *out,
               void *workspace, void *stream, char *error, size_t size) {
  const state *s = sv;
  (void)stream;
  __atomic_store_n(&thunder_test_last_workspace, workspace, __ATOMIC_RELAXED);
  if (s->magic != MAGIC)
    return report(error, size, "bad state");
  int64_t n = in[0].shape[0];
  if (!workspace || ((uintptr_t)workspace & 63) != 0)
    return report(error, size, "the workspace is NULL or not 64-byte aligned");
  const float *x = in[0].data;
  const int64_t *y = in[1].data;
  float *xs = workspace;
  int64_t *ys = (int64_t *)(xs + 4 * n);
  for (int64_t i = 0; i < n; ++i)
    if (y[i] < 0) {
      snprintf(error, size, "y must be non-negative, but y[%lld] is %lld", (long long)i,
               (long long)y[i]);
      return 1;
    }
  for (int64_t i = 0; i < 4 * n; ++i)
    xs[i] = x[i] + s->offset;
  for (int64_t i = 0; i < n; ++i)
    ys[i] = y[i] * 2;
  /* A pause between writing and reading the workspace: giving up the CPU here
   * lets another run overwrite a workspace it wrongly shares with this one,
   * even on a machine with fewer cores than test threads. */
  sched_yield();
  for (volatile int spin = 0; spin < 1000; ++spin) {
  }
  memcpy(out[0].data, xs, sizeof(float) * 4 * n);
  memcpy(out[1].data, ys, sizeof(int64_t) * n);
  return 0;
}

static const thunder_model_v1 model = {
    THUNDER_TEST_ABI_VERSION,
    sizeof(thunder_model_v1) + THUNDER_TEST_SIZE_DELTA,
    THUNDER_TEST_NAME,
    THUNDER_TEST_DEVICE == THUNDER_DEVICE_CUDA  ? "cuda"
    : THUNDER_TEST_DEVICE == THUNDER_DEVICE_HIP ? "hip"
                                                : "cpu",
    THUNDER_TEST_DEVICE,
    2,
    2,
    inputs,
    outputs,
    THUNDER_TEST_WEIGHTS,
    create,
    destroy,
    output_shapes,
    workspace_bytes,
    run,
};

EXPORT const thunder_model_v1 *thunder_model_entry_v1(void) { return &model; }

#ifdef THUNDER_TEST_WEIGHTS_ENTRY
static const int64_t offset_shape[] = {1};
static const thunder_program_weight_v1 weights[] = {
    {"offset", THUNDER_DTYPE_FLOAT32, 1, offset_shape, 0, sizeof(float)},
};

static int create_with(const char *weights_path, const void *const *provided, void **out,
                       char *error, size_t size) {
  if (create(weights_path, out, error, size) != 0)
    return 1;
  if (provided && provided[0])
    ((state *)*out)->offset = *(const float *)provided[0];
  return 0;
}

static const thunder_model_weights_v1 weights_table = {
    sizeof(thunder_model_weights_v1), 1, weights, create_with};

EXPORT const thunder_model_weights_v1 *thunder_model_weights_entry_v1(void) {
  return &weights_table;
}
#endif
