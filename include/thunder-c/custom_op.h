/* The C ABI of a custom kernel: what a kernel registered with
 * thunder.register_kernel (or thunder-compile --custom-ops) implements.
 *
 *   #include "thunder-c/custom_op.h"
 *
 *   extern "C" int mylib_rms_norm(THUNDER_CUSTOM_KERNEL_PARAMS) {
 *     const float *x = (const float *)inputs[0].data;
 *     ...
 *     return 0;
 *   }
 *
 * A compiled model calls the kernel once per call of the op, with:
 *   inputs[0..num_inputs): the op's tensor arguments in schema order, dense
 *     and row-major, read only (the model may reuse their memory afterwards);
 *   outputs[0..num_outputs): the op's results, allocated by the model with the
 *     shapes and dtypes the op's meta kernel declared; the kernel writes every
 *     element and never keeps the pointers;
 *   scalars[0..num_scalars): the op's number arguments (float, int, bool) in
 *     schema order, as doubles (NULL when there are none);
 *   stream: the device stream of a CUDA kernel (a cudaStream_t), NULL on the
 *     CPU.
 * Data pointers are device pointers for a CUDA kernel (which launches its own
 * grid on `stream`) and host pointers for a CPU kernel (called from one thread;
 * the kernel may use OpenMP itself). It returns 0 on success; any other value
 * makes the model's run fail with a message naming the kernel.
 */
#ifndef THUNDER_C_CUSTOM_OP_H
#define THUNDER_C_CUSTOM_OP_H

#include "thunder-c/artifact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameter list every custom kernel has. */
#define THUNDER_CUSTOM_KERNEL_PARAMS                                          \
  const thunder_tensor *inputs, int32_t num_inputs,                            \
      const thunder_tensor *outputs, int32_t num_outputs,                      \
      const double *scalars, int32_t num_scalars, void *stream

/* A pointer to a custom kernel. */
typedef int (*thunder_custom_kernel)(THUNDER_CUSTOM_KERNEL_PARAMS);

/* Elements of a tensor (the product of its dims). */
static inline int64_t thunder_numel(const thunder_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    n *= t->shape[d];
  return n;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* THUNDER_C_CUSTOM_OP_H */
