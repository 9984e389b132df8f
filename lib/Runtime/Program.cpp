// The program of a PJRT model at load: checks of its struct, its weights against their shapes
// and the weights file (mapped read-only while they are uploaded), then the executor.
#include "Pjrt.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

using namespace thunder::runtime;

namespace {

/// A file mapped read-only for as long as the object lives.
class MappedFile {
public:
  ~MappedFile() {
    if (data && data != MAP_FAILED)
      munmap(data, size);
  }
  /// Maps `path`; "" on success, else why not.
  std::string map(const std::string &path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return std::string("cannot open it: ") + std::strerror(errno);
    struct stat info;
    if (fstat(fd, &info) != 0) {
      std::string why = std::strerror(errno);
      close(fd);
      return "cannot stat it: " + why;
    }
    size = static_cast<uint64_t>(info.st_size);
    if (size > 0) {
      data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        std::string why = std::strerror(errno);
        close(fd);
        return "cannot map it: " + why;
      }
    }
    close(fd); // the mapping stays valid
    return "";
  }
  const char *bytes() const { return static_cast<const char *>(data); }
  uint64_t size = 0;

private:
  void *data = nullptr;
};

/// "weight 2 ('fc1.weight')".
std::string describeWeight(int32_t index, const thunder_program_weight_v1 &weight) {
  return "weight " + std::to_string(index) + " ('" + (weight.name ? weight.name : "") + "')";
}

/// Problems with one weight's descriptor, one sentence; "" when it is well formed.
std::string checkWeight(const thunder_program_weight_v1 &weight) {
  if (!weight.name)
    return "has no name";
  if (weight.dtype < 0 || weight.dtype > THUNDER_DTYPE_FLOAT64)
    return "has an unknown dtype " + std::to_string(weight.dtype);
  if (weight.rank < 0 || (weight.rank > 0 && !weight.shape))
    return "has rank " + std::to_string(weight.rank) + " without a shape";
  uint64_t elements = 1;
  for (int32_t d = 0; d < weight.rank; ++d) {
    if (weight.shape[d] < 0)
      return "has a dynamic dim (shape " + formatShape(weight.shape, weight.rank) + ")";
    uint64_t dim = static_cast<uint64_t>(weight.shape[d]);
    if (dim != 0 && elements > UINT64_MAX / dim)
      return "has too many elements (shape " + formatShape(weight.shape, weight.rank) + ")";
    elements *= dim;
  }
  uint64_t size = thunder_dtype_size(weight.dtype);
  if (elements > UINT64_MAX / size || elements * size != weight.bytes)
    return "has " + std::to_string(weight.bytes) + " bytes, but " +
           thunder_dtype_name(weight.dtype) + formatShape(weight.shape, weight.rank) + " takes " +
           (elements > UINT64_MAX / size ? std::string("more")
                                         : std::to_string(elements * size));
  if (weight.offset > UINT64_MAX - weight.bytes)
    return "has an offset past the end of memory";
  return "";
}

/// Problems with the program struct (beyond its size), one sentence; "" when well formed.
std::string checkProgram(const thunder_model_v1 &table, const thunder_program_v1 &program,
                         bool externalWeights) {
  if (!program.format || std::strcmp(program.format, "stablehlo") != 0)
    return std::string("its program's format is '") + (program.format ? program.format : "") +
           "', but this runtime runs only 'stablehlo'";
  if (!program.code || program.code_size == 0)
    return "its program has no code";
  if (program.num_weights < 0 || (program.num_weights > 0 && !program.weights))
    return "its program declares " + std::to_string(program.num_weights) +
           " weights without their descriptors";
  if (externalWeights && program.weights_data)
    return std::string("its weights are both embedded (weights_data) and in the weights "
                       "file '") +
           table.weights_file + "'";
  if (!externalWeights && program.num_weights > 0 && !program.weights_data)
    return "its program has weights but neither embeds them (weights_data is NULL) nor names "
           "a weights file";
  for (int32_t w = 0; w < program.num_weights; ++w)
    if (std::string problem = checkWeight(program.weights[w]); !problem.empty())
      return "its program's " + describeWeight(w, program.weights[w]) + " " + problem;
  // The executor has no shape function: every tensor has the one shape XLA compiled for.
  for (int32_t i = 0; i < table.num_inputs; ++i)
    for (int32_t d = 0; d < table.inputs[i].rank; ++d)
      if (table.inputs[i].shape[d] < 0)
        return describe("input", i, table.inputs[i]) + " has a dynamic dim (shape " +
               formatShape(table.inputs[i]) + "), but a PJRT model has static shapes only";
  for (int32_t o = 0; o < table.num_outputs; ++o)
    for (int32_t d = 0; d < table.outputs[o].rank; ++d)
      if (table.outputs[o].shape[d] < 0)
        return describe("output", o, table.outputs[o]) + " has a dynamic dim (shape " +
               formatShape(table.outputs[o]) + "), but a PJRT model has static shapes only";
  return "";
}

} // namespace

thunder_status thunder::runtime::loadProgram(thunder_model &model,
                                             thunder_program_entry_v1_fn entry) {
  const thunder_model_v1 &table = *model.table;
  std::string name = std::string("model '") + table.name + "' (" + model.path + ")";
  const thunder_program_v1 *program = entry();
  if (!program)
    return fail(THUNDER_ERROR_LOAD, name + " is not a valid Thunder model: " +
                                        THUNDER_PROGRAM_ENTRY_SYMBOL + " returned NULL");
  if (program->struct_size != sizeof(thunder_program_v1))
    return fail(THUNDER_ERROR_VERSION,
                name + " has a program struct of " + std::to_string(program->struct_size) +
                    " bytes, but this runtime defines it as " +
                    std::to_string(sizeof(thunder_program_v1)) +
                    " bytes: it was built against a different artifact.h");
  bool external = !model.weightsPath.empty();
  if (std::string problem = checkProgram(table, *program, external); !problem.empty())
    return fail(THUNDER_ERROR_LOAD, name + " is not a valid Thunder model: " + problem);

  MappedFile file;
  if (external && program->num_weights > 0)
    if (std::string why = file.map(model.weightsPath); !why.empty())
      return fail(THUNDER_ERROR_LOAD,
                  name + " cannot read its weights file " + model.weightsPath + ": " + why);
  std::vector<HostWeight> weights(static_cast<size_t>(program->num_weights));
  for (int32_t w = 0; w < program->num_weights; ++w) {
    const thunder_program_weight_v1 &desc = program->weights[w];
    weights[w].desc = &desc;
    if (!external) {
      weights[w].data = static_cast<const char *>(program->weights_data) + desc.offset;
      continue;
    }
    if (desc.offset + desc.bytes > file.size)
      return fail(THUNDER_ERROR_LOAD,
                  name + ": its program's " + describeWeight(w, desc) + " lies at bytes [" +
                      std::to_string(desc.offset) + ", " +
                      std::to_string(desc.offset + desc.bytes) + ") of the weights file " +
                      model.weightsPath + ", which has only " + std::to_string(file.size) +
                      " bytes (a truncated or different file)");
    weights[w].data = file.bytes() + desc.offset;
  }

  thunder_status status = THUNDER_OK;
  model.pjrt = createPjrtExecutor(model, *program, weights.data(), status);
  return model.pjrt ? THUNDER_OK : status;
}
