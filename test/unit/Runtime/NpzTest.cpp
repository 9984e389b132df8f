// Tests of thunder-run's .npy/.npz reader and writer (tools/thunder-run/Npz.h): round trips,
// files written by numpy (Inputs/numpy_*.npz, made with np.savez and np.savez_compressed),
// corrupt files, and the small-float conversions.
#include "Npz.h"

#include "thunder-c/artifact.h"

#include "Contains.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace thunder::npz;

namespace {

std::string inputPath(const std::string &name) {
  return std::string(THUNDER_TEST_INPUTS_DIR) + "/" + name;
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/thunder_npz_" + std::to_string(getpid()) + "_" + name;
}

template <typename T> Array makeArray(const std::string &descr, std::vector<int64_t> shape,
                                      const std::vector<T> &values) {
  Array array;
  array.descr = descr;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

template <typename T> std::vector<T> values(const Array &array) {
  std::vector<T> result(array.data.size() / sizeof(T));
  if (!result.empty())
    std::memcpy(result.data(), array.data.data(), array.data.size());
  return result;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(RuntimeNpz, NpyRoundTripsEveryShapeKind) {
  std::vector<Array> arrays = {
      makeArray<float>("<f4", {2, 3}, {1, 2, 3, 4, 5, 6}),
      makeArray<int64_t>("<i8", {3}, {-1, 0, 1}),
      makeArray<double>("<f8", {}, {3.25}),
      makeArray<int32_t>("<i4", {0, 5}, {}),
      makeArray<uint8_t>("|b1", {2, 1, 2}, {1, 0, 0, 1}),
      makeArray<int8_t>("|i1", {1}, {-7}),
  };
  for (const Array &array : arrays) {
    std::string bytes = serializeNpy(array);
    size_t headerEnd = bytes.find('\n') + 1;
    EXPECT_EQ(headerEnd % 64, 0u) << "numpy aligns the data to 64 bytes";
    Array read;
    std::string error;
    ASSERT_TRUE(parseNpy(bytes, read, error)) << error;
    EXPECT_EQ(read.descr, array.descr);
    EXPECT_EQ(read.shape, array.shape);
    EXPECT_EQ(read.data, array.data);
  }
  // Python's tuple spelling, which numpy parses back with ast.literal_eval.
  EXPECT_TRUE(contains(serializeNpy(arrays[1]), "'shape': (3,), }"));
  EXPECT_TRUE(contains(serializeNpy(arrays[2]), "'shape': (), }"));
}

TEST(RuntimeNpz, NpzRoundTrip) {
  std::vector<NamedArray> arrays = {
      {"logits", makeArray<float>("<f4", {2, 2}, {0.5f, -1.5f, 2.0f, 1e-3f})},
      {"ids", makeArray<int64_t>("<i8", {3}, {7, 8, 9})},
      {"bits", makeArray<uint16_t>("<u2", {2}, {0x3f80, 0xbf80})},
  };
  std::string path = tempPath("round_trip.npz"), error;
  ASSERT_TRUE(writeNpz(path, arrays, error)) << error;
  std::vector<NamedArray> read;
  ASSERT_TRUE(readNpz(path, read, error)) << error;
  ASSERT_EQ(read.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(read[i].name, arrays[i].name);
    EXPECT_EQ(read[i].array.descr, arrays[i].array.descr);
    EXPECT_EQ(read[i].array.shape, arrays[i].array.shape);
    EXPECT_EQ(read[i].array.data, arrays[i].array.data);
  }
  unlink(path.c_str());
}

TEST(RuntimeNpz, ReadsNumpySavez) {
  // np.savez(x=arange(6, f4).reshape(2, 3) * 0.5, y=[1, -2, 3] i8, b=True, h=[1, -0.5, 65504]
  // f2): every entry has ZIP64 extras and 0xffffffff sizes in its local header.
  std::vector<NamedArray> arrays;
  std::string error;
  ASSERT_TRUE(readNpz(inputPath("numpy_savez.npz"), arrays, error)) << error;
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays[0].name, "x");
  EXPECT_EQ(arrays[0].array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(arrays[0].array), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(arrays[1].name, "y");
  EXPECT_EQ(values<int64_t>(arrays[1].array), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(arrays[2].array.descr, "|b1");
  EXPECT_TRUE(arrays[2].array.shape.empty());
  EXPECT_EQ(arrays[2].array.data, (std::vector<uint8_t>{1}));
  EXPECT_EQ(arrays[3].array.descr, "<f2");
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(loadElement(arrays[3].array.data.data(), THUNDER_DTYPE_FLOAT16, i),
              (std::vector<double>{1.0, -0.5, 65504.0})[i]);

  // np.savez(x, y): positional arrays are arr_0, arr_1.
  ASSERT_TRUE(readNpz(inputPath("numpy_positional.npz"), arrays, error)) << error;
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "arr_0");
  EXPECT_EQ(arrays[1].name, "arr_1");
}

TEST(RuntimeNpz, RefusesCompressedFiles) {
  std::vector<NamedArray> arrays;
  std::string error;
  std::string path = inputPath("numpy_savez_compressed.npz");
  EXPECT_FALSE(readNpz(path, arrays, error));
  EXPECT_EQ(error, path + ": entry 'x.npy' is compressed (deflate: the file was written by "
                          "np.savez_compressed); thunder-run reads uncompressed .npz files "
                          "only (np.savez)");
}

TEST(RuntimeNpz, RejectsCorruptFiles) {
  std::string good = readAll(inputPath("numpy_savez.npz")), error;
  std::vector<NamedArray> arrays;
  std::string path = tempPath("corrupt.npz");

  std::string flipped = good;
  flipped[good.find("NUMPY") + 130] ^= 0x55; // a data byte of x
  writeAll(path, flipped);
  EXPECT_FALSE(readNpz(path, arrays, error));
  EXPECT_TRUE(contains(error, "CRC mismatch in 'x.npy'"));

  writeAll(path, good.substr(0, good.size() / 2));
  EXPECT_FALSE(readNpz(path, arrays, error));
  EXPECT_TRUE(contains(error, "is not a valid .npz (zip) file"));

  writeAll(path, "PK");
  EXPECT_FALSE(readNpz(path, arrays, error));
  EXPECT_TRUE(contains(error, "too short"));

  EXPECT_FALSE(readNpz(tempPath("missing.npz"), arrays, error));
  EXPECT_TRUE(contains(error, "cannot open"));
  unlink(path.c_str());
}

TEST(RuntimeNpz, RejectsUnsupportedArrays) {
  auto header = [](const std::string &dict) {
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(dict.size());
    bytes += '\0';
    return bytes + dict + std::string(64, '\0');
  };
  Array array;
  std::string error;
  EXPECT_FALSE(parseNpy(header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n"),
                        array, error));
  EXPECT_TRUE(contains(error, "Fortran order"));
  EXPECT_FALSE(parseNpy(header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n"),
                        array, error));
  EXPECT_TRUE(contains(error, "dtype '>f4' is not supported"));
  EXPECT_FALSE(parseNpy(header("{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }\n"),
                        array, error));
  EXPECT_TRUE(contains(error, "truncated"));
  EXPECT_FALSE(parseNpy(header("{'descr': [('a', '<f4')], 'fortran_order': False, }\n"), array,
                        error));
  EXPECT_TRUE(contains(error, "structured dtypes"));
  EXPECT_FALSE(parseNpy("not numpy", array, error));
  // Keys in another order, and numpy's version 2 header.
  std::string v2("\x93NUMPY\x02\x00", 8);
  std::string dict = "{'shape': (1,), 'fortran_order': False, 'descr': '<i4'}\n";
  v2 += std::string(1, static_cast<char>(dict.size())) + std::string(3, '\0') + dict;
  v2 += std::string("\x2a\0\0\0", 4);
  ASSERT_TRUE(parseNpy(v2, array, error)) << error;
  EXPECT_EQ(values<int32_t>(array), std::vector<int32_t>{42});
}

// Found by test/fuzz/NpzFuzzer.cpp: a shape with a zero dim holds no data, so the size check
// passed, but counting its elements from the left overflowed int64 before reaching the zero.
TEST(RuntimeNpz, RejectsShapesWhoseElementCountOverflows) {
  auto header = [](const std::string &dict) {
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(dict.size());
    bytes += '\0';
    return bytes + dict;
  };
  Array array;
  std::string error;
  EXPECT_FALSE(parseNpy(header("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (4611686018427387904, 2, 0), }\n"),
                        array, error));
  EXPECT_TRUE(contains(error, "more elements than an int64 can count")) << error;
  EXPECT_FALSE(parseNpy(header("{'descr': '|i1', 'fortran_order': False, "
                               "'shape': (4294967296, 4294967296), }\n"),
                        array, error));
  EXPECT_TRUE(contains(error, "more elements than an int64 can count")) << error;
  // Zero-size arrays with large dims that fit are still read.
  ASSERT_TRUE(parseNpy(header("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (0, 4611686018427387904), }\n"),
                       array, error))
      << error;
  EXPECT_EQ(array.numElements(), 0);
  EXPECT_TRUE(array.data.empty());
}

TEST(RuntimeNpz, DTypesOfDescriptors) {
  EXPECT_EQ(dtypeForDescr("<f4", THUNDER_DTYPE_FLOAT32), THUNDER_DTYPE_FLOAT32);
  EXPECT_EQ(dtypeForDescr("<f4", THUNDER_DTYPE_INT64), THUNDER_DTYPE_FLOAT32);
  // numpy has no bfloat16 or float8: their bits come as unsigned integers.
  EXPECT_EQ(dtypeForDescr("<u2", THUNDER_DTYPE_BFLOAT16), THUNDER_DTYPE_BFLOAT16);
  EXPECT_EQ(dtypeForDescr("<u2", THUNDER_DTYPE_FLOAT16), -1);
  EXPECT_EQ(dtypeForDescr("|u1", THUNDER_DTYPE_FLOAT8_E5M2), THUNDER_DTYPE_FLOAT8_E5M2);
  EXPECT_EQ(dtypeForDescr("|u1", THUNDER_DTYPE_INT8), -1);
  EXPECT_EQ(dtypeForDescr("<c8", THUNDER_DTYPE_FLOAT32), -1);
  for (int32_t dtype = THUNDER_DTYPE_BOOL; dtype <= THUNDER_DTYPE_FLOAT64; ++dtype)
    EXPECT_EQ(dtypeForDescr(descrForDType(dtype), dtype), dtype);
}

TEST(RuntimeNpz, SmallFloatsRoundTripEveryCode) {
  struct Format {
    int32_t dtype;
    uint32_t codes;
  };
  for (Format format : {Format{THUNDER_DTYPE_FLOAT16, 1u << 16}, {THUNDER_DTYPE_BFLOAT16, 1u << 16},
                        {THUNDER_DTYPE_FLOAT8_E4M3FN, 256}, {THUNDER_DTYPE_FLOAT8_E5M2, 256}}) {
    bool wide = format.codes > 256;
    for (uint32_t code = 0; code < format.codes; ++code) {
      uint16_t in16 = static_cast<uint16_t>(code), out16 = 0;
      uint8_t in8 = static_cast<uint8_t>(code), out8 = 0;
      double value = wide ? loadElement(&in16, format.dtype, 0) : loadElement(&in8, format.dtype, 0);
      if (std::isnan(value))
        continue;
      if (wide)
        storeElement(&out16, format.dtype, 0, value);
      else
        storeElement(&out8, format.dtype, 0, value);
      ASSERT_EQ(wide ? out16 : out8, code) << "dtype " << format.dtype << " value " << value;
    }
  }
}

TEST(RuntimeNpz, SmallFloatsRoundToNearestEven) {
  auto half = [](double value) {
    uint16_t bits;
    storeElement(&bits, THUNDER_DTYPE_FLOAT16, 0, value);
    return bits;
  };
  EXPECT_EQ(half(1.0), 0x3c00);
  EXPECT_EQ(half(1.0 + std::ldexp(1, -11)), 0x3c00);     // tie: to even
  EXPECT_EQ(half(1.0 + 3 * std::ldexp(1, -11)), 0x3c02); // tie: to even (up)
  EXPECT_EQ(half(65504.0), 0x7bff);
  EXPECT_EQ(half(65520.0), 0x7c00); // rounds past the largest: infinity
  EXPECT_EQ(half(std::ldexp(1, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(half(std::ldexp(1, -26)), 0x0000);
  EXPECT_EQ(half(-0.0), 0x8000);
  uint16_t bf16;
  storeElement(&bf16, THUNDER_DTYPE_BFLOAT16, 0, -1.0);
  EXPECT_EQ(bf16, 0xbf80);
  uint8_t f8;
  storeElement(&f8, THUNDER_DTYPE_FLOAT8_E4M3FN, 0, 448.0);
  EXPECT_EQ(f8, 0x7e);
  storeElement(&f8, THUNDER_DTYPE_FLOAT8_E4M3FN, 0, 1000.0);
  EXPECT_EQ(f8, 0x7f); // no infinity in e4m3fn: NaN
  storeElement(&f8, THUNDER_DTYPE_FLOAT8_E5M2, 0, 1.0);
  EXPECT_EQ(f8, 0x3c);
  int64_t i64;
  storeElement(&i64, THUNDER_DTYPE_INT64, 0, -7.9);
  EXPECT_EQ(i64, -7);
  int8_t i8;
  storeElement(&i8, THUNDER_DTYPE_INT8, 0, 1000.0);
  EXPECT_EQ(i8, 127);
}

TEST(RuntimeNpz, Crc32) {
  EXPECT_EQ(crc32("123456789", 9), 0xcbf43926u); // the standard check value
}

} // namespace
