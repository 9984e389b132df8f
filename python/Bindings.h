//===- Bindings.h - Shared by thunder._C's source files ---------*- C++ -*-===//
//
// The exceptions thunder._C raises and the runtime half of the module
// (RuntimeBindings.cpp), for ThunderPython.cpp, which defines the module.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_PYTHON_BINDINGS_H
#define THUNDER_PYTHON_BINDINGS_H

#include "thunder-c/runtime.h"

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace thunder_python {

/// Raised as thunder._C.ImportError: the program or archive cannot be
/// imported (unsupported ops, malformed input, bad weights).
struct ImportFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Raised as thunder._C.CompileError: a pipeline or the driver failed.
struct CompileFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Raised as thunder._C.RuntimeError: a runtime call failed. `status` is the
/// thunder_status it returned (or INVALID_ARGUMENT for a problem found here,
/// before calling the runtime).
struct RuntimeFailure : std::runtime_error {
  RuntimeFailure(thunder_status status, const std::string &message)
      : std::runtime_error(message), status(status) {}
  thunder_status status;
};

/// The runtime's thunder_dtype of PyTorch's dtype name ("float32"); -1 when
/// it has none.
int32_t runtimeDtype(const std::string &name);

/// Throws RuntimeFailure with the runtime's message unless `status` is OK.
/// Called on the thread that made the call (thunder_last_error is per
/// thread), with or without the GIL.
inline void checkRuntime(thunder_status status) {
  if (status != THUNDER_OK)
    throw RuntimeFailure(status, thunder_last_error());
}

/// thunder._C.RuntimeError (made in PYBIND11_MODULE; lives as long as the
/// process).
extern PyObject *runtimeErrorType;

/// A run prepared for one input signature (thunder._C.Signature): data
/// pointers in, the runtime validates and runs (the GIL released).
class PreparedRun {
public:
  virtual ~PreparedRun() = default;
  /// Inputs, then outputs, in the model's order; stream: a cudaStream_t.
  virtual void runPointers(const uintptr_t *in, size_t numIn, const uintptr_t *out,
                           size_t numOut, uintptr_t stream = 0) const = 0;
};

/// The PreparedRun of a thunder._C.Signature (TypeError for anything else).
const PreparedRun &preparedRun(pybind11::handle signature);

/// Adds TensorDesc, LoadedModel, Signature and runtime_version to the module.
void bindRuntime(pybind11::module_ &m);

/// Adds FastCall, FastPath and compiled_module_call (CompiledModule's fast
/// path).
void bindFastPath(pybind11::module_ &m);

} // namespace thunder_python

#endif // THUNDER_PYTHON_BINDINGS_H
