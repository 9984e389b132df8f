//===- WeightsLoader.cpp - The generated code that maps a weights file ----===//
#include "thunder/Target/Common/WeightsLoader.h"

#include "llvm/Support/FormatVariadic.h"

namespace thunder::codegen {

std::string mapWeightsFile(uint64_t fileBytes, const WeightsLoaderStyle &style) {
  const char *sizeMessage =
      style.wrapSizeMessage
          ? "    snprintf(error, error_size,\n"
            "             \"the weights file %s has %lld bytes; this model's has {0}\",\n"
          : "    snprintf(error, error_size, \"the weights file %s has %lld bytes; this "
            "model's has {0}\",\n";
  std::string text = std::string(R"cpp(  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {{
    snprintf(error, error_size, "cannot open the weights file %s", path);
    return 1;
  }
  struct stat {1};
  if (fstat(fd, &{1}) != 0 || uint64_t({1}.st_size) != {0}ULL) {{
    close(fd);
)cpp") + sizeMessage +
                     R"cpp(             path, (long long){1}.st_size);
    return 1;
  }
  void *map = mmap(nullptr, {1}.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {{
    snprintf(error, error_size, "cannot map the weights file %s", path);
    return 1;
  }
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i)
    header |= uint64_t(static_cast<const unsigned char *>(map)[i]) << (8 * i);
)cpp";
  return llvm::formatv(text.c_str(), fileBytes, style.statVar).str();
}

} // namespace thunder::codegen
