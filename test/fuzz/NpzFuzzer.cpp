// libFuzzer target for thunder-run's .npz/.npy reader (tools/thunder-run/Npz.cpp): any bytes
// must give arrays that hold what their shape and dtype say, or an error message; never a
// crash or a sanitizer report.
//
// The custom mutator unpacks an input .npz, edits it (an array's header: shape, dtype,
// version, fortran_order; its data: truncated, extended; entries dropped, duplicated, renamed)
// and zips it again with valid CRCs, plain or ZIP64, so that the edit gets past the CRC check;
// some of the time it mutates the bytes as they are.
//
// Built by test/fuzz/CMakeLists.txt with clang++-19 -fsanitize=fuzzer,address,undefined; run
// as the ctest fuzz-npz over a copy of test/fuzz/npz-corpus (docs/developing.md, "Fuzzing").
#include "FuzzZip.h"
#include "Npz.h"

#include "thunder-c/artifact.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace thunder;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

static void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "npz fuzzer: invariant broken: %s\n", what);
    std::abort();
  }
}

/// Checks what the reader promises about an array and touches its data as thunder-run does.
static void checkArray(const npz::Array &array) {
  size_t size = npz::descrSize(array.descr);
  check(size != 0, "an accepted array has a supported dtype");
  int64_t count = array.numElements();
  check(count >= 0, "element count is non-negative");
  check(array.data.size() == static_cast<uint64_t>(count) * size,
        "data holds shape x dtype size bytes");
  // thunder-run converts each element through the dtype it expects for the input.
  static const int32_t dtypes[] = {THUNDER_DTYPE_FLOAT32, THUNDER_DTYPE_BFLOAT16,
                                   THUNDER_DTYPE_FLOAT8_E4M3FN, THUNDER_DTYPE_INT64};
  int32_t dtype = npz::dtypeForDescr(array.descr, dtypes[array.data.size() % 4]);
  volatile double sink = 0;
  if (dtype >= 0)
    for (int64_t e = 0; e < count && e < 4096; ++e)
      sink = sink + npz::loadElement(array.data.data(), dtype, static_cast<size_t>(e));
  // What thunder-run writes back must read back the same.
  npz::Array again;
  std::string error;
  check(npz::parseNpy(npz::serializeNpy(array), again, error), "a written array reads back");
  check(again.descr == array.descr && again.shape == array.shape && again.data == array.data,
        "a written array reads back unchanged");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::vector<npz::NamedArray> arrays;
  if (npz::parseNpz(bytes, "fuzz.npz", arrays, error)) {
    for (const npz::NamedArray &array : arrays)
      checkArray(array.array);
  } else {
    check(!error.empty(), "a refused .npz has a message");
  }
  // The same bytes as one .npy (thunder-run reads those inside the .npz).
  npz::Array array;
  error.clear();
  if (npz::parseNpy(bytes, array, error))
    checkArray(array);
  else
    check(!error.empty(), "a refused .npy has a message");
  return 0;
}

//===----------------------------------------------------------------------===//
// Structure-aware mutator
//===----------------------------------------------------------------------===//

namespace {

struct Npy {
  int major = 1;
  std::string header; ///< the dict text, without padding
  std::string data;
};

/// Splits a .npy into version, header text and data; false if it is not one.
bool splitNpy(const std::string &bytes, Npy &npy) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return false;
  npy.major = static_cast<uint8_t>(bytes[6]);
  size_t start = npy.major == 1 ? 10 : 12;
  if (bytes.size() < start)
    return false;
  uint64_t length = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  if (npy.major != 1)
    length |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[10])) << 16 |
              static_cast<uint64_t>(static_cast<uint8_t>(bytes[11])) << 24;
  if (start + length > bytes.size())
    return false;
  npy.header = bytes.substr(start, length);
  while (!npy.header.empty() && (npy.header.back() == ' ' || npy.header.back() == '\n'))
    npy.header.pop_back();
  npy.data = bytes.substr(start + length);
  return true;
}

std::string joinNpy(const Npy &npy) {
  std::string header = npy.header;
  size_t prefix = npy.major == 1 ? 10 : 12;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(npy.major);
  out += '\0';
  for (int i = 0; i < (npy.major == 1 ? 2 : 4); ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + npy.data;
}

const char *const kDescrs[] = {"<f8", "<f4", "<f2", "<i8", "<i4", "|i1", "|b1", "<u2", "|u1",
                               ">f4", "<c8", "|O", "<U3", "<f16", "", "<u8"};
const char *const kDims[] = {"0", "1", "2", "3", "7", "64", "65536", "4294967296",
                             "4611686018427387904", "9223372036854775807",
                             "9223372036854775808", "-1", "", "1L", "2, 3", "0, 9223372036854775807"};

/// A new shape tuple for a header: a few dims from kDims.
std::string randomShape(std::mt19937_64 &rng) {
  int rank = rng() % 5;
  std::string shape = "(";
  for (int d = 0; d < rank; ++d)
    shape += std::string(kDims[rng() % std::size(kDims)]) + ", ";
  if (rank > 1 && rng() % 2)
    shape.resize(shape.size() - 2);
  return shape + ")";
}

/// Replaces the value of `key` in a header dict (up to the next ", '" or "}").
void replaceValue(std::string &header, const std::string &key, const std::string &value) {
  size_t at = header.find("'" + key + "':");
  if (at == std::string::npos)
    return;
  size_t start = at + key.size() + 3;
  size_t end = key == "shape" ? header.find(')', start) : header.find(',', start);
  if (end == std::string::npos)
    end = header.find('}', start);
  if (end == std::string::npos)
    return;
  if (key == "shape")
    ++end;
  header.replace(start, end - start, " " + value);
}

void mutateNpy(Npy &npy, std::mt19937_64 &rng) {
  switch (rng() % 9) {
  case 0:
  case 1:
    replaceValue(npy.header, "shape", randomShape(rng));
    break;
  case 2:
    replaceValue(npy.header, "descr", "'" + std::string(kDescrs[rng() % std::size(kDescrs)]) +
                                          "'");
    break;
  case 3:
    replaceValue(npy.header, "fortran_order", rng() % 2 ? "True" : "Fals");
    break;
  case 4:
    npy.major = rng() % 5;
    break;
  case 5:
    npy.data.resize(npy.data.empty() ? 0 : rng() % npy.data.size());
    break;
  case 6:
    npy.data.append(1 + rng() % 64, static_cast<char>(rng()));
    break;
  case 7: { // drop or repeat a piece of the header text
    if (npy.header.empty())
      break;
    size_t a = rng() % npy.header.size(), n = rng() % 8;
    if (rng() % 2)
      npy.header.erase(a, n);
    else
      npy.header.insert(a, npy.header.substr(a, n));
    break;
  }
  case 8: // a header that numpy would not write: an extra key, quotes swapped
    npy.header.insert(npy.header.empty() ? 0 : 1, rng() % 2 ? "'x': 1, " : "\"descr\": '<f4', ");
    break;
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  std::vector<fuzz::ZipEntry> entries;
  if (rng() % 5 == 0 || !fuzz::readZip(data, size, entries))
    return LLVMFuzzerMutate(data, size, maxSize);
  int edits = 1 + rng() % 3;
  for (int i = 0; i < edits; ++i) {
    if (entries.empty()) {
      entries.push_back({"x.npy", joinNpy(Npy{1, "{'descr': '<f4', 'fortran_order': False, "
                                                  "'shape': (2,), }",
                                              std::string(8, '\0')})});
      continue;
    }
    fuzz::ZipEntry &entry = entries[rng() % entries.size()];
    switch (rng() % 8) {
    case 0: // drop an array
      entries.erase(entries.begin() + (&entry - entries.data()));
      break;
    case 1: { // duplicate one (same name twice) or copy it under a new name
      fuzz::ZipEntry copy = entry;
      if (rng() % 2)
        copy.name = std::to_string(rng() % 10) + copy.name;
      entries.push_back(copy);
      break;
    }
    case 2: // rename: another extension, no extension, a path
      entry.name = rng() % 3 == 0 ? entry.name + ".txt"
                   : rng() % 2    ? std::string("dir/") + entry.name
                                  : std::string(".npy");
      break;
    case 3: { // mutate the record's bytes
      std::string bytes = entry.data;
      bytes.resize(bytes.size() + 64);
      bytes.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t *>(&bytes[0]), entry.data.size(),
                                    bytes.size()));
      entry.data = bytes;
      break;
    }
    default: {
      Npy npy;
      if (splitNpy(entry.data, npy)) {
        mutateNpy(npy, rng);
        entry.data = joinNpy(npy);
      }
      break;
    }
    }
  }
  std::string out = fuzz::writeZip(entries, rng() % 4 == 0);
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
