// PJRT models (thunder-c/artifact.h, thunder_program_v1): the program's checks at load, and the
// executor that compiles and runs it through a PJRT plugin (libtpu, XLA's CPU or CUDA plugin).
#ifndef THUNDER_LIB_RUNTIME_PJRT_H
#define THUNDER_LIB_RUNTIME_PJRT_H

#include "Internal.h"

#include <string>

namespace thunder::runtime {

class PjrtExecutor;

/// Loads the program of a PJRT model whose library exports THUNDER_PROGRAM_ENTRY_SYMBOL
/// (`entry`): checks the program struct (struct_size, format, weights against their shapes and
/// the weights file), maps the weights file (model.weightsPath) read-only while the weights are
/// uploaded, and creates the executor into model.pjrt. On failure records a message naming the
/// model and returns its status (THUNDER_ERROR_LOAD for a malformed program or one XLA
/// rejects; THUNDER_ERROR_VERSION for a program struct of another size; THUNDER_ERROR_DEVICE
/// for a missing or unusable plugin, or a runtime built without PJRT support).
thunder_status loadProgram(thunder_model &model, thunder_program_entry_v1_fn entry);

/// The bytes of one weight, in host memory that stays valid while the executor is created.
struct HostWeight {
  const thunder_program_weight_v1 *desc;
  const void *data;
};

/// Finds and loads the PJRT plugin (THUNDER_PJRT_PLUGIN, else libtpu where a TPU is present),
/// creates or shares its client, compiles `program` once (one replica, one partition), checks
/// its outputs against the model's table and uploads each weight once. `weights` has
/// program.num_weights entries, in order. Returns the executor, or null after recording a
/// message (the status in `status`).
PjrtExecutor *createPjrtExecutor(const thunder_model &model, const thunder_program_v1 &program,
                                 const HostWeight *weights, thunder_status &status);

/// Frees the executor's weights, executable and its share of the client.
void destroyPjrtExecutor(PjrtExecutor *executor);

/// What a PJRT model runs on, for thunder_model_device_description/_arch: the plugin's
/// platform and the device's kind ("PJRT cuda device: NVIDIA H200 (xla_cuda_plugin.so)",
/// arch "NVIDIA H200"). Leaves both unchanged where the plugin cannot say.
void describePjrt(const PjrtExecutor &executor, std::string &description, std::string &arch);

/// One run of a PJRT model (inputs and outputs validated): uploads the inputs, executes the
/// program with (weights..., inputs...), copies the outputs to the caller's host memory and
/// frees the run's device buffers. Thread-safe: runs may proceed concurrently. On failure
/// records a THUNDER_ERROR_RUN message naming the model and the step.
thunder_status runPjrt(const thunder_model &model, const thunder_tensor *inputs,
                       const thunder_tensor *outputs);

} // namespace thunder::runtime

#endif // THUNDER_LIB_RUNTIME_PJRT_H
