// libFuzzer target for the .pt2 archive reader: any bytes must give a value or an llvm::Error,
// never a crash, a sanitizer report or a leak.
//
// Built by test/fuzz/CMakeLists.txt with clang++-19 -fsanitize=fuzzer,address,undefined;
// run as the ctest fuzz-pt2-archive over a copy of test/fuzz/corpus.
#include "thunder/Import/Pt2Archive.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

using namespace thunder;

/// Touches every byte of a payload's view so ASan checks the reader's bounds claim.
static unsigned checksum(const std::vector<Payload> &payloads) {
  unsigned sum = 0;
  for (const Payload &payload : payloads)
    for (char c : payload.storage)
      sum += static_cast<unsigned char>(c);
  return sum;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A non-owning buffer over libFuzzer's exactly-sized copy: reading one byte past the end
  // is an ASan report (getMemBufferCopy would hide it behind a null terminator).
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto archive = Pt2Archive::fromBuffer(
      llvm::MemoryBuffer::getMemBuffer(bytes, "fuzz.pt2", /*RequiresNullTerminator=*/false),
      "fuzz.pt2");
  if (!archive) {
    llvm::consumeError(archive.takeError());
    return 0;
  }
  if (auto json = (*archive)->modelJson(); !json)
    llvm::consumeError(json.takeError());
  // What the importer does next (LLVM's JSON parser is not instrumented, so this checks the
  // nesting limit that keeps it from overflowing the stack rather than the parser itself).
  if (auto program = (*archive)->parseModelJson(); !program)
    llvm::consumeError(program.takeError());
  volatile unsigned sink = 0;
  if (auto weights = (*archive)->weights())
    sink = sink + checksum(*weights);
  else
    llvm::consumeError(weights.takeError());
  if (auto constants = (*archive)->constants())
    sink = sink + checksum(*constants);
  else
    llvm::consumeError(constants.takeError());
  for (const ZipArchive::Entry &entry : (*archive)->zip().entries()) {
    if (auto record = (*archive)->zip().read(entry))
      sink = sink + (record->empty() ? 0 : static_cast<unsigned char>(record->back()));
    else
      llvm::consumeError(record.takeError());
  }
  return 0;
}
