// Internals shared by the runtime's sources: the model and context structs, errors, formatting.
#ifndef THUNDER_LIB_RUNTIME_INTERNAL_H
#define THUNDER_LIB_RUNTIME_INTERNAL_H

#include "thunder-c/runtime.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace thunder::runtime {

class DeviceApi;
class PjrtExecutor;

/// Records `message` as this thread's last error and returns `status`.
thunder_status fail(thunder_status status, std::string message);

/// "[2, 4]".
std::string formatShape(const int64_t *shape, int32_t rank);

/// A descriptor's shape with symbols for dynamic dims: "[s0, 4]" ("?" for a dynamic dim
/// without a symbol).
std::string formatShape(const thunder_tensor_desc &desc);

/// "input 1 ('attention_mask')".
std::string describe(const char *kind, int32_t index, const thunder_tensor_desc &desc);

/// A dynamic input dim whose symbol first appeared at another (input, dim): validation checks
/// that the two are equal at run time.
struct SharedDim {
  int32_t input, dim;
  int32_t firstInput, firstDim;
};

/// Problems with a model's table (checked at load), one sentence; "" when it is well formed.
std::string checkModelTable(const thunder_model_v1 &table);

/// Checks `inputs` against the model's input descriptors: count, dtype, rank, static dims,
/// dynamic dims' ranges, dims that share a symbol, and (if `requireData`) non-null data for
/// tensors with elements. Reports every problem found, one per line, as
/// THUNDER_ERROR_INVALID_ARGUMENT. Allocates nothing when the inputs are valid.
thunder_status validateInputs(const thunder_model &model, const thunder_tensor *inputs,
                              int32_t numInputs, bool requireData);

/// Asks the model for its output shapes (inputs already validated) and checks them against
/// the output descriptors: a contradiction is the model's bug, THUNDER_ERROR_RUN.
thunder_status computeOutputShapes(const thunder_model &model, const thunder_tensor *inputs,
                                   int64_t *const *shapes);

/// Checks `outputs` against the output descriptors and the shapes computed for this run.
thunder_status validateOutputs(const thunder_model &model, const thunder_tensor *outputs,
                               int32_t numOutputs, const int64_t *const *expectedShapes);

/// Scratch memory of one or more runs, on the model's device.
struct Buffer {
  void *ptr = nullptr;
  uint64_t bytes = 0;
  void *deviceContext = nullptr; ///< the CUDA context it was allocated in
  bool streamOrdered = false;    ///< allocated with cuMemAllocAsync/hipMallocAsync
};

/// Whether this machine has the x86 CPU feature `name` (GCC's spelling: "avx2",
/// "avx512f", "amx-tile") and the OS enables its register state.
bool hostHasCpuFeature(const std::string &name);
/// The features of the space-separated list `required` this machine lacks,
/// space-separated ("" when it has them all).
std::string missingCpuFeatures(const char *required);

} // namespace thunder::runtime

/// A loaded model. Immutable after thunder_model_load, hence shareable between threads.
struct thunder_model {
  std::string path;        ///< as given to thunder_model_load
  std::string loadedPath;  ///< the file the dynamic loader opened
  std::string weightsPath; ///< resolved weights file, "" when embedded
  void *handle = nullptr;  ///< dlopen handle
  const thunder_model_v1 *table = nullptr;
  void *state = nullptr; ///< from table->create
  /// The executor of a PJRT model (its library exports THUNDER_PROGRAM_ENTRY_SYMBOL), which
  /// runs it instead of table->run; null for other models.
  thunder::runtime::PjrtExecutor *pjrt = nullptr;
  /// Driver for device models; the host allocator for CPU models. Never null once loaded.
  thunder::runtime::DeviceApi *device = nullptr;
  /// thunder_model_device_description and thunder_model_device_arch, found at load.
  std::string deviceDescription, deviceArch;
  std::vector<thunder::runtime::SharedDim> sharedDims;
  /// Weights read from a provider's memory (thunder_model_load_with_weights).
  int32_t providedWeights = 0;
  /// The weights of the library's weights table (THUNDER_MODEL_WEIGHTS_SYMBOL);
  /// -1 when it has none.
  int32_t numWeights = -1;
  /// Sum of the outputs' ranks: the size of an output-shape buffer.
  size_t totalOutputRank = 0;
  /// The random table of a model that draws random numbers (artifact.h), with the
  /// generator's seed and the count of runs since it was set (each run's offset).
  const thunder_model_random_v1 *random = nullptr;
  std::atomic<uint64_t> seed{0};
  mutable std::atomic<uint64_t> runs{0};
  /// The partitions the library holds (THUNDER_MODEL_PARTITIONS_SYMBOL; 1 without an
  /// index) and which one this model is.
  int32_t numPartitions = 1;
  int32_t partition = 0;
  /// A CPU model's workspace for thunder_model_run, kept between runs: a run takes it when
  /// no other run holds it (try_lock), and allocates one of its own otherwise.
  mutable std::mutex spareMutex;
  mutable thunder::runtime::Buffer spare;
};

/// Run state reused between runs: a workspace that only grows.
struct thunder_context {
  const thunder_model *model = nullptr;
  thunder::runtime::Buffer workspace;
};

#endif // THUNDER_LIB_RUNTIME_INTERNAL_H
