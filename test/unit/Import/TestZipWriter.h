// A tiny STORED zip writer for the archive reader's tests: builds archives from records the
// test controls, including deliberately inconsistent ones.
#ifndef THUNDER_TEST_UNIT_IMPORT_TESTZIPWRITER_H
#define THUNDER_TEST_UNIT_IMPORT_TESTZIPWRITER_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace thunder::test {

/// One file to write. The optional fields forge headers that disagree with the data.
struct TestZipRecord {
  std::string name;
  std::string data;
  uint16_t method = 0; ///< written as is; the data stays uncompressed
  uint16_t flags = 0;
  std::optional<uint32_t> claimedSize; ///< size written in the headers instead of data.size()
  bool zip64Extra = false; ///< central sizes/offset as 0xffffffff + a ZIP64 extra field
};

inline void put16(std::string &out, uint16_t v) {
  char b[2];
  llvm::support::endian::write16le(b, v);
  out.append(b, 2);
}
inline void put32(std::string &out, uint32_t v) {
  char b[4];
  llvm::support::endian::write32le(b, v);
  out.append(b, 4);
}
inline void put64(std::string &out, uint64_t v) {
  char b[8];
  llvm::support::endian::write64le(b, v);
  out.append(b, 8);
}
/// Overwrites the 16/32-bit little-endian integer at `offset` of `bytes`.
inline void patch16(std::string &bytes, size_t offset, uint16_t v) {
  llvm::support::endian::write16le(&bytes[offset], v);
}
inline void patch32(std::string &bytes, size_t offset, uint32_t v) {
  llvm::support::endian::write32le(&bytes[offset], v);
}
inline uint32_t get32(const std::string &bytes, size_t offset) {
  return llvm::support::endian::read32le(&bytes[offset]);
}

/// A classic (non-ZIP64-EOCD) archive: local headers and data, central directory, end record.
inline std::string writeTestZip(const std::vector<TestZipRecord> &records,
                                const std::string &comment = "") {
  std::string out, central;
  for (const TestZipRecord &r : records) {
    uint32_t offset = out.size();
    uint32_t size = r.claimedSize.value_or(r.data.size());
    uint32_t crc = llvm::crc32(llvm::arrayRefFromStringRef(r.data));
    put32(out, 0x04034b50);
    put16(out, 20); // version needed
    put16(out, r.flags);
    put16(out, r.method);
    put32(out, 0); // time, date
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, r.name.size());
    put16(out, 0); // extra length
    out += r.name;
    out += r.data;

    put32(central, 0x02014b50);
    put16(central, 20); // version made by
    put16(central, 20); // version needed
    put16(central, r.flags);
    put16(central, r.method);
    put32(central, 0);
    put32(central, crc);
    put32(central, r.zip64Extra ? 0xffffffffu : size);
    put32(central, r.zip64Extra ? 0xffffffffu : size);
    put16(central, r.name.size());
    put16(central, r.zip64Extra ? 28 : 0);
    put16(central, 0); // comment length
    put16(central, 0); // disk
    put16(central, 0); // internal attributes
    put32(central, 0); // external attributes
    put32(central, r.zip64Extra ? 0xffffffffu : offset);
    central += r.name;
    if (r.zip64Extra) {
      put16(central, 0x0001);
      put16(central, 24);
      put64(central, size); // uncompressed, compressed, local header offset
      put64(central, size);
      put64(central, offset);
    }
  }
  uint32_t cdOffset = out.size();
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, records.size());
  put16(out, records.size());
  put32(out, central.size());
  put32(out, cdOffset);
  put16(out, comment.size());
  out += comment;
  return out;
}

} // namespace thunder::test

#endif // THUNDER_TEST_UNIT_IMPORT_TESTZIPWRITER_H
