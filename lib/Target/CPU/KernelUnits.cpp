//===- KernelUnits.cpp - Each distinct CPU kernel in its own unit ---------===//
//
// A kernel's code names its tensors by parameter (p0, p1, ...; pK_shape for
// its shape), its dynamic sizes by position (S[0], ...) and leaves its
// comments at the call site, so that the same kernel reads the same
// wherever it runs: in twelve layers of one model or in two models. Each
// distinct kernel becomes one function in one unit named by its digest,
// which the driver compiles once (in parallel with the others, at the
// kernels' optimization level) and keeps in the kernel cache; the host
// program calls it. A generated loop's unit includes thunder_cpu_base.h, an
// fp32 convolution's or pooling's thunder_cpu_conv_api.h as well (both
// declare drivers compiled once per library); a kernel that calls the
// library's templates includes thunder_cpu.h, precompiled when several units
// do (CPUBackend::compileUnits).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;
using namespace mlir::thunder;

namespace thunder::cpu {

namespace {

/// `text` with each `sym[N]` (a dynamic size of the host program) renamed
/// `S[i]`, i numbering the distinct symbols in order of first use.
std::string renameSymbols(llvm::StringRef text, std::vector<std::string> &symbols) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  auto isIdent = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  while (i < text.size()) {
    if (text.substr(i).starts_with("sym[") && (i == 0 || !isIdent(text[i - 1]))) {
      size_t close = text.find(']', i);
      std::string host = text.slice(i, close + 1).str();
      auto it = llvm::find(symbols, host);
      size_t index = it - symbols.begin();
      if (it == symbols.end())
        symbols.push_back(host);
      out += "S[" + std::to_string(index) + "]";
      i = close + 1;
      continue;
    }
    out += text[i++];
  }
  return out;
}

} // namespace

LogicalResult Emitter::emitKernelCall(FusionOp fusion, llvm::raw_ostream &os) {
  // The kernel's tensors by parameter: inputs, then results (a value that
  // is both, or an input twice, is one parameter).
  SmallVector<Value> params;
  SmallVector<bool> written;
  for (Value v : fusion.getInputs())
    if (!llvm::is_contained(params, v)) {
      params.push_back(v);
      written.push_back(false);
    }
  for (Value v : fusion.getResults())
    if (!llvm::is_contained(params, v)) {
      params.push_back(v);
      written.push_back(true);
    }
  SmallVector<std::string> hostNames;
  for (auto [i, v] : llvm::enumerate(params)) {
    hostNames.push_back(name(v));
    names[v] = "p" + std::to_string(i);
  }
  std::string code;
  llvm::raw_string_ostream kos(code);
  kernelHeader = KernelHeader::Base;
  LogicalResult emitted = emitFusion(fusion, kos);
  for (auto [v, host] : llvm::zip(params, hostNames))
    names[v] = host;
  if (failed(emitted))
    return failure();

  // Comments stay at the call site; the body is what the digest sees.
  std::string body;
  SmallVector<llvm::StringRef> lines;
  llvm::StringRef(code).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (line.ltrim().starts_with("//"))
      os << line << "\n";
    else
      body += line.str() + "\n";
  }
  std::vector<std::string> symbols;
  body = renameSymbols(body, symbols);

  std::string prologue;
  for (auto [i, v] : llvm::enumerate(params)) {
    std::string p = "p" + std::to_string(i), type = elem(v);
    std::string constness = written[i] ? "" : "const ";
    prologue += "  " + constness + type + " *" + p + " = static_cast<" + constness + type +
                " *>(P[" + std::to_string(i) + "]);\n";
    prologue += "  const int64_t *" + p + "_shape = D[" + std::to_string(i) + "];\n";
    prologue += "  (void)" + p + "; (void)" + p + "_shape;\n";
  }
  std::string function = "(void *const *P, const int64_t *const *D, const int64_t *S) {\n"
                         "  (void)S;\n" + prologue + body + "}\n";
  llvm::SHA256 hash;
  hash.update(function);
  std::string kernel = "thunder_kernel_" + llvm::toHex(hash.final(), true).substr(0, 20);
  if (!kernelSources.count(kernel))
    kernelOrder.push_back(kernel);
  kernelHeaders[kernel] = kernelHeader;
  // In namespace thunder_cpu, which a multi-architecture build renames per
  // instruction set (CPUBackend.cpp), so each variant has its own kernels.
  kernelSources[kernel] = "namespace thunder_cpu {\nvoid " + kernel + function + "} // namespace thunder_cpu\n";

  // The call.
  os << "  {\n    void *const P[] = {";
  for (auto [i, host] : llvm::enumerate(hostNames))
    os << (i ? ", " : "") << "(void *)" << host;
  os << "};\n    const int64_t *const D[] = {";
  for (auto [i, host] : llvm::enumerate(hostNames))
    os << (i ? ", " : "") << host << "_shape";
  os << "};\n";
  if (symbols.empty()) {
    os << "    const int64_t *S = nullptr;\n";
  } else {
    os << "    const int64_t S[] = {" << llvm::join(symbols, ", ") << "};\n";
  }
  os << "    " << kernel << "(P, D, S);\n  }\n";
  return success();
}

void Emitter::emitKernelDeclarations(llvm::raw_ostream &os) {
  os << "namespace thunder_cpu {\n";
  for (const std::string &kernel : kernelOrder)
    os << "void " << kernel << "(void *const *P, const int64_t *const *D, const int64_t *S);\n";
  os << "} // namespace thunder_cpu\n\n";
}

void Emitter::addKernelUnits(EmittedSources &out) {
  for (const std::string &kernel : kernelOrder) {
    std::string path = "kernels/" + kernel + ".cpp";
    // The least that declares what the kernel calls (kernelHeaders), the
    // base header first: the first include is the one a precompiled header
    // can stand for (CPUBackend::compileUnits).
    std::string includes;
    switch (kernelHeaders[kernel]) {
    case KernelHeader::Base:
      includes = "#include \"thunder_cpu_base.h\"\n";
      break;
    case KernelHeader::ConvApi:
      includes = "#include \"thunder_cpu_base.h\"\n#include \"thunder_cpu_conv_api.h\"\n";
      break;
    case KernelHeader::Full:
      includes = "#include \"thunder_cpu.h\"\n";
      break;
    }
    out.files.push_back({path,
                         "// Generated by Thunder: one CPU kernel, the same in every model "
                         "that has it. Do not edit.\n" +
                             includes + "\nusing namespace thunder_cpu;\n\n" +
                             kernelSources[kernel],
                         nullptr});
    out.compileUnits.push_back(path);
  }
}

} // namespace thunder::cpu
