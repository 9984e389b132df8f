/* A hand-written stand-in for a PJRT model (a library of the tpu target), for the runtime's
 * tests: both entries of thunder-c/artifact.h, a StableHLO program in MLIR's generic form and
 * its weights.
 *
 * Default: weight w float32 [2, 3] (embedded), input x float32 [2, 3],
 *          output y = (w + x) * x, float32 [2, 3].
 *
 * Built several times with different definitions (test/unit/Runtime/CMakeLists.txt):
 *   PJRT_TEST_TWO_OUTPUTS   weights w float32 [2, 3] and v float32 [3, 2]; outputs
 *                           sum = w + x [2, 3] and prod = transpose(x) * v [3, 2]
 *   PJRT_TEST_DTYPES        weight w int32 [4]; inputs a int64 [4], b bfloat16 [4]; outputs
 *                           c = a * w (int64), d = b as float32, e = a < c (bool)
 *   PJRT_TEST_EXTERNAL      weights in the file PJRT_TEST_EXTERNAL beside the library (the
 *                           test writes it: 16 bytes of anything, then w's bytes)
 *   PJRT_TEST_MALFORMED     a program XLA cannot parse
 *   PJRT_TEST_WRONG_OUTPUT  the table declares y as [3, 2], the program returns [2, 3]
 *   PJRT_TEST_NAME          the model's name (default "pjrt_add_mul")
 */
#include "thunder-c/artifact.h"

#include <stdio.h>
#include <string.h>

#ifndef PJRT_TEST_NAME
#define PJRT_TEST_NAME "pjrt_add_mul"
#endif

#define EXPORT __attribute__((visibility("default")))

static const int64_t s23[] __attribute__((unused)) = {2, 3};
static const int64_t s32[] __attribute__((unused)) = {3, 2};
static const char *const no_symbols[] = {"", ""};

#ifdef PJRT_TEST_DTYPES
static const int64_t s4[] = {4};
static const thunder_tensor_desc inputs[] = {
    {"a", THUNDER_DTYPE_INT64, 1, s4, s4, s4, no_symbols},
    {"b", THUNDER_DTYPE_BFLOAT16, 1, s4, s4, s4, no_symbols},
};
static const thunder_tensor_desc outputs[] = {
    {"c", THUNDER_DTYPE_INT64, 1, s4, s4, s4, no_symbols},
    {"d", THUNDER_DTYPE_FLOAT32, 1, s4, s4, s4, no_symbols},
    {"e", THUNDER_DTYPE_BOOL, 1, s4, s4, s4, no_symbols},
};
static const char code[] =
    "module {\n"
    "  func.func @main(%w: tensor<4xi32>, %a: tensor<4xi64>, %b: tensor<4xbf16>)\n"
    "      -> (tensor<4xi64>, tensor<4xf32>, tensor<4xi1>) {\n"
    "    %0 = \"stablehlo.convert\"(%w) : (tensor<4xi32>) -> tensor<4xi64>\n"
    "    %1 = \"stablehlo.multiply\"(%a, %0) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>\n"
    "    %2 = \"stablehlo.convert\"(%b) : (tensor<4xbf16>) -> tensor<4xf32>\n"
    "    %3 = \"stablehlo.compare\"(%a, %1) {comparison_direction = "
    "#stablehlo<comparison_direction LT>} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>\n"
    "    func.return %1, %2, %3 : tensor<4xi64>, tensor<4xf32>, tensor<4xi1>\n"
    "  }\n"
    "}\n";
/* w = 3, -1, 0, 7. */
static const int32_t blob[] = {3, -1, 0, 7};
static const thunder_program_weight_v1 weights[] = {
    {"w", THUNDER_DTYPE_INT32, 1, s4, 0, 16},
};
#else
static const thunder_tensor_desc inputs[] = {
    {"x", THUNDER_DTYPE_FLOAT32, 2, s23, s23, s23, no_symbols},
};
#endif

#if defined(PJRT_TEST_DTYPES)
#elif defined(PJRT_TEST_TWO_OUTPUTS)
static const thunder_tensor_desc outputs[] = {
    {"sum", THUNDER_DTYPE_FLOAT32, 2, s23, s23, s23, no_symbols},
    {"prod", THUNDER_DTYPE_FLOAT32, 2, s32, s32, s32, no_symbols},
};
static const char code[] =
    "module {\n"
    "  func.func @main(%w: tensor<2x3xf32>, %v: tensor<3x2xf32>, %x: tensor<2x3xf32>)\n"
    "      -> (tensor<2x3xf32>, tensor<3x2xf32>) {\n"
    "    %0 = \"stablehlo.add\"(%w, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
    "tensor<2x3xf32>\n"
    "    %1 = \"stablehlo.transpose\"(%x) {permutation = array<i64: 1, 0>} : "
    "(tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "    %2 = \"stablehlo.multiply\"(%1, %v) : (tensor<3x2xf32>, tensor<3x2xf32>) -> "
    "tensor<3x2xf32>\n"
    "    func.return %0, %2 : tensor<2x3xf32>, tensor<3x2xf32>\n"
    "  }\n"
    "}\n";
/* w = 0.5, 1.5, ... 5.5; v = -1, -2, ... -6. */
static const float blob[] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f,
                             -1.0f, -2.0f, -3.0f, -4.0f, -5.0f, -6.0f};
static const thunder_program_weight_v1 weights[] = {
    {"w", THUNDER_DTYPE_FLOAT32, 2, s23, 0, 24},
    {"v", THUNDER_DTYPE_FLOAT32, 2, s32, 24, 24},
};
#else
static const thunder_tensor_desc outputs[] = {
#ifdef PJRT_TEST_WRONG_OUTPUT
    {"y", THUNDER_DTYPE_FLOAT32, 2, s32, s32, s32, no_symbols},
#else
    {"y", THUNDER_DTYPE_FLOAT32, 2, s23, s23, s23, no_symbols},
#endif
};
#ifdef PJRT_TEST_MALFORMED
static const char code[] =
    "module {\n"
    "  func.func @main(%w: tensor<2x3xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "    %0 = \"stablehlo.add\"(%w, %x) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "    func.return %0 : tensor<2x3xf32>\n"
    "  }\n"
    "}\n";
#else
static const char code[] =
    "module {\n"
    "  func.func @main(%w: tensor<2x3xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "    %0 = \"stablehlo.add\"(%w, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
    "tensor<2x3xf32>\n"
    "    %1 = \"stablehlo.multiply\"(%0, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
    "tensor<2x3xf32>\n"
    "    func.return %1 : tensor<2x3xf32>\n"
    "  }\n"
    "}\n";
#endif
/* w = 0.5, 1.5, ... 5.5 (the external variant's file holds the same after 16 bytes). */
static const float blob[] __attribute__((unused)) = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
#ifdef PJRT_TEST_EXTERNAL
static const thunder_program_weight_v1 weights[] = {
    {"w", THUNDER_DTYPE_FLOAT32, 2, s23, 16, 24},
};
#else
static const thunder_program_weight_v1 weights[] = {
    {"w", THUNDER_DTYPE_FLOAT32, 2, s23, 0, 24},
};
#endif
#endif

#define NUM_INPUTS ((int32_t)(sizeof(inputs) / sizeof(inputs[0])))
#define NUM_OUTPUTS ((int32_t)(sizeof(outputs) / sizeof(outputs[0])))
#define NUM_WEIGHTS ((int32_t)(sizeof(weights) / sizeof(weights[0])))

#ifdef PJRT_TEST_EXTERNAL
#define WEIGHTS_FILE PJRT_TEST_EXTERNAL
#define WEIGHTS_DATA NULL
#else
#define WEIGHTS_FILE ""
#define WEIGHTS_DATA blob
#endif

static int report(char *error, size_t size, const char *message) {
  snprintf(error, size, "%s", message);
  return 1;
}

static int create(const char *weights_path, void **state, char *error, size_t size) {
  (void)weights_path;
  (void)error;
  (void)size;
  *state = NULL;
  return 0;
}

static void destroy(void *state) { (void)state; }

static int output_shapes(const void *state, const thunder_tensor *in, int64_t *const *shapes,
                         char *error, size_t size) {
  (void)state;
  (void)in;
  (void)error;
  (void)size;
  for (int32_t o = 0; o < NUM_OUTPUTS; ++o)
    memcpy(shapes[o], outputs[o].shape, sizeof(int64_t) * (size_t)outputs[o].rank);
  return 0;
}

static uint64_t workspace_bytes(const void *state, const thunder_tensor *in) {
  (void)state;
  (void)in;
  return 0;
}

static int run(const void *state, const thunder_tensor *in, const thunder_tensor *out,
               void *workspace, void *stream, char *error, size_t size) {
  (void)state;
  (void)in;
  (void)out;
  (void)workspace;
  (void)stream;
  return report(error, size, "runs only through the Thunder runtime's PJRT executor");
}

static const thunder_model_v1 model = {
    THUNDER_ABI_VERSION,
    sizeof(thunder_model_v1),
    PJRT_TEST_NAME,
    "tpu",
    THUNDER_DEVICE_CPU,
    NUM_INPUTS,
    NUM_OUTPUTS,
    inputs,
    outputs,
    WEIGHTS_FILE,
    create,
    destroy,
    output_shapes,
    workspace_bytes,
    run,
};

static const thunder_program_v1 program = {
    sizeof(thunder_program_v1),
    "stablehlo",
    code,
    sizeof(code) - 1,
    NUM_WEIGHTS,
    weights,
    WEIGHTS_DATA,
};

EXPORT const thunder_model_v1 *thunder_model_entry_v1(void) { return &model; }
EXPORT const thunder_program_v1 *thunder_program_entry_v1(void) { return &program; }
