// A header-only C++ wrapper over the runtime's C API (thunder-c/runtime.h), for applications.
//
//   #include "thunder/Runtime/Model.h"
//
//   thunder::Model model("out/libmodel.so");            // throws thunder::Error
//   std::vector<float> x(2 * 4);
//   std::vector<thunder::TensorView> inputs = {thunder::TensorView(x.data(), {2, 4})};
//   auto shapes = model.outputShapes(inputs);           // [[2, 4]]
//   std::vector<float> y(2 * 4);
//   model.run(inputs, {thunder::TensorView(y.data(), shapes[0])});
//
// Unlike the C API, this header reports errors by throwing thunder::Error (which carries the
// thunder_status and the runtime's message), so it needs exceptions; it is meant for
// applications, not for code built with -fno-exceptions. It depends only on the C API: link
// Thunder::runtime.
//
// Threading: a Model may be run from many threads at once (each run allocates its own
// workspace); a Context reuses one workspace and must be used by one thread at a time.
#ifndef THUNDER_RUNTIME_MODEL_H
#define THUNDER_RUNTIME_MODEL_H

#include "thunder-c/runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace thunder {

/// A failed runtime call: the status and the runtime's message.
class Error : public std::runtime_error {
public:
  Error(thunder_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  thunder_status status() const { return status_; }

private:
  thunder_status status_;
};

namespace detail {
inline void check(thunder_status status) {
  if (status != THUNDER_OK)
    throw Error(status, thunder_last_error());
}

/// The thunder_dtype of a C++ element type.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> {
  static constexpr thunder_dtype value = THUNDER_DTYPE_BOOL;
};
template <> struct DTypeOf<int8_t> {
  static constexpr thunder_dtype value = THUNDER_DTYPE_INT8;
};
template <> struct DTypeOf<int32_t> {
  static constexpr thunder_dtype value = THUNDER_DTYPE_INT32;
};
template <> struct DTypeOf<int64_t> {
  static constexpr thunder_dtype value = THUNDER_DTYPE_INT64;
};
template <> struct DTypeOf<float> {
  static constexpr thunder_dtype value = THUNDER_DTYPE_FLOAT32;
};
template <> struct DTypeOf<double> {
  static constexpr thunder_dtype value = THUNDER_DTYPE_FLOAT64;
};
} // namespace detail

/// A non-owning view of a dense, row-major tensor on the model's device: data pointer, dtype,
/// shape. The shape is held by value; the data must outlive the calls that use the view.
struct TensorView {
  void *data = nullptr;
  thunder_dtype dtype = THUNDER_DTYPE_FLOAT32;
  std::vector<int64_t> shape;

  TensorView() = default;
  TensorView(void *data, thunder_dtype dtype, std::vector<int64_t> shape)
      : data(data), dtype(dtype), shape(std::move(shape)) {}
  /// A view of typed data: the dtype follows from T (bool, int8_t, int32_t, int64_t, float,
  /// double). For float16, bfloat16 and float8 use the untyped constructor.
  template <typename T, typename = decltype(detail::DTypeOf<std::remove_const_t<T>>::value)>
  TensorView(T *data, std::vector<int64_t> shape)
      : data(const_cast<std::remove_const_t<T> *>(data)),
        dtype(detail::DTypeOf<std::remove_const_t<T>>::value), shape(std::move(shape)) {}

  int64_t numElements() const {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    return count;
  }
  size_t numBytes() const {
    return static_cast<size_t>(numElements()) * thunder_dtype_size(dtype);
  }
  /// The C view; valid while this TensorView is alive and unchanged.
  thunder_tensor raw() const {
    return {data, dtype, static_cast<int32_t>(shape.size()), shape.data()};
  }
};

/// An input or output of a model as it was compiled.
struct TensorDesc {
  std::string name;
  thunder_dtype dtype;
  /// -1 for a dynamic dim.
  std::vector<int64_t> shape;
  /// Bounds of each dim (equal to shape[i] for a static dim; dimMax -1: unbounded).
  std::vector<int64_t> dimMin, dimMax;
  /// The symbol of each dynamic dim ("" for static dims); dims with one symbol are equal.
  std::vector<std::string> dimSymbols;

  int32_t rank() const { return static_cast<int32_t>(shape.size()); }
  bool isDynamic(int32_t dim) const { return shape[dim] < 0; }

  explicit TensorDesc(const thunder_tensor_desc &desc)
      : name(desc.name), dtype(static_cast<thunder_dtype>(desc.dtype)) {
    for (int32_t d = 0; d < desc.rank; ++d) {
      shape.push_back(desc.shape[d]);
      dimMin.push_back(desc.dim_min[d]);
      dimMax.push_back(desc.dim_max[d]);
      dimSymbols.emplace_back(desc.dim_symbols[d] ? desc.dim_symbols[d] : "");
    }
  }
};

namespace detail {
inline std::vector<thunder_tensor> raw(const std::vector<TensorView> &views) {
  std::vector<thunder_tensor> tensors;
  tensors.reserve(views.size());
  for (const TensorView &view : views)
    tensors.push_back(view.raw());
  return tensors;
}
} // namespace detail

/// A loaded model (owns a thunder_model). Movable, not copyable.
class Model {
public:
  /// Loads libNAME.so; throws Error (THUNDER_ERROR_LOAD, _VERSION, _DEVICE...) on failure.
  explicit Model(const std::string &path) {
    detail::check(thunder_model_load(path.c_str(), &model_));
  }
  Model(Model &&other) noexcept : model_(std::exchange(other.model_, nullptr)) {}
  Model &operator=(Model &&other) noexcept {
    if (this != &other) {
      thunder_model_free(model_);
      model_ = std::exchange(other.model_, nullptr);
    }
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { thunder_model_free(model_); }

  /// "" for a moved-from Model.
  std::string name() const { return orEmpty(thunder_model_name(model_)); }
  std::string target() const { return orEmpty(thunder_model_target(model_)); }
  thunder_device device() const { return static_cast<thunder_device>(thunder_model_device(model_)); }
  int32_t numInputs() const { return thunder_model_num_inputs(model_); }
  int32_t numOutputs() const { return thunder_model_num_outputs(model_); }

  /// Descriptor of input/output i; throws std::out_of_range if there is none.
  TensorDesc input(int32_t i) const { return TensorDesc(*desc(thunder_model_input(model_, i), i)); }
  TensorDesc output(int32_t i) const {
    return TensorDesc(*desc(thunder_model_output(model_, i), i));
  }
  std::vector<TensorDesc> inputs() const {
    std::vector<TensorDesc> descs;
    for (int32_t i = 0; i < numInputs(); ++i)
      descs.push_back(input(i));
    return descs;
  }
  std::vector<TensorDesc> outputs() const {
    std::vector<TensorDesc> descs;
    for (int32_t i = 0; i < numOutputs(); ++i)
      descs.push_back(output(i));
    return descs;
  }

  /// The outputs' shapes for these inputs (only dtypes and shapes are read). Throws Error if
  /// the inputs do not fit the model.
  std::vector<std::vector<int64_t>> outputShapes(const std::vector<TensorView> &inputs) const {
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int64_t *> pointers;
    for (int32_t o = 0; o < numOutputs(); ++o)
      shapes.emplace_back(static_cast<size_t>(thunder_model_output(model_, o)->rank));
    for (std::vector<int64_t> &shape : shapes)
      pointers.push_back(shape.data());
    std::vector<thunder_tensor> raw = detail::raw(inputs);
    detail::check(thunder_model_output_shapes(model_, raw.data(),
                                              static_cast<int32_t>(raw.size()), pointers.data()));
    return shapes;
  }

  /// Runs with a workspace of its own (a CPU model's kept one when no other run holds it,
  /// thunder_model_run); safe from many threads at once. `stream` is the CUDA/HIP stream
  /// (nullptr: default stream). Throws Error.
  void run(const std::vector<TensorView> &inputs, const std::vector<TensorView> &outputs,
           void *stream = nullptr) const {
    std::vector<thunder_tensor> in = detail::raw(inputs), out = detail::raw(outputs);
    detail::check(thunder_model_run(model_, in.data(), static_cast<int32_t>(in.size()),
                                    out.data(), static_cast<int32_t>(out.size()), stream));
  }

  /// The C handle, for calls this wrapper does not cover.
  /// Whether the program draws random numbers (torch.rand, randn, randint, randperm).
  bool usesRandom() const { return thunder_model_uses_random(model_) != 0; }
  /// Seeds its random numbers: the k-th run after this call draws from (seed, k).
  void setSeed(uint64_t seed) { detail::check(thunder_model_set_seed(model_, seed)); }

  thunder_model *get() const { return model_; }

private:
  static std::string orEmpty(const char *text) { return text ? text : ""; }
  static const thunder_tensor_desc *desc(const thunder_tensor_desc *desc, int32_t i) {
    if (!desc)
      throw std::out_of_range("thunder::Model: no input/output " + std::to_string(i));
    return desc;
  }

  thunder_model *model_ = nullptr;
};

/// Reusable run state for one model: one workspace kept between runs. Use a Context from one
/// thread at a time, and destroy it before its Model.
class Context {
public:
  explicit Context(const Model &model) {
    detail::check(thunder_context_create(model.get(), &context_));
  }
  Context(Context &&other) noexcept : context_(std::exchange(other.context_, nullptr)) {}
  Context &operator=(Context &&other) noexcept {
    if (this != &other) {
      thunder_context_free(context_);
      context_ = std::exchange(other.context_, nullptr);
    }
    return *this;
  }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  ~Context() { thunder_context_free(context_); }

  /// As Model::run, through this context's workspace. Throws Error.
  void run(const std::vector<TensorView> &inputs, const std::vector<TensorView> &outputs,
           void *stream = nullptr) {
    std::vector<thunder_tensor> in = detail::raw(inputs), out = detail::raw(outputs);
    detail::check(thunder_context_run(context_, in.data(), static_cast<int32_t>(in.size()),
                                      out.data(), static_cast<int32_t>(out.size()), stream));
  }

  thunder_context *get() const { return context_; }

private:
  thunder_context *context_ = nullptr;
};

} // namespace thunder

#endif // THUNDER_RUNTIME_MODEL_H
