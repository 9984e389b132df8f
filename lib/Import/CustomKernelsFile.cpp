//===- CustomKernelsFile.cpp - Custom kernels registered in a file --------===//
#include "thunder/Import/CustomKernelsFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"

#include <cstring>

namespace {

/// One entry as written in the file.
struct KernelEntry {
  std::string op, symbol, cpu, cpuLibrary, cuda, shape;
};

struct KernelsFile {
  std::vector<KernelEntry> kernels;
};

} // namespace

LLVM_YAML_IS_SEQUENCE_VECTOR(KernelEntry)

namespace llvm::yaml {
template <> struct MappingTraits<KernelEntry> {
  static void mapping(IO &io, KernelEntry &entry) {
    io.mapRequired("op", entry.op);
    io.mapOptional("symbol", entry.symbol);
    io.mapOptional("cpu", entry.cpu);
    io.mapOptional("cpu_library", entry.cpuLibrary);
    io.mapOptional("cuda", entry.cuda);
    io.mapOptional("shape", entry.shape);
  }
};
template <> struct MappingTraits<KernelsFile> {
  static void mapping(IO &io, KernelsFile &file) {
    io.mapRequired("kernels", file.kernels);
  }
};
} // namespace llvm::yaml

namespace thunder::import {

std::string customOpName(llvm::StringRef op) {
  if (!op.contains("::"))
    return op.str();
  auto [ns, rest] = op.split("::");
  auto [name, overload] = rest.split('.');
  return (ns + "." + name + "." + (overload.empty() ? "default" : overload)).str();
}

std::string defaultCustomSymbol(llvm::StringRef op) {
  std::string name = customOpName(op);
  if (llvm::StringRef(name).ends_with(".default"))
    name.resize(name.size() - std::strlen(".default"));
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  if (name.empty() || llvm::isDigit(name.front()))
    name = "k_" + name;
  return name;
}

static llvm::Expected<std::string> readText(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s: %s",
                                   path.str().c_str(),
                                   buffer.getError().message().c_str());
  return (*buffer)->getBuffer().str();
}

llvm::Expected<std::vector<CustomKernel>> readCustomKernelsFile(llvm::StringRef path) {
  auto text = readText(path);
  if (!text)
    return text.takeError();
  KernelsFile file;
  std::string problem;
  llvm::yaml::Input input(*text, nullptr, [](const llvm::SMDiagnostic &diag, void *context) {
    auto *out = static_cast<std::string *>(context);
    if (out->empty())
      *out = diag.getMessage().str();
  }, &problem);
  input >> file;
  if (input.error())
    return llvm::createStringError(input.error(), "%s: not a custom-kernels file: %s",
                                   path.str().c_str(), problem.c_str());
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  auto resolve = [&](llvm::StringRef file) {
    llvm::SmallString<256> full;
    if (llvm::sys::path::is_absolute(file))
      full = file;
    else {
      full = directory;
      llvm::sys::path::append(full, file);
    }
    return std::string(full);
  };
  std::vector<CustomKernel> kernels;
  for (const KernelEntry &entry : file.kernels) {
    CustomKernel kernel;
    kernel.op = customOpName(entry.op);
    kernel.symbol = entry.symbol.empty() ? defaultCustomSymbol(entry.op) : entry.symbol;
    if (!entry.cpu.empty()) {
      auto source = readText(resolve(entry.cpu));
      if (!source)
        return source.takeError();
      kernel.cpuSource = std::move(*source);
    }
    if (!entry.cpuLibrary.empty())
      kernel.cpuLibrary = resolve(entry.cpuLibrary);
    if (!entry.cuda.empty()) {
      auto source = readText(resolve(entry.cuda));
      if (!source)
        return source.takeError();
      kernel.cudaSource = std::move(*source);
    }
    if (kernel.cpuSource.empty() && kernel.cpuLibrary.empty() && kernel.cudaSource.empty())
      return llvm::createStringError(std::errc::invalid_argument,
                                     "%s: the kernel of %s names no cpu, cpu_library or "
                                     "cuda source",
                                     path.str().c_str(), kernel.op.c_str());
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

} // namespace thunder::import
