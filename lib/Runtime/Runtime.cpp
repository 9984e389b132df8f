// The runtime's C API: load a compiled model (dlopen, ABI and weights checks, device check),
// validate, and run it with a private or a context's workspace.
#include "Device.h"
#include "Internal.h"
#include "Pjrt.h"

#include <dlfcn.h>
#include <vector>
#include <mutex>
#include <unistd.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>

#ifndef THUNDER_RUNTIME_VERSION
#define THUNDER_RUNTIME_VERSION "0.0.0"
#endif

using namespace thunder::runtime;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {
thread_local std::string lastError;

/// Runs an API function's body, turning any exception (std::bad_alloc from a container, or
/// something thrown by a model's code) into a status: nothing escapes the C API.
template <typename F> thunder_status guarded(F &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(THUNDER_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception &e) {
    return fail(THUNDER_ERROR_RUN, std::string("unexpected C++ exception: ") + e.what());
  } catch (...) {
    return fail(THUNDER_ERROR_RUN, "unexpected exception");
  }
}
} // namespace

thunder_status thunder::runtime::fail(thunder_status status, std::string message) {
  try {
    lastError = std::move(message);
  } catch (...) {
    // No memory for the message: keep the status.
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Names and sizes
//===----------------------------------------------------------------------===//

namespace {
/// In thunder_dtype order; names as thunder::dtypeName (test/unit/Runtime checks they agree).
struct DTypeInfo {
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {"bool", 1},          {"int8", 1},        {"int32", 4},   {"int64", 8},
    {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"float16", 2}, {"bfloat16", 2},
    {"float32", 4},       {"float64", 8},
};
constexpr int32_t kNumDTypes = sizeof(kDTypes) / sizeof(kDTypes[0]);
} // namespace

const char *thunder_last_error(void) { return lastError.c_str(); }

const char *thunder_status_name(int32_t status) {
  switch (status) {
  case THUNDER_OK:
    return "THUNDER_OK";
  case THUNDER_ERROR_INVALID_ARGUMENT:
    return "THUNDER_ERROR_INVALID_ARGUMENT";
  case THUNDER_ERROR_LOAD:
    return "THUNDER_ERROR_LOAD";
  case THUNDER_ERROR_VERSION:
    return "THUNDER_ERROR_VERSION";
  case THUNDER_ERROR_DEVICE:
    return "THUNDER_ERROR_DEVICE";
  case THUNDER_ERROR_RUN:
    return "THUNDER_ERROR_RUN";
  case THUNDER_ERROR_OUT_OF_MEMORY:
    return "THUNDER_ERROR_OUT_OF_MEMORY";
  default:
    return "unknown";
  }
}

const char *thunder_runtime_version(void) { return THUNDER_RUNTIME_VERSION; }

const char *thunder_dtype_name(int32_t dtype) {
  return dtype >= 0 && dtype < kNumDTypes ? kDTypes[dtype].name : "unknown";
}

size_t thunder_dtype_size(int32_t dtype) {
  return dtype >= 0 && dtype < kNumDTypes ? kDTypes[dtype].size : 0;
}

const char *thunder_device_name(int32_t device) {
  switch (device) {
  case THUNDER_DEVICE_CPU:
    return "cpu";
  case THUNDER_DEVICE_CUDA:
    return "cuda";
  case THUNDER_DEVICE_HIP:
    return "hip";
  default:
    return "unknown";
  }
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

namespace {

/// Owns a model while it is being loaded; frees what was set up if loading fails.
struct ModelDeleter {
  void operator()(thunder_model *model) const {
    // Before dlclose: the executor may still name the library's strings.
    if (model->pjrt)
      destroyPjrtExecutor(model->pjrt);
    if (model->state)
      model->table->destroy(model->state);
    if (model->spare.ptr)
      model->device->release(model->spare);
    if (model->handle)
      dlclose(model->handle);
    delete model;
  }
};
using ModelPtr = std::unique_ptr<thunder_model, ModelDeleter>;

/// The file identity (device, inode, mtime) each path had when it was last
/// loaded by dlopen through this runtime.
struct FileIdentity {
  dev_t device;
  ino_t inode;
  time_t mtime;
  long mtimeNanos;
};
std::mutex loadedMutex;
std::map<std::string, FileIdentity> loadedFiles;

FileIdentity identityOf(const struct stat &info) {
  return {info.st_dev, info.st_ino, info.st_mtim.tv_sec, info.st_mtim.tv_nsec};
}

bool sameFileAsLoaded(const std::string &path, const struct stat &info) {
  std::lock_guard<std::mutex> lock(loadedMutex);
  auto it = loadedFiles.find(path);
  // Loaded by someone else (the application's own dlopen): nothing to
  // compare with, so share it as dlopen would.
  if (it == loadedFiles.end())
    return true;
  FileIdentity now = identityOf(info);
  return it->second.device == now.device && it->second.inode == now.inode &&
         it->second.mtime == now.mtime && it->second.mtimeNanos == now.mtimeNanos;
}

void rememberLoaded(const std::string &path, const struct stat &info) {
  std::lock_guard<std::mutex> lock(loadedMutex);
  loadedFiles[path] = identityOf(info);
}

/// Copies `path` to a new file in the temporary directory; "" on failure.
std::string copyToTemporary(const std::string &path) {
  const char *dir = getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/thunder-model-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int out = mkstemp(name.data());
  if (out < 0)
    return "";
  int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  bool ok = in >= 0;
  char buffer[1 << 16];
  while (ok) {
    ssize_t n = read(in, buffer, sizeof(buffer));
    if (n == 0)
      break;
    ok = n > 0 && write(out, buffer, static_cast<size_t>(n)) == n;
  }
  if (in >= 0)
    close(in);
  ok = close(out) == 0 && ok;
  if (!ok) {
    unlink(name.data());
    return "";
  }
  return name.data();
}

std::string directoryOf(const std::string &file) {
  size_t slash = file.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

/// The file the dynamic loader opened for `handle`, made absolute where possible.
std::string loadedFile(void *handle, const std::string &fallback) {
  std::string file = fallback;
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    file = map->l_name;
  if (char *real = realpath(file.c_str(), nullptr)) {
    file = real;
    std::free(real);
  }
  return file;
}

/// Records, for every dynamic input dim whose symbol appeared earlier, where it first appeared.
void collectSharedDims(thunder_model &model) {
  const thunder_model_v1 &table = *model.table;
  std::map<std::string, std::pair<int32_t, int32_t>> first;
  for (int32_t i = 0; i < table.num_inputs; ++i) {
    const thunder_tensor_desc &desc = table.inputs[i];
    for (int32_t d = 0; d < desc.rank; ++d) {
      if (desc.shape[d] >= 0 || !desc.dim_symbols[d][0])
        continue;
      auto [it, inserted] = first.try_emplace(desc.dim_symbols[d], i, d);
      if (!inserted)
        model.sharedDims.push_back({i, d, it->second.first, it->second.second});
    }
  }
  for (int32_t o = 0; o < table.num_outputs; ++o)
    model.totalOutputRank += static_cast<size_t>(table.outputs[o].rank);
}

/// The random table of the model's chosen entry (artifact.h: the entry's name
/// with "_random"; several entries each have their own), and the model's first
/// seed, from std::random_device. None for a model that draws no random numbers.
void findRandomTable(thunder_model &model) {
  // A partition of a multi-partition library has its entries renamed "_p<i>".
  std::string partitionEntry = "thunder_model_entry_v1_p" + std::to_string(model.partition);
  for (const char *entry : {"thunder_model_entry_v1", "thunder_model_entry_v1_cuda",
                            "thunder_model_entry_v1_hip", partitionEntry.c_str()}) {
    std::string symbol = std::string(entry) + THUNDER_MODEL_RANDOM_SUFFIX;
    auto fn = reinterpret_cast<thunder_model_random_v1_fn>(dlsym(model.handle, symbol.c_str()));
    const thunder_model_random_v1 *random = fn ? fn() : nullptr;
    if (random && random->struct_size >= sizeof(thunder_model_random_v1) &&
        random->model == model.table && random->run_seeded) {
      model.random = random;
      std::random_device device;
      model.seed = (uint64_t(device()) << 32) | device();
      return;
    }
  }
}

/// Fills the model's device description and architecture: the device's own, and for a CPU
/// model the -march its library says it was built for (THUNDER_MODEL_ARCH_SYMBOL).
void describeDevice(thunder_model &model) {
  model.device->describe(model.deviceDescription, model.deviceArch);
  if (model.table->device != THUNDER_DEVICE_CPU)
    return;
  auto *built = static_cast<const char *>(dlsym(model.handle, THUNDER_MODEL_ARCH_SYMBOL));
  if (built && built[0] && std::strlen(built) < 64) {
    model.deviceArch = built;
    model.deviceDescription += std::string(", code for ") + built;
  }
}

/// The weights `provider` gives, in the order of the library's weights table, checked:
/// empty when the library has no table or the provider gives none.
thunder_status providedWeights(const thunder_model &model, thunder_weights_provider provider,
                               void *userData, thunder_model_weights_entry_v1_fn entry,
                               const thunder_model_weights_v1 *&table,
                               std::vector<const void *> &provided) {
  table = nullptr;
  if (!provider || !entry)
    return THUNDER_OK;
  table = entry();
  std::string name = model.table->name;
  if (!table || table->struct_size != sizeof(thunder_model_weights_v1) ||
      table->num_weights < 0 || (table->num_weights > 0 && (!table->weights ||
                                                            !table->create_with)))
    return fail(THUNDER_ERROR_LOAD, "model '" + name + "' (" + model.path +
                                        ") has a malformed weights table (" +
                                        THUNDER_MODEL_WEIGHTS_SYMBOL + ")");
  bool any = false;
  for (int32_t i = 0; i < table->num_weights; ++i) {
    const void *data = provider(userData, &table->weights[i]);
    provided.push_back(data);
    any = any || data;
  }
  if (!any)
    provided.clear();
  return THUNDER_OK;
}

thunder_status load(const std::string &path, thunder_model *&result,
                    thunder_weights_provider provider = nullptr, void *userData = nullptr,
                    int32_t partition = -1) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return fail(THUNDER_ERROR_LOAD, "cannot load model " + path + ": no such file");
  if (S_ISDIR(info.st_mode))
    return fail(THUNDER_ERROR_LOAD,
                "cannot load model " + path + ": it is a directory (pass the libNAME.so in it)");

  // A bare name would be searched in the loader's paths; the user means the file here.
  std::string openPath = path.find('/') == std::string::npos ? "./" + path : path;
  ModelPtr model(new thunder_model);
  model->path = path;
  // dlopen matches an already-loaded library by its path: a model recompiled
  // in place while the old one is still loaded would come back as the old
  // one. Such a file is loaded from a private copy instead.
  std::string privateCopy;
  if (void *loaded = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    dlclose(loaded); // only a probe: drop the reference it took
    if (!sameFileAsLoaded(openPath, info)) {
      privateCopy = copyToTemporary(openPath);
      if (privateCopy.empty())
        return fail(THUNDER_ERROR_LOAD, "cannot load model " + path +
                                            ": an older library of that path is still "
                                            "loaded, and making a private copy failed");
      openPath = privateCopy;
    }
  }
  dlerror();
  model->handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!privateCopy.empty())
    unlink(privateCopy.c_str()); // the mapping stays valid
  if (model->handle)
    rememberLoaded(path.find('/') == std::string::npos ? "./" + path : path, info);
  if (!model->handle) {
    const char *why = dlerror();
    return fail(THUNDER_ERROR_LOAD,
                "cannot load model " + path + ": " + (why ? why : "dlopen failed"));
  }

  // Code for instructions this machine lacks would die of SIGILL in the
  // first call: refuse it, naming them, before calling anything.
  if (auto *isa = static_cast<const char *>(dlsym(model->handle, THUNDER_MODEL_ISA_SYMBOL))) {
    std::string missing = missingCpuFeatures(isa);
    if (!missing.empty()) {
      auto *arch = static_cast<const char *>(dlsym(model->handle, THUNDER_MODEL_ARCH_SYMBOL));
      return fail(THUNDER_ERROR_LOAD,
                  "cannot load model " + path + ": its code needs CPU features this machine "
                  "lacks: " + missing + (arch && arch[0] ? std::string(" (compiled with --cpu=") +
                  arch + ")" : std::string()) + "; recompile it here (--cpu=native) or for an "
                  "older instruction set (--cpu=x86-64-v3)");
    }
  }
  auto entry = reinterpret_cast<thunder_model_entry_v1_fn>(
      dlsym(model->handle, THUNDER_MODEL_ENTRY_SYMBOL));
  auto weightsEntry = reinterpret_cast<thunder_model_weights_entry_v1_fn>(
      dlsym(model->handle, THUNDER_MODEL_WEIGHTS_SYMBOL));
  // A library of several partitions (artifact.h): partition `partition` is the model.
  if (auto index = reinterpret_cast<thunder_model_partitions_v1_fn>(
          dlsym(model->handle, THUNDER_MODEL_PARTITIONS_SYMBOL))) {
    const thunder_model_partition_index_v1 *parts = index();
    if (!parts || parts->struct_size != sizeof(thunder_model_partition_index_v1) ||
        parts->num_partitions < 1 || !parts->partitions)
      return fail(THUNDER_ERROR_LOAD, path + " is not a valid Thunder model: its partition "
                                             "index (" THUNDER_MODEL_PARTITIONS_SYMBOL
                                             ") is malformed");
    model->numPartitions = parts->num_partitions;
    if (partition >= parts->num_partitions)
      return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                  "cannot load partition " + std::to_string(partition) + " of " + path +
                      ": it holds " + std::to_string(parts->num_partitions) + " partition" +
                      (parts->num_partitions == 1 ? "" : "s"));
    if (partition >= 0) {
      entry = parts->partitions[partition].entry;
      weightsEntry = parts->partitions[partition].weights_entry;
      model->partition = partition;
    }
  } else if (partition > 0) {
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "cannot load partition " + std::to_string(partition) + " of " + path +
                    ": it holds one model (no " THUNDER_MODEL_PARTITIONS_SYMBOL ")");
  }
  if (!entry)
    return fail(THUNDER_ERROR_LOAD, path + " is not a Thunder model: no symbol " +
                                        THUNDER_MODEL_ENTRY_SYMBOL);
  const thunder_model_v1 *table = entry();
  if (!table)
    return fail(THUNDER_ERROR_LOAD, path + " is not a Thunder model: " +
                                        THUNDER_MODEL_ENTRY_SYMBOL + " returned NULL");
  // abi_version and struct_size lead every version of the table: safe to read before anything.
  if (table->abi_version != THUNDER_ABI_VERSION)
    return fail(THUNDER_ERROR_VERSION,
                path + " was compiled for Thunder model ABI version " +
                    std::to_string(table->abi_version) + ", but this runtime (" +
                    THUNDER_RUNTIME_VERSION + ") supports ABI version " +
                    std::to_string(THUNDER_ABI_VERSION) +
                    ": recompile the model with a matching thunder-compile, or use a matching "
                    "runtime");
  if (table->struct_size != sizeof(thunder_model_v1))
    return fail(THUNDER_ERROR_VERSION,
                path + " has a model table of " + std::to_string(table->struct_size) +
                    " bytes, but ABI version " + std::to_string(THUNDER_ABI_VERSION) +
                    " defines it as " + std::to_string(sizeof(thunder_model_v1)) +
                    " bytes: it was built against a different artifact.h");
  if (std::string problem = checkModelTable(*table); !problem.empty())
    return fail(THUNDER_ERROR_LOAD, path + " is not a valid Thunder model: " + problem);
  model->table = table;
  // A private copy lives in the temporary directory; the weights file is
  // beside the original.
  model->loadedPath = privateCopy.empty() ? loadedFile(model->handle, openPath)
                                          : (path.find('/') == std::string::npos
                                                 ? "./" + path
                                                 : path);
  std::string name = table->name;

  if (table->weights_file && table->weights_file[0]) {
    std::string weights = table->weights_file;
    if (weights[0] != '/')
      weights = directoryOf(model->loadedPath) + "/" + weights;
    struct stat weightsInfo;
    if (stat(weights.c_str(), &weightsInfo) != 0 || S_ISDIR(weightsInfo.st_mode))
      return fail(THUNDER_ERROR_LOAD,
                  "model '" + name + "' needs its weights file " + weights +
                      ", which is missing (the weights file '" + table->weights_file +
                      "' must stay beside " + model->loadedPath + ")");
    model->weightsPath = weights;
  }

  // Before create(): a CUDA/HIP model's create would otherwise touch a missing driver.
  // A library for NVIDIA and AMD GPUs (--target=cuda,hip) holds a table per vendor
  // (the entry point returns the CUDA one): the vendor whose driver and device this
  // machine has runs it, CUDA first.
  auto cudaPart = reinterpret_cast<thunder_model_entry_v1_fn>(
      dlsym(model->handle, "thunder_model_entry_v1_cuda"));
  auto hipPart = reinterpret_cast<thunder_model_entry_v1_fn>(
      dlsym(model->handle, "thunder_model_entry_v1_hip"));
  if (cudaPart && hipPart && table == cudaPart()) {
    const thunder_model_v1 *hipTable = hipPart();
    if (!hipTable || hipTable->abi_version != THUNDER_ABI_VERSION ||
        hipTable->struct_size != sizeof(thunder_model_v1) ||
        !checkModelTable(*hipTable).empty() || hipTable->device != THUNDER_DEVICE_HIP)
      return fail(THUNDER_ERROR_LOAD, path + " is not a valid Thunder model: its HIP part's "
                                             "table does not match its CUDA part's");
    model->device = deviceFor(THUNDER_DEVICE_CUDA, name);
    if (!model->device) {
      std::string cudaWhy = thunder_last_error();
      model->device = deviceFor(THUNDER_DEVICE_HIP, name);
      if (!model->device)
        return fail(THUNDER_ERROR_DEVICE,
                    "model '" + name + "' holds code for NVIDIA (CUDA) and AMD (HIP) GPUs, " +
                        "but neither can run here: " + cudaWhy + "; " + thunder_last_error());
      model->table = table = hipTable;
    }
  } else {
    model->device = deviceFor(table->device, name);
  }
  if (!model->device)
    return THUNDER_ERROR_DEVICE; // message recorded by deviceFor
  describeDevice(*model);

  // A PJRT model: the executor compiles and runs its program; the table's create and run
  // are not used (create makes no state, run refuses).
  if (auto program = reinterpret_cast<thunder_program_entry_v1_fn>(
          dlsym(model->handle, THUNDER_PROGRAM_ENTRY_SYMBOL))) {
    if (thunder_status s = loadProgram(*model, program))
      return s;
    describePjrt(*model->pjrt, model->deviceDescription, model->deviceArch);
    collectSharedDims(*model);
    result = model.release();
    return THUNDER_OK;
  }

  const thunder_model_weights_v1 *weightsTable = nullptr;
  std::vector<const void *> provided;
  if (thunder_status s =
          providedWeights(*model, provider, userData, weightsEntry, weightsTable, provided))
    return s;
  char error[1024] = "";
  void *state = nullptr;
  int rc = provided.empty()
               ? table->create(model->weightsPath.c_str(), &state, error, sizeof(error))
               : weightsTable->create_with(model->weightsPath.c_str(), provided.data(), &state,
                                           error, sizeof(error));
  model->providedWeights = static_cast<int32_t>(
      std::count_if(provided.begin(), provided.end(), [](const void *p) { return p; }));
  // The table providedWeights checked, else the library's own (no provider).
  const thunder_model_weights_v1 *own =
      weightsTable ? weightsTable : weightsEntry ? weightsEntry() : nullptr;
  if (own && own->struct_size == sizeof(thunder_model_weights_v1) && own->num_weights >= 0)
    model->numWeights = own->num_weights;
  if (rc != 0) {
    error[sizeof(error) - 1] = '\0';
    return fail(THUNDER_ERROR_LOAD, "model '" + name + "' (" + path + ") failed to initialize: " +
                                        (error[0] ? error : "(no message)"));
  }
  model->state = state;
  findRandomTable(*model);
  collectSharedDims(*model);
  result = model.release();
  return THUNDER_OK;
}

} // namespace

thunder_status thunder_model_load(const char *path, thunder_model **model) {
  if (model)
    *model = nullptr;
  if (!path || !model)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "thunder_model_load: path and model must not be NULL");
  return guarded([&] { return load(path, *model); });
}

thunder_status thunder_model_load_with_weights(const char *path,
                                               thunder_weights_provider provider,
                                               void *userData, thunder_model **model) {
  if (model)
    *model = nullptr;
  if (!path || !model)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "thunder_model_load_with_weights: path and model must not be NULL");
  return guarded([&] { return load(path, *model, provider, userData); });
}

thunder_status thunder_model_load_partition(const char *path, int32_t partition,
                                            thunder_weights_provider provider,
                                            void *userData, thunder_model **model) {
  if (model)
    *model = nullptr;
  if (!path || !model)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "thunder_model_load_partition: path and model must not be NULL");
  if (partition < 0)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "thunder_model_load_partition: partition " + std::to_string(partition) +
                    " is negative");
  return guarded([&] { return load(path, *model, provider, userData, partition); });
}

int32_t thunder_model_num_partitions(const thunder_model *model) {
  return model ? model->numPartitions : -1;
}

int32_t thunder_model_partition(const thunder_model *model) {
  return model ? model->partition : -1;
}

int32_t thunder_model_num_provided_weights(const thunder_model *model) {
  return model ? model->providedWeights : -1;
}

int32_t thunder_model_num_weights(const thunder_model *model) {
  return model ? model->numWeights : -1;
}

void thunder_model_free(thunder_model *model) {
  if (model)
    ModelDeleter()(model);
}

//===----------------------------------------------------------------------===//
// Accessors
//===----------------------------------------------------------------------===//

const char *thunder_model_name(const thunder_model *model) {
  return model ? model->table->name : nullptr;
}
const char *thunder_model_target(const thunder_model *model) {
  return model ? model->table->target : nullptr;
}
const char *thunder_model_path(const thunder_model *model) {
  return model ? model->path.c_str() : nullptr;
}
int32_t thunder_model_device(const thunder_model *model) {
  return model ? model->table->device : -1;
}
const char *thunder_model_device_description(const thunder_model *model) {
  return model ? model->deviceDescription.c_str() : nullptr;
}
const char *thunder_model_device_arch(const thunder_model *model) {
  return model ? model->deviceArch.c_str() : nullptr;
}
int32_t thunder_model_num_inputs(const thunder_model *model) {
  return model ? model->table->num_inputs : 0;
}
int32_t thunder_model_num_outputs(const thunder_model *model) {
  return model ? model->table->num_outputs : 0;
}
const thunder_tensor_desc *thunder_model_input(const thunder_model *model, int32_t i) {
  if (!model || i < 0 || i >= model->table->num_inputs)
    return nullptr;
  return &model->table->inputs[i];
}
const thunder_tensor_desc *thunder_model_output(const thunder_model *model, int32_t i) {
  if (!model || i < 0 || i >= model->table->num_outputs)
    return nullptr;
  return &model->table->outputs[i];
}

//===----------------------------------------------------------------------===//
// Shapes and runs
//===----------------------------------------------------------------------===//

namespace {

thunder_status nullModel(const char *function) {
  return fail(THUNDER_ERROR_INVALID_ARGUMENT, std::string(function) + ": model is NULL");
}

/// Output-shape buffers for one run: on the stack for common models, else on the heap.
class ShapeBuffers {
public:
  explicit ShapeBuffers(const thunder_model &model) {
    const thunder_model_v1 &table = *model.table;
    int64_t *storage = localStorage;
    int64_t **pointers = localPointers;
    if (model.totalOutputRank > kLocalDims || table.num_outputs > kLocalOutputs) {
      heapStorage.resize(model.totalOutputRank + 1);
      heapPointers.resize(static_cast<size_t>(table.num_outputs) + 1);
      storage = heapStorage.data();
      pointers = heapPointers.data();
    }
    // -1 marks dims the model failed to write; computeOutputShapes rejects them.
    std::fill(storage, storage + model.totalOutputRank, int64_t(-1));
    size_t offset = 0;
    for (int32_t o = 0; o < table.num_outputs; ++o) {
      pointers[o] = storage + offset;
      offset += static_cast<size_t>(table.outputs[o].rank);
    }
    shapes = pointers;
  }
  int64_t *const *get() const { return shapes; }

private:
  static constexpr size_t kLocalDims = 64;
  static constexpr int32_t kLocalOutputs = 16;
  int64_t localStorage[kLocalDims + 1];
  int64_t *localPointers[kLocalOutputs + 1];
  std::vector<int64_t> heapStorage;
  std::vector<int64_t *> heapPointers;
  int64_t **shapes = nullptr;
};

/// One run: validates, computes and checks output shapes, gets a workspace (the context's, or
/// one of its own), runs.
thunder_status runModel(const thunder_model &model, thunder_context *context,
                        const thunder_tensor *inputs, int32_t numInputs,
                        const thunder_tensor *outputs, int32_t numOutputs, void *stream) {
  const thunder_model_v1 &table = *model.table;
  if (thunder_status s = validateInputs(model, inputs, numInputs, /*requireData=*/true))
    return s;
  ShapeBuffers shapes(model);
  if (thunder_status s = computeOutputShapes(model, inputs, shapes.get()))
    return s;
  if (thunder_status s = validateOutputs(model, outputs, numOutputs, shapes.get()))
    return s;
  if (model.pjrt)
    return runPjrt(model, inputs, outputs);

  uint64_t bytes = table.workspace_bytes(model.state, inputs);
  // A kept workspace, grown when this run needs more: the context's, or without one, a CPU
  // model's spare when no other run holds it (a new one per run paid its page faults on
  // every run above glibc's mmap threshold, and below it could leave the heap growing
  // between runs). Otherwise one for this run alone.
  std::unique_lock<std::mutex> spare(model.spareMutex, std::defer_lock);
  Buffer *kept = context ? &context->workspace
                 : table.device == THUNDER_DEVICE_CPU && spare.try_lock() ? &model.spare
                                                                          : nullptr;
  Buffer own;
  Buffer *workspace = kept ? kept : &own;
  if (kept) {
    if (workspace->bytes < bytes) {
      model.device->release(*workspace);
      if (thunder_status s = model.device->allocate(bytes, *workspace))
        return s;
    }
  } else if (thunder_status s = model.device->allocateForRun(bytes, stream, own)) {
    return s;
  }

  // The ABI promises CPU code a NULL stream, whatever the caller passed.
  void *modelStream = table.device == THUNDER_DEVICE_CPU ? nullptr : stream;
  char error[1024] = "";
  int rc = model.random
               ? model.random->run_seeded(model.state, inputs, outputs, workspace->ptr,
                                          modelStream, model.seed.load(), model.runs++, error,
                                          sizeof(error))
               : table.run(model.state, inputs, outputs, workspace->ptr, modelStream, error,
                           sizeof(error));
  if (!kept)
    model.device->releaseForRun(own, stream);
  if (rc != 0) {
    error[sizeof(error) - 1] = '\0';
    return fail(THUNDER_ERROR_RUN, "model '" + std::string(table.name) +
                                       "' failed to run: " + (error[0] ? error : "(no message)"));
  }
  return THUNDER_OK;
}

} // namespace

thunder_status thunder_model_output_shapes(const thunder_model *model,
                                           const thunder_tensor *inputs, int32_t numInputs,
                                           int64_t *const *shapes) {
  if (!model)
    return nullModel("thunder_model_output_shapes");
  return guarded([&] {
    if (thunder_status s = validateInputs(*model, inputs, numInputs, /*requireData=*/false))
      return s;
    const thunder_model_v1 &table = *model->table;
    if (table.num_outputs > 0 && !shapes)
      return fail(THUNDER_ERROR_INVALID_ARGUMENT, "thunder_model_output_shapes: shapes is NULL");
    for (int32_t o = 0; o < table.num_outputs; ++o)
      if (table.outputs[o].rank > 0 && !shapes[o])
        return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                    "thunder_model_output_shapes: shapes[" + std::to_string(o) +
                        "] is NULL, but " + describe("output", o, table.outputs[o]) +
                        " has rank " + std::to_string(table.outputs[o].rank));
    // The model writes into a buffer of ours, so rank-0 outputs need no caller pointer.
    ShapeBuffers computed(*model);
    if (thunder_status s = computeOutputShapes(*model, inputs, computed.get()))
      return s;
    for (int32_t o = 0; o < table.num_outputs; ++o)
      if (table.outputs[o].rank > 0)
        std::memcpy(shapes[o], computed.get()[o],
                    sizeof(int64_t) * static_cast<size_t>(table.outputs[o].rank));
    return THUNDER_OK;
  });
}

thunder_status thunder_model_workspace_bytes(const thunder_model *model,
                                             const thunder_tensor *inputs, int32_t numInputs,
                                             uint64_t *bytes) {
  if (!model)
    return nullModel("thunder_model_workspace_bytes");
  if (!bytes)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT, "thunder_model_workspace_bytes: bytes is NULL");
  return guarded([&] {
    if (thunder_status s = validateInputs(*model, inputs, numInputs, /*requireData=*/false))
      return s;
    *bytes = model->table->workspace_bytes(model->state, inputs);
    return THUNDER_OK;
  });
}

int32_t thunder_model_uses_random(const thunder_model *model) {
  return model && model->random ? 1 : 0;
}

thunder_status thunder_model_set_seed(thunder_model *model, uint64_t seed) {
  if (!model)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT, "thunder_model_set_seed: model is NULL");
  model->seed = seed;
  model->runs = 0;
  return THUNDER_OK;
}

thunder_status thunder_model_run(const thunder_model *model, const thunder_tensor *inputs,
                                 int32_t numInputs, const thunder_tensor *outputs,
                                 int32_t numOutputs, void *stream) {
  if (!model)
    return nullModel("thunder_model_run");
  return guarded(
      [&] { return runModel(*model, nullptr, inputs, numInputs, outputs, numOutputs, stream); });
}

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

thunder_status thunder_context_create(const thunder_model *model, thunder_context **context) {
  if (context)
    *context = nullptr;
  if (!model || !context)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "thunder_context_create: model and context must not be NULL");
  return guarded([&] {
    auto created = std::make_unique<thunder_context>();
    created->model = model;
    *context = created.release();
    return THUNDER_OK;
  });
}

void thunder_context_free(thunder_context *context) {
  if (!context)
    return;
  context->model->device->release(context->workspace);
  delete context;
}

thunder_status thunder_context_run(thunder_context *context, const thunder_tensor *inputs,
                                   int32_t numInputs, const thunder_tensor *outputs,
                                   int32_t numOutputs, void *stream) {
  if (!context)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT, "thunder_context_run: context is NULL");
  return guarded([&] {
    return runModel(*context->model, context, inputs, numInputs, outputs, numOutputs, stream);
  });
}
