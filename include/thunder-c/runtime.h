/*===- thunder-c/runtime.h - Load and run compiled models (C API) ---------===*
 *
 * The stable C API of Thunder's runtime (libThunderRuntime, CMake target
 * Thunder::runtime). It loads a compiled model (libNAME.so, see artifact.h),
 * validates every input and output against the model's descriptors, and runs
 * it. It depends on libc, libdl and pthreads only: no MLIR, no LLVM, no CUDA
 * at link time (a CUDA or HIP model makes it dlopen the driver).
 *
 * PJRT models (target "tpu": a StableHLO program, see artifact.h) run through
 * a PJRT plugin that the runtime dlopens: the file named by the environment
 * variable THUNDER_PJRT_PLUGIN (libtpu.so, XLA's xla_cpu_pjrt.so, JAX's
 * xla_cuda_plugin.so...), else libtpu, but only on a machine with a TPU chip
 * (TPU_LIBRARY_PATH, then the libtpu pip package's libtpu/libtpu.so, then
 * "libtpu.so" in the loader's search path). The program is compiled and its
 * weights are uploaded once, at load; inputs and outputs are host memory.
 *
 * Errors: every function that can fail returns a thunder_status and, on
 * failure, leaves a message for thunder_last_error() on the calling thread.
 * No function throws, aborts or asserts on a caller's mistake.
 *
 * Threading: a thunder_model is immutable after loading; thunder_model_run
 * and every accessor may be called from many threads at once (no two runs
 * share a workspace). A thunder_context reuses one workspace, so a
 * context must not be used by two threads at once: give each thread its own.
 *
 *   thunder_model *m;
 *   if (thunder_model_load("out/libmodel.so", &m) != THUNDER_OK) {
 *     fprintf(stderr, "%s\n", thunder_last_error());
 *     return 1;
 *   }
 *   thunder_tensor in = {x, THUNDER_DTYPE_FLOAT32, 2, x_shape};
 *   thunder_tensor out = {y, THUNDER_DTYPE_FLOAT32, 2, y_shape};
 *   thunder_status s = thunder_model_run(m, &in, 1, &out, 1, NULL);
 *   thunder_model_free(m);
 *
 *===----------------------------------------------------------------------===*/
#ifndef THUNDER_C_RUNTIME_H
#define THUNDER_C_RUNTIME_H

#include "thunder-c/artifact.h"

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define THUNDER_RUNTIME_API
#else
#define THUNDER_RUNTIME_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a call returned. The message of a failure is in thunder_last_error(). */
typedef enum thunder_status {
  THUNDER_OK = 0,
  /* A NULL where a pointer is required, a wrong input or output count, a
   * dtype, rank or dim that does not match the model, dims that share a
   * symbol but differ, NULL data for a non-empty tensor. */
  THUNDER_ERROR_INVALID_ARGUMENT = 1,
  /* The file is missing or not a shared library, it is not a Thunder model
   * (no thunder_model_entry_v1), its table is malformed, its weights file is
   * missing, or the model's create() failed; for a PJRT model, its program is
   * malformed, XLA fails to compile it (the message carries XLA's), or it
   * disagrees with the model's table. */
  THUNDER_ERROR_LOAD = 2,
  /* The model was compiled for another ABI version (abi_version or
   * struct_size differ from this runtime's); the message names both. Also a
   * PJRT plugin whose C API version this runtime cannot use (another major
   * version, or older than 0.57), or that lacks a function it calls. */
  THUNDER_ERROR_VERSION = 3,
  /* The model needs a device this machine cannot provide: a CUDA model
   * without libcuda.so.1 or without a CUDA device, a HIP model without
   * libamdhip64.so or without an AMD GPU; or a device call failed. For a
   * PJRT model: no plugin (THUNDER_PJRT_PLUGIN unset and no TPU), a plugin
   * file that is missing or has no GetPjrtApi, a plugin or client that fails
   * to start, a weight that fails to upload, or a runtime built without PJRT
   * support. */
  THUNDER_ERROR_DEVICE = 4,
  /* The model's own code reported a failure while running (or computed
   * output shapes that contradict its descriptors); for a PJRT model, a PJRT
   * call of the run failed (the message names the step and carries PJRT's). */
  THUNDER_ERROR_RUN = 5,
  /* The runtime could not allocate host or device memory (a workspace). */
  THUNDER_ERROR_OUT_OF_MEMORY = 6
} thunder_status;

/* A loaded model: immutable, shareable between threads. */
typedef struct thunder_model thunder_model;

/* Reusable per-thread run state (one workspace) for one model. */
typedef struct thunder_context thunder_context;

/* The message of the last call that failed on this thread ("" if none).
 * Successful calls leave it unchanged. Valid until the next failing call on
 * this thread. */
THUNDER_RUNTIME_API const char *thunder_last_error(void);

/* A short name of a status ("THUNDER_ERROR_VERSION"); "unknown" otherwise. */
THUNDER_RUNTIME_API const char *thunder_status_name(int32_t status);

/* The runtime's version, "MAJOR.MINOR.PATCH". The model ABI it supports is
 * THUNDER_ABI_VERSION of the artifact.h it was built with. */
THUNDER_RUNTIME_API const char *thunder_runtime_version(void);

/* PyTorch's name of a dtype ("float32", "bfloat16", "bool"); "unknown" for a
 * value outside thunder_dtype. */
THUNDER_RUNTIME_API const char *thunder_dtype_name(int32_t dtype);

/* Bytes per element (bool is 1 byte); 0 for a value outside thunder_dtype. */
THUNDER_RUNTIME_API size_t thunder_dtype_size(int32_t dtype);

/* "cpu", "cuda", "hip"; "unknown" for a value outside thunder_device. */
THUNDER_RUNTIME_API const char *thunder_device_name(int32_t device);

/* Loads a compiled model. `path` is a file path (a name without '/' is taken
 * relative to the working directory, not searched in LD_LIBRARY_PATH). The
 * library is opened with RTLD_NOW | RTLD_LOCAL, its ABI version is checked,
 * its weights file (if any) is looked up beside it, the device driver is
 * checked for CUDA/HIP models, and the model's state is created. On failure
 * *model is set to NULL. */
THUNDER_RUNTIME_API thunder_status thunder_model_load(const char *path,
                                                      thunder_model **model);

/* A weights provider for thunder_model_load_with_weights: the caller's memory
 * holding `weight` (an entry of the library's thunder_model_weights_v1 table:
 * its name, dtype, shape and bytes), or NULL to let the model read its own
 * copy. The memory must hold the weight's bytes, dense and row-major, stay
 * valid until thunder_model_free, and not change while runs read it. */
typedef const void *(*thunder_weights_provider)(void *user_data,
                                                const thunder_program_weight_v1 *weight);

/* thunder_model_load, with the weights `provider` gives read from the
 * caller's memory instead of the library's own copy (zero-copy: thunder.compile
 * passes a PyTorch module's parameters this way). A library without a
 * weights table (thunder_model_weights_v1 in artifact.h: older libraries,
 * GPU and PJRT models) loads as with thunder_model_load, and so does one for
 * which the provider returns NULL everywhere. `provider` may be NULL. */
THUNDER_RUNTIME_API thunder_status thunder_model_load_with_weights(
    const char *path, thunder_weights_provider provider, void *user_data,
    thunder_model **model);

/* thunder_model_load_with_weights for partition `partition` (0, 1, ...) of a
 * library that holds several (thunder.compile's fallback partitions: the
 * partition index of artifact.h). Loading several partitions of one library
 * opens it once (the dynamic loader shares the handle) and each partition's
 * state is its own. Partition 0 of a library without an index is its one
 * model; another index fails with THUNDER_ERROR_INVALID_ARGUMENT, as does one
 * past the library's count. `provider` may be NULL. */
THUNDER_RUNTIME_API thunder_status thunder_model_load_partition(
    const char *path, int32_t partition, thunder_weights_provider provider,
    void *user_data, thunder_model **model);

/* How many partitions the model's library holds (1 for an ordinary library),
 * and which of them the model is (0 unless loaded with
 * thunder_model_load_partition); -1 for a NULL model. */
THUNDER_RUNTIME_API int32_t thunder_model_num_partitions(const thunder_model *model);
THUNDER_RUNTIME_API int32_t thunder_model_partition(const thunder_model *model);

/* How many weights the model reads from a provider's memory (0 when loaded
 * without one); -1 for a NULL model. */
THUNDER_RUNTIME_API int32_t thunder_model_num_provided_weights(const thunder_model *model);

/* How many weights the model's library has in its weights table (those a
 * provider may give, embedded or not); -1 when the library has no such table
 * (THUNDER_MODEL_WEIGHTS_SYMBOL) or for a NULL model. When it equals
 * thunder_model_num_provided_weights, every entry of the table is read from
 * the provider's memory: no value of the library's own is used. */
THUNDER_RUNTIME_API int32_t thunder_model_num_weights(const thunder_model *model);

/* Destroys the model's state and unloads it. NULL is allowed. Every context
 * of the model must be freed first, and no run may be in flight. */
THUNDER_RUNTIME_API void thunder_model_free(thunder_model *model);

/* Metadata. Strings live as long as the model. NULL/0 for a NULL model. */
THUNDER_RUNTIME_API const char *thunder_model_name(const thunder_model *model);
THUNDER_RUNTIME_API const char *
thunder_model_target(const thunder_model *model);
/* The path the model was loaded from, as given to thunder_model_load. */
THUNDER_RUNTIME_API const char *thunder_model_path(const thunder_model *model);
/* thunder_device of the tensors passed to runs; -1 for a NULL model. */
THUNDER_RUNTIME_API int32_t thunder_model_device(const thunder_model *model);
/* What the model runs on, for people, as found at load: the device and its
 * architecture ("CUDA device 0: NVIDIA H200 (sm_90)", "HIP device 0: AMD
 * Instinct MI300X (gfx942:sramecc+:xnack-)", "cpu: AMD EPYC 7B13 (x86_64),
 * code for x86-64-v3"). For a library with code for both GPU vendors it names
 * the vendor the runtime chose. NULL for a NULL model. */
THUNDER_RUNTIME_API const char *
thunder_model_device_description(const thunder_model *model);
/* The architecture alone: "sm_90", "gfx942", or for a CPU model the -march
 * its code was built for ("x86-64-v3"; the host's machine, "x86_64", when the
 * library does not say). "" when the driver cannot tell; NULL for a NULL
 * model. */
THUNDER_RUNTIME_API const char *thunder_model_device_arch(const thunder_model *model);
THUNDER_RUNTIME_API int32_t
thunder_model_num_inputs(const thunder_model *model);
THUNDER_RUNTIME_API int32_t
thunder_model_num_outputs(const thunder_model *model);

/* Descriptor of input/output i (see thunder_tensor_desc in artifact.h), or
 * NULL if i is out of range. */
THUNDER_RUNTIME_API const thunder_tensor_desc *
thunder_model_input(const thunder_model *model, int32_t i);
THUNDER_RUNTIME_API const thunder_tensor_desc *
thunder_model_output(const thunder_model *model, int32_t i);

/* Validates `inputs` (as a run would) and writes the shape of output i to
 * shapes[i][0 .. rank of output i). Only the inputs' dtype, rank and shape
 * are read; their data may be NULL. */
THUNDER_RUNTIME_API thunder_status thunder_model_output_shapes(
    const thunder_model *model, const thunder_tensor *inputs,
    int32_t num_inputs, int64_t *const *shapes);

/* Validates `inputs` and writes the bytes of scratch memory a run with them
 * needs (allocated by the runtime; reported for information). */
THUNDER_RUNTIME_API thunder_status
thunder_model_workspace_bytes(const thunder_model *model,
                              const thunder_tensor *inputs, int32_t num_inputs,
                              uint64_t *bytes);

/* Runs the model. `inputs` and `outputs` are dense row-major tensors on the
 * model's device; outputs are allocated by the caller with the shapes that
 * thunder_model_output_shapes gives. Every input and output is validated
 * first (count, dtype, rank, dims, symbols, data). Each call has a workspace
 * of its own, so concurrent calls on one model are safe: a CPU model keeps
 * one between calls (grown as needed, never shrunk, freed with the model) for
 * the call that finds it free; other calls allocate one for themselves. `stream`
 * is the CUDA/HIP stream to run on (NULL: the default stream; ignored on
 * the CPU). For a device model the call may return before the work is done,
 * as device launches do; the outputs are ready once the stream is. */
THUNDER_RUNTIME_API thunder_status
thunder_model_run(const thunder_model *model, const thunder_tensor *inputs,
                  int32_t num_inputs, const thunder_tensor *outputs,
                  int32_t num_outputs, void *stream);

/* 1 when the model's program draws random numbers (torch.rand, randn, randint,
 * randperm: thunder.random), else 0 (also for a NULL model). */
THUNDER_RUNTIME_API int32_t thunder_model_uses_random(const thunder_model *model);

/* Seeds the model's random number generator and restarts its count of runs:
 * the k-th run after this call (k = 0, 1, ...) draws from (seed, k), so a seed
 * reproduces the runs that follow it, on any device and thread count. A loaded
 * model starts from a seed of std::random_device. No effect on a model that
 * draws no random numbers. Not to be called while a run of the model is in
 * flight on another thread. The numbers are not PyTorch eager's. */
THUNDER_RUNTIME_API thunder_status thunder_model_set_seed(thunder_model *model, uint64_t seed);

/* Creates a context: run state that keeps one workspace between runs and
 * grows it when a run needs more. A context must not be used by two threads
 * at once and must be freed before its model. On failure *context is NULL. */
THUNDER_RUNTIME_API thunder_status
thunder_context_create(const thunder_model *model, thunder_context **context);

/* Frees a context and its workspace. NULL is allowed. For a device model,
 * the runs made with it must have finished (synchronize their streams). */
THUNDER_RUNTIME_API void thunder_context_free(thunder_context *context);

/* thunder_model_run through the context's workspace (no allocation once the
 * workspace is large enough). */
THUNDER_RUNTIME_API thunder_status
thunder_context_run(thunder_context *context, const thunder_tensor *inputs,
                    int32_t num_inputs, const thunder_tensor *outputs,
                    int32_t num_outputs, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* THUNDER_C_RUNTIME_H */
