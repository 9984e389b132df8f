// A small zip reader and writer for the fuzzers' structure-aware mutators: they unpack an
// input, edit a record, and zip it again with valid sizes and CRCs so that the edit reaches the
// code behind the container checks. STORED entries only, as torch.export.save and np.savez
// write them. The reader is lenient (it is not what is under test) but bounds-checked.
#ifndef THUNDER_TEST_FUZZ_FUZZZIP_H
#define THUNDER_TEST_FUZZ_FUZZZIP_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace thunder::fuzz {

struct ZipEntry {
  std::string name;
  std::string data;
};

inline uint32_t zipCrc32(const std::string &data) {
  static const auto table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : data)
    crc = table[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

namespace detail {
inline uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = v << 8 | p[i];
  return v;
}
inline void put(std::string &out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xff);
}
} // namespace detail

/// Reads the entries of a zip through its central directory (ZIP64 included). False when the
/// bytes are not a readable zip; the mutator then mutates them as bytes.
inline bool readZip(const uint8_t *data, size_t size, std::vector<ZipEntry> &entries) {
  using detail::le;
  entries.clear();
  if (size < 22)
    return false;
  size_t eocd = SIZE_MAX;
  size_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (size_t pos = size - 22 + 1; pos-- > lowest;)
    if (le(data + pos, 4) == 0x06054b50) {
      eocd = pos;
      break;
    }
  if (eocd == SIZE_MAX)
    return false;
  uint64_t count = le(data + eocd + 10, 2), directory = le(data + eocd + 16, 4);
  if (count == 0xffff || directory == 0xffffffff) {
    if (eocd < 20 || le(data + eocd - 20, 4) != 0x07064b50)
      return false;
    uint64_t record = le(data + eocd - 20 + 8, 8);
    if (size < 56 || record > size - 56 || le(data + record, 4) != 0x06064b50)
      return false;
    count = le(data + record + 32, 8);
    directory = le(data + record + 48, 8);
  }
  if (count > 4096)
    return false;
  uint64_t pos = directory;
  for (uint64_t i = 0; i < count; ++i) {
    if (pos > size || size - pos < 46 || le(data + pos, 4) != 0x02014b50)
      return false;
    uint64_t compressed = le(data + pos + 20, 4);
    uint64_t nameLength = le(data + pos + 28, 2), extraLength = le(data + pos + 30, 2);
    uint64_t commentLength = le(data + pos + 32, 2), local = le(data + pos + 42, 4);
    if (size - pos - 46 < nameLength + extraLength + commentLength)
      return false;
    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char *>(data + pos + 46), nameLength);
    uint64_t uncompressed = le(data + pos + 24, 4);
    for (uint64_t extra = pos + 46 + nameLength;
         extra + 4 <= pos + 46 + nameLength + extraLength;) {
      uint64_t id = le(data + extra, 2), length = le(data + extra + 2, 2);
      uint64_t field = extra + 4, end = field + length;
      if (end > pos + 46 + nameLength + extraLength)
        return false;
      if (id == 0x0001)
        for (uint64_t *value : {&uncompressed, &compressed, &local})
          if (*value == 0xffffffff && field + 8 <= end) {
            *value = le(data + field, 8);
            field += 8;
          }
      extra = end;
    }
    pos += 46 + nameLength + extraLength + commentLength;
    if (local > size || size - local < 30 || le(data + local, 4) != 0x04034b50)
      return false;
    uint64_t start = local + 30 + le(data + local + 26, 2) + le(data + local + 28, 2);
    if (start > size || size - start < compressed)
      return false;
    entry.data.assign(reinterpret_cast<const char *>(data + start), compressed);
    entries.push_back(std::move(entry));
  }
  return true;
}

/// A zip of `entries` (STORED, data 64-byte aligned as torch writes it, valid CRCs); with
/// `zip64`, the sizes and offsets are in ZIP64 extra fields and records, as numpy writes them
/// for large arrays.
inline std::string writeZip(const std::vector<ZipEntry> &entries, bool zip64 = false) {
  using detail::put;
  std::string out, directory;
  for (const ZipEntry &entry : entries) {
    uint32_t crc = zipCrc32(entry.data);
    uint64_t local = out.size();
    size_t unpadded = local + 30 + entry.name.size() + 4;
    size_t pad = (64 - unpadded % 64) % 64;
    put(out, 0x04034b50, 4);
    put(out, 20, 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0, 4); // time, date
    put(out, crc, 4);
    put(out, entry.data.size(), 4);
    put(out, entry.data.size(), 4);
    put(out, entry.name.size(), 2);
    put(out, 4 + pad, 2);
    out += entry.name;
    put(out, 0x4246, 2); // "FB", torch's padding record
    put(out, pad, 2);
    out.append(pad, '\0');
    out += entry.data;

    put(directory, 0x02014b50, 4);
    put(directory, zip64 ? 45 : 20, 2);
    put(directory, zip64 ? 45 : 20, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, crc, 4);
    put(directory, zip64 ? 0xffffffff : entry.data.size(), 4);
    put(directory, zip64 ? 0xffffffff : entry.data.size(), 4);
    put(directory, entry.name.size(), 2);
    put(directory, zip64 ? 28 : 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, zip64 ? 0xffffffff : local, 4);
    directory += entry.name;
    if (zip64) {
      put(directory, 0x0001, 2);
      put(directory, 24, 2);
      put(directory, entry.data.size(), 8);
      put(directory, entry.data.size(), 8);
      put(directory, local, 8);
    }
  }
  uint64_t directoryOffset = out.size();
  out += directory;
  if (zip64) {
    uint64_t record = out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);
    put(out, 45, 2);
    put(out, 45, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, entries.size(), 8);
    put(out, entries.size(), 8);
    put(out, directory.size(), 8);
    put(out, directoryOffset, 8);
    put(out, 0x07064b50, 4);
    put(out, 0, 4);
    put(out, record, 8);
    put(out, 1, 4);
  }
  put(out, 0x06054b50, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, zip64 ? 0xffff : entries.size(), 2);
  put(out, zip64 ? 0xffff : entries.size(), 2);
  put(out, zip64 ? 0xffffffff : directory.size(), 4);
  put(out, zip64 ? 0xffffffff : directoryOffset, 4);
  put(out, 0, 2);
  return out;
}

} // namespace thunder::fuzz

#endif // THUNDER_TEST_FUZZ_FUZZZIP_H
