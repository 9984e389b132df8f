//===- FastPath.cpp - CompiledModule's per-signature fast path --------===//
//
// A call of a CompiledModule with the same tensor signature as an earlier
// call (same dtypes and shapes, contiguous CPU tensors) skips the pytree
// flattening and matching of the general path (python/thunder/compiled.py):
// FastPath finds its prepared run by a key of the tensors' metadata, checks
// that no weight changed in place, allocates the outputs and runs, all in
// one call from Python. Anything it cannot decide (another signature,
// a Python value, a changed weight) is a miss, and the general path, which
// explains refusals, takes the call.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace thunder_python {

namespace {

/// What the fast path reads of a torch.Tensor, through the type's own
/// descriptors found once: a getset descriptor's getter or a method
/// descriptor called directly costs a fraction of an attribute lookup by
/// name (which walks the type's MRO and dicts every time). Only exact
/// torch.Tensor objects are read this way: a subclass may override any of
/// them, and takes the general path.
class TensorAccess {
public:
  /// The one TensorAccess of the process, made from torch.Tensor on first use.
  static const TensorAccess &of(const py::handle &tensorType) {
    if (!made)
      made = new TensorAccess(tensorType); // lives as long as the process
    if (reinterpret_cast<PyObject *>(made->tensorType) != tensorType.ptr())
      throw py::type_error("thunder._C.FastPath: tensor_type must be torch.Tensor");
    return *made;
  }
  /// The one made by of() (a FastCall runs only in a FastPath, which made it).
  static const TensorAccess &get() {
    if (!made)
      throw py::type_error("thunder._C.FastCall: make a FastPath first");
    return *made;
  }

  bool isTensor(PyObject *object) const { return Py_TYPE(object) == tensorType; }

  py::object isCpu(PyObject *t) const { return read(isCpuGetter, t); }
  py::object dtype(PyObject *t) const { return read(dtypeGetter, t); }
  py::object shape(PyObject *t) const { return read(shapeGetter, t); }
  long long version(PyObject *t) const {
    long long value = PyLong_AsLongLong(read(versionGetter, t).ptr());
    if (value == -1 && PyErr_Occurred())
      throw py::error_already_set();
    return value;
  }
  py::object isContiguous(PyObject *t) const { return callOn(isContiguousMethod, t); }

  /// `tensor.data_ptr()` as an address.
  uintptr_t dataPointer(PyObject *tensor) const {
    py::object address = callOn(dataPtrMethod, tensor);
    uintptr_t value = PyLong_AsUnsignedLongLong(address.ptr());
    if (PyErr_Occurred())
      throw py::error_already_set();
    return value;
  }

private:
  explicit TensorAccess(const py::handle &type)
      : tensorType(reinterpret_cast<PyTypeObject *>(type.ptr())),
        isCpuGetter(descriptor(type, "is_cpu")), dtypeGetter(descriptor(type, "dtype")),
        shapeGetter(descriptor(type, "shape")), versionGetter(descriptor(type, "_version")),
        isContiguousMethod(type.attr("is_contiguous")), dataPtrMethod(type.attr("data_ptr")) {
    Py_INCREF(type.ptr()); // held for the life of the process
  }

  static inline const TensorAccess *made = nullptr;

  /// The data descriptor `name` of the tensor type (a property or getset).
  static py::object descriptor(const py::handle &type, const char *name) {
    if (!PyType_Check(type.ptr()))
      throw py::type_error("thunder._C.FastPath: tensor_type must be torch.Tensor");
    py::object found = type.attr(name);
    if (!Py_TYPE(found.ptr())->tp_descr_get)
      throw py::type_error(std::string("thunder._C.FastPath: the tensor type's '") + name +
                           "' is not a descriptor");
    return found;
  }

  py::object read(const py::object &descriptor, PyObject *tensor) const {
    PyObject *value = Py_TYPE(descriptor.ptr())->tp_descr_get(
        descriptor.ptr(), tensor, reinterpret_cast<PyObject *>(tensorType));
    if (!value)
      throw py::error_already_set();
    return py::reinterpret_steal<py::object>(value);
  }

  static py::object callOn(const py::object &method, PyObject *tensor) {
    PyObject *value = PyObject_CallOneArg(method.ptr(), tensor);
    if (!value)
      throw py::error_already_set();
    return py::reinterpret_steal<py::object>(value);
  }

  PyTypeObject *tensorType;
  py::object isCpuGetter, dtypeGetter, shapeGetter, versionGetter;
  py::object isContiguousMethod, dataPtrMethod;
};

/// What the weak reference `ref` refers to, or None once it is gone.
py::object referent(const py::object &ref) {
#if PY_VERSION_HEX >= 0x030D0000
  PyObject *object = nullptr;
  if (PyWeakref_GetRef(ref.ptr(), &object) < 0)
    throw py::error_already_set();
  return object ? py::reinterpret_steal<py::object>(object) : py::none();
#else
  return py::reinterpret_borrow<py::object>(PyWeakref_GetObject(ref.ptr()));
#endif
}

/// One signature's prepared run: which call values are the runtime's inputs,
/// how outputs are allocated, and how they become the model's result.
class FastCall {
public:
  /// allocs: per output, (function, argument) whose call returns a new tensor.
  FastCall(py::object signature, std::vector<int32_t> order,
           std::vector<std::pair<py::object, py::object>> allocs, py::object build,
           py::object seed, py::object entry, std::vector<std::vector<int64_t>> outputShapes)
      : signatureObject(std::move(signature)), prepared(&preparedRun(signatureObject)),
        order(std::move(order)), allocs(std::move(allocs)), build(std::move(build)),
        seed(std::move(seed)), entry(std::move(entry)), outputShapes(std::move(outputShapes)) {
    if (this->build.is_none() && this->allocs.size() != 1)
      throw py::value_error("thunder._C.FastCall: build may be None only for one output");
  }

  /// Runs on the call's `values` (every one a tensor of the signature) into
  /// new outputs, or into `outputs` (the caller's, checked by the caller).
  py::object run(PyObject *const *values, size_t numValues, py::handle outputs) const {
    const TensorAccess &tensors = TensorAccess::get();
    size_t numIn = order.size(), numOut = allocs.size();
    // Pointers and outputs on the stack for common models.
    uintptr_t localPointers[16];
    py::object localOutputs[8];
    std::vector<uintptr_t> heapPointers;
    std::vector<py::object> heapOutputs;
    uintptr_t *pointers = localPointers;
    py::object *results = localOutputs;
    if (numIn + numOut > 16) {
      heapPointers.resize(numIn + numOut);
      pointers = heapPointers.data();
    }
    if (numOut > 8) {
      heapOutputs.resize(numOut);
      results = heapOutputs.data();
    }
    for (size_t i = 0; i < numIn; ++i) {
      if (static_cast<size_t>(order[i]) >= numValues)
        throw py::value_error("thunder._C.FastCall: fewer values than its order needs");
      pointers[i] = tensors.dataPointer(values[order[i]]);
    }
    for (size_t o = 0; o < numOut; ++o) {
      if (outputs.is_none()) {
        PyObject *made = PyObject_CallOneArg(allocs[o].first.ptr(), allocs[o].second.ptr());
        if (!made)
          throw py::error_already_set();
        results[o] = py::reinterpret_steal<py::object>(made);
      } else {
        results[o] = outputs[py::int_(o)];
      }
      pointers[numIn + o] = tensors.dataPointer(results[o].ptr());
    }
    if (!seed.is_none())
      seed();
    prepared->runPointers(pointers, numIn, pointers + numIn, numOut);
    if (build.is_none())
      return std::move(results[0]);
    py::list list(numOut);
    for (size_t o = 0; o < numOut; ++o)
      PyList_SET_ITEM(list.ptr(), o, results[o].release().ptr());
    return build(list);
  }

  /// The out= path from Python: the call's values, the caller's outputs (or
  /// None for new ones).
  py::object call(const py::tuple &values, const py::object &outputs) const {
    if (!outputs.is_none() && py::len(outputs) != allocs.size())
      throw py::value_error("thunder._C.FastCall: wrong number of outputs");
    return run(&PyTuple_GET_ITEM(values.ptr(), 0), values.size(), outputs);
  }

private:
  py::object signatureObject; ///< keeps `prepared` alive
  const PreparedRun *prepared;
  std::vector<int32_t> order;
  std::vector<std::pair<py::object, py::object>> allocs;
  py::object build, seed;

public:
  py::object entry; ///< the compiled signature (compiled.py's _Entry)
  std::vector<std::vector<int64_t>> outputShapes;
};

/// A weight the library reads or was derived from: refused once changed in
/// place (its version counter moved).
struct Watched {
  std::string name; ///< its FQN, for the refusal's message
  py::object ref;   ///< a weak reference
  long long version;
};

/// The table of FastCalls of one CompiledModule, keyed by the call's
/// metadata (see keyOf()).
class FastPath {
public:
  FastPath(const py::handle &tensorType, bool outKeyword)
      : tensors(TensorAccess::of(tensorType)), outKeyword(outKeyword) {}

  /// The result of a call that has a fast path, else miss().
  py::object call(const py::tuple &args, const py::dict &kwargs) const {
    if (outKeyword && !kwargs.empty() && kwargs.contains("out"))
      return miss();
    if (changedWeight())
      return miss(); // the general path raises, naming the weight
    Values values = valuesOf(args, kwargs);
    py::object key = keyOf(args, kwargs, values);
    if (key.is_none())
      return miss();
    // A reference of our own: the run releases the GIL, and another thread
    // may clear the table meanwhile.
    py::object found = get(key);
    if (found.is_none())
      return miss();
    return found.cast<const FastCall &>().run(values.data(), values.size(), py::none());
  }

  /// (values, key) of a call the fast path could take, else None: the call's
  /// tensors in call order and the metadata that selects a signature and
  /// its prepared run.
  py::object key(const py::tuple &args, const py::dict &kwargs) const {
    Values values = valuesOf(args, kwargs);
    py::object key = keyOf(args, kwargs, values);
    if (key.is_none())
      return key;
    py::tuple tuple(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      tuple[i] = py::handle(values.data()[i]);
    return py::make_tuple(tuple, key);
  }

  py::object get(const py::object &key) const {
    PyObject *found = PyDict_GetItemWithError(table.ptr(), key.ptr());
    if (!found && PyErr_Occurred())
      throw py::error_already_set();
    return found ? py::reinterpret_borrow<py::object>(found) : py::none();
  }
  void add(const py::object &key, const py::object &call) {
    call.cast<const FastCall &>(); // a FastCall, or TypeError here
    table[key] = call;
  }
  size_t size() const { return py::len(table); }
  void clear() { table.clear(); }

  /// Watches weight `name`, `tensor`, from its current version on (a
  /// RuntimeError for an inference tensor, which has no version counter).
  void watch(const std::string &name, const py::object &tensor) {
    long long version = tensors.version(tensor.ptr());
    PyObject *ref = PyWeakref_NewRef(tensor.ptr(), nullptr);
    if (!ref)
      throw py::error_already_set();
    weights.push_back({name, py::reinterpret_steal<py::object>(ref), version});
  }

  /// The first watched weight changed in place since it was watched (one
  /// freed since is not), else null.
  const std::string *changedWeight() const {
    for (const Watched &weight : weights) {
      py::object tensor = referent(weight.ref);
      if (!tensor.is_none() && tensors.version(tensor.ptr()) != weight.version)
        return &weight.name;
    }
    return nullptr;
  }

  /// What call() answers for a call it does not take.
  static const py::object &miss() {
    static const py::object *sentinel =
        new py::object(py::module_::import("builtins").attr("object")());
    return *sentinel;
  }

private:
  /// A call's arguments, then its keyword arguments' values (borrowed).
  struct Values {
    PyObject *local[8];
    std::vector<PyObject *> heap;
    size_t count = 0;
    PyObject *const *data() const { return heap.empty() ? local : heap.data(); }
    size_t size() const { return count; }
  };

  static Values valuesOf(const py::tuple &args, const py::dict &kwargs) {
    Values values;
    values.count = args.size() + kwargs.size();
    PyObject **out = values.local;
    if (values.count > 8) {
      values.heap.resize(values.count);
      out = values.heap.data();
    }
    for (size_t i = 0; i < args.size(); ++i)
      *out++ = PyTuple_GET_ITEM(args.ptr(), i);
    for (auto item : kwargs)
      *out++ = item.second.ptr();
    return values;
  }

  /// The key of a call whose every value is a contiguous CPU tensor of
  /// exactly torch.Tensor's type: (number of arguments, or the keywords'
  /// names), then each value's dtype and shape. None for any other call
  /// (the general path takes containers, Python values, strided views,
  /// other devices, subclasses).
  py::object keyOf(const py::tuple &args, const py::dict &kwargs,
                   const Values &values) const {
    PyObject *const *value = values.data();
    for (size_t i = 0; i < values.size(); ++i)
      if (!tensors.isTensor(value[i]))
        return py::none();
    py::tuple key(1 + 2 * values.size());
    if (kwargs.empty()) {
      key[0] = py::int_(args.size());
    } else {
      py::tuple keywords(kwargs.size());
      size_t i = 0;
      for (auto item : kwargs)
        keywords[i++] = item.first;
      key[0] = keywords;
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (tensors.isCpu(value[i]).ptr() != Py_True ||
          tensors.isContiguous(value[i]).ptr() != Py_True)
        return py::none();
      PyTuple_SET_ITEM(key.ptr(), 1 + 2 * i, tensors.dtype(value[i]).release().ptr());
      PyTuple_SET_ITEM(key.ptr(), 2 + 2 * i, tensors.shape(value[i]).release().ptr());
    }
    return std::move(key);
  }

  const TensorAccess &tensors;
  bool outKeyword;
  py::dict table;
  std::vector<Watched> weights;
};

/// CompiledModule.__call__ (python/thunder/compiled.py): its fast path, and
/// on a miss its general path, `self._call(args, kwargs)`. In C++ so that a
/// call costs no Python frame before the fast path.
py::object compiledModuleCall(py::handle self, py::args args, py::kwargs kwargs) {
  static const py::str *fastName = new py::str("_fast"), *callName = new py::str("_call");
  py::object table = self.attr(*fastName);
  py::object result = table.cast<const FastPath &>().call(args, kwargs);
  if (result.is(FastPath::miss()))
    return self.attr(*callName)(args, kwargs);
  return result;
}

} // namespace

void bindFastPath(py::module_ &m) {
  py::class_<FastCall>(m, "FastCall",
                       "One call signature's prepared run (CompiledModule's fast path)")
      .def(py::init<py::object, std::vector<int32_t>,
                    std::vector<std::pair<py::object, py::object>>, py::object, py::object,
                    py::object, std::vector<std::vector<int64_t>>>(),
           py::arg("signature"), py::arg("order"), py::arg("allocs"), py::arg("build"),
           py::arg("seed"), py::arg("entry"), py::arg("output_shapes"),
           "signature: a prepared Signature; order: which call value is each runtime "
           "input; allocs: per output, (function, argument) whose call returns a new tensor; build: the "
           "outputs' list to the model's result (None: the one output itself); seed: "
           "called before each run, or None; entry: the compiled signature.")
      .def("__call__", &FastCall::call, py::arg("values"), py::arg("outputs") = py::none(),
           "Runs on the call's values into new outputs, or into `outputs`.")
      .def_readonly("entry", &FastCall::entry)
      .def_readonly("output_shapes", &FastCall::outputShapes);
  py::class_<FastPath>(m, "FastPath",
                       "A CompiledModule's fast paths, keyed by the call's tensor metadata")
      .def(py::init<const py::handle &, bool>(), py::arg("tensor_type"),
           py::arg("out_keyword"),
           "tensor_type: torch.Tensor; out_keyword: whether an `out` keyword argument is "
           "the caller's output tensors (then such calls miss)")
      .def("key", &FastPath::key, py::arg("args"), py::arg("kwargs"),
           "(values, key) of a call the fast path could take, else None.")
      .def("get", &FastPath::get, py::arg("key"))
      .def("add", &FastPath::add, py::arg("key"), py::arg("call"))
      .def("watch", &FastPath::watch, py::arg("name"), py::arg("tensor"),
           "Misses every call once weight `name`, `tensor`, is changed in place.")
      .def(
          "changed_weight",
          [](const FastPath &self) -> py::object {
            const std::string *name = self.changedWeight();
            return name ? py::object(py::str(*name)) : py::object(py::none());
          },
          "The name of the first watched weight changed in place, else None.")
      .def("clear", &FastPath::clear)
      .def("__len__", &FastPath::size);
  // An instance method (it binds `self` as a class attribute, which a builtin
  // function does not).
  py::cpp_function call(compiledModuleCall, py::name("__call__"),
                        "Calls the compiled model: the fast path, else self._call(args, "
                        "kwargs).");
  PyObject *method = PyInstanceMethod_New(call.ptr());
  if (!method)
    throw py::error_already_set();
  m.attr("compiled_module_call") = py::reinterpret_steal<py::object>(method);
}

} // namespace thunder_python
