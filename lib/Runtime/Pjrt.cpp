// The executor of PJRT models: finds and loads a PJRT plugin, shares one client per plugin,
// compiles a model's StableHLO program once, keeps its weights on the device, and runs it.
//
// Everything goes through the PJRT C API (pjrt_c_api.h, from the xla-cpu-pjrt package at
// configure time): the plugin is dlopen'ed, so the runtime links nothing of XLA. Every PJRT
// error becomes a Thunder error that names the step and carries PJRT's message.
#include "Pjrt.h"

#include "pjrt_c_api.h"

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

using namespace thunder::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Versions and the functions used
//===----------------------------------------------------------------------===//

/// The oldest PJRT C API minor version accepted (the major must equal the header's). 0.57
/// rearranged PJRT_Api's function table: an older plugin has the functions used here at other
/// offsets. Every function and argument field used here exists since; the fields added after
/// (ExecuteOptions' context and call_location, the client's kv_try_get callback) are left
/// zero, which plugins read as "not set", and a plugin older than the header ignores them.
constexpr int kMinMinorVersion = 57;

/// The PJRT functions the executor calls: a plugin must provide all of them.
#define THUNDER_PJRT_REQUIRED(X)                                                               \
  X(PJRT_Error_Destroy)                                                                        \
  X(PJRT_Error_Message)                                                                        \
  X(PJRT_Plugin_Initialize)                                                                    \
  X(PJRT_Event_Destroy)                                                                        \
  X(PJRT_Event_Await)                                                                          \
  X(PJRT_Client_Create)                                                                        \
  X(PJRT_Client_Destroy)                                                                       \
  X(PJRT_Client_Compile)                                                                       \
  X(PJRT_Client_BufferFromHostBuffer)                                                          \
  X(PJRT_LoadedExecutable_Destroy)                                                             \
  X(PJRT_LoadedExecutable_GetExecutable)                                                       \
  X(PJRT_LoadedExecutable_AddressableDevices)                                                  \
  X(PJRT_LoadedExecutable_Execute)                                                             \
  X(PJRT_Executable_Destroy)                                                                   \
  X(PJRT_Executable_NumOutputs)                                                                \
  X(PJRT_Buffer_Destroy)                                                                       \
  X(PJRT_Buffer_ReadyEvent)                                                                    \
  X(PJRT_Buffer_ToHostBuffer)

/// Whether the plugin's table reaches `offset` and holds a function there.
bool provides(const PJRT_Api &api, size_t offset, bool present) {
  return api.struct_size >= offset + sizeof(void *) && present;
}
#define THUNDER_PJRT_PROVIDES(api, name)                                                       \
  provides(api, offsetof(PJRT_Api, name), api.name != nullptr)

/// The compile options: a serialized xla.CompileOptionsProto with executable_build_options
/// { num_replicas: 1 num_partitions: 1 } (field 3, holding fields 4 and 5). Empty options make
/// XLA abort on `replica_count > 0`.
constexpr char kCompileOptions[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01};

//===----------------------------------------------------------------------===//
// Argument structs
//===----------------------------------------------------------------------===//

/// Zero bytes after every argument struct, counted in its struct_size. A plugin refuses an
/// argument struct smaller than the one it was built with ("Unexpected PJRT_ExecuteOptions
/// size: ... The plugin is likely built with a later version than the framework"), and the
/// fields PJRT appends read as "not set" when zero (null pointers, zero counts). The padding
/// lets a plugin built against a newer header than this runtime's (libtpu's 0.117 and the
/// CUDA plugin's 0.116 against the 0.81 of xla-cpu-pjrt) take the calls; a plugin of the
/// header's version or older ignores the extra bytes.
constexpr size_t kArgsPadding = 512;

/// A PJRT argument struct, zeroed, with its struct_size set and kArgsPadding zero bytes after.
template <typename T> class Args {
public:
  explicit Args(size_t structSize) {
    static_assert(std::is_trivially_copyable_v<T>, "PJRT's structs are plain C");
    std::memset(static_cast<void *>(this), 0, sizeof(*this));
    value.struct_size = structSize + kArgsPadding;
  }
  T *get() { return &value; }
  T *operator->() { return &value; }

private:
  T value;
  char padding[kArgsPadding];
};
#define PJRT_ARGS(type, name) Args<type> name(type##_STRUCT_SIZE)

//===----------------------------------------------------------------------===//
// Errors and events
//===----------------------------------------------------------------------===//

/// PJRT's message of `error`, which is freed.
std::string takeMessage(const PJRT_Api *api, PJRT_Error *error) {
  PJRT_ARGS(PJRT_Error_Message_Args, message);
  message->error = error;
  api->PJRT_Error_Message(message.get());
  std::string text = message->message && message->message_size
                         ? std::string(message->message, message->message_size)
                         : "(no message)";
  // XLA ends some messages with newlines; the Thunder message goes on after it.
  while (text.size() > 1 && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  PJRT_ARGS(PJRT_Error_Destroy_Args, destroy);
  destroy->error = error;
  api->PJRT_Error_Destroy(destroy.get());
  return text;
}

/// Frees an error nobody needs (from a destroy function).
void ignore(const PJRT_Api *api, PJRT_Error *error) {
  if (error)
    takeMessage(api, error);
}

/// Waits for `event` and destroys it; returns the error it carried (null when none).
PJRT_Error *awaitEvent(const PJRT_Api *api, PJRT_Event *event) {
  if (!event)
    return nullptr;
  PJRT_ARGS(PJRT_Event_Await_Args, await);
  await->event = event;
  PJRT_Error *error = api->PJRT_Event_Await(await.get());
  PJRT_ARGS(PJRT_Event_Destroy_Args, destroy);
  destroy->event = event;
  ignore(api, api->PJRT_Event_Destroy(destroy.get()));
  return error;
}

void destroyBuffer(const PJRT_Api *api, PJRT_Buffer *buffer) {
  if (!buffer)
    return;
  PJRT_ARGS(PJRT_Buffer_Destroy_Args, destroy);
  destroy->buffer = buffer;
  ignore(api, api->PJRT_Buffer_Destroy(destroy.get()));
}

/// Device buffers that are destroyed with the object (a run's inputs and outputs).
struct Buffers {
  const PJRT_Api *api;
  std::vector<PJRT_Buffer *> list;
  Buffers(const PJRT_Api *api, size_t size) : api(api), list(size, nullptr) {}
  ~Buffers() {
    for (PJRT_Buffer *buffer : list)
      destroyBuffer(api, buffer);
  }
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;
};

//===----------------------------------------------------------------------===//
// Types and transfers
//===----------------------------------------------------------------------===//

/// The PJRT element type of a thunder_dtype (every one has one).
PJRT_Buffer_Type pjrtType(int32_t dtype) {
  switch (dtype) {
  case THUNDER_DTYPE_BOOL:
    return PJRT_Buffer_Type_PRED;
  case THUNDER_DTYPE_INT8:
    return PJRT_Buffer_Type_S8;
  case THUNDER_DTYPE_INT32:
    return PJRT_Buffer_Type_S32;
  case THUNDER_DTYPE_INT64:
    return PJRT_Buffer_Type_S64;
  case THUNDER_DTYPE_FLOAT8_E4M3FN:
    return PJRT_Buffer_Type_F8E4M3FN;
  case THUNDER_DTYPE_FLOAT8_E5M2:
    return PJRT_Buffer_Type_F8E5M2;
  case THUNDER_DTYPE_FLOAT16:
    return PJRT_Buffer_Type_F16;
  case THUNDER_DTYPE_BFLOAT16:
    return PJRT_Buffer_Type_BF16;
  case THUNDER_DTYPE_FLOAT32:
    return PJRT_Buffer_Type_F32;
  case THUNDER_DTYPE_FLOAT64:
    return PJRT_Buffer_Type_F64;
  default:
    return PJRT_Buffer_Type_INVALID;
  }
}

/// A thunder dtype name for a PJRT element type, for messages.
std::string typeName(PJRT_Buffer_Type type) {
  for (int32_t dtype = 0; dtype <= THUNDER_DTYPE_FLOAT64; ++dtype)
    if (pjrtType(dtype) == type)
      return thunder_dtype_name(dtype);
  return "PJRT element type " + std::to_string(static_cast<int>(type));
}

/// Some host memory for tensors without elements, whose data may be NULL.
const char kNoElements[8] = {};

/// Copies a host tensor to a new buffer on `device`. Returns once PJRT no longer reads the
/// host memory (and, if `waitReady`, once the buffer is on the device); on failure returns
/// the error with `buffer` null.
PJRT_Error *upload(const PJRT_Api *api, PJRT_Client *client, PJRT_Device *device,
                   const void *data, int32_t dtype, const int64_t *shape, int32_t rank,
                   bool waitReady, PJRT_Buffer *&buffer) {
  PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args, args);
  args->client = client;
  args->data = data ? data : kNoElements;
  args->type = pjrtType(dtype);
  args->dims = shape;
  args->num_dims = static_cast<size_t>(rank);
  args->host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  args->device = device;
  buffer = nullptr;
  if (PJRT_Error *error = api->PJRT_Client_BufferFromHostBuffer(args.get()))
    return error;
  PJRT_Error *error = awaitEvent(api, args->done_with_host_buffer);
  if (!error && waitReady) {
    PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args, ready);
    ready->buffer = args->buffer;
    error = api->PJRT_Buffer_ReadyEvent(ready.get());
    if (!error)
      error = awaitEvent(api, ready->event);
  }
  if (error) {
    destroyBuffer(api, args->buffer);
    return error;
  }
  buffer = args->buffer;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Plugins and clients
//===----------------------------------------------------------------------===//

/// A loaded and initialized plugin and its client, shared by every model that uses it. Plugins
/// stay loaded for the life of the process (XLA's plugins keep threads and static state that
/// do not survive dlclose, and PJRT_Plugin_Initialize is once per process). The client is
/// created for the first model and destroyed with the last: libtpu allows one client (it opens
/// the TPU chips) per process, and a PJRT client is thread-safe.
struct Plugin {
  std::string path;
  const PJRT_Api *api = nullptr;
  PJRT_Client *client = nullptr;
  int users = 0; ///< executors holding the client
};

/// Every plugin loaded, by the path or name given to dlopen, and the mutex that guards them.
/// Never destroyed: a model freed late in the process's exit (by a Python finalizer, say) still
/// finds them.
std::mutex &pluginsMutex = *new std::mutex;
std::map<std::string, Plugin> &plugins = *new std::map<std::string, Plugin>;

/// A plugin to load: what to pass to dlopen, and why it was chosen (for messages).
struct PluginChoice {
  std::string path;
  std::string origin;
  bool named = false; ///< the user named it (THUNDER_PJRT_PLUGIN)
};

std::string readLine(const std::string &file) {
  char buffer[64] = "";
  FILE *in = std::fopen(file.c_str(), "r");
  if (!in)
    return "";
  bool ok = std::fgets(buffer, sizeof(buffer), in) != nullptr;
  std::fclose(in);
  std::string line = ok ? buffer : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == ' '))
    line.pop_back();
  return line;
}

/// TPU chips on the PCI bus: Google's vendor id with a TPU device id (the ids JAX's
/// hardware_utils knows, v3 to TPU7x). Google's vendor id alone also covers other devices (the
/// gVNIC network card of every Compute Engine VM).
int countTpuChips() {
  static const char *const kTpuDevices[] = {"0x0027", "0x0056", "0x005e", "0x0062",
                                            "0x0063", "0x006f", "0x0076"};
  glob_t found;
  int chips = 0;
  if (glob("/sys/bus/pci/devices/*/vendor", 0, nullptr, &found) != 0)
    return 0;
  for (size_t i = 0; i < found.gl_pathc; ++i) {
    std::string vendor = found.gl_pathv[i];
    if (readLine(vendor) != "0x1ae0")
      continue;
    std::string device = readLine(vendor.substr(0, vendor.size() - 6) + "device");
    for (const char *tpu : kTpuDevices)
      chips += device == tpu;
  }
  globfree(&found);
  return chips;
}

bool isFile(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

/// Where pip puts libtpu (package `libtpu`: site-packages/libtpu/libtpu.so) under the usual
/// prefixes: the active virtual or conda environment, the user's, the system's.
std::string findLibtpu(std::string &searched) {
  std::vector<std::string> prefixes;
  for (const char *variable : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *value = getenv(variable); value && *value)
      prefixes.push_back(value);
  if (const char *home = getenv("HOME"); home && *home)
    prefixes.push_back(std::string(home) + "/.local");
  prefixes.push_back("/usr/local");
  prefixes.push_back("/usr");
  for (const std::string &prefix : prefixes)
    for (const char *packages : {"site-packages", "dist-packages"}) {
      std::string pattern = prefix + "/lib/python3*/" + packages + "/libtpu/libtpu.so";
      searched += (searched.empty() ? "" : ", ") + pattern;
      glob_t found;
      if (glob(pattern.c_str(), 0, nullptr, &found) == 0 && found.gl_pathc > 0) {
        std::string path = found.gl_pathv[0];
        globfree(&found);
        return path;
      }
      globfree(&found);
    }
  return "";
}

/// The plugin for this process: THUNDER_PJRT_PLUGIN, else libtpu (TPU_LIBRARY_PATH, pip's
/// location, then dlopen's search) but only where a TPU chip is present, so that a machine
/// without one never starts libtpu (which would look for a cloud metadata server).
thunder_status choosePlugin(const std::string &model, PluginChoice &choice) {
  if (const char *named = getenv("THUNDER_PJRT_PLUGIN"); named && *named) {
    choice = {named, "named by THUNDER_PJRT_PLUGIN", true};
    return THUNDER_OK;
  }
  if (countTpuChips() == 0)
    return fail(THUNDER_ERROR_DEVICE,
                model + " runs through a PJRT plugin, but THUNDER_PJRT_PLUGIN is not set and "
                        "this machine has no TPU (no TPU device under /sys/bus/pci/devices), "
                        "so libtpu was not loaded. Set THUNDER_PJRT_PLUGIN to a PJRT plugin, "
                        "e.g. XLA's CPU plugin xla_cpu_pjrt.so (pip install xla-cpu-pjrt)");
  if (const char *path = getenv("TPU_LIBRARY_PATH"); path && *path) {
    choice = {path, "libtpu, named by TPU_LIBRARY_PATH", false};
    return THUNDER_OK;
  }
  std::string searched;
  if (std::string path = findLibtpu(searched); !path.empty()) {
    choice = {path, "libtpu, found in the libtpu package", false};
    return THUNDER_OK;
  }
  choice = {"libtpu.so", "libtpu, searched by the dynamic loader after " + searched, false};
  return THUNDER_OK;
}

bool looksLikeLibtpu(const std::string &path) {
  size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, 6, "libtpu") == 0;
}

/// Loads, checks and initializes the plugin (once per process); the caller holds pluginsMutex.
thunder_status loadPlugin(const PluginChoice &choice, const std::string &model,
                          Plugin *&result) {
  if (auto it = plugins.find(choice.path); it != plugins.end()) {
    result = &it->second;
    return THUNDER_OK;
  }
  std::string name = "the PJRT plugin " + choice.path + " (" + choice.origin + ")";
  std::string prefix = "cannot run " + model + ": ";
  if (choice.path.find('/') != std::string::npos && !isFile(choice.path))
    return fail(THUNDER_ERROR_DEVICE, prefix + name + " does not exist");
  // libtpu named by the user on a machine without a TPU: keep it off the network, as JAX
  // does (jax/_src/cloud_tpu_init.py); the user's own setting wins.
  if (choice.named && looksLikeLibtpu(choice.path) && countTpuChips() == 0)
    setenv("TPU_SKIP_MDS_QUERY", "1", /*overwrite=*/0);

  dlerror();
  void *handle = dlopen(choice.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return fail(THUNDER_ERROR_DEVICE,
                prefix + "cannot load " + name + ": " + (why ? why : "dlopen failed"));
  }
  auto unload = [&](thunder_status status, const std::string &message) {
    dlclose(handle);
    return fail(status, prefix + message);
  };
  using GetPjrtApiFn = const PJRT_Api *(*)();
  auto getApi = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (!getApi)
    return unload(THUNDER_ERROR_DEVICE,
                  name + " exports no GetPjrtApi: it is not a PJRT plugin");
  const PJRT_Api *api = getApi();
  if (!api)
    return unload(THUNDER_ERROR_DEVICE, "GetPjrtApi of " + name + " returned NULL");
  if (api->struct_size < offsetof(PJRT_Api, pjrt_api_version) + sizeof(PJRT_Api_Version))
    return unload(THUNDER_ERROR_VERSION,
                  name + " has a PJRT_Api table of " + std::to_string(api->struct_size) +
                      " bytes, too small to hold its version");
  int major = api->pjrt_api_version.major_version, minor = api->pjrt_api_version.minor_version;
  std::string version = std::to_string(major) + "." + std::to_string(minor);
  std::string ours = std::to_string(PJRT_API_MAJOR) + "." + std::to_string(PJRT_API_MINOR);
  std::string oldest = std::to_string(PJRT_API_MAJOR) + "." + std::to_string(kMinMinorVersion);
  if (major != PJRT_API_MAJOR)
    return unload(THUNDER_ERROR_VERSION,
                  name + " implements PJRT C API version " + version +
                      ", but this runtime was built against version " + ours +
                      " (the major versions must match)");
  if (minor < kMinMinorVersion)
    return unload(THUNDER_ERROR_VERSION,
                  name + " implements PJRT C API version " + version +
                      ", which is too old: this runtime (built against version " + ours +
                      ") needs version " + oldest + " or newer; use a newer plugin");
  std::string missing;
#define THUNDER_PJRT_CHECK(function)                                                           \
  if (!THUNDER_PJRT_PROVIDES((*api), function))                                                \
    missing += std::string(missing.empty() ? "" : ", ") + #function;
  THUNDER_PJRT_REQUIRED(THUNDER_PJRT_CHECK)
#undef THUNDER_PJRT_CHECK
  if (!missing.empty())
    return unload(THUNDER_ERROR_VERSION, name + " (PJRT C API version " + version +
                                             ") does not provide " + missing);

  PJRT_ARGS(PJRT_Plugin_Initialize_Args, init);
  if (PJRT_Error *error = api->PJRT_Plugin_Initialize(init.get()))
    return unload(THUNDER_ERROR_DEVICE,
                  "initializing " + name + " failed: " + takeMessage(api, error));
  Plugin &plugin = plugins[choice.path];
  plugin.path = choice.path;
  plugin.api = api;
  result = &plugin;
  return THUNDER_OK;
}

/// The plugin with its client, one more user counted; the caller calls releaseClient.
thunder_status acquireClient(const std::string &model, Plugin *&result) {
  PluginChoice choice;
  if (thunder_status s = choosePlugin(model, choice))
    return s;
  std::lock_guard<std::mutex> lock(pluginsMutex);
  Plugin *plugin = nullptr;
  if (thunder_status s = loadPlugin(choice, model, plugin))
    return s;
  if (!plugin->client) {
    PJRT_ARGS(PJRT_Client_Create_Args, create);
    if (PJRT_Error *error = plugin->api->PJRT_Client_Create(create.get()))
      return fail(THUNDER_ERROR_DEVICE, "cannot run " + model + ": creating a client of " +
                                            "the PJRT plugin " + plugin->path +
                                            " failed: " + takeMessage(plugin->api, error));
    plugin->client = create->client;
  }
  ++plugin->users;
  result = plugin;
  return THUNDER_OK;
}

void releaseClient(Plugin *plugin) {
  std::lock_guard<std::mutex> lock(pluginsMutex);
  if (--plugin->users > 0)
    return;
  PJRT_ARGS(PJRT_Client_Destroy_Args, destroy);
  destroy->client = plugin->client;
  ignore(plugin->api, plugin->api->PJRT_Client_Destroy(destroy.get()));
  plugin->client = nullptr;
}

} // namespace

//===----------------------------------------------------------------------===//
// The executor
//===----------------------------------------------------------------------===//

namespace thunder::runtime {

/// A compiled program with its weights on the device. Immutable after creation: runs share it.
class PjrtExecutor {
public:
  explicit PjrtExecutor(Plugin *plugin) : plugin(plugin), api(plugin->api) {}
  ~PjrtExecutor() {
    for (PJRT_Buffer *weight : weights)
      destroyBuffer(api, weight);
    if (executable) {
      PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args, destroy);
      destroy->executable = executable;
      ignore(api, api->PJRT_LoadedExecutable_Destroy(destroy.get()));
    }
    releaseClient(plugin);
  }
  PjrtExecutor(const PjrtExecutor &) = delete;
  PjrtExecutor &operator=(const PjrtExecutor &) = delete;

  Plugin *const plugin;
  const PJRT_Api *const api;
  PJRT_LoadedExecutable *executable = nullptr;
  PJRT_Device *device = nullptr; ///< where the executable runs, and its arguments live
  std::vector<PJRT_Buffer *> weights;
  /// The weights' argument indices: XLA must never donate (overwrite) them.
  std::vector<int64_t> weightIndices;
  /// Per output, the row-major layout (minor-to-major dims) its host copy is written in.
  std::vector<std::vector<int64_t>> hostLayouts;
};

} // namespace thunder::runtime

namespace {

/// The model's name for messages: "model 'mlp' (out/libmlp.so)".
std::string modelName(const thunder_model &model) {
  return std::string("model '") + model.table->name + "' (" + model.path + ")";
}

/// Compares the compiled program's results with the model's output descriptors; "" when they
/// agree. Element types and dims are compared where the plugin reports them.
std::string checkOutputs(const PJRT_Api *api, PJRT_LoadedExecutable *loaded,
                         const thunder_model_v1 &table) {
  PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args, get);
  get->loaded_executable = loaded;
  if (PJRT_Error *error = api->PJRT_LoadedExecutable_GetExecutable(get.get()))
    return "getting the compiled program failed: " + takeMessage(api, error);
  PJRT_Executable *executable = get->executable;
  std::string problem;
  PJRT_ARGS(PJRT_Executable_NumOutputs_Args, count);
  count->executable = executable;
  if (PJRT_Error *error = api->PJRT_Executable_NumOutputs(count.get()))
    problem = "counting the program's results failed: " + takeMessage(api, error);
  else if (count->num_outputs != static_cast<size_t>(table.num_outputs))
    problem = "the program returns " + std::to_string(count->num_outputs) +
              " results, but the model's table declares " + std::to_string(table.num_outputs) +
              " outputs";

  if (problem.empty() && THUNDER_PJRT_PROVIDES((*api), PJRT_Executable_OutputElementTypes)) {
    PJRT_ARGS(PJRT_Executable_OutputElementTypes_Args, types);
    types->executable = executable;
    if (PJRT_Error *error = api->PJRT_Executable_OutputElementTypes(types.get()))
      ignore(api, error); // not every plugin implements it: the runs' copies still check sizes
    else if (types->num_output_types == count->num_outputs)
      for (int32_t o = 0; o < table.num_outputs && problem.empty(); ++o)
        if (types->output_types[o] != pjrtType(table.outputs[o].dtype))
          problem = "the program's result " + std::to_string(o) + " is " +
                    typeName(types->output_types[o]) + ", but " +
                    describe("output", o, table.outputs[o]) + " is " +
                    thunder_dtype_name(table.outputs[o].dtype);
  }
  if (problem.empty() && THUNDER_PJRT_PROVIDES((*api), PJRT_Executable_OutputDimensions)) {
    PJRT_ARGS(PJRT_Executable_OutputDimensions_Args, dims);
    dims->executable = executable;
    if (PJRT_Error *error = api->PJRT_Executable_OutputDimensions(dims.get())) {
      ignore(api, error);
    } else if (dims->num_outputs == count->num_outputs && dims->dims && dims->dim_sizes) {
      const int64_t *next = dims->dims;
      for (int32_t o = 0; o < table.num_outputs && problem.empty(); ++o) {
        const thunder_tensor_desc &desc = table.outputs[o];
        size_t rank = dims->dim_sizes[o];
        bool same = rank == static_cast<size_t>(desc.rank) &&
                    std::equal(next, next + rank, desc.shape);
        if (!same)
          problem = "the program's result " + std::to_string(o) + " has shape " +
                    formatShape(next, static_cast<int32_t>(rank)) + ", but " +
                    describe("output", o, desc) + " has shape " + formatShape(desc);
        next += rank;
      }
    }
  }
  PJRT_ARGS(PJRT_Executable_Destroy_Args, destroy);
  destroy->executable = executable;
  ignore(api, api->PJRT_Executable_Destroy(destroy.get()));
  return problem;
}

} // namespace

PjrtExecutor *thunder::runtime::createPjrtExecutor(const thunder_model &model,
                                                   const thunder_program_v1 &program,
                                                   const HostWeight *weights,
                                                   thunder_status &status) {
  const thunder_model_v1 &table = *model.table;
  std::string name = modelName(model);
  Plugin *plugin = nullptr;
  if ((status = acquireClient(name, plugin)))
    return nullptr;
  // From here the executor owns the client's share and everything made, freed on failure.
  auto executor = std::make_unique<PjrtExecutor>(plugin);
  const PJRT_Api *api = plugin->api;
  std::string prefix = name + " with the PJRT plugin " + plugin->path + ": ";
  auto failed = [&](thunder_status s, const std::string &message) {
    status = fail(s, prefix + message);
    return nullptr;
  };

  // "mlir": the text of an MLIR module (or its bytecode); StableHLO in generic form is what
  // XLA's own exporters hand it.
  PJRT_ARGS(PJRT_Program, code);
  code->code = const_cast<char *>(program.code); // PJRT's field is not const; it is only read
  code->code_size = static_cast<size_t>(program.code_size);
  code->format = "mlir";
  code->format_size = 4;
  PJRT_ARGS(PJRT_Client_Compile_Args, compile);
  compile->client = plugin->client;
  compile->program = code.get();
  compile->compile_options = kCompileOptions;
  compile->compile_options_size = sizeof(kCompileOptions);
  if (PJRT_Error *error = api->PJRT_Client_Compile(compile.get()))
    return failed(THUNDER_ERROR_LOAD,
                  "compiling the program failed: " + takeMessage(api, error));
  executor->executable = compile->executable;
  if (std::string problem = checkOutputs(api, executor->executable, table); !problem.empty())
    return failed(THUNDER_ERROR_LOAD, "the compiled program does not match the model: " + problem);

  // The device the compiler assigned (one replica, one partition: the client's first
  // addressable device); arguments must live there.
  PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, devices);
  devices->executable = executor->executable;
  if (PJRT_Error *error = api->PJRT_LoadedExecutable_AddressableDevices(devices.get()))
    return failed(THUNDER_ERROR_DEVICE,
                  "getting the program's device failed: " + takeMessage(api, error));
  if (devices->num_addressable_devices == 0)
    return failed(THUNDER_ERROR_DEVICE, "the compiled program has no device to run on");
  executor->device = devices->addressable_devices[0];

  for (int32_t w = 0; w < program.num_weights; ++w) {
    const thunder_program_weight_v1 &desc = *weights[w].desc;
    PJRT_Buffer *buffer = nullptr;
    if (PJRT_Error *error =
            upload(api, plugin->client, executor->device, weights[w].data, desc.dtype,
                   desc.shape, desc.rank, /*waitReady=*/true, buffer))
      return failed(THUNDER_ERROR_DEVICE, "uploading weight " + std::to_string(w) + " ('" +
                                              desc.name + "') failed: " +
                                              takeMessage(api, error));
    executor->weights.push_back(buffer);
    executor->weightIndices.push_back(w);
  }
  for (int32_t o = 0; o < table.num_outputs; ++o) {
    std::vector<int64_t> minorToMajor(static_cast<size_t>(table.outputs[o].rank));
    for (size_t d = 0; d < minorToMajor.size(); ++d)
      minorToMajor[d] = static_cast<int64_t>(minorToMajor.size() - 1 - d);
    executor->hostLayouts.push_back(std::move(minorToMajor));
  }
  return executor.release();
}

void thunder::runtime::destroyPjrtExecutor(PjrtExecutor *executor) { delete executor; }

void thunder::runtime::describePjrt(const PjrtExecutor &executor, std::string &description,
                                    std::string &arch) {
  const PJRT_Api *api = executor.api;
  const PJRT_Api &table = *api;
  std::string platform, kind;
  if (THUNDER_PJRT_PROVIDES(table, PJRT_Client_PlatformName)) {
    PJRT_ARGS(PJRT_Client_PlatformName_Args, name);
    name->client = executor.plugin->client;
    if (PJRT_Error *error = api->PJRT_Client_PlatformName(name.get()))
      ignore(api, error);
    else if (name->platform_name)
      platform.assign(name->platform_name, name->platform_name_size);
  }
  if (executor.device && THUNDER_PJRT_PROVIDES(table, PJRT_Device_GetDescription) &&
      THUNDER_PJRT_PROVIDES(table, PJRT_DeviceDescription_Kind)) {
    PJRT_ARGS(PJRT_Device_GetDescription_Args, get);
    get->device = executor.device;
    if (PJRT_Error *error = api->PJRT_Device_GetDescription(get.get())) {
      ignore(api, error);
    } else if (get->device_description) {
      PJRT_ARGS(PJRT_DeviceDescription_Kind_Args, of);
      of->device_description = get->device_description;
      if (PJRT_Error *error = api->PJRT_DeviceDescription_Kind(of.get()))
        ignore(api, error);
      else if (of->device_kind)
        kind.assign(of->device_kind, of->device_kind_size);
    }
  }
  if (platform.empty() && kind.empty())
    return;
  std::string plugin = executor.plugin->path.substr(executor.plugin->path.rfind('/') + 1);
  description = "PJRT " + (platform.empty() ? std::string("plugin") : platform) + " device" +
                (kind.empty() ? std::string() : ": " + kind) + " (" + plugin + ")";
  if (!kind.empty())
    arch = kind;
}

thunder_status thunder::runtime::runPjrt(const thunder_model &model,
                                         const thunder_tensor *inputs,
                                         const thunder_tensor *outputs) {
  const PjrtExecutor &executor = *model.pjrt;
  const thunder_model_v1 &table = *model.table;
  const PJRT_Api *api = executor.api;
  auto failed = [&](const std::string &step, PJRT_Error *error) {
    return fail(THUNDER_ERROR_RUN, "model '" + std::string(table.name) + "' failed to run: " +
                                       step + " failed: " + takeMessage(api, error));
  };

  Buffers in(api, static_cast<size_t>(table.num_inputs));
  for (int32_t i = 0; i < table.num_inputs; ++i)
    if (PJRT_Error *error =
            upload(api, executor.plugin->client, executor.device, inputs[i].data,
                   inputs[i].dtype, inputs[i].shape, inputs[i].rank, /*waitReady=*/false,
                   in.list[i]))
      return failed("uploading input " + std::to_string(i) + " ('" + table.inputs[i].name + "')",
                    error);
  std::vector<PJRT_Buffer *> arguments(executor.weights);
  arguments.insert(arguments.end(), in.list.begin(), in.list.end());

  PJRT_ARGS(PJRT_ExecuteOptions, options);
  options->non_donatable_input_indices = executor.weightIndices.data();
  options->num_non_donatable_input_indices = executor.weightIndices.size();
  Buffers out(api, static_cast<size_t>(table.num_outputs));
  PJRT_Buffer *const *argumentList = arguments.data();
  PJRT_Buffer **outputList = out.list.data();
  PJRT_Event *done = nullptr;
  PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args, execute);
  execute->executable = executor.executable;
  execute->options = options.get();
  execute->argument_lists = &argumentList;
  execute->num_devices = 1;
  execute->num_args = arguments.size();
  execute->output_lists = &outputList;
  execute->device_complete_events = &done;
  if (PJRT_Error *error = api->PJRT_LoadedExecutable_Execute(execute.get()))
    return failed("executing the program", error);
  if (PJRT_Error *error = awaitEvent(api, done))
    return failed("executing the program", error);

  // Start every copy, then wait for all: one wait for the whole transfer. Each event is
  // awaited (and so destroyed) even after a failure.
  std::vector<PJRT_Event *> copies(static_cast<size_t>(table.num_outputs), nullptr);
  std::vector<Args<PJRT_Buffer_MemoryLayout>> layouts;
  layouts.reserve(copies.size()); // no reallocation: the copies point into it
  PJRT_Error *firstError = nullptr;
  int32_t failedOutput = -1;
  for (int32_t o = 0; o < table.num_outputs && !firstError; ++o) {
    uint64_t bytes = thunder_dtype_size(outputs[o].dtype);
    for (int32_t d = 0; d < outputs[o].rank; ++d)
      bytes *= static_cast<uint64_t>(outputs[o].shape[d]);
    if (bytes == 0)
      continue; // nothing to copy (and a NULL dst would ask PJRT for the size instead)
    // The tiled layout sits in a union inside the layout struct: no padding of its own.
    Args<PJRT_Buffer_MemoryLayout> &layout =
        layouts.emplace_back(PJRT_Buffer_MemoryLayout_STRUCT_SIZE);
    layout->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
    layout->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
    layout->tiled.minor_to_major = executor.hostLayouts[o].data();
    layout->tiled.minor_to_major_size = executor.hostLayouts[o].size();
    PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, copy);
    copy->src = out.list[o];
    copy->host_layout = layout.get();
    copy->dst = outputs[o].data;
    copy->dst_size = static_cast<size_t>(bytes);
    if ((firstError = api->PJRT_Buffer_ToHostBuffer(copy.get())))
      failedOutput = o;
    copies[o] = copy->event;
  }
  for (int32_t o = 0; o < table.num_outputs; ++o)
    if (PJRT_Error *error = awaitEvent(api, copies[o])) {
      if (firstError) {
        ignore(api, error);
      } else {
        firstError = error;
        failedOutput = o;
      }
    }
  if (firstError)
    return failed("copying output " + std::to_string(failedOutput) + " ('" +
                      table.outputs[failedOutput].name + "') to the host",
                  firstError);
  return THUNDER_OK;
}
