//===- GpuDialect.cpp - Spelling host-program text for a GPU dialect ------===//
#include "thunder/Target/GPU/GpuDialect.h"

#include "llvm/Support/ErrorHandling.h"

namespace thunder::gpu {

/// The runtime's names by key, as host-program text writes them (@key@).
static const char *lookup(const GpuDialect &d, llvm::StringRef key) {
  const GpuRuntime &r = d.runtime;
  const std::pair<const char *, const char *> names[] = {
      {"stream_t", r.stream_t},
      {"error_t", r.error_t},
      {"success", r.success},
      {"malloc", r.malloc},
      {"memcpy", r.memcpy},
      {"memcpyAsync", r.memcpyAsync},
      {"hostToDevice", r.hostToDevice},
      {"deviceToDevice", r.deviceToDevice},
      {"streamCreate", r.streamCreate},
      {"streamCreateWithFlags", r.streamCreateWithFlags},
      {"streamNonBlocking", r.streamNonBlocking},
      {"streamSynchronize", r.streamSynchronize},
      {"streamDestroy", r.streamDestroy},
      {"deviceSynchronize", r.deviceSynchronize},
      {"getLastError", r.getLastError},
      {"eventRecord", r.eventRecord},
      {"streamWaitEvent", r.streamWaitEvent},
      {"graph", r.graph},
      {"gemm_lib", d.libraries.gemm},
      {"conv_lib", d.libraries.conv},
  };
  for (auto &[k, name] : names)
    if (key == k)
      return name;
  return nullptr;
}

std::string GpuDialect::spell(llvm::StringRef text) const {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    size_t at = text.find('@');
    size_t end = at == llvm::StringRef::npos ? at : text.find('@', at + 1);
    if (end == llvm::StringRef::npos) {
      out += text;
      break;
    }
    const char *name = lookup(*this, text.slice(at + 1, end));
    if (!name)
      llvm::report_fatal_error(llvm::Twine("GpuDialect::spell: unknown key in '") + text + "'");
    out += text.take_front(at);
    out += name;
    text = text.drop_front(end + 1);
  }
  return out;
}

} // namespace thunder::gpu
