//===- CustomKernels.cpp - User kernels of thunder.custom_call -------------===//
#include "thunder/Target/Common/CustomKernels.h"

#include "CustomKernelsSources.inc"
#include "thunder/Dialect/Thunder/IR/CustomOps.h"
#include "thunder/Import/Importer.h"
#include "thunder/Target/Common/ArtifactSource.h"
#include "thunder/Target/TargetBackend.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace thunder::codegen {

std::vector<CustomKernelSource> customKernels(ModuleOp module) {
  std::vector<CustomKernelSource> kernels;
  auto all = module->getAttrOfType<DictionaryAttr>(import::kCustomKernelsAttr);
  if (!all)
    return kernels;
  for (NamedAttribute entry : all) {
    auto fields = dyn_cast<DictionaryAttr>(entry.getValue());
    if (!fields)
      continue;
    auto text = [&](StringRef key) -> std::string {
      auto value = fields.getAs<StringAttr>(key);
      return value ? value.str() : "";
    };
    kernels.push_back({entry.getName().str(), text("op"), text("cpu_source"),
                       text("cpu_library"), text("cuda_source")});
  }
  return kernels;
}

StringRef customOpHeader() { return kCustomOpHeader; }

std::string customKernelDeclarations(ModuleOp module) {
  std::string text;
  for (const CustomKernelSource &kernel : customKernels(module))
    text += "// The custom kernel of " + kernel.op + " (thunder-c/custom_op.h).\n"
            "extern \"C\" int " + kernel.symbol +
            "(const thunder_tensor *, int32_t, const thunder_tensor *, int32_t,\n"
            "    const double *, int32_t, void *);\n";
  return text.empty() ? text : text + "\n";
}

void emitCustomCall(llvm::raw_ostream &os, mlir::thunder::CustomCallOp call,
                    llvm::function_ref<std::string(Value)> name,
                    llvm::function_ref<std::string(Value)> shape, StringRef stream,
                    StringRef onFailure, StringRef indent) {
  auto descriptors = [&](StringRef array, ValueRange values) {
    if (values.empty())
      return;
    os << indent << "  const thunder_tensor " << array << "[" << values.size() << "] = {\n";
    for (Value v : values) {
      auto type = cast<RankedTensorType>(v.getType());
      os << indent << "    {const_cast<void *>(static_cast<const void *>(" << name(v)
         << ")), " << dtypeCode(type.getElementType()) << ", " << type.getRank() << ", "
         << shape(v) << "},\n";
    }
    os << indent << "  };\n";
  };
  StringRef callee = call.getCallee();
  os << indent << "{\n";
  descriptors("custom_in", call.getInputs());
  descriptors("custom_out", call.getResults());
  ArrayRef<Attribute> scalars = call.getScalars().getValue();
  if (!scalars.empty()) {
    os << indent << "  static const double custom_scalars[" << scalars.size() << "] = {";
    for (auto [i, scalar] : llvm::enumerate(scalars))
      os << (i ? ", " : "")
         << llvm::format("%.17g", cast<FloatAttr>(scalar).getValueAsDouble());
    os << "};\n";
  }
  os << indent << "  if (int status = " << callee << "("
     << (call.getInputs().empty() ? "nullptr" : "custom_in") << ", "
     << call.getInputs().size() << ", "
     << (call.getResults().empty() ? "nullptr" : "custom_out") << ", "
     << call.getResults().size() << ", "
     << (scalars.empty() ? "nullptr" : "custom_scalars") << ", " << scalars.size()
     << ", " << stream << ")) {\n"
     << indent << "    " << onFailure << "\n"
     << indent << "  }\n"
     << indent << "}\n";
}

/// A CPU translation unit that defines `symbol` by loading it from a shared
/// library the first time it is called.
static std::string libraryTrampoline(const CustomKernelSource &kernel) {
  return llvm::formatv(R"cpp(// The custom kernel {0} of {1}, loaded from {2}.
#include <dlfcn.h>
#include <stdio.h>

#include "thunder-c/custom_op.h"

extern "C" int {0}(THUNDER_CUSTOM_KERNEL_PARAMS) {{
  static thunder_custom_kernel kernel = [] {{
    void *library = dlopen({3}, RTLD_NOW | RTLD_LOCAL);
    if (!library) {{
      fprintf(stderr, "thunder: cannot load the custom kernel library %s: %s\n", {3},
              dlerror());
      return thunder_custom_kernel(nullptr);
    }
    return reinterpret_cast<thunder_custom_kernel>(dlsym(library, "{0}"));
  }();
  if (!kernel)
    return -1;
  return kernel(inputs, num_inputs, outputs, num_outputs, scalars, num_scalars, stream);
}
)cpp",
                       kernel.symbol, kernel.op, kernel.cpuLibrary,
                       cppString(kernel.cpuLibrary))
      .str();
}

LogicalResult addCustomKernelUnits(ModuleOp module, StringRef device,
                                   EmittedSources &out) {
  std::vector<CustomKernelSource> kernels = customKernels(module);
  if (kernels.empty())
    return success();
  out.files.push_back({"thunder-c/custom_op.h", kCustomOpHeader});
  for (const CustomKernelSource &kernel : kernels) {
    std::string text;
    if (device == "cpu" && !kernel.cpuSource.empty())
      text = "// The custom kernel " + kernel.symbol + " of " + kernel.op +
             ", as registered.\n#include \"thunder-c/custom_op.h\"\n#line 1 \"" +
             kernel.symbol + ".cpp\"\n" + kernel.cpuSource + "\n";
    else if (device == "cpu" && !kernel.cpuLibrary.empty())
      text = libraryTrampoline(kernel);
    else if (device == "cuda" && !kernel.cudaSource.empty())
      text = "// The custom kernel " + kernel.symbol + " of " + kernel.op +
             ", as registered.\n#include \"thunder-c/custom_op.h\"\n#line 1 \"" +
             kernel.symbol + ".cu\"\n" + kernel.cudaSource + "\n";
    else
      return module.emitError("the custom op ")
             << kernel.op << " has no " << device << " kernel: register one with "
             << (device == "cpu" ? "cpu=<C++ source or (library, symbol)>"
                                 : "cuda=<CUDA source>")
             << " (thunder.register_kernel or --custom-ops)";
    std::string unit = "custom_" + kernel.symbol + (device == "cuda" ? ".cu" : ".cpp");
    out.files.push_back({unit, std::move(text)});
    out.compileUnits.push_back(unit);
  }
  return success();
}

} // namespace thunder::codegen
