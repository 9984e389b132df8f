// Checks of a model's table at load, and of every run's inputs and outputs against it, so that
// generated code never sees a tensor it was not compiled for.
#include "Internal.h"

#include <string>
#include <vector>

using namespace thunder::runtime;

namespace {

/// Problems found while validating, reported together (one per line) so that a caller fixes
/// all of them at once. Nothing is allocated until there is a problem.
class Problems {
public:
  void add(std::string problem) { problems.push_back(std::move(problem)); }
  bool empty() const { return problems.empty(); }
  thunder_status report(thunder_status status) const {
    if (problems.empty())
      return THUNDER_OK;
    std::string message;
    for (const std::string &problem : problems) {
      if (!message.empty())
        message += '\n';
      message += problem;
    }
    return fail(status, std::move(message));
  }

private:
  std::vector<std::string> problems;
};

/// The number of elements of a shape with non-negative dims; false if it overflows int64.
bool numElements(const int64_t *shape, int32_t rank, int64_t &count) {
  count = 1;
  for (int32_t d = 0; d < rank; ++d)
    if (__builtin_mul_overflow(count, shape[d], &count))
      return false;
  return true;
}

std::string dtypeText(int32_t dtype) {
  std::string name = thunder_dtype_name(dtype);
  if (name == "unknown")
    return "unknown dtype " + std::to_string(dtype);
  return name;
}

/// "x, y" for the names of a model's inputs or outputs.
std::string names(const thunder_tensor_desc *descs, int32_t count) {
  std::string text;
  for (int32_t i = 0; i < count; ++i)
    text += (i ? ", " : "") + std::string(descs[i].name);
  return text;
}

std::string countMismatch(const thunder_model &model, const char *kind, int32_t expected,
                          const thunder_tensor_desc *descs, int32_t got) {
  std::string message = "model '" + std::string(model.table->name) + "' " +
                        (std::string(kind) == "input" ? "takes " : "has ") +
                        std::to_string(expected) + " " + kind + (expected == 1 ? "" : "s");
  if (expected > 0)
    message += " (" + names(descs, expected) + ")";
  return message + ", got " + std::to_string(got);
}

std::string checkDesc(const char *kind, int32_t index, const thunder_tensor_desc &desc) {
  std::string who = std::string(kind) + " " + std::to_string(index);
  if (!desc.name)
    return who + " has no name";
  who += " ('" + std::string(desc.name) + "')";
  if (thunder_dtype_size(desc.dtype) == 0)
    return who + " has unknown dtype " + std::to_string(desc.dtype);
  if (desc.rank < 0)
    return who + " has rank " + std::to_string(desc.rank);
  if (desc.rank == 0)
    return "";
  if (!desc.shape || !desc.dim_min || !desc.dim_max || !desc.dim_symbols)
    return who + " has rank " + std::to_string(desc.rank) +
           " but NULL shape, dim_min, dim_max or dim_symbols";
  for (int32_t d = 0; d < desc.rank; ++d) {
    std::string dim = who + " dim " + std::to_string(d);
    int64_t size = desc.shape[d], lo = desc.dim_min[d], hi = desc.dim_max[d];
    if (size >= 0) {
      if (lo != size || hi != size)
        return dim + " is static (" + std::to_string(size) + ") but has bounds [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "]";
    } else if (size != -1) {
      return dim + " is " + std::to_string(size) + " (a dynamic dim is -1)";
    } else if (lo < 0 || (hi != -1 && hi < lo)) {
      return dim + " has bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    } else if (!desc.dim_symbols[d]) {
      return dim + " is dynamic but has a NULL symbol";
    }
  }
  return "";
}

} // namespace

std::string thunder::runtime::formatShape(const int64_t *shape, int32_t rank) {
  std::string text = "[";
  for (int32_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

std::string thunder::runtime::formatShape(const thunder_tensor_desc &desc) {
  std::string text = "[";
  for (int32_t d = 0; d < desc.rank; ++d) {
    text += d ? ", " : "";
    if (desc.shape[d] >= 0)
      text += std::to_string(desc.shape[d]);
    else if (desc.dim_symbols[d] && desc.dim_symbols[d][0])
      text += desc.dim_symbols[d];
    else
      text += "?";
  }
  return text + "]";
}

std::string thunder::runtime::describe(const char *kind, int32_t index,
                                       const thunder_tensor_desc &desc) {
  return std::string(kind) + " " + std::to_string(index) + " ('" + desc.name + "')";
}

std::string thunder::runtime::checkModelTable(const thunder_model_v1 &table) {
  if (!table.name || !table.target)
    return "its name or target is NULL";
  if (table.device < THUNDER_DEVICE_CPU || table.device > THUNDER_DEVICE_HIP)
    return "its device is " + std::to_string(table.device) + " (known: 0 cpu, 1 cuda, 2 hip)";
  if (table.num_inputs < 0 || table.num_outputs < 0)
    return "it has a negative number of inputs or outputs";
  if ((table.num_inputs > 0 && !table.inputs) || (table.num_outputs > 0 && !table.outputs))
    return "its input or output descriptors are NULL";
  if (!table.create || !table.destroy || !table.output_shapes || !table.workspace_bytes ||
      !table.run)
    return "one of its functions (create, destroy, output_shapes, workspace_bytes, run) is NULL";
  for (int32_t i = 0; i < table.num_inputs; ++i)
    if (std::string problem = checkDesc("input", i, table.inputs[i]); !problem.empty())
      return problem;
  for (int32_t i = 0; i < table.num_outputs; ++i)
    if (std::string problem = checkDesc("output", i, table.outputs[i]); !problem.empty())
      return problem;
  return "";
}

thunder_status thunder::runtime::validateInputs(const thunder_model &model,
                                                const thunder_tensor *inputs, int32_t numInputs,
                                                bool requireData) {
  const thunder_model_v1 &table = *model.table;
  if (numInputs != table.num_inputs)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                countMismatch(model, "input", table.num_inputs, table.inputs, numInputs));
  if (numInputs > 0 && !inputs)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "inputs is NULL, but model '" + std::string(table.name) + "' takes " +
                    std::to_string(numInputs) + " inputs");

  Problems problems;
  for (int32_t i = 0; i < numInputs; ++i) {
    const thunder_tensor_desc &desc = table.inputs[i];
    const thunder_tensor &input = inputs[i];
    auto who = [&] { return describe("input", i, desc) + ": "; };
    if (input.dtype != desc.dtype)
      problems.add(who() + "expected dtype " + dtypeText(desc.dtype) + ", got " +
                   dtypeText(input.dtype));
    if (input.rank != desc.rank) {
      std::string got = "got rank " + std::to_string(input.rank);
      if (input.shape && input.rank >= 0)
        got += " (shape " + formatShape(input.shape, input.rank) + ")";
      problems.add(who() + "expected rank " + std::to_string(desc.rank) + " (shape " +
                   formatShape(desc) + "), " + got);
      continue;
    }
    if (input.rank > 0 && !input.shape) {
      problems.add(who() + "shape is NULL, but rank is " + std::to_string(input.rank));
      continue;
    }
    bool dimsValid = true;
    for (int32_t d = 0; d < desc.rank; ++d) {
      int64_t size = input.shape[d];
      std::string dim = "dim " + std::to_string(d);
      if (size < 0) {
        problems.add(who() + dim + " is " + std::to_string(size) + "; dims must be non-negative");
        dimsValid = false;
      } else if (desc.shape[d] >= 0) {
        if (size != desc.shape[d])
          problems.add(who() + dim + " is " + std::to_string(size) + ", but the model expects " +
                       std::to_string(desc.shape[d]) + " (shape " + formatShape(desc) + ")");
      } else if (size < desc.dim_min[d] || (desc.dim_max[d] >= 0 && size > desc.dim_max[d])) {
        std::string symbol = desc.dim_symbols[d][0] ? desc.dim_symbols[d] : "?";
        std::string upper = desc.dim_max[d] >= 0 ? std::to_string(desc.dim_max[d]) + "]" : "inf)";
        problems.add(who() + dim + " (symbol " + symbol + ") is " + std::to_string(size) +
                     ", outside its range [" + std::to_string(desc.dim_min[d]) + ", " + upper);
      }
    }
    int64_t count = 0;
    if (!dimsValid)
      continue;
    if (!numElements(input.shape, input.rank, count))
      problems.add(who() + "shape " + formatShape(input.shape, input.rank) +
                   " has more elements than an int64 holds");
    else if (requireData && count > 0 && !input.data)
      problems.add(who() + "data is NULL, but the tensor has " + std::to_string(count) +
                   " elements");
  }

  // Dims that share a symbol must agree; checked where both inputs have the right rank (a
  // wrong rank is reported above).
  for (const SharedDim &shared : model.sharedDims) {
    const thunder_tensor &a = inputs[shared.input], &b = inputs[shared.firstInput];
    const thunder_tensor_desc &da = table.inputs[shared.input],
                              &db = table.inputs[shared.firstInput];
    if (a.rank != da.rank || b.rank != db.rank || !a.shape || !b.shape)
      continue;
    int64_t va = a.shape[shared.dim], vb = b.shape[shared.firstDim];
    if (va != vb && va >= 0 && vb >= 0) // a negative dim is reported above
      problems.add("dim " + std::to_string(shared.dim) + " of " +
                   describe("input", shared.input, da) + " is " + std::to_string(va) +
                   ", but it shares symbol " + da.dim_symbols[shared.dim] + " with dim " +
                   std::to_string(shared.firstDim) + " of " +
                   describe("input", shared.firstInput, db) + ", which is " + std::to_string(vb));
  }
  return problems.report(THUNDER_ERROR_INVALID_ARGUMENT);
}

thunder_status thunder::runtime::computeOutputShapes(const thunder_model &model,
                                                     const thunder_tensor *inputs,
                                                     int64_t *const *shapes) {
  const thunder_model_v1 &table = *model.table;
  char error[1024] = "";
  if (table.output_shapes(model.state, inputs, shapes, error, sizeof(error)) != 0) {
    error[sizeof(error) - 1] = '\0';
    return fail(THUNDER_ERROR_RUN, "model '" + std::string(table.name) +
                                       "' failed to compute its output shapes: " +
                                       (error[0] ? error : "(no message)"));
  }
  for (int32_t o = 0; o < table.num_outputs; ++o) {
    const thunder_tensor_desc &desc = table.outputs[o];
    for (int32_t d = 0; d < desc.rank; ++d) {
      int64_t size = shapes[o][d];
      if (size < 0 || (desc.shape[d] >= 0 && size != desc.shape[d]))
        return fail(THUNDER_ERROR_RUN,
                    "model '" + std::string(table.name) + "' computed shape " +
                        formatShape(shapes[o], desc.rank) + " for " + describe("output", o, desc) +
                        ", which contradicts its declared shape " + formatShape(desc) +
                        " (a bug in the compiled model)");
    }
  }
  return THUNDER_OK;
}

thunder_status thunder::runtime::validateOutputs(const thunder_model &model,
                                                 const thunder_tensor *outputs,
                                                 int32_t numOutputs,
                                                 const int64_t *const *expectedShapes) {
  const thunder_model_v1 &table = *model.table;
  if (numOutputs != table.num_outputs)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                countMismatch(model, "output", table.num_outputs, table.outputs, numOutputs));
  if (numOutputs > 0 && !outputs)
    return fail(THUNDER_ERROR_INVALID_ARGUMENT,
                "outputs is NULL, but model '" + std::string(table.name) + "' has " +
                    std::to_string(numOutputs) + " outputs");

  Problems problems;
  for (int32_t o = 0; o < numOutputs; ++o) {
    const thunder_tensor_desc &desc = table.outputs[o];
    const thunder_tensor &output = outputs[o];
    auto who = [&] { return describe("output", o, desc) + ": "; };
    if (output.dtype != desc.dtype)
      problems.add(who() + "expected dtype " + dtypeText(desc.dtype) + ", got " +
                   dtypeText(output.dtype));
    const int64_t *expected = expectedShapes[o];
    if (output.rank > 0 && !output.shape) {
      problems.add(who() + "shape is NULL, but rank is " + std::to_string(output.rank));
      continue;
    }
    bool sameShape = output.rank == desc.rank;
    for (int32_t d = 0; sameShape && d < desc.rank; ++d)
      sameShape = output.shape[d] == expected[d];
    if (!sameShape) {
      problems.add(who() + "expected shape " + formatShape(expected, desc.rank) + ", got " +
                   (output.rank >= 0 ? formatShape(output.shape, output.rank)
                                     : "rank " + std::to_string(output.rank)));
      continue;
    }
    int64_t count = 0;
    if (numElements(output.shape, output.rank, count) && count > 0 && !output.data)
      problems.add(who() + "data is NULL, but the tensor has " + std::to_string(count) +
                   " elements");
  }
  return problems.report(THUNDER_ERROR_INVALID_ARGUMENT);
}
