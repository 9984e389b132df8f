// .npy/.npz reading and writing (STORED zip entries only) and element conversions.
#include "Npz.h"

#include "thunder-c/artifact.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

using namespace thunder::npz;

namespace {

//===----------------------------------------------------------------------===//
// Little-endian helpers
//===----------------------------------------------------------------------===//

uint64_t readLE(const std::string &bytes, size_t offset, int size) {
  uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i)
    value = value << 8 | static_cast<uint8_t>(bytes[offset + i]);
  return value;
}

void writeLE(std::string &out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

//===----------------------------------------------------------------------===//
// .npy header: a Python dict literal
//===----------------------------------------------------------------------===//

/// A parser of exactly what numpy writes: {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }, keys in any order.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  bool parse(Array &array, std::string &error) {
    bool haveDescr = false, haveOrder = false, haveShape = false, fortran = false;
    if (!consume('{'))
      return fail("expected '{'", error);
    while (!consume('}')) {
      std::string key;
      if (!string(key) || !consume(':'))
        return fail("expected 'key':", error);
      if (key == "descr") {
        if (!string(array.descr))
          return fail("'descr' is not a string (structured dtypes are not supported)", error);
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (word("True"))
          fortran = true;
        else if (!word("False"))
          return fail("'fortran_order' is not True or False", error);
        haveOrder = true;
      } else if (key == "shape") {
        if (!shape(array.shape))
          return fail("'shape' is not a tuple of non-negative integers", error);
        haveShape = true;
      } else {
        return fail("unexpected key '" + key + "'", error);
      }
      if (!consume(',') && !peek('}'))
        return fail("expected ',' or '}'", error);
    }
    if (!haveDescr || !haveOrder || !haveShape)
      return fail("'descr', 'fortran_order' or 'shape' is missing", error);
    if (fortran) {
      error = "the array is in Fortran order; thunder-run reads C-order arrays only "
              "(save np.ascontiguousarray(a))";
      return false;
    }
    return true;
  }

private:
  bool fail(const std::string &what, std::string &error) {
    error = "malformed .npy header (" + what + "): " + text;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\t'))
      ++pos;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool consume(char c) {
    if (!peek(c))
      return false;
    ++pos;
    return true;
  }
  bool word(const char *w) {
    skipSpace();
    size_t n = std::strlen(w);
    if (text.compare(pos, n, w) != 0)
      return false;
    pos += n;
    return true;
  }
  bool string(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool shape(std::vector<int64_t> &dims) {
    dims.clear();
    if (!consume('('))
      return false;
    while (!consume(')')) {
      skipSpace();
      size_t start = pos;
      int64_t dim = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (dim > (std::numeric_limits<int64_t>::max() - 9) / 10)
          return false;
        dim = dim * 10 + (text[pos++] - '0');
      }
      if (pos == start)
        return false;
      if (pos < text.size() && text[pos] == 'L') // Python 2's long literals
        ++pos;
      dims.push_back(dim);
      if (!consume(',') && !peek(')'))
        return false;
    }
    return true;
  }

  const std::string &text;
  size_t pos = 0;
};

const char kNpyMagic[] = "\x93NUMPY";

//===----------------------------------------------------------------------===//
// Small floats: float16, bfloat16, float8_e4m3fn, float8_e5m2
//===----------------------------------------------------------------------===//

/// A binary float format with `e` exponent and `m` mantissa bits. IEEE-like formats have
/// infinities and NaNs in the top exponent; "fn" formats (float8_e4m3fn) use it for normal
/// numbers and only the all-ones pattern for NaN.
struct SmallFloat {
  int e, m;
  bool ieee;

  int bias() const { return (1 << (e - 1)) - 1; }
  uint32_t topExponent() const { return (1u << e) - 1; }
  uint32_t nanCode() const {
    return ieee ? topExponent() << m | 1u << (m - 1) : topExponent() << m | ((1u << m) - 1);
  }
  uint32_t maxFiniteCode() const {
    return ieee ? (topExponent() - 1) << m | ((1u << m) - 1)
                : topExponent() << m | ((1u << m) - 2);
  }

  double decode(uint32_t code) const {
    bool negative = (code >> (e + m)) & 1;
    uint32_t exponent = (code >> m) & topExponent(), mantissa = code & ((1u << m) - 1);
    double value;
    if (ieee && exponent == topExponent())
      value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                       : std::numeric_limits<double>::infinity();
    else if (!ieee && (code & ((1u << (e + m)) - 1)) == nanCode())
      value = std::numeric_limits<double>::quiet_NaN();
    else if (exponent == 0)
      value = std::ldexp(mantissa, 1 - bias() - m);
    else
      value = std::ldexp(mantissa + (1u << m), static_cast<int>(exponent) - bias() - m);
    return negative ? -value : value;
  }

  /// Round to nearest, ties to even (the default floating-point environment's nearbyint).
  uint32_t encode(double value) const {
    uint32_t sign = std::signbit(value) ? 1u << (e + m) : 0;
    if (std::isnan(value))
      return nanCode();
    double magnitude = std::fabs(value);
    if (std::isinf(magnitude))
      return sign | (ieee ? topExponent() << m : nanCode());
    if (magnitude == 0)
      return sign;
    int exponent;
    std::frexp(magnitude, &exponent);
    int unbiased = exponent - 1; // magnitude is in [2^unbiased, 2^(unbiased + 1))
    int minExponent = 1 - bias();
    uint32_t code;
    if (unbiased < minExponent) {
      // Subnormal; rounding up to 2^m lands exactly on the smallest normal's code.
      code = static_cast<uint32_t>(std::nearbyint(std::ldexp(magnitude, m - minExponent)));
    } else {
      if (unbiased + bias() > static_cast<int>(topExponent()))
        return sign | (ieee ? topExponent() << m : nanCode());
      // A rounded significand of 2^(m+1) carries into the exponent field by itself.
      auto significand =
          static_cast<uint32_t>(std::nearbyint(std::ldexp(magnitude, m - unbiased)));
      code = (static_cast<uint32_t>(unbiased + bias()) << m) + (significand - (1u << m));
    }
    if (code > maxFiniteCode()) // overflow: infinity, or NaN where there is none
      return sign | (ieee ? topExponent() << m : nanCode());
    return sign | code;
  }
};

constexpr SmallFloat kFloat16{5, 10, true};
constexpr SmallFloat kBFloat16{8, 7, true};
constexpr SmallFloat kFloat8E4M3FN{4, 3, false};
constexpr SmallFloat kFloat8E5M2{5, 2, true};

template <typename T> T loadAs(const void *data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char *>(data) + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T> void storeAs(void *data, size_t index, T value) {
  std::memcpy(static_cast<char *>(data) + index * sizeof(T), &value, sizeof(T));
}

/// `value` truncated toward zero and clamped to T's range (NaN gives 0).
template <typename T> T toInteger(double value) {
  if (std::isnan(value))
    return 0;
  if (value <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (value >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

bool readFile(const std::string &path, std::string &bytes, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path;
    return false;
  }
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = "cannot read " + path;
    return false;
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

int64_t Array::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

size_t thunder::npz::descrSize(const std::string &descr) {
  if (descr == "<f8" || descr == "<i8")
    return 8;
  if (descr == "<f4" || descr == "<i4")
    return 4;
  if (descr == "<f2" || descr == "<u2")
    return 2;
  if (descr == "|i1" || descr == "|b1" || descr == "|u1")
    return 1;
  return 0;
}

bool thunder::npz::parseNpy(const std::string &bytes, Array &array, std::string &error) {
  if (bytes.size() < 10 || bytes.compare(0, 6, kNpyMagic) != 0) {
    error = "not a .npy file (no \\x93NUMPY magic)";
    return false;
  }
  int major = static_cast<uint8_t>(bytes[6]);
  size_t headerStart = major == 1 ? 10 : 12;
  if (major < 1 || major > 3 || bytes.size() < headerStart) {
    error = ".npy format version " + std::to_string(major) + " is not supported (1, 2, 3 are)";
    return false;
  }
  uint64_t headerSize = readLE(bytes, 8, major == 1 ? 2 : 4);
  if (headerStart + headerSize > bytes.size()) {
    error = "truncated .npy header";
    return false;
  }
  std::string header = bytes.substr(headerStart, headerSize);
  if (!HeaderParser(header).parse(array, error))
    return false;
  size_t size = descrSize(array.descr);
  if (size == 0) {
    error = "dtype '" + array.descr +
            "' is not supported (supported: <f8 <f4 <f2 <i8 <i4 |i1 |b1, and <u2 / |u1 for "
            "bfloat16 / float8 bits; little-endian only)";
    return false;
  }
  // The product of the non-zero dims must fit an int64, so that the element count (and every
  // partial product on the way, whatever the order of the dims) does: a shape like
  // (2**62, 4, 0) holds no data but overflows when counted from the left.
  int64_t nonZero = 1;
  bool hasZero = false;
  for (int64_t dim : array.shape) {
    if (dim == 0)
      hasZero = true;
    else if (__builtin_mul_overflow(nonZero, dim, &nonZero)) {
      error = "the shape has more elements than an int64 can count";
      return false;
    }
  }
  // Elements times size, checked for overflow against what the file holds.
  uint64_t available = bytes.size() - headerStart - headerSize;
  uint64_t count = hasZero ? 0 : static_cast<uint64_t>(nonZero);
  uint64_t needed;
  bool tooMany = __builtin_mul_overflow(count, static_cast<uint64_t>(size), &needed);
  if (tooMany || needed > available) {
    error = "the data is truncated: shape needs " +
            (tooMany ? std::string("too many") : std::to_string(needed)) +
            " bytes, the file has " + std::to_string(available);
    return false;
  }
  const char *data = bytes.data() + headerStart + headerSize;
  array.data.assign(data, data + needed);
  return true;
}

std::string thunder::npz::serializeNpy(const Array &array) {
  std::string dict = "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < array.shape.size(); ++d)
    dict += (d ? ", " : "") + std::to_string(array.shape[d]);
  dict += array.shape.size() == 1 ? ",), }" : "), }"; // Python's one-element tuple
  // Pad with spaces and a newline so that the data starts at a multiple of 64 bytes.
  int major = dict.size() + 1 + 10 > 65535 ? 2 : 1;
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kNpyMagic, 6);
  out += static_cast<char>(major);
  out += '\0';
  writeLE(out, dict.size(), major == 1 ? 2 : 4);
  out += dict;
  out.append(reinterpret_cast<const char *>(array.data.data()), array.data.size());
  return out;
}

//===----------------------------------------------------------------------===//
// .npz (zip)
//===----------------------------------------------------------------------===//

uint32_t thunder::npz::crc32(const void *data, size_t size) {
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
  const auto *bytes = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

bool thunder::npz::readNpz(const std::string &path, std::vector<NamedArray> &arrays,
                           std::string &error) {
  arrays.clear();
  std::string bytes;
  if (!readFile(path, bytes, error))
    return false;
  return parseNpz(bytes, path, arrays, error);
}

bool thunder::npz::parseNpz(const std::string &bytes, const std::string &path,
                            std::vector<NamedArray> &arrays, std::string &error) {
  arrays.clear();
  auto bad = [&](const std::string &why) {
    error = path + " is not a valid .npz (zip) file: " + why;
    return false;
  };
  // The end-of-central-directory record: the last 22 bytes plus a comment of up to 64 KiB.
  if (bytes.size() < 22)
    return bad("too short");
  size_t eocd = std::string::npos;
  size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (size_t pos = bytes.size() - 22 + 1; pos-- > lowest;)
    if (readLE(bytes, pos, 4) == 0x06054b50) {
      eocd = pos;
      break;
    }
  if (eocd == std::string::npos)
    return bad("no end-of-central-directory record");
  uint64_t count = readLE(bytes, eocd + 10, 2);
  uint64_t directory = readLE(bytes, eocd + 16, 4);
  if (count == 0xffff || directory == 0xffffffff) {
    // ZIP64: the locator sits right before the record and points at the ZIP64 record.
    if (eocd < 20 || readLE(bytes, eocd - 20, 4) != 0x07064b50)
      return bad("ZIP64 sizes without a ZIP64 locator");
    uint64_t record = readLE(bytes, eocd - 20 + 8, 8);
    if (bytes.size() < 56 || record > bytes.size() - 56 || readLE(bytes, record, 4) != 0x06064b50)
      return bad("bad ZIP64 end-of-central-directory record");
    count = readLE(bytes, record + 32, 8);
    directory = readLE(bytes, record + 48, 8);
  }

  uint64_t pos = directory;
  for (uint64_t entry = 0; entry < count; ++entry) {
    if (pos > bytes.size() || bytes.size() - pos < 46 || readLE(bytes, pos, 4) != 0x02014b50)
      return bad("bad central directory entry " + std::to_string(entry));
    uint64_t flags = readLE(bytes, pos + 8, 2), method = readLE(bytes, pos + 10, 2);
    uint32_t crc = static_cast<uint32_t>(readLE(bytes, pos + 16, 4));
    uint64_t compressed = readLE(bytes, pos + 20, 4), size = readLE(bytes, pos + 24, 4);
    uint64_t nameLength = readLE(bytes, pos + 28, 2), extraLength = readLE(bytes, pos + 30, 2);
    uint64_t commentLength = readLE(bytes, pos + 32, 2), local = readLE(bytes, pos + 42, 4);
    if (bytes.size() - pos - 46 < nameLength + extraLength + commentLength)
      return bad("truncated central directory");
    std::string name = bytes.substr(pos + 46, nameLength);
    // ZIP64 extra field: the 64-bit values of the fields saturated above, in this order.
    for (uint64_t extra = pos + 46 + nameLength; extra + 4 <= pos + 46 + nameLength + extraLength;) {
      uint64_t id = readLE(bytes, extra, 2), length = readLE(bytes, extra + 2, 2);
      uint64_t field = extra + 4, end = field + length;
      if (end > pos + 46 + nameLength + extraLength)
        return bad("truncated extra field of '" + name + "'");
      if (id == 0x0001) {
        for (uint64_t *value : {&size, &compressed, &local})
          if (*value == 0xffffffff) {
            if (field + 8 > end)
              return bad("short ZIP64 extra field of '" + name + "'");
            *value = readLE(bytes, field, 8);
            field += 8;
          }
      }
      extra = end;
    }
    pos += 46 + nameLength + extraLength + commentLength;

    if (flags & 1)
      return bad("'" + name + "' is encrypted");
    if (method != 0) {
      error = path + ": entry '" + name + "' is compressed" +
              (method == 8 ? " (deflate: the file was written by np.savez_compressed)" : "") +
              "; thunder-run reads uncompressed .npz files only (np.savez)";
      return false;
    }
    if (local > bytes.size() || bytes.size() - local < 30 || readLE(bytes, local, 4) != 0x04034b50)
      return bad("bad local header of '" + name + "'");
    uint64_t data = local + 30 + readLE(bytes, local + 26, 2) + readLE(bytes, local + 28, 2);
    if (compressed != size || data > bytes.size() || bytes.size() - data < size)
      return bad("truncated data of '" + name + "'");
    if (crc32(bytes.data() + data, size) != crc)
      return bad("CRC mismatch in '" + name + "'");
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      return bad("entry '" + name + "' is not a .npy array");
    NamedArray array;
    array.name = name.substr(0, name.size() - 4);
    std::string why;
    if (!parseNpy(bytes.substr(data, size), array.array, why)) {
      error = path + ": array '" + array.name + "': " + why;
      return false;
    }
    arrays.push_back(std::move(array));
  }
  return true;
}

bool thunder::npz::writeNpz(const std::string &path, const std::vector<NamedArray> &arrays,
                            std::string &error) {
  std::string out, directory;
  const uint64_t limit = 0xffffffffu;
  for (const NamedArray &array : arrays) {
    std::string name = array.name + ".npy";
    std::string npy = serializeNpy(array.array);
    uint64_t offset = out.size();
    if (npy.size() >= limit || offset >= limit) {
      error = "cannot write " + path + ": over 4 GiB (ZIP64 writing is not supported)";
      return false;
    }
    uint32_t crc = crc32(npy.data(), npy.size());
    // Local header: version 2.0, no flags, STORED, 1980-01-01 00:00.
    writeLE(out, 0x04034b50, 4);
    writeLE(out, 20, 2);
    writeLE(out, 0, 2);
    writeLE(out, 0, 2);
    writeLE(out, 0, 2);
    writeLE(out, 0x21, 2);
    writeLE(out, crc, 4);
    writeLE(out, npy.size(), 4);
    writeLE(out, npy.size(), 4);
    writeLE(out, name.size(), 2);
    writeLE(out, 0, 2);
    out += name;
    out += npy;

    writeLE(directory, 0x02014b50, 4);
    writeLE(directory, 20, 2); // made by
    writeLE(directory, 20, 2); // needed
    writeLE(directory, 0, 2);
    writeLE(directory, 0, 2);
    writeLE(directory, 0, 2);
    writeLE(directory, 0x21, 2);
    writeLE(directory, crc, 4);
    writeLE(directory, npy.size(), 4);
    writeLE(directory, npy.size(), 4);
    writeLE(directory, name.size(), 2);
    writeLE(directory, 0, 2); // extra
    writeLE(directory, 0, 2); // comment
    writeLE(directory, 0, 2); // disk
    writeLE(directory, 0, 2); // internal attributes
    writeLE(directory, 0, 4); // external attributes
    writeLE(directory, offset, 4);
    directory += name;
  }
  if (out.size() + directory.size() >= limit || arrays.size() >= 0xffff) {
    error = "cannot write " + path + ": over 4 GiB or 65535 arrays (ZIP64 is not supported)";
    return false;
  }
  uint64_t directoryOffset = out.size();
  out += directory;
  writeLE(out, 0x06054b50, 4);
  writeLE(out, 0, 2);
  writeLE(out, 0, 2);
  writeLE(out, arrays.size(), 2);
  writeLE(out, arrays.size(), 2);
  writeLE(out, directory.size(), 4);
  writeLE(out, directoryOffset, 4);
  writeLE(out, 0, 2);

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(out.data(), static_cast<std::streamsize>(out.size()))) {
    error = "cannot write " + path;
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// dtypes and elements
//===----------------------------------------------------------------------===//

std::string thunder::npz::descrForDType(int32_t dtype) {
  switch (dtype) {
  case THUNDER_DTYPE_BOOL:
    return "|b1";
  case THUNDER_DTYPE_INT8:
    return "|i1";
  case THUNDER_DTYPE_INT32:
    return "<i4";
  case THUNDER_DTYPE_INT64:
    return "<i8";
  case THUNDER_DTYPE_FLOAT8_E4M3FN:
  case THUNDER_DTYPE_FLOAT8_E5M2:
    return "|u1";
  case THUNDER_DTYPE_FLOAT16:
    return "<f2";
  case THUNDER_DTYPE_BFLOAT16:
    return "<u2";
  case THUNDER_DTYPE_FLOAT32:
    return "<f4";
  case THUNDER_DTYPE_FLOAT64:
    return "<f8";
  default:
    return "";
  }
}

int32_t thunder::npz::dtypeForDescr(const std::string &descr, int32_t expected) {
  if (descr == "<u2")
    return expected == THUNDER_DTYPE_BFLOAT16 ? THUNDER_DTYPE_BFLOAT16 : -1;
  if (descr == "|u1")
    return expected == THUNDER_DTYPE_FLOAT8_E4M3FN || expected == THUNDER_DTYPE_FLOAT8_E5M2
               ? expected
               : -1;
  for (int32_t dtype : {THUNDER_DTYPE_BOOL, THUNDER_DTYPE_INT8, THUNDER_DTYPE_INT32,
                        THUNDER_DTYPE_INT64, THUNDER_DTYPE_FLOAT16, THUNDER_DTYPE_FLOAT32,
                        THUNDER_DTYPE_FLOAT64})
    if (descrForDType(dtype) == descr)
      return dtype;
  return -1;
}

double thunder::npz::loadElement(const void *data, int32_t dtype, size_t index) {
  switch (dtype) {
  case THUNDER_DTYPE_BOOL:
    return loadAs<uint8_t>(data, index) != 0;
  case THUNDER_DTYPE_INT8:
    return loadAs<int8_t>(data, index);
  case THUNDER_DTYPE_INT32:
    return loadAs<int32_t>(data, index);
  case THUNDER_DTYPE_INT64:
    return static_cast<double>(loadAs<int64_t>(data, index));
  case THUNDER_DTYPE_FLOAT8_E4M3FN:
    return kFloat8E4M3FN.decode(loadAs<uint8_t>(data, index));
  case THUNDER_DTYPE_FLOAT8_E5M2:
    return kFloat8E5M2.decode(loadAs<uint8_t>(data, index));
  case THUNDER_DTYPE_FLOAT16:
    return kFloat16.decode(loadAs<uint16_t>(data, index));
  case THUNDER_DTYPE_BFLOAT16:
    return kBFloat16.decode(loadAs<uint16_t>(data, index));
  case THUNDER_DTYPE_FLOAT32:
    return loadAs<float>(data, index);
  case THUNDER_DTYPE_FLOAT64:
    return loadAs<double>(data, index);
  default:
    return std::numeric_limits<double>::quiet_NaN();
  }
}

void thunder::npz::storeElement(void *data, int32_t dtype, size_t index, double value) {
  switch (dtype) {
  case THUNDER_DTYPE_BOOL:
    return storeAs<uint8_t>(data, index, value != 0);
  case THUNDER_DTYPE_INT8:
    return storeAs<int8_t>(data, index, toInteger<int8_t>(value));
  case THUNDER_DTYPE_INT32:
    return storeAs<int32_t>(data, index, toInteger<int32_t>(value));
  case THUNDER_DTYPE_INT64:
    return storeAs<int64_t>(data, index, toInteger<int64_t>(value));
  case THUNDER_DTYPE_FLOAT8_E4M3FN:
    return storeAs<uint8_t>(data, index, static_cast<uint8_t>(kFloat8E4M3FN.encode(value)));
  case THUNDER_DTYPE_FLOAT8_E5M2:
    return storeAs<uint8_t>(data, index, static_cast<uint8_t>(kFloat8E5M2.encode(value)));
  case THUNDER_DTYPE_FLOAT16:
    return storeAs<uint16_t>(data, index, static_cast<uint16_t>(kFloat16.encode(value)));
  case THUNDER_DTYPE_BFLOAT16:
    return storeAs<uint16_t>(data, index, static_cast<uint16_t>(kBFloat16.encode(value)));
  case THUNDER_DTYPE_FLOAT32:
    return storeAs<float>(data, index, static_cast<float>(value));
  case THUNDER_DTYPE_FLOAT64:
    return storeAs<double>(data, index, value);
  default:
    return;
  }
}
