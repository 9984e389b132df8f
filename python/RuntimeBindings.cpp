//===- RuntimeBindings.cpp - thunder._C's runtime half ----------------===//
//
// Compiled models loaded and run through the runtime's C API
// (thunder-c/runtime.h) on data pointers of torch tensors.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "thunder/Support/TypePromotion.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;

namespace thunder_python {

PyObject *runtimeErrorType = nullptr;

namespace {

//===----------------------------------------------------------------------===//
// The runtime (thunder-c/runtime.h)
//===----------------------------------------------------------------------===//


/// A copy of one thunder_tensor_desc, for Python.
struct TensorDesc {
  std::string name;
  std::string dtype;              ///< PyTorch's name ("float32")
  std::vector<int64_t> shape;     ///< -1 for a dynamic dim
  std::vector<int64_t> min, max;  ///< bounds per dim (max -1: unbounded)
  std::vector<std::string> symbols; ///< "" for static dims

  explicit TensorDesc(const thunder_tensor_desc &desc)
      : name(desc.name), dtype(thunder_dtype_name(desc.dtype)) {
    for (int32_t d = 0; d < desc.rank; ++d) {
      shape.push_back(desc.shape[d]);
      min.push_back(desc.dim_min[d]);
      max.push_back(desc.dim_max[d]);
      symbols.emplace_back(desc.dim_symbols[d] ? desc.dim_symbols[d] : "");
    }
  }

  /// "x: float32[s0, 4]" (a dynamic dim shows its symbol, or "?").
  std::string toString() const {
    std::string text = name + ": " + dtype + "[";
    for (size_t d = 0; d < shape.size(); ++d) {
      text += d ? ", " : "";
      if (shape[d] >= 0)
        text += std::to_string(shape[d]);
      else
        text += symbols[d].empty() ? "?" : symbols[d];
    }
    return text + "]";
  }
};

} // namespace

int32_t runtimeDtype(const std::string &name) {
  for (int32_t d = 0; d < thunder::kNumDTypes; ++d)
    if (name == thunder_dtype_name(d))
      return d;
  return -1;
}

namespace {

/// (data_ptr, dtype name, shape): one tensor as the package passes it.
using TensorTuple = std::tuple<uintptr_t, std::string, std::vector<int64_t>>;

/// thunder_tensors viewing `tuples` (which own the shapes, so they must
/// outlive the result). `kind` ("input"/"output") and `descs` name a tensor
/// whose dtype name is unknown.
std::vector<thunder_tensor> toTensors(const std::vector<TensorTuple> &tuples,
                                      const char *kind,
                                      const thunder_model *model) {
  std::vector<thunder_tensor> tensors;
  tensors.reserve(tuples.size());
  for (size_t i = 0; i < tuples.size(); ++i) {
    const auto &[address, dtypeName, shape] = tuples[i];
    int32_t dtype = runtimeDtype(dtypeName);
    if (dtype < 0) {
      const thunder_tensor_desc *desc =
          std::string(kind) == "input"
              ? thunder_model_input(model, static_cast<int32_t>(i))
              : thunder_model_output(model, static_cast<int32_t>(i));
      std::string who = std::string(kind) + " " + std::to_string(i);
      if (desc)
        who += " ('" + std::string(desc->name) + "')";
      throw RuntimeFailure(THUNDER_ERROR_INVALID_ARGUMENT,
                           who + ": dtype " + dtypeName +
                               " is not one Thunder supports" +
                               (desc ? std::string(" (expected ") +
                                           thunder_dtype_name(desc->dtype) + ")"
                                     : std::string()));
    }
    tensors.push_back({reinterpret_cast<void *>(address), dtype,
                       static_cast<int32_t>(shape.size()), shape.data()});
  }
  return tensors;
}

/// A compiled model loaded by the runtime (owns a thunder_model). The
/// runtime validates every input; runs release the GIL and may be made from
/// several threads at once.
/// Weights offered to a model at load: FQN -> (data_ptr, dtype name, shape).
using OfferedWeights = std::map<std::string, TensorTuple>;

/// What the weights provider reads: the offered weights, and the names of
/// those it gave the library (which the library then reads in place).
struct Offer {
  const OfferedWeights &weights;
  std::vector<std::string> given;
};

/// The provider thunder_model_load_with_weights calls: an offered weight whose
/// dtype and shape are the library's (then its bytes are too: they were
/// compiled from it), else NULL (the library's copy).
const void *offeredWeight(void *userData, const thunder_program_weight_v1 *weight) {
  auto &offer = *static_cast<Offer *>(userData);
  auto it = offer.weights.find(weight->name);
  if (it == offer.weights.end())
    return nullptr;
  const auto &[address, dtypeName, shape] = it->second;
  if (dtypeName != thunder_dtype_name(weight->dtype) ||
      shape.size() != static_cast<size_t>(weight->rank) ||
      !std::equal(shape.begin(), shape.end(), weight->shape) || address == 0)
    return nullptr;
  offer.given.push_back(weight->name);
  return reinterpret_cast<const void *>(address);
}

class LoadedModel {
public:
  explicit LoadedModel(const std::string &path, const OfferedWeights &weights = {},
                       int32_t partition = -1) {
    thunder_status status;
    {
      py::gil_scoped_release release;
      auto provider = weights.empty() ? nullptr : offeredWeight;
      Offer offer{weights, {}};
      auto *userData = &offer;
      status = partition >= 0
                   ? thunder_model_load_partition(path.c_str(), partition, provider,
                                                  userData, &model)
               : weights.empty()
                   ? thunder_model_load(path.c_str(), &model)
                   : thunder_model_load_with_weights(path.c_str(), provider, userData,
                                                     &model);
      if (status != THUNDER_OK) // read on this thread, before anything else
        error = thunder_last_error();
      else
        givenWeights = std::move(offer.given);
    }
    if (status != THUNDER_OK)
      throw RuntimeFailure(status, error);
    for (int32_t i = 0; i < thunder_model_num_inputs(model); ++i)
      inputs.emplace_back(*thunder_model_input(model, i));
    for (int32_t i = 0; i < thunder_model_num_outputs(model); ++i)
      outputs.emplace_back(*thunder_model_output(model, i));
  }
  LoadedModel(const LoadedModel &) = delete;
  LoadedModel &operator=(const LoadedModel &) = delete;
  ~LoadedModel() {
    for (thunder_context *context : idleContexts)
      thunder_context_free(context);
    thunder_model_free(model);
  }

  std::string name() const { return thunder_model_name(model); }
  std::string target() const { return thunder_model_target(model); }
  std::string path() const { return thunder_model_path(model); }
  std::string device() const {
    return thunder_device_name(thunder_model_device(model));
  }
  std::string deviceDescription() const { return thunder_model_device_description(model); }
  std::string deviceArch() const { return thunder_model_device_arch(model); }
  int32_t providedWeights() const { return thunder_model_num_provided_weights(model); }
  const std::vector<std::string> &providedWeightNames() const { return givenWeights; }
  int32_t numWeights() const { return thunder_model_num_weights(model); }
  bool usesRandom() const { return thunder_model_uses_random(model) != 0; }
  void setSeed(uint64_t seed) { checkRuntime(thunder_model_set_seed(model, seed)); }
  int32_t numPartitions() const { return thunder_model_num_partitions(model); }
  int32_t partition() const { return thunder_model_partition(model); }

  std::vector<std::vector<int64_t>>
  outputShapes(const std::vector<TensorTuple> &in) const {
    std::vector<thunder_tensor> tensors = toTensors(in, "input", model);
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int64_t *> pointers;
    for (const TensorDesc &desc : outputs)
      shapes.emplace_back(desc.shape.size());
    for (std::vector<int64_t> &shape : shapes)
      pointers.push_back(shape.data());
    checkRuntime(thunder_model_output_shapes(
        model, tensors.data(), static_cast<int32_t>(tensors.size()),
        pointers.data()));
    return shapes;
  }

  uint64_t workspaceBytes(const std::vector<TensorTuple> &in) const {
    std::vector<thunder_tensor> tensors = toTensors(in, "input", model);
    uint64_t bytes = 0;
    checkRuntime(thunder_model_workspace_bytes(
        model, tensors.data(), static_cast<int32_t>(tensors.size()), &bytes));
    return bytes;
  }

  void run(const std::vector<TensorTuple> &in,
           const std::vector<TensorTuple> &out, uintptr_t stream) const {
    std::vector<thunder_tensor> inTensors = toTensors(in, "input", model);
    std::vector<thunder_tensor> outTensors = toTensors(out, "output", model);
    runTensors(inTensors.data(), static_cast<int32_t>(inTensors.size()), outTensors.data(),
               static_cast<int32_t>(outTensors.size()), stream);
  }

  /// Runs on prepared tensors (shapes and dtypes set, data filled in by the
  /// caller), the GIL released; throws RuntimeFailure with the runtime's
  /// message. The runtime validates everything in this same call.
  void runTensors(const thunder_tensor *in, int32_t numIn, const thunder_tensor *out,
                  int32_t numOut, uintptr_t stream) const {
    thunder_status status;
    std::string message;
    {
      py::gil_scoped_release release;
      // A context from the pool: its workspace is reused from run to run
      // (allocating and faulting in a fresh one per call costs more than a
      // small model's run); one context per concurrent run.
      thunder_context *context = acquireContext(&status);
      if (context)
        status = thunder_context_run(context, in, numIn, out, numOut,
                                     reinterpret_cast<void *>(stream));
      if (status != THUNDER_OK)
        message = thunder_last_error();
      if (context)
        releaseContext(context);
    }
    if (status != THUNDER_OK)
      throw RuntimeFailure(status, message);
  }

  const thunder_model *handle() const { return model; }

  std::vector<TensorDesc> inputs, outputs;

private:
  thunder_context *acquireContext(thunder_status *status) const {
    {
      std::lock_guard<std::mutex> lock(contextsMutex);
      if (!idleContexts.empty()) {
        thunder_context *context = idleContexts.back();
        idleContexts.pop_back();
        *status = THUNDER_OK;
        return context;
      }
    }
    thunder_context *context = nullptr;
    *status = thunder_context_create(model, &context);
    return *status == THUNDER_OK ? context : nullptr;
  }

  void releaseContext(thunder_context *context) const {
    std::lock_guard<std::mutex> lock(contextsMutex);
    idleContexts.push_back(context);
  }

  thunder_model *model = nullptr;
  std::string error;
  /// The offered weights the library reads in place (their names).
  std::vector<std::string> givenWeights;
  mutable std::mutex contextsMutex;
  mutable std::vector<thunder_context *> idleContexts;
};

/// One input signature of a loaded model (the inputs' dtypes and shapes),
/// prepared once: the output shapes are computed and the tensors' metadata
/// kept, so that a run passes data pointers only (CompiledModule's fast path,
/// docs/performance.md). The runtime still validates every run.
class Signature : public PreparedRun {
public:
  Signature(const LoadedModel &owner, const std::vector<TensorTuple> &in)
      : owner(owner) {
    ins = toTensors(in, "input", owner.handle());
    for (const TensorTuple &tuple : in)
      inShapes.push_back(std::get<2>(tuple));
    for (size_t i = 0; i < ins.size(); ++i)
      ins[i].shape = inShapes[i].data();
    outShapes = owner.outputShapes(in);
    for (size_t o = 0; o < outShapes.size(); ++o) {
      const thunder_tensor_desc *desc =
          thunder_model_output(owner.handle(), static_cast<int32_t>(o));
      outs.push_back({nullptr, desc->dtype, desc->rank, outShapes[o].data()});
    }
  }

  /// Runs on these data pointers (inputs, then outputs, in the model's
  /// order), the GIL released.
  void run(const std::vector<uintptr_t> &inData, const std::vector<uintptr_t> &outData,
           uintptr_t stream) const {
    runPointers(inData.data(), inData.size(), outData.data(), outData.size(), stream);
  }

  void runPointers(const uintptr_t *inData, size_t numIn, const uintptr_t *outData,
                   size_t numOut, uintptr_t stream = 0) const override {
    if (numIn != ins.size() || numOut != outs.size())
      throw RuntimeFailure(THUNDER_ERROR_INVALID_ARGUMENT,
                           "this signature takes " + std::to_string(ins.size()) +
                               " inputs and " + std::to_string(outs.size()) +
                               " outputs, got " + std::to_string(numIn) + " and " +
                               std::to_string(numOut));
    // Copies: one Signature may run on several threads at once.
    thunder_tensor local[16];
    std::vector<thunder_tensor> heap;
    thunder_tensor *tensors = local;
    size_t count = ins.size() + outs.size();
    if (count > 16) {
      heap.resize(count);
      tensors = heap.data();
    }
    for (size_t i = 0; i < ins.size(); ++i) {
      tensors[i] = ins[i];
      tensors[i].data = reinterpret_cast<void *>(inData[i]);
    }
    for (size_t o = 0; o < outs.size(); ++o) {
      tensors[ins.size() + o] = outs[o];
      tensors[ins.size() + o].data = reinterpret_cast<void *>(outData[o]);
    }
    owner.runTensors(tensors, static_cast<int32_t>(ins.size()), tensors + ins.size(),
                     static_cast<int32_t>(outs.size()), stream);
  }

  std::vector<std::vector<int64_t>> outShapes;

private:
  const LoadedModel &owner; ///< kept alive by the Python object (keep_alive)
  std::vector<std::vector<int64_t>> inShapes;
  std::vector<thunder_tensor> ins, outs;
};

} // namespace

const PreparedRun &preparedRun(py::handle signature) {
  return py::cast<const Signature &>(signature);
}

void bindRuntime(py::module_ &m) {
  py::class_<TensorDesc>(m, "TensorDesc",
                         "An input or output of a compiled model")
      .def_readonly("name", &TensorDesc::name)
      .def_readonly("dtype", &TensorDesc::dtype, "PyTorch's dtype name")
      .def_readonly("shape", &TensorDesc::shape, "-1 for a dynamic dim")
      .def_readonly("min", &TensorDesc::min, "lower bound of each dim")
      .def_readonly("max", &TensorDesc::max,
                    "upper bound of each dim (-1: unbounded)")
      .def_readonly("symbols", &TensorDesc::symbols,
                    "the symbol of each dynamic dim ('' when static); dims "
                    "with one symbol are equal")
      .def_property_readonly(
          "rank", [](const TensorDesc &d) { return d.shape.size(); })
      .def("__str__", &TensorDesc::toString)
      .def("__repr__", [](const TensorDesc &d) {
        return "<thunder._C.TensorDesc " + d.toString() + ">";
      });

  py::class_<LoadedModel>(m, "LoadedModel",
                          "A compiled model (libNAME.so) loaded by the "
                          "runtime, which validates every input")
      .def(py::init<const std::string &, const OfferedWeights &, int32_t>(), py::arg("path"),
           py::arg("weights") = OfferedWeights(), py::arg("partition") = -1,
           "Loads libNAME.so (its weights file, if any, beside it); raises "
           "RuntimeError with the runtime's message. weights: {FQN: (data_ptr, "
           "dtype, shape)} the model reads in place of its own copies where name, "
           "dtype and shape agree (zero-copy; the memory must outlive the model and "
           "hold the bytes it was compiled from). partition: which partition of a "
           "library holding several (thunder_model_load_partition); -1: its entry.")
      .def_property_readonly("num_partitions", &LoadedModel::numPartitions,
                             "how many partitions its library holds (1: an ordinary one)")
      .def_property_readonly("partition", &LoadedModel::partition,
                             "which partition of its library it is")
      .def_property_readonly("provided_weights", &LoadedModel::providedWeights,
                             "how many weights it reads from the memory given at load")
      .def_property_readonly("provided_weight_names", &LoadedModel::providedWeightNames,
                             "the names of the weights it reads from the memory given at "
                             "load (those of the offered ones it took)")
      .def_property_readonly("num_weights", &LoadedModel::numWeights,
                             "how many weights its library's weights table has (-1: none)")
      .def_property_readonly("name", &LoadedModel::name)
      .def_property_readonly("target", &LoadedModel::target)
      .def_property_readonly("device", &LoadedModel::device)
      .def_property_readonly("device_description", &LoadedModel::deviceDescription,
                             "what it runs on: the device and its architecture, as "
                             "found at load ('CUDA device 0: NVIDIA H200 (sm_90)')")
      .def_property_readonly("device_arch", &LoadedModel::deviceArch,
                             "the architecture alone: 'sm_90', 'gfx942', or a CPU "
                             "model's -march ('x86-64-v3')")
      .def_property_readonly("path", &LoadedModel::path)
      .def_readonly("inputs", &LoadedModel::inputs)
      .def_readonly("outputs", &LoadedModel::outputs)
      .def("output_shapes", &LoadedModel::outputShapes, py::arg("inputs"),
           "The outputs' shapes for inputs [(data_ptr, dtype, shape)] "
           "(data_ptr may be 0); validates them.")
      .def(
          "prepare",
          [](const LoadedModel &self, const std::vector<TensorTuple> &in) {
            return new Signature(self, in);
          },
          py::arg("inputs"), py::keep_alive<0, 1>(),
          "A Signature for inputs [(data_ptr, dtype, shape)] (data_ptr may be 0): "
          "validates them and computes the output shapes once.")
      .def_property_readonly("uses_random", &LoadedModel::usesRandom,
                             "Whether the program draws random numbers (torch.rand, randn, "
                             "randint, randperm).")
      .def("set_seed", &LoadedModel::setSeed, py::arg("seed"),
           "Seeds the model's random numbers: the k-th run after it draws from (seed, k).")
      .def("workspace_bytes", &LoadedModel::workspaceBytes, py::arg("inputs"),
           "The scratch bytes a run with these inputs allocates.")
      .def("run", &LoadedModel::run, py::arg("inputs"), py::arg("outputs"),
           py::arg("stream") = 0,
           "Runs on dense row-major memory of the model's device: inputs and "
           "outputs are [(data_ptr, dtype name, shape)], outputs allocated "
           "with the shapes output_shapes gives; stream is the CUDA stream "
           "(a cudaStream_t as an integer, 0 for the default stream; ignored "
           "on the CPU). Validates everything first; the GIL is released "
           "while it runs.");
  py::class_<Signature>(m, "Signature",
                        "One input signature of a LoadedModel, prepared once: runs pass "
                        "data pointers only")
      .def_readonly("output_shapes", &Signature::outShapes)
      .def("run", &Signature::run, py::arg("inputs"), py::arg("outputs"),
           py::arg("stream") = 0,
           "Runs on the data pointers of the inputs and of the outputs (allocated "
           "with output_shapes); the runtime validates the run, the GIL is released.");
  m.def("runtime_version", &thunder_runtime_version,
        "The runtime's version (MAJOR.MINOR.PATCH).");

}

} // namespace thunder_python
